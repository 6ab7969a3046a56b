"""Celery tasks: take ids, call the tournament services."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from arena import services


@shared_task(
    ignore_result=True,
    # Acknowledged when it ends, and given back to the broker if its worker process dies, so
    # a match is never lost; the claim (services.match_claim) makes a second delivery a no-op.
    acks_late=True,
    reject_on_worker_lost=True,
    time_limit=settings.TOURNAMENT_MATCH_TIME_LIMIT,
)
def match_play(match_id: int) -> bool:
    """Play one match of a tournament (its unrecorded games), and the next pending ones as its
    games run out (TOURNAMENT_CHAIN_MATCHES). False if another worker has it or it is over."""
    return services.match_play(match_id=match_id)


@shared_task(ignore_result=True)
def tournament_finalize(tournament_id: int) -> bool:
    return services.tournament_finalize(tournament_id=tournament_id)


@shared_task(ignore_result=True)
def tournament_sweep() -> dict[str, int]:
    """Run by ``celery beat``: re-send lost or orphaned matches, finalize what is over."""
    return services.tournament_sweep()
