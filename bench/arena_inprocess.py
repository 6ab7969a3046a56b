"""In-process bots for bench/arena.py: bot calls answered by ``bots.strategies`` directly.

``answer_for({url: strategy})`` is a ``bots.driver.Answer``: the driver that plays a match's
games (arena/runner.py) calls it for every turn and notice, and it answers the bots at those
URLs in this process (no HTTP, no signing, no JSON) and leaves other URLs to HTTP. Everything
else is the arena's own path: the driver builds each turn's payload, applies the move in
memory and records the game whole; the runner begins and records the games. So what is
measured is the arena's own cost per game.

As a Celery app (``celery -A bench.arena_inprocess worker``) it is the arena's app with the
bots of ``BENCH_INPROCESS_BOTS`` (a JSON object, url -> strategy) answered in-process.
``install`` does the same in the calling process (bench/ratings_spread_arena.py).
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from bots.strategies import STRATEGIES
from bots.transport import CallResult


def answer(strategy: str, payload: Mapping[str, Any], rng: random.Random) -> CallResult:
    """What ``python -m bots.serve --strategy ...`` answers, without the server."""
    started = time.perf_counter()
    if payload.get("type") != "turn":
        return CallResult(True, 204, None, (time.perf_counter() - started) * 1000, None, "")
    view = {**payload["view"], "legal_moves": payload["legal_moves"]}
    move = STRATEGIES[strategy](view, rng)
    return CallResult(True, 200, {"move": move}, (time.perf_counter() - started) * 1000, None, "")


def answer_for(bots: Mapping[str, str], seed: int = 0
               ) -> Callable[[str, Mapping[str, Any]], CallResult | None]:
    """The driver's ``answer`` (``bots.driver.Answer``) for ``bots`` (url -> strategy)."""
    by_url = dict(bots)
    rng = random.Random(seed)

    def answered(url: str, payload: Mapping[str, Any]) -> CallResult | None:
        strategy = by_url.get(url)
        return None if strategy is None else answer(strategy, payload, rng)

    return answered


def install(bots: Mapping[str, str], seed: int = 0) -> None:
    """Answer ``bots`` in-process in every match this process plays from now on."""
    from bots import driver

    driver.answer_in_process(answer_for(bots, seed))


if os.environ.get("BENCH_INPROCESS_BOTS"):
    from celery.signals import worker_process_init

    from arena.celery import app  # noqa: F401  (the worker's app)

    @worker_process_init.connect
    def _install(**_: Any) -> None:
        """In each pool process, once Django is set up."""
        install(json.loads(os.environ["BENCH_INPROCESS_BOTS"]), seed=os.getpid())
