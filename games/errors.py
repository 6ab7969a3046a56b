"""Errors raised by the game services. Each has a stable ``code`` and an HTTP status, and the
API's exception handler renders them as ``{"code", "detail", ...}``."""

from __future__ import annotations

from core.api_errors import ApiError


class GameError(ApiError):
    status_code = 409
    default_code = "conflict"
    default_detail = "The game is not in a state that allows this."


class NotAPlayer(GameError):
    status_code = 403
    default_code = "not_a_player"
    default_detail = "You have no seat in this game."


class NotCreator(GameError):
    status_code = 403
    default_code = "not_creator"
    default_detail = "Only the game's creator can do this."


class GameNotOpen(GameError):
    default_code = "game_not_open"
    default_detail = "The game has already started or ended."


class GameNotRunning(GameError):
    default_code = "game_not_running"
    default_detail = "The game is not running."


class GameNotOver(GameError):
    default_code = "game_not_over"
    default_detail = "The replay is available once the game is over."


class ReplayHeld(GameError):
    default_code = "replay_held"
    default_detail = (
        "The game is over, but its replay is held: its deal is still to be played in another "
        "game. A tournament's games open when the tournament ends."
    )


class AlreadySeated(GameError):
    default_code = "already_seated"
    default_detail = "You already have a seat in this game."


class SeatTaken(GameError):
    default_code = "seat_taken"
    default_detail = "That seat is taken."


class GameFull(GameError):
    default_code = "game_full"
    default_detail = "Every seat is taken."


class TooManyOpenTables(GameError):
    default_code = "too_many_open_tables"
    default_detail = (
        "You have as many open tables as one player may: start one, or leave one you sit at "
        "(the last player leaving ends it), before creating another."
    )


class SeatsOpen(GameError):
    default_code = "seats_open"
    default_detail = "Every seat must be taken before the game starts."


class SeatForfeited(GameError):
    default_code = "seat_forfeited"
    default_detail = "Your seat was forfeited after too many timeouts; the server plays it."


class NotYourTurn(GameError):
    default_code = "not_your_turn"
    default_detail = "It is not your turn."


class StaleVersion(GameError):
    default_code = "stale_version"
    default_detail = "The game moved on since that version; fetch the view and decide again."

    def __init__(self, current: int, sent: int | None = None) -> None:
        # A version the game has not reached yet is a client's mistake, not a race: say so.
        detail = (f"The game is at version {current}, not yet at {sent}; fetch the view and "
                  "send its version." if sent is not None and sent > current else None)
        super().__init__(detail, extra={"version": current})


class IllegalMoveError(GameError):
    status_code = 422
    default_code = "illegal_move"


class MalformedMoveError(GameError):
    status_code = 400
    default_code = "malformed_move"


class InvalidOptions(GameError):
    """Engine options rejected; rendered like a validation error naming the field."""

    status_code = 400
    default_code = "invalid"

    def __init__(self, field: str, reason: str) -> None:
        name = f"options.{field}" if field != "options" else "options"
        super().__init__(f"{name}: {reason}", extra={"fields": {name: [reason]}})


class IdempotencyKeyReused(GameError):
    status_code = 422
    default_code = "idempotency_key_reused"
    default_detail = (
        "This Idempotency-Key was already used for a different request; use a new key for a "
        "new request."
    )
