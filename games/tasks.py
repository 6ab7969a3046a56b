"""Celery tasks: take ids, call services."""

from __future__ import annotations

from celery import shared_task

from games import services


@shared_task(ignore_result=True)
def turn_clock_check(game_id: int, version: int) -> bool:
    """Scheduled at a turn's deadline. A no-op unless the deadline truly passed (the service
    re-checks under the row lock), so early, duplicate or late deliveries are harmless.
    ``version`` is the game version when the clock was armed, for logs."""
    return services.turn_clock_enforce(game_id=game_id)


@shared_task(ignore_result=True)
def turn_clock_sweep() -> int:
    """Run by ``celery beat``: settle every overdue turn clock (whose own task was lost).
    Returns how many games it moved on."""
    return services.turn_clock_sweep()
