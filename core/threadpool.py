"""Threads that run blocking calls for an event loop, one hop there and one back a call.

``loop.run_in_executor`` with a ``ThreadPoolExecutor`` makes a ``concurrent.futures.Future``
(with its lock and condition) and chains an asyncio future to it with callbacks on both
sides: about 50 us of CPU a call under uvloop, against 15 us for a queue and one
``call_soon_threadsafe`` (``bench/hops.py``). The web process makes one such hop a request
on its request/response path and two a waiting request (docs/scaling.md).

A call whose awaiting task was cancelled before a thread took it is not run (as an executor's
pending call is not); one already running finishes and its result is dropped.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_Call = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", contextvars.Context,
              Callable[..., Any], tuple[Any, ...]]

_pools: weakref.WeakSet[ThreadPool] = weakref.WeakSet()


class ThreadPool:
    """``threads`` threads named ``name``_N, started on first use. ``on_exit`` runs on each
    thread as it ends (its database connections closed, say)."""

    def __init__(
        self, threads: int, name: str, on_exit: Callable[[], None] | None = None
    ) -> None:
        self.size, self.name, self.on_exit = threads, name, on_exit
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        _pools.add(self)

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` on one of the threads, in a copy of this task's context."""
        if len(self._threads) < self.size:
            self._start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._calls.put((loop, future, contextvars.copy_context(), function, args))
        return await future

    def shutdown(self, timeout: float = 30.0) -> None:
        """Let the threads finish what they took, then end them (at the process's exit);
        the pool starts again on its next use."""
        with self._lock:
            threads, self._threads = self._threads, []
        for _ in threads:
            self._calls.put(None)
        for thread in threads:
            thread.join(timeout)

    def _start(self) -> None:
        with self._lock:
            while len(self._threads) < self.size:
                # Daemon threads, ended by ``shutdown`` at exit: the interpreter would wait
                # for non-daemon ones before running atexit.
                thread = threading.Thread(
                    target=self._work, name=f"{self.name}_{len(self._threads)}", daemon=True
                )
                thread.start()
                self._threads.append(thread)

    def _work(self) -> None:
        while (call := self._calls.get()) is not None:
            _run(*call)
            del call  # nothing kept alive until the next call
        if self.on_exit is not None:
            self.on_exit()


def _run(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any],
         context: contextvars.Context, function: Callable[..., Any], args: tuple[Any, ...]) -> None:
    if future.cancelled():  # nobody waits for it any more
        return
    try:
        result = context.run(function, *args)
    except BaseException as exc:  # handed to the awaiting task, as an executor does
        _hand_back(loop, _fail, future, exc)
    else:
        _hand_back(loop, _succeed, future, result)


def _hand_back(loop: asyncio.AbstractEventLoop, settle: Callable[..., None],
               future: asyncio.Future[Any], value: Any) -> None:
    with contextlib.suppress(RuntimeError):  # a closed loop: nobody is left to tell
        loop.call_soon_threadsafe(settle, future, value)


def _succeed(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():
        future.set_result(result)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


@atexit.register
def _shutdown_all() -> None:
    for pool in list(_pools):
        pool.shutdown()
