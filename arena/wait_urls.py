"""The URLconf of the waiting requests (``arena.serving``): the three waiting endpoints as
their thread-free versions, the stream's synchronous start (the stream itself is sent from
the event loop), then everything else as usual."""

from django.urls import include, path

import core.converters  # noqa: F401  (registers <id:…>)
from arena.urls import handler400, handler403, handler404, handler500  # noqa: F401
from games import stream_api, wait_api
from games.waiting import resumable

urlpatterns = [
    path("api/games/<id:id>/moves/", resumable(wait_api.GameMovesWaitApi), name="game-moves"),
    path("api/games/<id:id>/view/", resumable(wait_api.GameViewWaitApi), name="game-view"),
    path("api/games/<id:id>/events/", resumable(wait_api.GameEventsWaitApi), name="game-events"),
    path("api/stream/", stream_api.stream_start, name="stream"),
    path("", include("arena.urls")),
]
