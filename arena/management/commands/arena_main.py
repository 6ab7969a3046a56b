"""The main job of the embedded default: serve the site on http://127.0.0.1:8000/."""

from __future__ import annotations

import logging
import socket
import threading
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.core.management.commands.runserver import Command as RunserverCommand
from django.core.servers.basehttp import WSGIServer
from django.db import connection

from arena import services

log = logging.getLogger(__name__)


class NoDelayWSGIServer(WSGIServer):
    """runserver's server with Nagle's algorithm off on every connection, as gunicorn has it.

    runserver writes a response's headers and body in two sends. With Nagle on, the body
    waits for the client to acknowledge the headers, and a keep-alive client delays that ACK
    (40 ms on Linux): every answer took 40 ms more, and two bots taking turns made about 14
    moves/s (bench/handoff.py)."""

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = super().get_request()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address


class NoDelayRunserver(RunserverCommand):
    server_cls = NoDelayWSGIServer


class Command(BaseCommand):
    help = "Run the main job: the web server with the admin and the API docs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--addr", default="127.0.0.1:8000", help="address:port to serve on")

    def handle(self, *args: Any, **options: Any) -> None:
        addr = options["addr"]
        self.stdout.write(
            f"Uno Arena on http://{addr}/  (API docs: /api/docs/, admin: /admin/). Ctrl-C stops."
        )
        if settings.CELERY_TASK_ALWAYS_EAGER:  # no broker, so no beat: this process sweeps
            start_sweeping()
        call_command(NoDelayRunserver(), addr, use_reloader=False)


def start_sweeping(stop: threading.Event | None = None) -> threading.Thread:
    """Run the embedded default's tournament sweep now and every TOURNAMENT_SWEEP_SECONDS
    (until ``stop``), on a daemon thread: a tournament this server was playing when it stopped
    goes on once its claims go stale (``services.tournament_sweep_in_process``)."""
    stop = stop or threading.Event()

    def sweep() -> None:
        while True:
            try:
                services.tournament_sweep_in_process()
            except Exception:
                log.exception("the tournament sweep failed; it runs again")
            finally:
                connection.close()  # a thread of its own: nothing else would close it
            if stop.wait(settings.TOURNAMENT_SWEEP_SECONDS):
                return

    thread = threading.Thread(target=sweep, daemon=True, name="tournament-sweep")
    thread.start()
    return thread
