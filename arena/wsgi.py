import gc
import io
import json
import os
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class ChunkedBodies:
    """Request bodies sent without a Content-Length (``Transfer-Encoding: chunked``).

    Django reads exactly CONTENT_LENGTH bytes of a body, so without one it reads none: a
    chunked JSON body would be taken as empty, silently. A server that decodes the chunks and
    marks the end of the input (``wsgi.input_terminated``: gunicorn) lets us read the body
    here, up to one byte past DATA_UPLOAD_MAX_MEMORY_SIZE (so Django still refuses one over the
    limit, a 413 under /api/), and hand it on with its length. A server that does not (the
    development server) would hand us the raw chunk framing: such a request is refused with a
    411 Length Required instead."""

    def __init__(self, app: WsgiApp) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ.get("HTTP_TRANSFER_ENCODING") and not environ.get("CONTENT_LENGTH"):
            if not environ.get("wsgi.input_terminated"):
                return _length_required(environ, start_response)
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            stream = environ["wsgi.input"]
            body = stream.read() if limit is None else stream.read(limit + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return self.app(environ, start_response)


def _length_required(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    detail = "Send the body with a Content-Length header (this server cannot read it chunked)."
    if environ.get("PATH_INFO", "").startswith("/api/"):
        body = json.dumps({"code": "length_required", "detail": detail}).encode()
        content_type = "application/json"
    else:
        body, content_type = detail.encode(), "text/plain; charset=utf-8"
    start_response("411 Length Required", [
        ("Content-Type", content_type), ("Content-Length", str(len(body))),
        ("Connection", "close"),  # the unread chunks would be taken for the next request
    ])
    return [body]


application = ChunkedBodies(get_wsgi_application())

from core.schema import query_parameters  # noqa: E402  (drf-spectacular needs the apps loaded)

# Import every view now (the URLconf is otherwise loaded by the first request), and list the
# API's query parameters from its schema (``core.schema``; otherwise built by the first
# request with a query string, which waited about half a second for it). Then take all
# these long-lived objects out of the garbage collector's sight: its passes otherwise rescan
# the whole of Django now and then on a busy worker, stopping every thread of the process
# while they run. Measured in one process playing moves: collection time per move fell from
# about 140 to 65 microseconds.
get_resolver().url_patterns  # noqa: B018
query_parameters()
gc.freeze()
