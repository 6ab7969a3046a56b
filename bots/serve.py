"""Serve a strategy as an HTTP bot (protocol v1): the reference ones for the demo, tests and
benchmarks, or your own.

    python -m bots.serve --strategy greedy --port 9001 --secret whsec_...
    python -m bots.serve --strategy my_bot.py:choose --port 8080   # the function you evaluated

(or the secret in ``BOT_SECRET``, which keeps it out of the process list). Every request must
carry a valid Standard Webhooks signature from one of the secrets, no more than five minutes
old (else 401). A turn is answered ``200 {"move": ...}`` with the strategy's choice; start and
end notices get ``204``. Connections are kept alive and use TCP_NODELAY (aiohttp's default).

``serve_in_thread(strategy, secret)`` runs the same server on a thread of its own and returns
``(url, stop)``. Needs no Django.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import socket
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from aiohttp import web

from bots import evaluate, signing
from bots.strategies import STRATEGIES

logger = logging.getLogger(__name__)

Strategy = Callable[[Any, random.Random], dict[str, Any]]
# Generous: an end notice carries the whole replay of the game.
MAX_REQUEST_BYTES = 8 * 1024 * 1024


def strategy_named(name: str) -> Strategy:
    """A strategy of ``bots.strategies`` by name (ValueError naming the choices if unknown)."""
    if name not in STRATEGIES:
        raise ValueError(
            f"unknown strategy {name!r}; choose one of: {', '.join(sorted(STRATEGIES))}"
        )
    return STRATEGIES[name]


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def make_app(
    strategy: str | Strategy, secrets: str | Sequence[str], *, seed: int | None = None,
    delay_ms: float = 0.0,
) -> web.Application:
    """The bot's aiohttp application. ``delay_ms``: answer each turn that much later (a bot
    across a network, or one that thinks; its other calls are taken meanwhile)."""
    choose = strategy_named(strategy) if isinstance(strategy, str) else strategy
    keys = [secrets] if isinstance(secrets, str) else list(secrets)
    if not keys:
        raise ValueError("a bot needs at least one secret")
    for key in keys:
        signing.sign(key, "msg_check", 0, b"")  # a malformed secret fails now, not per request
    rng = random.Random(seed)
    # The reference strategies answer in microseconds, on the loop. Your own may think for a
    # while (look-ahead, play-outs): on a thread, so that the loop keeps taking the calls of
    # your other games meanwhile (a tournament plays several at once) instead of queueing
    # them behind it past their budget.
    builtin = choose in STRATEGIES.values()

    async def decide(view: dict[str, Any]) -> Any:
        if delay_ms > 0:
            await asyncio.sleep(delay_ms / 1000)
        if builtin:
            return choose(view, rng)
        return await asyncio.to_thread(choose, view, rng)

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        problems = []
        for key in keys:
            try:
                signing.verify(key, request.headers, body)
                break
            except signing.SignatureError as exc:
                problems.append(str(exc))
        else:
            return _error(401, problems[0])
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):
            return _error(400, "the body is not JSON")
        if not isinstance(payload, dict) or payload.get("protocol") != 1:
            return _error(400, "expected a protocol 1 message")
        kind = payload.get("type")
        if kind in ("start", "end"):
            return web.Response(status=204)
        if kind != "turn":
            return _error(400, f"unknown message type {kind!r}")
        view = payload.get("view")
        legal = payload.get("legal_moves")
        if not isinstance(view, dict) or not isinstance(legal, list) or not legal:
            return _error(400, "a turn needs a view and a non-empty legal_moves list")
        try:
            move = await decide({**view, "legal_moves": legal})
        except Exception:
            logger.exception("the strategy failed")
            return _error(500, "the strategy failed")
        return web.json_response({"move": move})

    app = web.Application(client_max_size=MAX_REQUEST_BYTES)
    app.router.add_post("/{tail:.*}", handle)
    return app


def _listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(512)
    sock.setblocking(False)
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def serve_in_thread(
    strategy: str | Strategy,
    secret: str | Sequence[str],
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    seed: int | None = None,
) -> tuple[str, Callable[[], None]]:
    """Start the bot on a daemon thread; returns its URL and a function that stops it."""
    app = make_app(strategy, secret, seed=seed)
    sock = _listening_socket(host, port)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, access_log=None)
    ready = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(runner.setup())
            loop.run_until_complete(web.SockSite(runner, sock).start())
        except BaseException as exc:  # reported to the caller below
            failure.append(exc)
            ready.set()
            return
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, name="bot-serve", daemon=True)
    thread.start()
    ready.wait(10)
    if failure:
        raise failure[0]

    def stop() -> None:
        if loop.is_closed():
            return
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
        sock.close()

    return _url(sock), stop


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bots.serve", description=__doc__.split("\n\n")[0].replace("\n", " ")
    )
    parser.add_argument(
        "--strategy", default="greedy", help="random, greedy or heuristic; or your own, "
        "FILE.py:FUNCTION or package.module:FUNCTION, (view, rng) -> move JSON, as "
        "python -m bots.evaluate --bot plays it offline",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9001)
    parser.add_argument(
        "--secret",
        action="append",
        help="whsec_... (repeat during a rotation); default: the BOT_SECRET environment variable",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed the strategy's randomness")
    parser.add_argument(
        "--delay-ms", type=float, default=0.0, metavar="MS",
        help="answer each turn MS milliseconds late (to try a tournament with a slow or distant "
        "bot: its budget, its strikes)",
    )
    args = parser.parse_args(argv)
    if args.delay_ms < 0:
        parser.error("--delay-ms cannot be negative")
    secrets = args.secret or ([os.environ["BOT_SECRET"]] if os.environ.get("BOT_SECRET") else [])
    if not secrets:
        parser.error("give --secret or set BOT_SECRET")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    strategy: str | Strategy = args.strategy
    if ":" in args.strategy:
        strategy = evaluate.load_strategy(args.strategy, option="--strategy")[1]
    try:
        app = make_app(strategy, secrets, seed=args.seed, delay_ms=args.delay_ms)
    except ValueError as exc:
        parser.error(str(exc))
    sock = _listening_socket(args.host, args.port)
    # Printed once the socket listens, so a parent process can wait for this line.
    print(f"Serving strategy {args.strategy!r} at {_url(sock)}", flush=True)
    web.run_app(app, sock=sock, print=None, access_log=None)


if __name__ == "__main__":
    main(sys.argv[1:])
