from django.urls import path

import core.converters  # noqa: F401  (registers <id:…>)
from bots import api

urlpatterns = [
    path("bots/", api.BotListCreateApi.as_view(), name="bots"),
    path("bots/<id:id>/", api.BotDetailApi.as_view(), name="bot"),
    path("bots/<id:id>/rotate-secret/", api.BotRotateSecretApi.as_view(), name="bot-rotate"),
    path("bots/<id:id>/verify/", api.BotVerifyApi.as_view(), name="bot-verify"),
    path("bots/<id:id>/stats/", api.BotStatsApi.as_view(), name="bot-stats"),
    path("bots/<id:id>/calls/", api.BotCallsApi.as_view(), name="bot-calls"),
]
