"""Errors the tournament services raise, rendered by the API's one error body.

Entering someone else's bot is ``bots.errors.NotBotOwner`` (403), a disabled one
``bots.errors.BotDisabled`` (409)."""

from __future__ import annotations

from arena.api_errors import ApiError


class NotTournamentOwner(ApiError):
    status_code = 403
    default_code = "not_tournament_owner"
    default_detail = "Only the tournament's owner (or staff) can do this."


class BotNotVerified(ApiError):
    # 409, not 400: the request is well-formed; the bot's state is what is wrong, and the same
    # request succeeds once the bot is verified (POST /api/bots/{id}/verify/).
    status_code = 409
    default_code = "bot_not_verified"
    default_detail = "The bot is not verified; verify it first (POST /api/bots/{id}/verify/)."


class AlreadyEntered(ApiError):
    status_code = 409
    default_code = "already_entered"
    default_detail = "The bot is already entered in this tournament."


class NotEntered(ApiError):
    status_code = 404
    default_code = "not_entered"
    default_detail = "The bot is not entered in this tournament."


class TournamentNotDraft(ApiError):
    status_code = 409
    default_code = "tournament_not_draft"
    default_detail = "The tournament has already started or ended."


class TournamentNotRunning(ApiError):
    status_code = 409
    default_code = "tournament_over"
    default_detail = "The tournament has already finished or been cancelled."


class TooFewEntrants(ApiError):
    status_code = 409
    default_code = "too_few_entrants"
    default_detail = "The tournament needs at least as many entrants as seats at a table."
