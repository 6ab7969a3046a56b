"""The Celery app. Without CELERY_BROKER_URL, tasks run eagerly in the calling process."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")

app = Celery("arena")
app.config_from_object("django.conf:settings", namespace="CELERY")
if app.conf.broker_url is None:
    app.conf.broker_url = "memory://"
app.autodiscover_tasks()
# The worker's liveness file (compose's healthcheck; arena/liveness.py).
app.steps["consumer"].add("arena.liveness:AliveFile")
