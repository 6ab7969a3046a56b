"""Tournament, leaderboard and rating paths of the API (included by arena/api_urls.py)."""

from django.urls import path

import core.converters  # noqa: F401  (registers <id:…>)
from arena import api

urlpatterns = [
    path("tournaments/", api.TournamentListCreateApi.as_view(), name="tournaments"),
    path("tournaments/<id:id>/", api.TournamentDetailApi.as_view(), name="tournament"),
    path("tournaments/<id:id>/entrants/", api.TournamentEntrantsApi.as_view(),
         name="tournament-entrants"),
    path("tournaments/<id:id>/entrants/<id:bot_id>/", api.TournamentEntrantApi.as_view(),
         name="tournament-entrant"),
    path("tournaments/<id:id>/start/", api.TournamentStartApi.as_view(), name="tournament-start"),
    path("tournaments/<id:id>/cancel/", api.TournamentCancelApi.as_view(),
         name="tournament-cancel"),
    path("tournaments/<id:id>/standings/", api.TournamentStandingsApi.as_view(),
         name="tournament-standings"),
    path("tournaments/<id:id>/games/", api.TournamentGamesApi.as_view(),
         name="tournament-games"),
    path("leaderboard/", api.LeaderboardApi.as_view(), name="leaderboard"),
    path("bots/<id:id>/ratings/", api.BotRatingsApi.as_view(), name="bot-ratings"),
]
