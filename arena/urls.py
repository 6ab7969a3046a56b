from django.contrib import admin
from django.urls import include, path

from arena import views

# Patterns are tried in order: the API first, since nearly every request is a bot's.
urlpatterns = [
    path("api/", include("arena.api_urls")),
    path("", views.home, name="home"),
    path("healthz/", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
]

# With DEBUG off, errors raised outside DRF's views (a bad Host header, an unexpected exception)
# get the API's JSON error body under /api/ and Django's own pages elsewhere.
handler400 = "core.api_errors.bad_request"
handler403 = "core.api_errors.permission_denied"
handler404 = "core.api_errors.page_not_found"
handler500 = "core.api_errors.server_error"
