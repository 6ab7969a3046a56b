"""Every REST endpoint, under /api/. Each app contributes its own router or paths."""

from django.urls import include, path, re_path

from arena.api_errors import api_not_found

urlpatterns: list = [
    path("", include("arena.accounts.urls")),
    path("", include("games.urls")),
    # Last: anything else under /api/ ending in a slash is a JSON 404 (paths without the
    # slash are first redirected to it by APPEND_SLASH). [\s\S], not ".": a path may hold a
    # (percent-encoded) newline too.
    re_path(r"^[\s\S]*/$", api_not_found),
]
