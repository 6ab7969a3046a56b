"""The main job of the embedded default: serve the site on http://127.0.0.1:8000/."""

from __future__ import annotations

import socket
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.core.management.commands.runserver import Command as RunserverCommand
from django.core.servers.basehttp import WSGIServer


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
        call_command(NoDelayRunserver(), addr, use_reloader=False)
