from django.urls import path

import core.converters  # noqa: F401  (registers <id:…>)
from games import api, play_api, stream_api

# Tried in order: what a bot sends on every turn first.
urlpatterns = [
    path("games/<id:id>/moves/", play_api.GameMovesApi.as_view(), name="game-moves"),
    path("games/<id:id>/view/", play_api.GameViewApi.as_view(), name="game-view"),
    path("games/<id:id>/events/", api.GameEventsApi.as_view(), name="game-events"),
    path("stream/", stream_api.stream_view, name="stream"),
    path("games/", api.GameListCreateApi.as_view(), name="games"),
    path("games/<id:id>/", api.GameDetailApi.as_view(), name="game"),
    path("games/<id:id>/join/", api.GameJoinApi.as_view(), name="game-join"),
    path("games/<id:id>/leave/", api.GameLeaveApi.as_view(), name="game-leave"),
    path("games/<id:id>/start/", api.GameStartApi.as_view(), name="game-start"),
    path("games/<id:id>/replay/", api.GameReplayApi.as_view(), name="game-replay"),
]
