from django.urls import path

from games import api

urlpatterns = [
    path("games/", api.GameListCreateApi.as_view(), name="games"),
    path("games/<int:id>/", api.GameDetailApi.as_view(), name="game"),
    path("games/<int:id>/join/", api.GameJoinApi.as_view(), name="game-join"),
    path("games/<int:id>/leave/", api.GameLeaveApi.as_view(), name="game-leave"),
    path("games/<int:id>/start/", api.GameStartApi.as_view(), name="game-start"),
    path("games/<int:id>/view/", api.GameViewApi.as_view(), name="game-view"),
    path("games/<int:id>/moves/", api.GameMovesApi.as_view(), name="game-moves"),
    path("games/<int:id>/events/", api.GameEventsApi.as_view(), name="game-events"),
    path("games/<int:id>/replay/", api.GameReplayApi.as_view(), name="game-replay"),
]
