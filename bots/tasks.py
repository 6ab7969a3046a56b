"""Celery tasks: take ids, call the runner."""

from __future__ import annotations

from celery import shared_task

from bots.advance import advance


@shared_task(ignore_result=True)
def bot_turn(game_id: int, version: int) -> str:
    """What the bots of a game need at ``version``: a bot's decision (or the start/end
    notices). A stale version is a no-op, so late or duplicate deliveries are harmless."""
    return advance(game_id, version)
