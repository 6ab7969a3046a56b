"""Every REST endpoint, under /api/. Each app contributes its own router or paths."""

from django.urls import include, path

urlpatterns: list = [
    path("", include("arena.accounts.urls")),
    path("", include("games.urls")),
]
