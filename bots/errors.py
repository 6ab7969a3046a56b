"""Errors the bot services raise, rendered by the API's one error body."""

from __future__ import annotations

from rest_framework.exceptions import Throttled

from core.api_errors import ApiError


class NotBotOwner(ApiError):
    status_code = 403
    default_code = "not_bot_owner"
    default_detail = "Only the bot's owner can do this."


class BotDisabled(ApiError):
    status_code = 409
    default_code = "bot_disabled"
    default_detail = "The bot is disabled; enable it first."


class BotSeated(ApiError):
    status_code = 409
    default_code = "bot_seated"
    default_detail = "The bot has seats in games; disable it instead of deleting it."


class BotEntered(ApiError):
    status_code = 409
    default_code = "bot_entered"
    default_detail = ("The bot is entered in a tournament: withdraw it from a draft first; a "
                      "started tournament keeps its entrants. Disable it instead of deleting "
                      "it.")


class VerificationRunning(Throttled):
    """One verification at a time per user and server process: each holds a request thread
    for its whole validation game."""

    default_code = "verification_running"
    default_detail = ("A verification of yours is running; ask again when it has answered "
                      "(after Retry-After seconds at the soonest).")

    def __init__(self) -> None:
        super().__init__(wait=5, detail=self.default_detail)
