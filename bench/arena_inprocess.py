"""In-process bots for bench/arena.py: bot calls answered by ``bots.strategies`` directly.

``install({url: strategy})`` makes every bot call to one of those URLs (``BotTransport.post``,
the coroutine every path goes through, and ``post_sync``) call the strategy in this process
(no HTTP, no signing, no JSON), and leaves other URLs alone. The
runner above it is untouched: the arena still builds each turn's payload, applies the move
through ``games.services.move_play`` and writes the call log, so what is measured is the
arena's own cost per game.

As a Celery app (``celery -A bench.arena_inprocess worker``) it is the arena's app with the
bots of ``BENCH_INPROCESS_BOTS`` (a JSON object, url -> strategy) installed.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

from bots.strategies import STRATEGIES
from bots.transport import BotTransport, CallResult

_installed: dict[str, str] = {}


def answer(strategy: str, payload: Mapping[str, Any], rng: random.Random) -> CallResult:
    """What ``python -m bots.serve --strategy ...`` answers, without the server."""
    started = time.perf_counter()
    if payload.get("type") != "turn":
        return CallResult(True, 204, None, (time.perf_counter() - started) * 1000, None, "")
    view = {**payload["view"], "legal_moves": payload["legal_moves"]}
    move = STRATEGIES[strategy](view, rng)
    return CallResult(True, 200, {"move": move}, (time.perf_counter() - started) * 1000, None, "")


def install(bots: Mapping[str, str], seed: int = 0) -> None:
    """Answer calls to ``bots``' URLs in-process from now on (idempotent)."""
    _installed.update(bots)
    if getattr(BotTransport.post_sync, "_in_process", False):
        return
    over_http = BotTransport.post_sync
    rng = random.Random(seed)

    def post_sync(self: BotTransport, url: str, payload: Mapping[str, Any], *,
                  secrets: Sequence[str], timeout: float) -> CallResult:
        strategy = _installed.get(url)
        if strategy is None:
            return over_http(self, url, payload, secrets=secrets, timeout=timeout)
        return answer(strategy, payload, rng)

    async def post(self: BotTransport, url: str, payload: Mapping[str, Any], *,
                   secrets: Sequence[str], timeout: float) -> CallResult:
        strategy = _installed.get(url)
        if strategy is None:
            return await over_http_async(self, url, payload, secrets=secrets, timeout=timeout)
        return answer(strategy, payload, rng)

    over_http_async = BotTransport.post
    post_sync._in_process = True  # type: ignore[attr-defined]
    BotTransport.post_sync = post_sync  # type: ignore[method-assign]
    BotTransport.post = post  # type: ignore[method-assign]


if os.environ.get("BENCH_INPROCESS_BOTS"):
    from arena.celery import app  # noqa: F401  (the worker's app)

    install(json.loads(os.environ["BENCH_INPROCESS_BOTS"]), seed=os.getpid())
