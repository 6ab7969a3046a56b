"""A live table's bots get their start notice before their first turn, whoever moves first
and however late the workers get to the start (the thread runner here; the Celery task runs
the same ``bots.advance``)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.core.cache import cache

from bots import advance, dispatch, runner
from bots.models import BotCall, CallKind
from games import services as game_services
from games.models import Game
from tests.bots.helpers import close_default_transport
from tests.games.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _one_runner_thread(settings: Any) -> Any:
    settings.BOTS_RUNNER = "thread"
    settings.BOTS_THREADS = 1
    dispatch.drain()  # the pool is made again with one thread
    dispatch.forget()
    yield
    dispatch.drain()
    close_default_transport()


def _a_table_where_bob_moves_first(alice: Any, bob: Any, bot: Any) -> Game:
    """Started while the runner's one thread is busy (its start job waits); bob, the person,
    is the first to move (tables are dealt again until he is)."""
    alice_api, bob_api = client_for(alice), client_for(bob)
    for _ in range(30):
        gid = alice_api.post("/api/games/", {"seats": 2, "join": False, "turn_seconds": 600,
                                             "options": {"single_hand": True}},
                             format="json").json()["id"]
        assert alice_api.post(f"/api/games/{gid}/join/", {"bot": bot.pk}, format="json"
                              ).status_code == 200
        assert bob_api.post(f"/api/games/{gid}/join/", {"seat": 1}, format="json"
                            ).status_code == 200
        assert alice_api.post(f"/api/games/{gid}/start/").status_code == 200
        game = Game.objects.get(pk=gid)
        if game.awaiting == 1:
            return game
        game_services.game_abort(game_id=gid)
    raise AssertionError("bob never moved first")


def test_a_bot_gets_its_start_notice_though_a_person_moved_before_the_start_job_ran(
    alice: Any, bob: Any, two_reference_bots: list[Any]
) -> None:
    """Before: the start job found the game moved on (bob's move) and did nothing, and the
    jobs after it were past the first move: the bot never got a start notice."""
    bot = two_reference_bots[0]
    busy = threading.Event()
    dispatch._pool().submit(busy.wait, 30)  # the runner's thread is busy
    try:
        game = _a_table_where_bob_moves_first(alice, bob, bot)
        bob_api = client_for(bob)
        view = bob_api.get(f"/api/games/{game.pk}/view/").json()
        legal = view["view"]["legal_moves"]
        move = next((m for m in legal if m["type"] == "play"), legal[0])
        assert bob_api.post(f"/api/games/{game.pk}/moves/", {
            "version": view["version"], "move": move}, format="json").status_code == 201
    finally:
        busy.set()
        dispatch.drain()
    calls = list(BotCall.objects.filter(bot=bot, game=game).order_by("id")
                 .values_list("kind", "error"))
    assert calls[0] == (CallKind.START, ""), calls
    assert [kind for kind, _ in calls].count(CallKind.START) == 1


def test_a_job_waits_for_the_start_notices_another_is_sending(
    alice: Any, two_reference_bots: list[Any]
) -> None:
    """Its bot's first turn is not sent while another worker's thread still sends the start
    notices (before: it was, while a slow bot answered its notice)."""
    game = Game.objects.create(created_by=alice, seed=77, options={})
    key = f"bots:start-notices:{game.pk}:{game.seed}"
    cache.set(key, advance.SENDING, 60)  # another job claimed them and sends them
    waiting = threading.Thread(target=advance.start_noticed, args=(game,))
    waiting.start()
    waiting.join(0.5)
    assert waiting.is_alive()  # it waits for them...
    cache.set(key, advance.SENT, 60)
    waiting.join(10)
    assert not waiting.is_alive()  # ...and goes on once they are sent
    assert not BotCall.objects.filter(game=game).exists()  # it sent none itself


def test_a_game_well_under_way_gets_no_start_notice_when_the_claim_is_gone(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache flushed (or the claims older than the code that makes them): a running game
    past its first moves is taken as noticed (before: every bot got a start notice mid-game)."""
    game = Game.objects.create(created_by=alice, seed=78, options={}, status="running",
                               move_count=advance.NOTICE_WITHIN_MOVES, version=90)
    noticed: list[Any] = []
    monkeypatch.setattr(advance, "start_noticed", lambda *a, **k: noticed.append(a))
    assert advance.advance(game.pk, 89) == runner.SKIPPED  # a stale job, as after a restart
    assert noticed == []
