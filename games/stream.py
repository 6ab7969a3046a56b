"""One stream per player: what ``GET /api/stream/`` carries, read from which rows, in what order.

For the authenticated user, every game they sit in (as a user: seats of their bots are the
server's to play). The events:

* ``started``: a game they sit in was dealt (its ``started`` event row: the players);
* ``turn``: their seat is awaited; carries exactly the REST view's body (``view/``: the same
  ``selectors.game_view``), so nothing reaches the stream that the seat's view does not carry;
* ``strike`` and ``forfeited``: a seat's turn clock ran out (the public event rows);
* ``ended``: the game is over (its ``finished``/``aborted`` row: reason, winner, scores).

Resuming. The rows (all but ``turn``) are delivered in the order of their *position*, and each
carries ``id`` = its position and row id, ``"<position>-<row id>"``: the stream's cursor. A
client that reconnects with the last id it got (``Last-Event-ID`` or ``since``) gets every row
after it, and nothing twice. On SQLite the position is the row id (one writer at a time, so ids
follow the commits). On PostgreSQL ids do not follow the commits (a transaction can take id 100,
another id 101 and commit first: a cursor at 101 would skip 100 for good), so the position is
the id of the transaction that wrote the row, and a row is only delivered once *settled*: below
the read's snapshot ``xmin``, when every transaction that could still commit a lower position
has ended (``rows.stream_events``). A row waits for that at most as long as the oldest write
transaction then running, usually a few milliseconds; the stream looks again shortly
(``stream_api.HeldRecheck``). Only that game waits: the turns of the others go out as their
moves are heard.

``turn`` is state, not a row: the view of the game as it is. It is sent whenever the game's
version passed the last turn sent for it and the seat is awaited, also right after every
(re)connect, and never before a game's unsettled rows (so ``started`` comes before the first
turn, ``ended`` ends it). Its ``id`` is the cursor as it stands (it moves nothing).

``heartbeat`` (a quiet stream's sign of life) carries the cursor as it stands too, so a client
has a resume point before any event: a fresh stream's cursor is its snapshot's horizon (every
row committed from then on is past it), and a resume from it gets every row of the user's games
committed since. The cursor never goes back: it only moves to a settled row past it.

Which games. The user's seats when the stream opens, then each game whose change is heard
(``stream_api``); and since a change can still be on its way when another game's row moves
the cursor, every read of the rows also reads, in the same snapshot, the seats the user took
since the last read, and follows a game it did not know before the cursor moves
(``_rows_read``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from rest_framework.utils.encoders import JSONEncoder

from games import clock, rows, selectors, services, steps
from games.models import EventKind, Game, GameStatus
from games.notify import Change

# The event rows the stream carries (joins and leaves are the lobby's business).
ROW_KINDS = (
    EventKind.STARTED,
    EventKind.STRIKE,
    EventKind.FORFEITED,
    EventKind.FINISHED,
    EventKind.ABORTED,
)
EVENT_TYPES = ("started", "turn", "strike", "forfeited", "ended", "heartbeat")
_TYPE_OF_KIND = {
    EventKind.STARTED: "started",
    EventKind.STRIKE: "strike",
    EventKind.FORFEITED: "forfeited",
    EventKind.FINISHED: "ended",
    EventKind.ABORTED: "ended",
}
_CURSOR = re.compile(r"([0-9]{1,19})-([0-9]{1,19})")
NDJSON = "application/x-ndjson"
SSE = "text/event-stream"


@dataclass(frozen=True, order=True)
class Cursor:
    """Every row at or before ``(position, row)`` has been delivered, none after it."""

    position: int
    row: int

    def __str__(self) -> str:
        return f"{self.position}-{self.row}"

    @classmethod
    def parse(cls, text: str) -> Cursor | None:
        """The cursor an event id names; None if ``text`` is not one."""
        match = _CURSOR.fullmatch(text.strip())
        if match is None:
            return None
        return cls(int(match[1]), int(match[2]))


@dataclass
class Followed:
    """A game the stream follows: the user's seat, the version of the last turn sent and of
    the last change heard of."""

    seat: int
    # The seat read with the game running or over (seats are fixed from the start): only then
    # may a turn be made from a row without reading the seat (``recalled_turns``). One
    # learnt at an open table may change: its user can leave and sit elsewhere.
    seat_fixed: bool = False
    turn_version: int = -1
    heard_version: int = -1
    heard_status: str = ""
    new: bool = True  # none of its rows delivered yet (they all are due, cursor or not)
    # Its ``started`` delivered (or the client's already): a turn never comes before it, even
    # when the start commits between the rows' read and the turn's.
    started: bool = False
    deadline: datetime | None = None  # the turn clock's, when last read


# How many ended games a stream remembers having let go (``StreamState.over``).
OVER_KEPT = 10_000


@dataclass
class StreamState:
    """One open stream's state; the stream calls the functions below one at a time."""

    user_id: int
    cursor: Cursor
    seats_read_at: datetime  # seats taken before this were read (less a clock skew's margin)
    games: dict[int, Followed] = field(default_factory=dict)
    held: set[int] = field(default_factory=set)  # games with unsettled rows: look again soon
    # Games that ended and left the stream, newest last. A change of one can still be heard
    # after its end was read (a turn clock the stream played itself: its commits are heard
    # after the read that found the end); followed again, the game would count as new and
    # send every row of it a second time.
    over: dict[int, None] = field(default_factory=dict)

    def follow(self, game_id: int, seat: int) -> None:
        """Follow the game at ``seat``, as the user sits now (read, or told by the router
        with a change): a game followed already takes the seat if it moved (its user left
        an open table's seat and took another)."""
        followed = self.games.get(game_id)
        if followed is None:
            if game_id not in self.over:
                self.games[game_id] = Followed(seat)
        elif followed.seat != seat:
            followed.seat, followed.seat_fixed = seat, False

    def let_go(self, game_id: int) -> None:
        """Stop following an ended game, for good (an end is final)."""
        self.games.pop(game_id, None)
        self.over[game_id] = None
        if len(self.over) > OVER_KEPT:
            del self.over[next(iter(self.over))]


def ahead(cursor: Cursor) -> bool:
    """Whether ``cursor`` is past every cursor this server can have handed out: past the
    horizon now (64-bit positions on PostgreSQL, the xid's epoch and all: ``rows``). An id is
    a snapshot's ``(horizon, 0)``, a settled row's (below its read's horizon) or the cursor as
    it stood, and the horizon never goes back: a transaction of this database running now ran
    at that read too (then it counted: the horizon is the oldest such) or began after it (its
    id past that read's xmax); on SQLite it is past the highest row id ever given. Resumed
    from, such a cursor (another server's, or from before the database was replaced) would
    skip every row below it for good."""
    return cursor > Cursor(rows.stream_events([], ROW_KINDS).horizon, 0)


def resume_window() -> timedelta:
    return timedelta(seconds=settings.STREAM_RESUME_SECONDS)


def open_stream(*, user_id: int, since: Cursor | None) -> tuple[StreamState, list[dict[str, Any]]]:
    """A new stream's state and its first events. Without ``since``: the games running now
    (``started``, then ``turn`` where the seat is awaited), and from then on what happens.
    With ``since`` (a cursor this stream handed out): every row after it, in the games the
    user sat in then (over ones too, within ``STREAM_RESUME_SECONDS``), and the turns due."""
    now = clock.now()
    ended_since = now - resume_window() if since is not None else now
    seats = rows.stream_seats(user_id, ended_since=ended_since)
    state = StreamState(user_id=user_id, cursor=since or Cursor(0, 0), seats_read_at=now)
    for game_id, seat, status in seats:
        state.follow(game_id, seat)
        state.games[game_id].new = False  # rows before the cursor are the client's already
        state.games[game_id].seat_fixed = status != GameStatus.OPEN
        # Resumed: a game dealt before the cursor had its ``started`` sent then. (Fresh: the
        # snapshot sends them.)
        state.games[game_id].started = since is not None and status != GameStatus.OPEN
    if since is None:
        return state, _snapshot(state)
    return state, read(state)


def _snapshot(state: StreamState) -> list[dict[str, Any]]:
    """A fresh stream: the running games' ``started`` rows, the cursor at the horizon (every
    settled row is behind it: a fresh client wants what happens from now on), then any turn
    due. Rows not yet settled come the usual way."""
    horizon, found = _rows_read(state, new=False)
    state.cursor = Cursor(horizon, 0)
    # Running now is what the rows say, not the seats' status: the seats were read first, in
    # a statement of their own, and a game still open then may have started since. Its
    # ``started`` row is then behind the cursor, and only the snapshot can send it (a turn is
    # held until its game's ``started`` has gone out).
    settled = [row for row in sorted(found, key=_order) if row.position < horizon]
    over = {row.game_id for row in settled
            if row.kind in (EventKind.FINISHED, EventKind.ABORTED)}
    events = [_row_event(row, state.cursor) for row in settled
              if row.kind == EventKind.STARTED and row.game_id not in over]
    for game_id in over:  # ended between the two reads: not running now
        state.let_go(game_id)
    for event in events:
        state.games[event["game"]].started = True
    state.held = {row.game_id for row in found if row.position >= horizon}
    return events + _turns(state, set(state.games) - state.held)


# How many times one read looks again after finding the user seated at games it did not follow.
UNHEARD_ROUNDS = 3
# How far apart the clocks of the processes stamping seats (``joined_at``) may be.
CLOCK_SKEW = timedelta(seconds=30)


def _rows_read(state: StreamState, *, new: bool) -> tuple[int, list[rows.StreamRow]]:
    """The followed games' rows, read in one snapshot with the user's seats at live games. A
    game the user sits in that this stream has not heard of yet (its NOTIFY still on the way)
    is followed, ``new`` or not, and everything read again before the cursor can move: resumed
    from a cursor past that game's rows, a stream takes them as delivered (its ``started``
    would be lost for good). Also how a stream finds the games seated while its process heard
    nothing (LISTEN down: it reads on a timer). Only seats taken since the last read are
    looked up (a clock skew's margin included): a bot's whole history is not read each time."""
    for round_ in range(UNHEARD_ROUNDS):
        read_at = clock.now()
        found = rows.stream_events(list(state.games), ROW_KINDS, user_id=state.user_id,
                                   joined_since=state.seats_read_at - CLOCK_SKEW)
        unheard = [(g, s) for g, s in found.seats if g not in state.games and g not in state.over]
        for game_id, seat in found.seats:  # a seat moved at an open table
            if game_id in state.games:
                state.follow(game_id, seat)
        if not unheard or round_ == UNHEARD_ROUNDS - 1:
            break
        for game_id, seat in unheard:
            state.follow(game_id, seat)
            state.games[game_id].new = new
    state.seats_read_at = read_at
    return found.horizon, found.rows


NO_READ, TURN_ONLY, ROWS_TOO = 0, 1, 2


def needs_read(state: StreamState, game_id: int, version: int | None,
               awaiting: int | None, status: str) -> int:
    """What a notified change of a followed game needs read. A plain move (the version one
    past the last heard of, the game running before and after) writes no row the stream
    carries: to another seat, nothing; to this one, only its turn. Anything else may have
    written rows: the start, the end, a strike or a forfeit (each its own version, so the
    versions jump), or changes not heard of."""
    followed = state.games.get(game_id)
    if followed is None or version is None or followed.new or game_id in state.held:
        return ROWS_TOO
    previous, followed.heard_version = followed.heard_version, max(version, followed.heard_version)
    was, followed.heard_status = followed.heard_status, status
    if status != GameStatus.RUNNING or was != GameStatus.RUNNING or version != previous + 1:
        return ROWS_TOO
    if awaiting == followed.seat and version > followed.turn_version:
        return TURN_ONLY
    return NO_READ


def recalled_turns(
    state: StreamState, changed: set[int], heard: Mapping[int, Change] | None = None
) -> list[dict[str, Any]] | None:
    """``read_turns`` without the database, if every one of the games' rows at the version
    last heard of is here: kept by this process (a move played here, ``rows.recalled_game``)
    or carried by the change ``heard`` of it (a move played in another process: the NOTIFY's
    row, ``rows.notified_game``); None if any is missing. Pure computation: the stream runs it
    on its event loop, saving the wake-up two thread hops and a query. (Only ``TURN_ONLY``
    games come here: running, seats unchanged since the seat was learnt.)"""
    games: dict[int, Game] = {}
    for game_id in changed - state.held:
        followed = state.games.get(game_id)
        if followed is None:
            continue
        if not followed.started or not followed.seat_fixed or followed.heard_version < 0:
            return None
        change = (heard or {}).get(game_id)
        row = change.row if change is not None else None
        game = rows.game_heard(game_id, followed.heard_version, row)
        if game is None:
            return None
        games[game_id] = game
    return _turns(state, set(games), games)


def read_turns(state: StreamState, changed: set[int]) -> list[dict[str, Any]]:
    """The turns due in ``changed`` games, when no rows can have been written (``TURN_ONLY``:
    one query per game, the rows' none)."""
    return _turns(state, changed - state.held)


def read(state: StreamState, changed: set[int] | None = None, *,
         clock_tried: Collection[int] = ()) -> list[dict[str, Any]]:
    """Every settled row after the cursor in the followed games (all rows of a game newly
    followed), in order; then the turns due in the ``changed`` games (None: all), those with
    rows now, and those held before. Games that ended leave the stream. ``clock_tried``: see
    ``_turns``."""
    horizon, found = _rows_read(state, new=True)  # with no game followed, the new seats still
    events: list[dict[str, Any]] = []
    unsettled: set[int] = set()
    ended: set[int] = set()
    touched: set[int] = set()
    for row in sorted(found, key=_order):
        if row.position >= horizon:
            unsettled.add(row.game_id)
            continue
        here = Cursor(row.position, row.id)
        if here > state.cursor:
            state.cursor = here
        elif not state.games[row.game_id].new:
            continue  # delivered before
        events.append(_row_event(row, max(here, state.cursor)))
        touched.add(row.game_id)
        if row.kind == EventKind.STARTED:
            state.games[row.game_id].started = True
        if row.kind in (EventKind.FINISHED, EventKind.ABORTED):
            ended.add(row.game_id)
    for followed in state.games.values():
        followed.new = False
    due = set(state.games) if changed is None else (changed | touched | state.held)
    state.held = unsettled
    events += _turns(state, due - unsettled - ended, clock_tried=clock_tried)
    # A game whose seat ``_turns`` found gone (its user left the open table for good) sends
    # nothing of what happened after: no ``started`` for a game the user does not play.
    left = {game_id for game_id in touched if game_id not in state.games}
    if left:
        events = [event for event in events if event.get("game") not in left]
    for game_id in ended - unsettled:
        state.let_go(game_id)
    return events


def next_deadline(state: StreamState) -> datetime | None:
    """The earliest turn clock of the followed games, as last read."""
    return min((f.deadline for f in state.games.values() if f.deadline is not None), default=None)


def settle_clocks(state: StreamState) -> list[dict[str, Any]]:
    """Play the clock's move in every followed game whose turn ran out (what a long poll does
    at a deadline: with no worker, as in the embedded default, a table would otherwise wait
    for a read that may never come), then read them."""
    now = clock.now()
    overdue = {g for g, f in state.games.items() if f.deadline is not None and f.deadline <= now}
    for game_id in overdue:
        services.turn_clock_enforce(game_id=game_id)
        # Read again below, afresh: the clock's move is not heard yet, and the version last
        # heard of would read the game as it stood before it (a row this process holds).
        state.games[game_id].deadline = None
        state.games[game_id].heard_version = -1
    events = read(state, overdue, clock_tried=overdue)
    for game_id in overdue & set(state.games):
        followed = state.games[game_id]
        if followed.deadline is not None and followed.deadline <= now:
            # Not played here (a driver holds the game): its next change brings it back,
            # rather than this stream reading it again and again meanwhile.
            followed.deadline = None
    return events


def _order(row: rows.StreamRow) -> tuple[int, int]:
    return row.position, row.id


def _row_event(row: rows.StreamRow, cursor: Cursor) -> dict[str, Any]:
    """A row as the stream tells it: the public event's own fields, nothing else."""
    kind = _TYPE_OF_KIND[EventKind(row.kind)]
    event: dict[str, Any] = {
        "id": str(cursor), "type": kind, "game": row.game_id, "version": row.version,
    }
    data = row.data
    if kind == "started":
        event["players"] = data.get("players", [])
    elif kind in ("strike", "forfeited"):
        event["seat"] = row.seat
        if kind == "strike":
            event["strikes"] = data.get("strikes")
            event["max_strikes"] = data.get("max_strikes")
        if "reason" in data:
            event["reason"] = data["reason"]
    else:
        event["status"] = (
            GameStatus.FINISHED if row.kind == EventKind.FINISHED else GameStatus.ABORTED
        )
        event["reason"] = data.get("reason", "")
        event["winner"] = data.get("winner")
        event["scores"] = data.get("scores", [])
    return event


def _turns(
    state: StreamState, games: set[int], recalled: dict[int, Game] | None = None, *,
    clock_tried: Collection[int] = (),
) -> list[dict[str, Any]]:
    """A ``turn`` for each of ``games`` awaiting the user's seat at a version past the last
    turn sent for it. The game is read with the seat (one query each), unless ``recalled``
    has it (the seat is then the one followed). A turn whose clock ran out waits for the
    clock to be played (``settle_clocks``), unless its game is in ``clock_tried``: played, or
    not playable here, it goes out as read."""
    events = []
    for game_id in sorted(games):
        followed = state.games.get(game_id)
        if followed is None:
            continue
        if not followed.started:  # its start committed after the rows were read: read again
            state.held.add(game_id)
            continue
        # The version last heard of: this process may hold that row already (its own move).
        known = followed.heard_version if followed.heard_version >= 0 else None
        if recalled is not None and game_id in recalled:
            game, index = recalled[game_id], followed.seat
        else:
            seat = rows.seat_with_game(game_id, state.user_id, version=known)
            if seat is None:  # not seated there any more (left before the start)
                del state.games[game_id]
                continue
            game, index = seat.game, seat.index
            followed.seat = index
            followed.seat_fixed = game.status != GameStatus.OPEN
        if game.version >= followed.heard_version:
            followed.heard_version, followed.heard_status = game.version, game.status
        followed.deadline = game.turn_deadline if game.status == GameStatus.RUNNING else None
        if game.status != GameStatus.RUNNING or game.awaiting != index:
            continue
        if game.version <= followed.turn_version:
            continue
        if game.pk not in clock_tried and steps.turn_clock_overdue(game):
            # Its time ran out: a move now would meet the clock's first (409). The stream
            # plays the clock at its deadline (``settle_clocks``) and sends the turn after.
            continue
        followed.turn_version = game.version
        body = {
            "game": game.pk, "version": game.version, "seat": index,
            "status": game.status, "turn_deadline": game.turn_deadline,
            "view": selectors.game_view(game=game, seat=index),
        }
        events.append({"id": str(state.cursor), "type": "turn", **body})
    return events


# --- the wire --------------------------------------------------------------------------------
def to_json(event: dict[str, Any]) -> str:
    return json.dumps(event, cls=JSONEncoder, separators=(",", ":"))


def ndjson(event: dict[str, Any]) -> bytes:
    """One event as a line of JSON (a heartbeat too: ``{"id":"5407-81","type":"heartbeat"}``)."""
    return (to_json(event) + "\n").encode()


def sse(event: dict[str, Any]) -> bytes:
    """One event as a Server-Sent Event: ``id`` (an ``EventSource`` resends it as
    ``Last-Event-ID``), ``event`` (the type) and ``data`` (the same JSON as NDJSON). A
    heartbeat is a comment and its ``id``: with no ``data`` an ``EventSource`` dispatches
    nothing, but takes the id as its last one all the same."""
    if event.get("type") == "heartbeat":
        return f": heartbeat\nid: {event['id']}\n\n".encode()
    lines = [f"id: {event['id']}"] if "id" in event else []
    lines += [f"event: {event['type']}", f"data: {to_json(event)}"]
    return ("\n".join(lines) + "\n\n").encode()


def heartbeat(state: StreamState) -> dict[str, Any]:
    """A quiet stream's sign of life, with the cursor as it stands as its ``id``: a client that
    connected before any event of its own (not seated yet) has a resume point all the same."""
    return {"id": str(state.cursor), "type": "heartbeat"}
