"""The web process's application (``arena.serving`` says how it serves): run it with
``gunicorn arena.asgi -k arena.workers.Worker`` (docker-compose.yml, the image)."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")

from a2wsgi import WSGIMiddleware
from django.conf import settings

from arena import wsgi
from arena.serving import Router, WaitingHandler, terminated

application = Router(
    waiting=WaitingHandler(),
    others=WSGIMiddleware(terminated(wsgi.application), workers=settings.WEB_THREADS),  # type: ignore[arg-type]
)
