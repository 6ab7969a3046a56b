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
