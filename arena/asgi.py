"""The web process's application (``arena.serving`` says how it serves): run it with
``gunicorn arena.asgi -k arena.workers.Worker`` (docker-compose.yml, the image)."""

import gc
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")

from django.conf import settings

from arena import wsgi
from arena.serving import Router, WaitingHandler, terminated
from arena.wsgi_threads import ThreadedWsgi

# A full collection only every GC_FULL_EVERY middle-generation ones (see the setting).
young, middle, _full = gc.get_threshold()
gc.set_threshold(young, middle, settings.GC_FULL_EVERY)

application = Router(
    waiting=WaitingHandler(),
    others=ThreadedWsgi(terminated(wsgi.application), settings.WEB_THREADS),
)

