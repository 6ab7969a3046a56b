"""A file the celery services touch while they work, for compose's healthchecks.

``celery inspect ping`` would load the whole app (Django, every task module) in a new process
at every check; a file's age costs a ``find``. With ``CELERY_ALIVE_FILE`` set:

* a worker touches it every ``CELERY_ALIVE_SECONDS`` while its consumer runs, that is while it
  is connected to the broker and taking tasks (``AliveFile``, a consumer bootstep: the
  consumer's steps stop when the connection is lost and start again once it is back). A
  worker whose pool is busy with long matches still touches it: the consumer is the main
  process's, not the pool's;
* beat touches it at every tick of its scheduler (``AliveScheduler``), which comes at least
  every ``CELERY_ALIVE_SECONDS`` while the file is set (``beat_max_loop_interval``), whatever
  the periods of its entries.

docker-compose.yml's healthchecks call the service unhealthy when the file is over two
minutes old.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from celery import bootsteps
from celery.beat import PersistentScheduler
from django.conf import settings


def touch() -> None:
    """Mark the service alive now. A file that cannot be written is a failed healthcheck,
    never a stopped worker."""
    path = settings.CELERY_ALIVE_FILE
    if path:
        with contextlib.suppress(OSError):
            Path(path).touch()


class AliveFile(bootsteps.StartStopStep):
    """Touches the file while the worker's consumer runs."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.timer_entry: Any = None

    def start(self, consumer: Any) -> None:
        touch()
        self.timer_entry = consumer.timer.call_repeatedly(settings.CELERY_ALIVE_SECONDS, touch)

    def stop(self, consumer: Any) -> None:
        if self.timer_entry is not None:
            self.timer_entry.cancel()
            self.timer_entry = None

    shutdown = stop


class AliveScheduler(PersistentScheduler):
    """Beat's default scheduler, touching the file at every tick."""

    def tick(self, *args: Any, **kwargs: Any) -> float:
        touch()
        return float(super().tick(*args, **kwargs))
