"""What games offer apps that drive seats on someone's behalf (the bots app), so that games
never import them: the arrow points games <- bots.

* ``on_change(listener)``: ``listener(game)`` runs after every committed change of a game, in
  the process that committed it, with the game as committed (its ``version``, ``awaiting``,
  ``status``, ``move_count``). Several changes in one transaction may call it several times
  with the same final game; listeners dedupe by version. It must return quickly: it runs in
  the request that made the change (a listener hands slow work to a worker or a thread).
* ``set_driven_check(check)``: ``check(game_id)`` says whether a driver in this process plays
  the game itself (``bots.runner.play_game``: a tournament's game); such a game's turn clock
  is enforced by its driver, so no clock task is scheduled for it.
* ``add_driven_games(source)``: ``source()`` gives the ids of the running games a driver plays
  in some process, this one or another (a tournament match's games in flight: ``arena``). Such
  a game's stored turn clock is not its real one (its driver plays it in memory and enforces
  its clock itself), so nothing here settles it (the sweep, the per-turn check, the lazy check
  on reads) and no bot turn plays it: if its driver dies, whoever took the driving over (the
  match's next worker) settles it. Asked only when a clock is overdue or a bot turn is due, so
  a source may cost a query.
* ``set_seat_check(check)``: ``check(user, bot_id)`` decides whether ``user`` may seat that
  bot (raising an API error if not); without one, seating a bot is refused.
* ``add_replay_reader(reader)``: ``reader(game, user)`` says whether ``user``, who holds no seat
  at ``game``, may read its replay once it is over (the owner of a bot seated there; anyone, for
  a tournament's game). Players always may.
* ``add_replay_hold(hold)``: ``hold(game)`` says whether ``game``'s replay stays closed to
  everyone for now, its players included, though the game is over: its seed deals a game still
  to be played (a tournament's games share deals and are dealt again after a worker dies). A
  held replay is a 409 ``replay_held`` over the API and leaves bots' end notices.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from rest_framework.exceptions import ValidationError

if TYPE_CHECKING:
    from games.models import Game

log = logging.getLogger(__name__)

ChangeListener = Callable[["Game"], None]
SeatCheck = Callable[[Any, int], None]
ReplayReader = Callable[["Game", Any], bool]

_listeners: list[ChangeListener] = []
_seat_check: SeatCheck | None = None
_driven_check: Callable[[int], bool] | None = None
_replay_readers: list[ReplayReader] = []
_replay_holds: list[Callable[[Game], bool]] = []
_driven_games: list[Callable[[], Collection[int]]] = []


def on_change(listener: ChangeListener) -> None:
    if listener not in _listeners:
        _listeners.append(listener)


def set_driven_check(check: Callable[[int], bool]) -> None:
    global _driven_check
    _driven_check = check


def is_driven(game_id: int) -> bool:
    return _driven_check is not None and _driven_check(game_id)


def add_driven_games(source: Callable[[], Collection[int]]) -> None:
    if source not in _driven_games:
        _driven_games.append(source)


def driven_games() -> set[int]:
    """The running games a driver plays somewhere (see ``add_driven_games``)."""
    found: set[int] = set()
    for source in _driven_games:
        found.update(source())
    return found


def is_driven_anywhere(game_id: int) -> bool:
    return bool(_driven_games) and game_id in driven_games()


def set_seat_check(check: SeatCheck) -> None:
    global _seat_check
    _seat_check = check


def changed(game: Game) -> None:
    """Tell the listeners; the change is committed, so a listener's failure is logged, never
    raised (nothing committed may be answered as an error)."""
    for listener in _listeners:
        try:
            listener(game)
        except Exception:
            log.exception("game change listener failed (game %s)", game.pk)


def check_seat(user: Any, bot_id: int) -> None:
    if _seat_check is None:
        raise ValidationError({"bot": ["Bots are not available on this server."]})
    _seat_check(user, bot_id)


def add_replay_reader(reader: ReplayReader) -> None:
    if reader not in _replay_readers:
        _replay_readers.append(reader)


def may_read_replay(game: Game, user: Any) -> bool:
    """Whether a reader lets ``user`` (seated or not) read ``game``'s replay."""
    return any(reader(game, user) for reader in _replay_readers)


def add_replay_hold(hold: Callable[[Game], bool]) -> None:
    if hold not in _replay_holds:
        _replay_holds.append(hold)


def replay_held(game: Game) -> bool:
    """Whether a hold keeps ``game``'s replay closed to everyone for now."""
    return any(hold(game) for hold in _replay_holds)
