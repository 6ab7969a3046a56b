import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
application = get_wsgi_application()

# Import every view now (the URLconf is otherwise loaded by the first request), then take all
# these long-lived objects out of the garbage collector's sight: its passes otherwise rescan
# the whole of Django now and then on a busy worker, stopping every thread of the process
# while they run. Measured in one process playing moves: collection time per move fell from
# about 140 to 65 microseconds.
get_resolver().url_patterns  # noqa: B018
gc.freeze()
