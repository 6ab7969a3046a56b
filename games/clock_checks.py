"""The turn clock's checks as Celery tasks: each new turn gets a deadline, and a worker checks it
just after (``games.tasks.turn_clock_check``), once the change commits. What the check does is
``games.services.turn_clock_enforce``; this module only decides whether and when to ask.

Nothing here may turn a committed change into an error: a broker that cannot be reached leaves
the clock to the periodic sweep and the lazy check on every read (see ``schedule``).
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction

from core import broker, metrics
from games import clock, hooks
from games.models import Game


def arm(game: Game) -> None:
    """A new turn: its deadline, and a worker's check just after it."""
    set_deadline(game)
    schedule(game)


def set_deadline(game: Game) -> None:
    game.turn_deadline = clock.now() + timedelta(seconds=game.turn_seconds)


def schedule(game: Game) -> None:
    """Have a worker check the clock just after the deadline (once the change commits)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        # Eager "scheduling" would run the check now, before the deadline: a no-op. The lazy
        # enforcement on every read and write covers the embedded default.
        return
    if game.turn_seconds > settings.TURN_CLOCK_TASK_MAX_SECONDS:
        return  # a long turn is the sweep's (see settings): no task held for hours
    if hooks.is_driven(game.pk):
        return  # its driver checks the clock before every decision (bots.runner.play_game)
    game_id, version, countdown = game.pk, game.version, game.turn_seconds + 0.5

    def publish() -> None:
        from games.tasks import turn_clock_check

        # The change is committed: a broker that fails leaves this clock to the periodic
        # sweep (celery beat) and the lazy check on every read, never an error.
        broker.send(
            lambda: turn_clock_check.apply_async((game_id, version), countdown=countdown),
            counter=metrics.TURN_CLOCK_SCHEDULE_ERRORS,
            what=f"turn clock of game {game_id} (version {version})",
            instead="left to the sweep",
        )

    transaction.on_commit(publish)

