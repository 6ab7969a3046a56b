"""Reads. Whatever reaches a player about a running game comes from here, and is public or
that player's own: the engine's ``view`` for their seat, the public move and event logs. The
hidden state (hands, deck, seed) is only read out in ``game_replay``, once the game is over."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NoReturn

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.cache import cache
from django.db.models import (
    Count,
    F,
    IntegerField,
    OuterRef,
    Prefetch,
    QuerySet,
    Subquery,
    Window,
)
from django.db.models.functions import Coalesce, RowNumber

from core import metrics
from core.throttling import with_cache
from games import clock, hooks, notify, rows, services, steps
from games import uno as engine
from games.engine_state import load_state
from games.errors import GameNotOver, NotAPlayer, ReplayHeld
from games.models import EventKind, Game, GameEvent, GameStatus, MoveRecord, Seat

EVENTS_PAGE = 500
LONG_POLL_MAX_SECONDS = 25.0
# Waiters are woken by ``notify``; this re-check only bounds the cost of a lost notification
# and settles an overdue turn clock nobody else is looking at.
LONG_POLL_RECHECK = 1.0


def game_list(
    *, user: AbstractBaseUser | AnonymousUser, filters: dict[str, Any] | None = None
) -> QuerySet[Game]:
    """Games newest first, with their creator and seats (three queries a page, the count
    included, whatever the number of games: the ``game_newest`` index serves the order).

    ``open_seat_count`` is an alias the lobby filter reads, not a column: counted per game by a
    subquery only where a filter asks, as grouping every seat of every game before paging cost
    seconds. The hidden ``state`` and ``rng`` are deferred: no list shows them, and they are
    most of a row."""
    filters = filters or {}
    qs = (
        _with_seats().defer("state", "rng")
        .alias(open_seat_count=open_seat_count())
        .order_by("-created_at", "-id")
    )
    if filters.get("status"):
        qs = qs.filter(status=filters["status"])
    if filters.get("mine"):
        qs = qs.filter(seats__user=user).distinct()
    if filters.get("open_seats"):
        qs = lobby_order(qs.filter(status=GameStatus.OPEN, open_seat_count__gt=0))
    return qs


def open_seat_count() -> Coalesce:
    """How many of the game's seats nobody has taken: a correlated subquery (0 without any)."""
    free = (
        Seat.objects.filter(game=OuterRef("pk"), user__isnull=True, bot__isnull=True)
        .order_by().values("game").annotate(n=Count("pk")).values("n")
    )
    return Coalesce(Subquery(free, output_field=IntegerField()), 0)


def lobby_order(queryset: QuerySet[Game]) -> QuerySet[Game]:
    """Each creator's newest open table first, then everyone's second newest, and so on (newest
    first within each round): however many tables one player makes, the others' stay on the
    first page."""
    creator_rank = Window(
        RowNumber(), partition_by=F("created_by"), order_by=[F("created_at").desc(), F("id").desc()]
    )
    return queryset.annotate(creator_rank=creator_rank).order_by(
        "creator_rank", "-created_at", "-id"
    )


def _with_seats() -> QuerySet[Game]:
    """Games with their creator and seats (with players) attached: two queries."""
    seats = Prefetch("seats", queryset=Seat.objects.select_related("user", "bot").order_by("index"))
    return Game.objects.select_related("created_by").prefetch_related(seats)


def game_get(*, game_id: int) -> Game:
    """The game, with an overdue turn clock settled first (lazy enforcement on every read)."""
    services.turn_clock_enforce(game_id=game_id)
    return _with_seats().get(pk=game_id)


def game_after_change(*, game_id: int) -> tuple[Game, str | None, list[rows.PublicSeat]]:
    """The game as a service just committed it, with its creator's and players' names: no
    clock to settle (the service did, under the game's lock)."""
    return rows.game_public(game_id)


def seat_of(*, game: Game, user: AbstractBaseUser | AnonymousUser) -> Seat | None:
    if not user.is_authenticated:
        return None
    for seat in game.seats.all():
        if seat.user_id == user.pk:
            return seat
    return None


def seat_of_or_403(*, game: Game, user: AbstractBaseUser | AnonymousUser) -> Seat:
    seat = seat_of(game=game, user=user)
    if seat is None:
        raise NotAPlayer()
    return seat


def replay_reader_or_403(*, game: Game, user: AbstractBaseUser | AnonymousUser) -> None:
    """The replay is its players', and whoever a ``hooks`` replay reader lets in (a seated
    bot's owner; anyone, for a tournament's game); 403 ``not_a_player`` for anyone else. 409
    ``replay_held`` while a ``hooks`` hold keeps it closed (its deal is still to be played)."""
    if seat_of(game=game, user=user) is not None:
        pass
    elif not (user.is_authenticated and hooks.may_read_replay(game, user)):
        raise NotAPlayer()
    if game.is_over and hooks.replay_held(game):
        raise ReplayHeld()


def seat_with_game(
    *, game_id: int, user: AbstractBaseUser | AnonymousUser, version: int | None = None
) -> Seat:
    """The user's seat with its game loaded in the same query, an overdue turn clock settled
    first. 404 without such a game, 403 without a seat at it.

    ``version``: the version the caller expects; the game as this process last saw it at that
    version may be returned instead of reading it (see ``rows.seat_with_game``)."""
    seat = rows.seat_with_game(game_id, user.pk, version=version)
    if seat is None:
        _raise_missing(game_id)
    if steps.turn_clock_overdue(seat.game) and services.turn_clock_enforce(game_id=game_id):
        seat = rows.seat_with_game(game_id, user.pk)
        assert seat is not None  # seats are never deleted
    return seat


def _raise_missing(game_id: int) -> NoReturn:
    if not Game.objects.filter(pk=game_id).exists():
        raise Game.DoesNotExist(f"No game {game_id}.")
    raise NotAPlayer()


def seat_view_wait(
    *,
    game_id: int,
    user: AbstractBaseUser | AnonymousUser,
    known: Container[str],
    wait: float,
    until_turn: bool = False,
) -> Seat:
    """Like ``seat_with_game``; but first wait up to ``wait`` seconds while the client
    already holds this version's view (its ETag is in ``known``) or, with ``until_turn``,
    while the running game awaits another seat."""
    if wait <= 0:
        return seat_with_game(game_id=game_id, user=user)
    deadline = clock.monotonic() + min(wait, LONG_POLL_MAX_SECONDS)
    # Subscribe before reading: a change committed after the read still sets the event.
    with notify.subscription(game_id) as changes:
        seat = seat_with_game(game_id=game_id, user=user)
        return seat_wait(
            seat=seat, game=seat.game, user=user, changes=changes, known=known,
            until_turn=until_turn, deadline=deadline,
        ) or seat


def seat_wait(
    *,
    seat: Seat,
    game: Game,
    user: AbstractBaseUser | AnonymousUser,
    changes: notify.Subscription,
    known: Container[str],
    until_turn: bool,
    deadline: float,
) -> Seat | None:
    """Hold while ``game`` (as the caller last read or wrote it, with ``changes`` subscribed
    before that) is what the waiter already knows; then the seat re-read with its game. None
    if the wait ran out before anything was re-read."""
    found = None
    while still_waiting(game, seat.index, known, until_turn):
        wanted = wanted_change(game, seat.index, until_turn)
        changes.want(wanted)
        change = _wait_for_change(game, changes, deadline, wanted)
        if change is None:
            break
        found = seat_with_game(game_id=game.pk, user=user, version=change.version)
        game = found.game
    return found


def still_waiting(game: Game, seat: int, known: Container[str], until_turn: bool) -> bool:
    if game.is_over:
        return False  # nothing will change any more
    if view_etag(game=game, seat=seat) in known:
        return True
    # Until the seat's turn: through the wait for the start too.
    return until_turn and (game.status == GameStatus.OPEN or game.awaiting != seat)


def wanted_change(game: Game, seat: int, until_turn: bool) -> Callable[[notify.Change], bool]:
    """Which notified changes are worth reading the game for."""

    def wanted(change: notify.Change) -> bool:
        if change.version is None:
            return True  # the notification did not say: read
        if change.version <= game.version:
            return False  # what the waiter already has (e.g. its own move)
        if until_turn:
            over = change.status in (GameStatus.FINISHED, GameStatus.ABORTED)
            return over or (change.status == GameStatus.RUNNING and change.awaiting == seat)
        return True

    return wanted


def _wait_for_change(
    game: Game,
    changes: notify.Subscription,
    deadline: float,
    wanted: Callable[[notify.Change], bool] = lambda change: True,
) -> notify.Change | None:
    """Block until ``game`` probably changed in a ``wanted`` way (the change, as far as it is
    known) or the monotonic ``deadline`` (None). Woken by ``notify``; re-reads the version now
    and then in case a notification was lost, and settles the turn clock when it runs out (so
    a table never freezes)."""
    while True:
        left = deadline - clock.monotonic()
        if left <= 0:
            return None
        until_clock = _seconds_to_deadline(game.turn_deadline, left)
        if clock.wait(changes.event, max(0.01, min(left, LONG_POLL_RECHECK, until_clock))):
            # Taking clears the event before any re-read, so a later change is not missed.
            change = changes.take()
            if change is None:
                return notify.Change()
            if wanted(change):
                return change
            continue
        if services.turn_clock_enforce(game_id=game.pk):
            return notify.Change()
        current = Game.objects.filter(pk=game.pk).values_list("version", flat=True).get()
        if current != game.version:
            return notify.Change()


def _seconds_to_deadline(deadline: datetime | None, otherwise: float) -> float:
    return otherwise if deadline is None else (deadline - clock.now()).total_seconds()


def game_view(*, game: Game, seat: int) -> dict[str, Any] | None:
    """The engine's view for one seat; None before the deal (an open table, or one aborted
    before it started), which the schema declares as a null view."""
    if game.state is None:
        return None
    view = engine.view(load_state(game), seat)
    if game.is_over and not view["finished"]:
        # Ended by the server (a forfeit, an abort), not by the rules: nobody may move, and
        # the game's winner (if any) is the one that counts.
        view.update(
            phase="over", awaiting=None, uno_window=None, pending=None, legal_moves=[],
            challenge_reveal=None, finished=True, winner=game.winner,
        )
    return view


def view_etag(*, game: Game, seat: int) -> str:
    return etag(game_id=game.pk, version=game.version, seat=seat)


def etag(*, game_id: int, version: int, seat: int) -> str:
    """The ETag of one seat's view at one version (the view changes with every version)."""
    return f'"{game_id}-{version}-{seat}"'


def move_list(*, game: Game) -> QuerySet[MoveRecord]:
    return game.moves.order_by("number")


def events_since(
    *, game_id: int, since: int, upto: int, limit: int = EVENTS_PAGE
) -> list[GameEvent]:
    """The public events after version ``since`` up to ``upto``: lifecycle events and moves,
    by version. ``upto`` is a version read before: each version commits together with its
    event, so the two tables agree up to it, whatever commits while they are read."""
    window = {"game_id": game_id, "version__gt": since, "version__lte": upto}
    events = list(GameEvent.objects.filter(**window).order_by("version")[:limit])
    moves = MoveRecord.objects.filter(**window).order_by("version")
    events += [_move_event(record) for record in moves[:limit]]
    return sorted(events, key=lambda event: event.version)[:limit]


def _move_event(record: MoveRecord) -> GameEvent:
    """A move as an event (not saved: the move log is the record)."""
    return GameEvent(
        game_id=record.game_id,
        version=record.version,
        kind=EventKind.MOVE,
        seat=record.seat,
        data={"number": record.number, "move": record.move, "source": record.source},
        created_at=record.created_at,
    )


@dataclass(frozen=True)
class EventsPage:
    version: int  # the game's, when the page was read
    status: str
    events: list[GameEvent]
    more: bool  # events after the page's last, up to ``version``


def events_wait(*, game_id: int, since: int, wait: float) -> EventsPage:
    """Events after ``since``; with ``wait`` > 0, hold the request until one happens or the
    wait ends."""
    return events_page(game=version_wait(game_id=game_id, since=since, wait=wait), since=since)


def events_page(*, game: Game, since: int) -> EventsPage:
    """The events after ``since`` up to ``game``'s version (as read before)."""
    game_id = game.pk
    events = (
        events_since(game_id=game_id, since=since, upto=game.version)
        if game.version > since else []
    )
    last = events[-1].version if events else since
    return EventsPage(game.version, game.status, events, more=last < game.version)


def version_wait(*, game_id: int, since: int, wait: float) -> Game:
    """The game (its version and status) as soon as its version exceeds ``since``, when it
    is over (nothing follows), or when ``wait`` seconds (at most ``LONG_POLL_MAX_SECONDS``)
    have passed."""
    game = version_game(game_id=game_id)
    if events_ready(game=game, since=since) or wait <= 0:
        return game
    deadline = clock.monotonic() + min(wait, LONG_POLL_MAX_SECONDS)
    with notify.subscription(game_id) as changes:
        # Read again once subscribed: a change in between would otherwise go unnoticed.
        game = version_game(game_id=game_id)
        while (
            not events_ready(game=game, since=since)
            and _wait_for_change(game, changes, deadline) is not None
        ):
            game = version_game(game_id=game_id)
    return game


def version_game(*, game_id: int) -> Game:
    """The game's version, status and turn clock only (DoesNotExist without it)."""
    return Game.objects.only("version", "status", "turn_deadline").get(pk=game_id)


def events_ready(*, game: Game, since: int) -> bool:
    """Whether an events long poll answers now: something after ``since``, or nothing more
    to come."""
    return game.version > since or game.is_over


def game_replay_cached(*, game: Game) -> dict[str, Any]:
    """``game_replay``, built once per game and then read from the cache (Redis, shared by
    every process): a finished game never changes, and rebuilding a long one replays every
    move (114 ms for 5,000). Kept ``REPLAY_CACHE_SECONDS``, so the cache does not grow with
    every game ever played. An unreachable cache only costs the rebuild."""
    if not game.is_over:
        raise GameNotOver()
    key = f"games:replay:{game.pk}:{game.version}"
    replay = with_cache(lambda: cache.get(key), failed=None,
                        counter=metrics.REPLAY_CACHE_ERRORS, what="replay read")
    if replay is None:
        replay = game_replay(game=game)
        with_cache(lambda: cache.set(key, replay, settings.REPLAY_CACHE_SECONDS), failed=None,
                   counter=metrics.REPLAY_CACHE_ERRORS, what="replay kept")
    return replay


def game_replay(*, game: Game) -> dict[str, Any]:
    """Everything about a finished game: seed, every move, the deal of every hand and the
    final state. Only for games that are over (the caller checks the user is a player)."""
    if not game.is_over:
        raise GameNotOver()
    base = {
        "game": game.pk,
        "status": game.status,
        "end_reason": game.end_reason,
        "options": game.options,
        "seed": game.seed,
        "players": [s.player for s in game.seats.all()],
        "winner": game.winner,
        "scores": game.scores,
    }
    records = list(move_list(game=game))
    if game.state is None:  # ended before the deal
        return {**base, "moves": [], "deals": [], "final": None}
    deals, final = replay_states(options=game.options, seed=game.seed,
                                 moves=[(r.seat, r.move) for r in records])
    moves = [
        {"number": r.number, "seat": r.seat, "move": r.move, "source": r.source,
         "created_at": r.created_at}
        for r in records
    ]
    return {**base, "moves": moves, "deals": deals, "final": final}


def replay_states(
    *, options: dict[str, Any], seed: int, moves: Iterable[tuple[int, Any]]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A replay's ``deals`` (the full state at the deal of every hand) and ``final`` state: the
    game rebuilt from its seed and ``(seat, move as JSON)`` list."""
    state = engine.new_game(engine.Options.from_json(options), seed)
    deals = [engine.full_view(state)]
    for seat, move in moves:
        hand = state.hand_number
        if isinstance(move, dict):  # a log written before nulls were refused, if any
            move = {key: value for key, value in move.items() if value is not None}
        engine.apply_recorded(state, seat, engine.Move.from_json(move))  # older logs too
        if state.hand_number != hand:
            deals.append(engine.full_view(state))
    return deals, engine.full_view(state)
