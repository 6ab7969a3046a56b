"""Every REST endpoint, under /api/. Each app contributes its own router or paths; the games
come first, since patterns are tried in order and playing is nearly every request."""

from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerView

from core.api_errors import api_index, api_not_found
from core.schema import SchemaView

urlpatterns: list = [
    path("", include("games.urls")),
    path("", include("arena.accounts.urls")),
    path("", include("bots.urls")),
    path("", include("arena.tournament_urls")),
    path("", api_index, name="api-index"),
    path("schema/", SchemaView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path(
        "redoc/",
        SpectacularRedocView.as_view(url_name="schema", template_name="arena/redoc.html"),
        name="redoc",
    ),
    # Last: anything else under /api/ ending in a slash is a JSON 404 (paths without the
    # slash are first redirected to it by APPEND_SLASH). [\s\S], not ".": a path may hold a
    # (percent-encoded) newline too.
    re_path(r"^[\s\S]*/$", api_not_found),
]
