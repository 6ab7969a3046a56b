"""The main job of the embedded default: serve the site on http://127.0.0.1:8000/."""

from __future__ import annotations

import contextlib
import logging
import os
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
            f"Uno Arena on http://{browsable(addr)}/  (API docs: /api/docs/, admin: /admin/). "
            "Ctrl-C stops."
        )
        added = allow_network_hosts(addr)
        if added:
            self.stdout.write(
                "Serving every network interface: answering as " + ", ".join(added)
                + " too (ALLOWED_HOSTS=... names others)."
            )
            if settings.DEBUG:
                self.stdout.write(self.style.WARNING(
                    "DEBUG is on (the embedded default): an error page shows its traceback "
                    "to anyone on the network. Set DEBUG=false to hide them."))
        if settings.CELERY_TASK_ALWAYS_EAGER:  # no broker, so no beat: this process sweeps
            start_sweeping()
        call_command(NoDelayRunserver(), addr, use_reloader=False)


def allow_network_hosts(addr: str) -> list[str]:
    """Bound to every interface (``0.0.0.0``, ``::``) with ``ALLOWED_HOSTS`` left to its
    default: add this machine's names and addresses, so that the other machines of the
    network it is served to are answered (the default names only 127.0.0.1 and localhost,
    and Django refused every other Host with a 400). Not ``*``: a page that rebinds a name of
    its own to this machine is still refused. Returns what it added."""
    if not _every_interface(addr) or os.environ.get("ALLOWED_HOSTS", "").strip():
        return []
    added = [h for h in _this_machine() if h not in settings.ALLOWED_HOSTS]
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, *added]
    return added


def _every_interface(addr: str) -> bool:
    host = addr.rsplit(":", 1)[0] if ":" in addr else addr
    return host.strip("[]") in {"0.0.0.0", "::", ""}


def browsable(addr: str) -> str:
    """``addr`` as a browser on this machine reaches it: 0.0.0.0 is no address to ask."""
    if not _every_interface(addr):
        return addr
    port = addr.rsplit(":", 1)[1] if ":" in addr else "8000"
    return f"127.0.0.1:{port}"


def _this_machine() -> list[str]:
    """This machine's host names and the addresses of its interfaces, as far as the standard
    library can tell (the name's addresses, and the one the default route leaves from)."""
    name = socket.gethostname()
    found = [name, f"{name}.local", socket.getfqdn()]
    with contextlib.suppress(OSError):
        found += [str(info[4][0]) for info in socket.getaddrinfo(name, None)]
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.connect((probe, 9))  # UDP: no packet is sent; the kernel picks the route
            found.append(sock.getsockname()[0])
    hosts = [f"[{h}]" if ":" in h else h for h in found if h]
    return list(dict.fromkeys(h for h in hosts if h not in {"localhost", "[::1]"}))


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
