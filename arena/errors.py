"""The tournament services' refusals: each a stable code and status in the API's error body."""

from __future__ import annotations

from core.api_errors import ApiError


class TournamentError(ApiError):
    status_code = 409
    default_code = "tournament_conflict"
    default_detail = "The tournament is not in a state that allows this."


class NotTournamentOwner(ApiError):
    status_code = 403
    default_code = "not_tournament_owner"
    default_detail = "Only the tournament's owner (or staff) can do this."


class NotBotOwner(ApiError):
    status_code = 403
    default_code = "not_bot_owner"
    default_detail = "Only the bot's owner can enter or withdraw it."


class BotNotEligible(ApiError):
    status_code = 409
    default_code = "bot_not_eligible"
    default_detail = "Only verified, enabled bots can enter a tournament."
