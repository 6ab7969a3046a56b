"""The project's URLs plus ``/bench/bare/<id>/``: the floor the game API is compared against.

The bare endpoint goes through the same DRF stack (token authentication, permissions,
JSON rendering) and does one indexed SELECT and one UPDATE of a row, nothing else.
"""

from __future__ import annotations

from django.db import connection
from django.urls import path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.urls import urlpatterns as arena_urlpatterns


class BareApi(APIView):
    def post(self, request: Request, id: int) -> Response:
        with connection.cursor() as cursor:
            cursor.execute("SELECT n FROM bench_counter WHERE id = %s", [id])
            (n,) = cursor.fetchone()
            cursor.execute("UPDATE bench_counter SET n = %s WHERE id = %s", [n + 1, id])
        return Response({"id": id, "n": n + 1})


urlpatterns = [path("bench/bare/<int:id>/", BareApi.as_view()), *arena_urlpatterns]
