"""core.threadpool: the web process's hop from its event loop to a thread and back (the
waiting requests' steps, the request/response path's WSGI application)."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from core.threadpool import ThreadPool

who: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


def test_it_runs_a_call_on_its_threads_with_the_tasks_context() -> None:
    pool = ThreadPool(2, "test-pool")

    async def main() -> tuple[str, str]:
        who.set("alice")
        return await pool.run(lambda: (threading.current_thread().name, who.get()))

    try:
        thread, seen = asyncio.run(main())
    finally:
        pool.shutdown()
    assert thread.startswith("test-pool_")
    assert seen == "alice"


def test_it_hands_an_exception_back_to_the_awaiting_task() -> None:
    pool = ThreadPool(1, "test-pool")

    def fails() -> None:
        raise LookupError("not here")

    try:
        with pytest.raises(LookupError, match="not here"):
            asyncio.run(pool.run(fails))
        assert asyncio.run(pool.run(lambda: 42)) == 42  # the thread goes on
    finally:
        pool.shutdown()


def test_it_runs_no_call_whose_task_was_cancelled_before_a_thread_took_it() -> None:
    pool = ThreadPool(1, "test-pool")
    busy, ran = threading.Event(), []

    async def main() -> None:
        release = threading.Event()
        blocker = asyncio.ensure_future(pool.run(lambda: (busy.set(), release.wait(5))))
        await asyncio.get_running_loop().run_in_executor(None, busy.wait, 5)
        queued = asyncio.ensure_future(pool.run(lambda: ran.append("queued")))
        await asyncio.sleep(0)
        queued.cancel()  # its client went away while it waited for the thread
        release.set()
        await blocker
        assert await pool.run(lambda: "after") == "after"

    try:
        asyncio.run(main())
    finally:
        pool.shutdown()
    assert ran == []


def test_its_calls_run_concurrently_up_to_its_size() -> None:
    pool = ThreadPool(3, "test-pool")
    together = threading.Barrier(3)

    async def main() -> list[int]:
        return await asyncio.gather(*(pool.run(together.wait, 5) for _ in range(3)))

    try:
        assert sorted(asyncio.run(main())) == [0, 1, 2]  # all three met at the barrier
    finally:
        pool.shutdown()


def test_shutdown_ends_its_threads_after_their_calls_and_runs_on_exit_on_each() -> None:
    ended: list[str] = []
    pool = ThreadPool(2, "test-pool", on_exit=lambda: ended.append(
        threading.current_thread().name))
    asyncio.run(pool.run(lambda: None))

    pool.shutdown()

    assert sorted(ended) == ["test-pool_0", "test-pool_1"]
    assert asyncio.run(pool.run(lambda: "again")) == "again"  # started again on use
    pool.shutdown()
