"""Example bodies for the games API's OpenAPI schema (see ``games.api``).

Every value here is FABRICATED, never taken from a real game: a running game's examples show
only what its seat may see (no seed, state, rng, deck or other hand). Only the replay, served
once the game is over, shows the seed, hands and deck. One story runs through them: table 7,
two seats, "my-bot" (seat 0) against "rival" (seat 1), one hand, 30 s per turn.
``tests/arena/test_schema_examples.py`` checks them against the schema and against the keys
the endpoints really send.
"""

from __future__ import annotations

from typing import Any

OPTIONS: dict[str, Any] = {
    "players": 2,
    "stacking": False,
    "seven_o": False,
    "jump_in": False,
    "draw_until_playable": False,
    "deck_2018": False,
    "start_2022": False,
    "single_hand": True,
    "target_score": 500,
}

# --- requests ---------------------------------------------------------------------------------
CREATE_REQUEST = {"seats": 2, "options": {"single_hand": True}, "turn_seconds": 30}
JOIN_REQUEST_ANY: dict[str, Any] = {}
JOIN_REQUEST_SEAT = {"seat": 1}
JOIN_REQUEST_BOT = {"bot": 3, "seat": 1}
LEAVE_REQUEST_BOT = {"bot": 3}
MOVE_REQUEST_PLAY = {"version": 12, "move": {"type": "play", "card": "R5"}}
MOVE_REQUEST_WILD = {"version": 12, "move": {"type": "play", "card": "W", "color": "green"}}
MOVE_REQUEST_UNO = {"version": 12, "move": {"type": "play", "card": "G7", "uno": True}}
MOVE_REQUEST_DRAW = {"version": 12, "move": {"type": "draw"}}
MOVE_REQUEST_CATCH = {"version": 12, "move": {"type": "catch", "target": 1}}


# --- games ------------------------------------------------------------------------------------
def _seat(index: int, player: str | None) -> dict[str, Any]:
    return {"index": index, "player": player, "strikes": 0, "forfeited": False}


GAME_OPEN: dict[str, Any] = {
    "id": 7,
    "status": "open",
    "end_reason": "",
    "options": OPTIONS,
    "seats": [_seat(0, "my-bot"), _seat(1, None)],
    "open_seats": 1,
    "my_seat": 0,
    "version": 1,
    "move_count": 0,
    "awaiting": None,
    "turn_deadline": None,
    "turn_seconds": 30,
    "max_strikes": 3,
    "hand_number": 0,
    "scores": [],
    "winner": None,
    "created_by": "my-bot",
    "created_at": "2025-01-01T12:00:00Z",
    "started_at": None,
    "finished_at": None,
}

# As another player sees it in the list of tables with a free seat.
GAME_LISTED = {**GAME_OPEN, "my_seat": None}

# Seat 1 taken, by the caller.
GAME_JOINED = {
    **GAME_OPEN,
    "seats": [_seat(0, "my-bot"), _seat(1, "rival")],
    "open_seats": 0,
    "my_seat": 1,
    "version": 2,
}

# Seat 1 given up again (by the caller) before the start.
GAME_LEFT = {**GAME_OPEN, "my_seat": None, "version": 3}

GAME_STARTED = {
    **GAME_JOINED,
    "status": "running",
    "my_seat": 0,
    "version": 3,
    "awaiting": 0,
    "turn_deadline": "2025-01-01T12:00:40Z",
    "hand_number": 1,
    "scores": [0, 0],
    "started_at": "2025-01-01T12:00:10Z",
}

GAME_RUNNING = {
    **GAME_STARTED,
    "version": 12,
    "move_count": 9,
    "turn_deadline": "2025-01-01T12:01:00Z",
}

GAME_FINISHED = {
    **GAME_STARTED,
    "status": "finished",
    "end_reason": "match",
    "version": 41,
    "move_count": 37,
    "awaiting": None,
    "turn_deadline": None,
    "scores": [86, 0],
    "winner": 0,
    "finished_at": "2025-01-01T12:04:30Z",
}


# --- play -------------------------------------------------------------------------------------
def _wild(*, uno: bool = False) -> list[dict[str, Any]]:
    extra = {"uno": True} if uno else {}
    return [
        {"type": "play", "card": "W", "color": color, **extra}
        for color in ("red", "yellow", "green", "blue")
    ]


def _public(**changes: Any) -> dict[str, Any]:
    """What every seat may know of table 7 at version 12 (the engine's ``_public`` keys, in
    its order), changed."""
    public = {
        "options": OPTIONS,
        "hand_counts": [3, 6],
        "top": "R2",
        "color": "red",
        "direction": 1,
        "turn": 0,
        "awaiting": 0,
        "phase": "play",
        "uno_window": None,
        "scores": [0, 0],
        "hand_number": 1,
        "dealer": 1,
        "deck_count": 91,
        "discard_count": 8,
        "move_count": 9,
        "finished": False,
        "winner": None,
        "last_hand": None,
    }
    return {**public, **changes}


def _view(**changes: Any) -> dict[str, Any]:
    """Seat 0's view of table 7 at version 12, changed."""
    view = {
        **_public(),
        "seat": 0,
        "hand": ["R5", "G7", "W"],
        "pending": None,
        "challenge_reveal": None,
        "legal_moves": [{"type": "play", "card": "R5"}, *_wild(), {"type": "draw"}],
    }
    return {**view, **changes}


VIEW_EXAMPLE: dict[str, Any] = {
    "game": 7,
    "version": 12,
    "seat": 0,
    "status": "running",
    "turn_deadline": "2025-01-01T12:01:00Z",
    "view": _view(),
}

MOVE_RECORD = {
    "number": 10,
    "version": 13,
    "seat": 0,
    "move": {"type": "play", "card": "R5"},
    "source": "player",
    "created_at": "2025-01-01T12:00:40Z",
}

# 201 to MOVE_REQUEST_PLAY: the mover's view right after the move, and the move's record.
MOVE_PLAYED = {
    "game": 7,
    "version": 13,
    "seat": 0,
    "status": "running",
    "turn_deadline": "2025-01-01T12:01:10Z",
    "view": _view(
        hand_counts=[2, 6], top="R5", turn=1, awaiting=1, discard_count=9, move_count=10,
        hand=["G7", "W"], legal_moves=[],
    ),
    "played": MOVE_RECORD,
}

# The same move with ?wait=25&until=turn: answered once rival has replied (R9, version 14).
MOVE_PLAYED_AND_WAITED = {
    **MOVE_PLAYED,
    "version": 14,
    "turn_deadline": "2025-01-01T12:01:20Z",
    "view": _view(
        hand_counts=[2, 5], top="R9", discard_count=10, move_count=11, hand=["G7", "W"],
        legal_moves=[*_wild(), *_wild(uno=True), {"type": "draw"}],
    ),
}


def _event(version: int, kind: str, seat: int | None, data: dict[str, Any], at: str) -> Any:
    return {
        "version": version, "kind": kind, "seat": seat, "data": data,
        "created_at": f"2025-01-01T12:00:{at}Z",
    }


EVENTS = {
    "game": 7,
    "version": 4,
    "status": "running",
    "events": [
        _event(1, "joined", 0, {"player": "my-bot"}, "00"),
        _event(2, "joined", 1, {"player": "rival"}, "05"),
        _event(3, "started", None, {"players": ["my-bot", "rival"]}, "10"),
        _event(4, "move", 0, {"number": 1, "move": {"type": "draw"}, "source": "player"}, "12"),
    ],
    "more": False,
}

# A long poll (since=12&wait=25) that saw nothing happen.
EVENTS_NONE = {"game": 7, "version": 12, "status": "running", "events": [], "more": False}


# --- replay (the game is over: hands, deck and seed may be shown) ----------------------------
def _full(**changes: Any) -> dict[str, Any]:
    """The engine's full state view of a tiny made-up deal (the deck cut short)."""
    full = {
        **_public(hand_counts=[2, 2], deck_count=3, discard_count=1, move_count=0),
        "seed": 12345,
        "hands": [["R5", "G5"], ["B1", "Y9"]],
        "deck": ["R5", "Y4", "B7"],
        "discard": ["R2"],
        "pending": None,
        "legal_moves": {
            "0": [
                {"type": "play", "card": "R5"},
                {"type": "play", "card": "R5", "uno": True},
                {"type": "draw"},
            ],
            "1": [],
        },
    }
    return {**full, **changes}


def _replay_move(number: int, seat: int, move: dict[str, Any], at: str) -> dict[str, Any]:
    return {
        "number": number, "seat": seat, "move": move, "source": "player",
        "created_at": f"2025-01-01T12:00:{at}Z",
    }


REPLAY = {
    "game": 7,
    "status": "finished",
    "end_reason": "match",
    "options": OPTIONS,
    "seed": 12345,
    "players": ["my-bot", "rival"],
    "winner": 0,
    "scores": [15, 0],
    "moves": [
        _replay_move(1, 0, {"type": "play", "card": "R5", "uno": True}, "12"),
        _replay_move(2, 1, {"type": "draw"}, "15"),
        _replay_move(3, 1, {"type": "keep"}, "16"),
        _replay_move(4, 0, {"type": "play", "card": "G5"}, "20"),
    ],
    "deals": [_full()],
    "final": _full(
        hand_counts=[0, 3], top="G5", color="green", turn=0, awaiting=None, phase="over",
        scores=[15, 0], deck_count=2, discard_count=3, move_count=4, finished=True, winner=0,
        last_hand={"hand_number": 1, "winner": 0, "points": 15, "reason": "out",
                   "hand_points": [15, 0]},
        hands=[[], ["B1", "Y9", "R5"]], deck=["Y4", "B7"], discard=["R2", "R5", "G5"],
        legal_moves={"0": [], "1": []},
    ),
}

# A table aborted before the deal: nothing was dealt.
REPLAY_ABORTED = {
    "game": 8,
    "status": "aborted",
    "end_reason": "abandoned",
    "options": OPTIONS,
    "seed": 67890,
    "players": [None, None],
    "winner": None,
    "scores": [],
    "moves": [],
    "deals": [],
    "final": None,
}
