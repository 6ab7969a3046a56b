"""gunicorn's worker class for ``arena.asgi`` (docker-compose.yml, the image, bench/api.py):
uvicorn's, with the client's address as the connection's. The proxy's X-Forwarded-For is
read by Django (``NUM_PROXIES``), as under gunicorn's own workers; uvicorn would otherwise
rewrite the address itself for a proxy on 127.0.0.1."""

import sys
from typing import Any

from gunicorn.arbiter import Arbiter
from uvicorn.server import Server
from uvicorn_worker import UvicornWorker

# On a stop (a deploy, a restart), requests still running after this many seconds are cancelled:
# an event stream never ends by itself, and its client reconnects with its last event id
# anyway (without it a worker with an open stream waited gunicorn's graceful timeout, 30 s).
GRACEFUL_SHUTDOWN_SECONDS = 3


class DrainingServer(Server):
    async def shutdown(self, sockets: Any = None) -> None:
        # First, every wait answers with its game as it is: a move played with ``wait`` is
        # committed, and cancelling its request at the end of the grace answered it 500.
        from games import listen  # here: the worker class is loaded before Django is set up

        listen.drain()
        await super().shutdown(sockets)


class Worker(UvicornWorker):
    # Applied over what UvicornWorker takes from gunicorn's own settings, so none of these may
    # name ``timeout_keep_alive``: uvicorn's idle timeout must stay gunicorn's --keep-alive,
    # which docker-compose.yml and the Dockerfile set above nginx's upstream keepalive_timeout
    # (tests/arena/test_deployment.py checks both).
    CONFIG_KWARGS: dict[str, Any] = {
        "loop": "auto", "http": "auto", "proxy_headers": False, "server_header": False,
        "timeout_graceful_shutdown": GRACEFUL_SHUTDOWN_SECONDS,
    }

    async def _serve(self) -> None:
        # UvicornWorker._serve with the server above.
        self.config.app = self.wsgi
        server = DrainingServer(config=self.config)
        self._install_sigquit_handler()
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)
