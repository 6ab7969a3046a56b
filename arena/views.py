from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core import metrics


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "arena/home.html")


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness and database reachability, for load balancers and docker-compose, with this
    process's counters of degraded operation (``core.metrics``)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse(
        {"status": "ok", "database": connection.vendor, "counters": metrics.snapshot()}
    )
