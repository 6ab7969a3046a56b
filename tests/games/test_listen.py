"""games.listen: one hub per event loop fans game changes out to asynchronous waiters, from
the in-process announcements (every database) and from PostgreSQL's LISTEN (every process)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
import pytest
from django.db import connection
from rest_framework.test import APIClient

from games import listen
from games.notify import CHANNEL, Change

RUNNING = "running"


def run(test: Callable[[listen.Hub], Awaitable[None]]) -> None:
    """Run ``test`` with this loop's hub, stopping the hub's connection afterwards."""

    async def main() -> None:
        hub = await listen.hub()
        try:
            await test(hub)
        finally:
            await hub.stop()

    asyncio.run(main())


def test_a_subscription_queues_changes_in_order_and_drops_repeats() -> None:
    async def test(hub: listen.Hub) -> None:
        async with hub.subscribe([7]) as changes:
            hub.dispatch(7, Change(3, 1, RUNNING))
            hub.dispatch(8, Change(9, 0, RUNNING))  # not watched
            hub.dispatch(7, Change(3, 1, RUNNING))  # announced, then NOTIFYed: once
            hub.dispatch(7, Change(4, 0, RUNNING))
            hub.dispatch(7, Change())
            assert await changes.next(1) == (7, Change(3, 1, RUNNING))
            assert await changes.next(1) == (7, Change(4, 0, RUNNING))
            assert await changes.next(1) == (7, Change())
            assert changes.take() is None
            assert await changes.next(0.01) is None

    run(test)


def test_a_subscription_watches_more_games_and_hears_nothing_once_closed() -> None:
    async def test(hub: listen.Hub) -> None:
        async with hub.subscribe([]) as changes:
            changes.watch(5)
            hub.dispatch(5, Change(1, 0, RUNNING))
            assert changes.take() == (5, Change(1, 0, RUNNING))
        hub.dispatch(5, Change(2, 1, RUNNING))
        assert changes.take() is None
        assert hub.subscriptions() == 0

    run(test)


def test_a_subscription_to_every_game_hears_every_game() -> None:
    async def test(hub: listen.Hub) -> None:
        async with hub.subscribe() as changes:
            hub.dispatch(1, Change(2, 0, RUNNING))
            hub.dispatch(900, Change(5, 1, "finished"))
            assert [changes.take(), changes.take()] == [
                (1, Change(2, 0, RUNNING)), (900, Change(5, 1, "finished"))
            ]

    run(test)


def test_an_overflowing_subscription_keeps_one_read_the_game_per_game(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(listen, "QUEUE_SIZE", 2)

    async def test(hub: listen.Hub) -> None:
        async with hub.subscribe([1, 2]) as changes:
            for version in range(1, 6):
                hub.dispatch(1, Change(version, 0, RUNNING))
                hub.dispatch(2, Change(version, 0, RUNNING))
            assert [changes.take() for _ in range(5)] == [
                (1, Change(1, 0, RUNNING)), (2, Change(1, 0, RUNNING)),
                (1, Change()), (2, Change()), None,
            ]

    run(test)


def test_a_waiting_next_wakes_on_a_change_announced_from_another_thread() -> None:
    async def test(hub: listen.Hub) -> None:
        async with hub.subscribe([31]) as changes:
            thread = threading.Thread(target=listen._bridge, args=(31, Change(8, 1, RUNNING)))
            thread.start()
            assert await changes.next(10) == (31, Change(8, 1, RUNNING))
            thread.join()

    run(test)


def test_a_rung_doorbell_wakes_its_waiter_in_the_loops_next_turn() -> None:
    """One turn of the loop from the change to the waiter (``asyncio.wait_for`` on an Event
    took two on Python 3.11: a busy loop made each turn milliseconds of a stream's wake-up)."""

    async def main() -> None:
        bell, woke = listen.Doorbell(), []

        async def waiter() -> None:
            woke.append(await bell.wait(10))

        task = asyncio.create_task(waiter())
        await asyncio.sleep(0)  # the waiter is waiting now
        bell.ring()
        await asyncio.sleep(0)
        assert woke == [True]
        await task

    asyncio.run(main())


def test_a_doorbell_times_out_and_keeps_no_ring_rung_before_the_wait() -> None:
    async def main() -> None:
        bell = listen.Doorbell()
        assert await bell.wait(0.01) is False
        bell.ring()  # nobody waiting: the caller looks at its inbox before waiting instead
        assert await bell.wait(0.01) is False
        waiting = asyncio.create_task(bell.wait(10))
        await asyncio.sleep(0)
        waiting.cancel()  # a client that went away
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert await bell.wait(0) is False

    asyncio.run(main())


def test_each_event_loop_has_its_own_hub_and_a_closed_loops_hub_is_dropped() -> None:
    hubs: list[listen.Hub] = []

    async def test(hub: listen.Hub) -> None:
        hubs.append(hub)
        assert await listen.hub() is hub

    run(test)
    run(test)
    assert hubs[0] is not hubs[1]
    assert hubs[0].loop not in listen._hubs
    listen._bridge(1, Change())  # a closed loop's hub is skipped, not an error


@pytest.mark.django_db(transaction=True)
def test_a_move_committed_by_the_api_reaches_the_subscription_with_its_new_state(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    game_id = running_game["id"]
    clients = [alice_api, bob_api]
    mine = alice_api.get(f"/api/games/{game_id}/view/").json()
    mover = clients[mine["view"]["awaiting"]]
    mine = mover.get(f"/api/games/{game_id}/view/").json()
    moved: dict[str, Any] = {}

    def move() -> None:  # in another thread, as a request of another worker thread would
        try:
            moved.update(mover.post(
                f"/api/games/{game_id}/moves/",
                {"version": mine["version"], "move": mine["view"]["legal_moves"][0]},
                format="json",
            ).json())
        finally:
            connection.close()

    async def test(hub: listen.Hub) -> None:
        async with hub.subscribe([game_id]) as changes:
            await asyncio.to_thread(move)
            heard = await changes.next(10)
            assert heard == (
                game_id, Change(moved["version"], moved["view"]["awaiting"], moved["status"])
            )

    run(test)


def notify_until(hub_changes: listen.Subscription, payload: str) -> Awaitable[Any]:
    """NOTIFY ``payload`` from another connection until the subscription hears something."""

    async def go() -> Any:
        params = listen._connection_params()
        async with await psycopg.AsyncConnection.connect(**params, autocommit=True) as other:
            for _ in range(50):
                await other.execute("SELECT pg_notify(%s, %s)", [CHANNEL, payload])
                heard = await hub_changes.next(0.2)
                if heard is not None:
                    return heard
        return None

    return go()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_change_notified_by_another_process_reaches_the_subscription() -> None:
    async def test(hub: listen.Hub) -> None:
        assert hub.listening
        async with hub.subscribe([424242]) as changes:
            heard = await notify_until(changes, "424242 12 1 running")
            assert heard == (424242, Change(12, 1, RUNNING))

    run(test)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_lost_listen_connection_is_restored_and_everyone_is_told_to_read_again() -> None:
    async def test(hub: listen.Hub) -> None:
        async with hub.subscribe([515151]) as changes, hub.subscribe() as everything:
            pid, connects = hub.backend_pid, hub.connects
            params = listen._connection_params()
            async with await psycopg.AsyncConnection.connect(**params, autocommit=True) as admin:
                await admin.execute("SELECT pg_terminate_backend(%s)", [pid])
            # Whatever was sent while it was away is lost: on reconnecting, read again.
            assert await changes.next(30) == (515151, Change())
            assert await everything.next(30) == (listen.RESYNC, Change())
            assert hub.connects == connects + 1 and hub.backend_pid != pid
            heard = await notify_until(changes, "515151 3 0 running")
            assert heard == (515151, Change(3, 0, RUNNING))

    run(test)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_notifications_committed_together_all_reach_the_subscription_in_order() -> None:
    """They arrive in one read of the socket, and are dispatched from it one by one."""

    async def test(hub: listen.Hub) -> None:
        assert hub.listening
        async with hub.subscribe([616161]) as changes:
            params = listen._connection_params()
            async with await psycopg.AsyncConnection.connect(**params) as other:
                for version in (1, 2, 3):
                    await other.execute(
                        "SELECT pg_notify(%s, %s)", [CHANNEL, f"616161 {version} 0 running"])
                await other.commit()
            heard = [await changes.next(10) for _ in range(3)]
            assert heard == [(616161, Change(v, 0, RUNNING)) for v in (1, 2, 3)]
            # A row with text beyond ASCII (a bot's name, say) is decoded as sent.
            row = '{"id": 616161, "note": "Zoë\u2019s bot"}'
            async with await psycopg.AsyncConnection.connect(**params, autocommit=True) as other:
                await other.execute(
                    "SELECT pg_notify(%s, %s)", [CHANNEL, f"616161 4 1 running {row}"])
            game_id, change = await changes.next(10)
            assert (game_id, change.version, change.row) == (616161, 4, row)

    run(test)
