"""Benchmark: the CPU of one hop from an event loop to a thread and back.

Run: ``python bench/hops.py [--calls 20000] [--tasks 8]``. Under uvloop (the web process's
loop), ``tasks`` tasks each await ``calls / tasks`` no-op calls on 8 threads, alternating
``loop.run_in_executor`` with a ``ThreadPoolExecutor`` (the baseline) and
``core.threadpool.ThreadPool`` (what the web process uses), twice each.

The last line is exactly ``hops: executor X us, pool Y us of CPU a call; ratio: R``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import sys
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.threadpool import ThreadPool


def nothing(value: int) -> int:
    return value


async def measure(hop: Callable[[int], Awaitable[int]], calls: int, tasks: int) -> float:
    """CPU seconds of the whole process a call."""

    async def one_task() -> None:
        for i in range(calls // tasks):
            await hop(i)

    started = time.process_time()
    await asyncio.gather(*(one_task() for _ in range(tasks)))
    return (time.process_time() - started) / calls


async def main(calls: int, tasks: int) -> None:
    executor, pool = ThreadPoolExecutor(8), ThreadPool(8, "bench")
    loop = asyncio.get_running_loop()

    async def by_executor(i: int) -> int:
        return await loop.run_in_executor(executor, contextvars.copy_context().run, nothing, i)

    async def by_pool(i: int) -> int:
        return await pool.run(nothing, i)

    await measure(by_executor, calls // 10, tasks)  # warm-up: threads started
    await measure(by_pool, calls // 10, tasks)
    figures: dict[str, list[float]] = {"executor": [], "pool": []}
    for _ in range(2):
        figures["executor"].append(await measure(by_executor, calls, tasks))
        figures["pool"].append(await measure(by_pool, calls, tasks))
    for name, values in figures.items():
        print(f"{name}: " + ", ".join(f"{v * 1e6:.1f} us" for v in values) + " of CPU a call")
    x, y = min(figures["executor"]), min(figures["pool"])
    print(f"hops: executor {x * 1e6:.1f} us, pool {y * 1e6:.1f} us of CPU a call; "
          f"ratio: {y / x:.2f}")
    executor.shutdown()
    pool.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--tasks", type=int, default=8)
    args = parser.parse_args()
    uvloop.run(main(args.calls, args.tasks))
