import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
application = get_wsgi_application()

# Import every view now (the URLconf is otherwise loaded by the first request), then take all
# these long-lived objects out of the garbage collector's sight: without it, the collector's
# full passes rescan the whole of Django on a busy worker (about a tenth of a move's CPU in
# bench/api.py), stopping every thread of the process while they run.
get_resolver().url_patterns  # noqa: B018
gc.freeze()
