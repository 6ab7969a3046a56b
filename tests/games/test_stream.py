"""GET /api/stream/ over a real ASGI server: one stream per player carrying every game they
sit in (start, turns with the seat's view, strikes, the end), as NDJSON or Server-Sent Events,
resumable from the last event id with nothing missed and nothing twice."""

from __future__ import annotations

import random
import subprocess
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from arena.accounts.services import token_create
from tests.games.conftest import choose
from tests.games.stream_helpers import asgi_server, open_stream
from tests.live_server import call, start_a_game

pytestmark = pytest.mark.django_db(transaction=True)


def key_of(user: Any) -> str:
    return token_create(user=user)[1]


@pytest.fixture
def server() -> Any:
    with asgi_server({"STREAM_HEARTBEAT_SECONDS": "1"}) as port:
        yield port


def test_a_stream_tells_bob_his_game_started_his_turns_and_the_end(server, alice, bob):
    alice_key, bob_key = key_of(alice), key_of(bob)
    with open_stream(server, bob_key) as stream:
        assert stream.status == 200
        assert stream.headers["content-type"].startswith("application/x-ndjson")
        game = start_a_game(server, alice_key, bob_key)
        started = stream.next()
        assert started["type"] == "started" and started["game"] == game["id"]
        assert started["players"] == ["alice", "bob"]
        keys = [alice_key, bob_key]
        while True:
            awaited = call(server, "GET", f"/api/games/{game['id']}/view/", key=alice_key)[1]
            if awaited["status"] != "running":
                break
            seat = awaited["view"]["awaiting"]
            if seat == 1:
                turn = stream.until(lambda e: e["type"] in ("turn", "ended"))
                assert turn["type"] == "turn"
                rest = call(server, "GET", f"/api/games/{game['id']}/view/", key=bob_key)[1]
                assert {k: v for k, v in turn.items() if k not in ("id", "type")} == rest
            view = call(server, "GET", f"/api/games/{game['id']}/view/", key=keys[seat])[1]
            status, _body, _ = call(
                server, "POST", f"/api/games/{game['id']}/moves/", key=keys[seat],
                body={"version": view["version"], "move": view["view"]["legal_moves"][0]},
            )
            assert status == 201
        ended = stream.until(lambda e: e["type"] == "ended")
        assert ended["game"] == game["id"] and ended["status"] == "finished"
        assert ended["winner"] in (0, 1)


def greedy(legal: list[dict[str, Any]]) -> dict[str, Any]:
    """A card (with an Uno call) when there is one, so games stay short."""
    return choose(random.Random(0), legal)


def play_awaited(port: int, game_id: int, keys: list[str]) -> dict[str, Any] | None:
    """The awaited seat plays its first legal move (None once the game is over)."""
    view = call(port, "GET", f"/api/games/{game_id}/view/", key=keys[0])[1]
    if view["status"] != "running":
        return None
    seat = view["view"]["awaiting"]
    view = call(port, "GET", f"/api/games/{game_id}/view/", key=keys[seat])[1]
    move = greedy(view["view"]["legal_moves"])
    status, body, _ = call(port, "POST", f"/api/games/{game_id}/moves/", key=keys[seat],
                           body={"version": view["version"], "move": move})
    assert status == 201, body
    return body


def play_from_the_stream(port: int, stream: Any, key: str, games: set[int]) -> list[dict]:
    """Play every turn the stream brings until each of ``games`` ended (the only player who
    moves is this one: the others are bots of the server, or moved by the caller)."""
    events = []
    live = set(games)
    while live:
        event = stream.next()
        events.append(event)
        if event["type"] == "ended":
            live.discard(event["game"])
        elif event["type"] == "turn" and event["game"] in live:
            status, body, _ = call(
                port, "POST", f"/api/games/{event['game']}/moves/", key=key,
                body={"version": event["version"], "move": event["view"]["legal_moves"][0]},
            )
            assert status in (201, 409), body  # 409: a clock or a rival moved first
    return events


def test_charlie_plays_two_games_at_once_over_one_stream(server, alice, bob, charlie):
    """alice and bob move through REST as soon as it is their turn (each seen through a
    stream of theirs); charlie plays both his games only from his one stream."""
    keys = {"alice": key_of(alice), "bob": key_of(bob), "charlie": key_of(charlie)}
    with (
        open_stream(server, keys["charlie"]) as charlies,
        open_stream(server, keys["alice"]) as alices,
        open_stream(server, keys["bob"]) as bobs,
    ):
        one = start_a_game(server, keys["alice"], keys["charlie"])
        two = start_a_game(server, keys["bob"], keys["charlie"])
        live = {one["id"], two["id"]}
        rivals = {one["id"]: (alices, keys["alice"]), two["id"]: (bobs, keys["bob"])}
        seen: list[dict] = []
        # Round-robin: whoever's stream has a turn plays it, until both games end.
        while live:
            for game_id in sorted(live):
                for player_stream, key in (rivals[game_id], (charlies, keys["charlie"])):
                    view = call(server, "GET", f"/api/games/{game_id}/view/", key=key)[1]
                    if view["status"] != "running":
                        live.discard(game_id)
                        break
                    if view["view"]["awaiting"] != view["seat"]:
                        continue
                    def wanted(e: dict, g: int = game_id, v: int = view["version"]) -> bool:
                        return e["type"] == "turn" and e["game"] == g and e["version"] >= v

                    # Already read while waiting for the other game's, or still to come.
                    turn = next(filter(wanted, player_stream.seen), None) or \
                        player_stream.until(wanted)
                    if player_stream is charlies:
                        seen.append(turn)
                    call(server, "POST", f"/api/games/{game_id}/moves/", key=key, body={
                        "version": turn["version"], "move": greedy(turn["view"]["legal_moves"])})
        while len([e for e in charlies.seen if e["type"] == "ended"]) < 2:
            charlies.until(lambda e: e["type"] == "ended")
    ends = [e for e in charlies.seen if e["type"] == "ended"]
    assert {e["game"] for e in ends} == {one["id"], two["id"]}
    assert {e["game"] for e in seen} == {one["id"], two["id"]}
    started = [e for e in charlies.seen if e["type"] == "started"]
    assert [e["game"] for e in started] == [one["id"], two["id"]]


def test_server_sent_events_carry_the_same_events_with_ids(server, alice, bob):
    alice_key, bob_key = key_of(alice), key_of(bob)
    with open_stream(server, bob_key, sse=True) as sse, open_stream(server, bob_key) as lines:
        assert sse.headers["content-type"].startswith("text/event-stream")
        assert sse.headers.get("x-accel-buffering") == "no"
        game = start_a_game(server, alice_key, bob_key)

        def in_step() -> None:
            """Both streams have sent what is due now. A turn is the game as it is when a
            stream reads it: a stream slower than the next move (a loaded machine) would skip
            a version the other sent, and the two would differ for that reason alone."""
            now = call(server, "GET", f"/api/games/{game['id']}/view/", key=bob_key)[1]
            awaited = now["status"] == "running" and now["view"]["awaiting"] == 1
            for stream in (sse, lines):
                if not any(e["type"] == "started" for e in stream.seen):
                    stream.until(lambda e: e["type"] == "started")
                if awaited:
                    stream.until(lambda e: e["type"] == "turn" and e["version"] == now["version"])

        in_step()
        for _ in range(6):
            if play_awaited(server, game["id"], [alice_key, bob_key]) is None:
                break
            in_step()
        assert sse.seen == lines.seen
        assert [e["type"] for e in sse.seen][:1] == ["started"]


def test_a_reconnect_with_since_or_last_event_id_misses_nothing_and_repeats_nothing(
    server, alice, bob
):
    alice_key, bob_key = key_of(alice), key_of(bob)
    keys = [alice_key, bob_key]
    with open_stream(server, bob_key) as first:
        one = start_a_game(server, alice_key, bob_key)
        first.until(lambda e: e["type"] == "started")
        cursor = first.last_id
    # Away: game one ends, game two starts.
    while play_awaited(server, one["id"], keys) is not None:
        pass
    two = start_a_game(server, alice_key, bob_key)
    for resume in ({"since": cursor}, {"last_event_id": cursor, "sse": True}):
        with open_stream(server, bob_key, **resume) as again:
            ended = again.next()
            assert (ended["type"], ended["game"]) == ("ended", one["id"])
            started = again.next()
            assert (started["type"], started["game"]) == ("started", two["id"])
            assert ended["id"] < started["id"] or len(ended["id"]) < len(started["id"])
            awaiting = call(server, "GET", f"/api/games/{two['id']}/view/", key=bob_key)[1]
            if awaiting["view"]["awaiting"] == 1:
                turn = again.next()
                assert (turn["type"], turn["game"]) == ("turn", two["id"])
            quiet = again.next(heartbeats=True)
            assert quiet["type"] == "heartbeat"  # nothing else: no repeat of "started" one


def test_a_heartbeat_gives_bob_a_resume_point_before_his_first_event(server, alice, bob):
    """bob connects before he is seated: only heartbeats come, each with the stream's cursor.
    A game of his starts and ends while he is away; resuming from the last heartbeat's id
    (``since``, or an EventSource's ``Last-Event-ID``) he gets all of it, and nothing older."""
    from games.stream import Cursor

    alice_key, bob_key = key_of(alice), key_of(bob)
    for sse in (False, True):
        with open_stream(server, bob_key, sse=sse) as fresh:
            beats = [fresh.next(heartbeats=True) for _ in range(2)]
            assert [beat["type"] for beat in beats] == ["heartbeat"] * 2
            assert beats[0]["id"] == beats[1]["id"] == fresh.last_id  # nothing happened
        game = start_a_game(server, alice_key, bob_key)
        while play_awaited(server, game["id"], [alice_key, bob_key]) is not None:
            pass
        resume = {"last_event_id": fresh.last_id, "sse": True} if sse else \
            {"since": fresh.last_id}
        with open_stream(server, bob_key, **resume) as again:
            events = [again.next(), again.next()]
            assert [(e["type"], e["game"]) for e in events] == [
                ("started", game["id"]), ("ended", game["id"])]
            later = again.next(heartbeats=True)
            assert later["type"] == "heartbeat"  # and nothing more (the last loop's game)
        ids = [Cursor.parse(each["id"]) for each in (*beats, *events, later)]
        assert ids == sorted(ids), "a cursor never goes back"
        assert ids[-1] == ids[-2]  # a heartbeat: the cursor as it stands


def test_a_fresh_stream_starts_with_the_running_games_and_the_turns_awaiting(
    server, alice, bob
):
    alice_key, bob_key = key_of(alice), key_of(bob)
    game = start_a_game(server, alice_key, bob_key)
    view = call(server, "GET", f"/api/games/{game['id']}/view/", key=bob_key)[1]
    with open_stream(server, bob_key) as stream:
        started = stream.next()
        assert (started["type"], started["game"]) == ("started", game["id"])
        if view["view"]["awaiting"] == 1:
            turn = stream.next()
            assert turn["type"] == "turn" and turn["version"] == view["version"]
        assert stream.next(heartbeats=True)["type"] == "heartbeat"


def test_a_missed_turn_clock_reaches_the_stream_as_a_strike(alice, bob):
    """No worker: the stream itself settles its games' clocks at their deadlines."""
    with asgi_server({"STREAM_HEARTBEAT_SECONDS": "1"}) as port:
        alice_key, bob_key = key_of(alice), key_of(bob)
        status, game, _ = call(port, "POST", "/api/games/", key=alice_key, body={
            "seats": 2, "turn_seconds": 1, "max_strikes": 1, "options": {"single_hand": True}})
        assert status == 201
        call(port, "POST", f"/api/games/{game['id']}/join/", key=bob_key)
        with open_stream(port, bob_key) as stream:
            call(port, "POST", f"/api/games/{game['id']}/start/", key=alice_key)
            strike = stream.until(lambda e: e["type"] == "strike")
            assert strike["strikes"] == 1 and strike["max_strikes"] == 1
            forfeited = stream.until(lambda e: e["type"] in ("forfeited", "ended"))
            assert forfeited["type"] == "forfeited" and forfeited["seat"] == strike["seat"]
            assert forfeited["reason"] == "strikes"
            ended = stream.until(lambda e: e["type"] == "ended")
            assert ended["reason"] == "forfeit" and ended["winner"] == 1 - strike["seat"]
            # The clock's own moves are heard after the stream read the end: they must not
            # bring the game back (its rows sent again, "none twice" broken).
            for _ in range(3):
                later = stream.next(heartbeats=True)
                assert later["type"] == "heartbeat", later
        ids = [event["id"] for event in stream.seen if event["type"] != "turn"]
        assert len(ids) == len(set(ids))


def test_it_refuses_a_bad_cursor_an_unknown_parameter_and_no_credentials(server, bob):
    bob_key = key_of(bob)
    for path, field in (("/api/stream/?since=12", "since"), ("/api/stream/?x=1", "x"),
                        ("/api/stream/?since=", "since")):
        status, body, _ = call(server, "GET", path, key=bob_key)
        assert (status, body["code"]) == (400, "invalid")
        assert list(body["fields"]) == [field]  # named, as every validation error does
    status, body, _ = call(server, "GET", "/api/stream/", key=bob_key,
                           headers={"Last-Event-ID": "12"})
    assert (status, body["code"]) == (400, "invalid")
    assert list(body["fields"]) == ["Last-Event-ID"]  # the header bob sent, not "since"
    status, body, _ = call(server, "GET", "/api/stream/")
    assert (status, body["code"]) == (401, "not_authenticated")
    status, body, _ = call(server, "GET", "/api/stream/", key="nonsense")
    assert status == 401
    status, body, _ = call(server, "POST", "/api/stream/", key=bob_key)
    assert status == 405


def test_it_refuses_a_cursor_it_never_gave_so_bob_does_not_skip_his_games_unawares(
    server, alice, bob
):
    """A cursor past the stream's position (another server's, or from before the database
    was replaced) was answered 200 and kept: every event below it was skipped for good, a
    whole game's among them. Now a 400 naming what bob sent; the position itself is fine."""
    alice_key, bob_key = key_of(alice), key_of(bob)
    with open_stream(server, bob_key) as fresh:
        position = int(fresh.next(heartbeats=True)["id"].split("-")[0])
    ahead = f"{position + 10**9}-0"
    for asked, field in (({"since": ahead}, "since"), ({"last_event_id": ahead}, "Last-Event-ID"),
                         ({"since": f"{2**63 - 1}-0"}, "since")):
        with open_stream(server, bob_key, **asked) as refused:
            assert refused.status == 400
            body = refused.error()
            assert body["code"] == "invalid" and list(body["fields"]) == [field]
    game = start_a_game(server, alice_key, bob_key)
    with open_stream(server, bob_key, since=f"{position}-0") as resumed:
        assert resumed.status == 200
        started = resumed.next()
        assert (started["type"], started["game"]) == ("started", game["id"])


def test_the_horizon_stays_where_it_was_when_the_newest_events_are_deleted(alice, bob, charlie):
    """On SQLite the horizon was the highest event id still there: a game deleted (a user's
    go with the user) sent it back below cursors already handed out, which were then refused
    as never given."""
    from games import rows, stream
    from games import services as game_services
    from games.models import Game

    def a_started_game(creator: Any, rival: Any) -> int:
        game = game_services.game_create(user=creator, options={"single_hand": True}, seats=2)
        game_services.seat_join(game_id=game.pk, user=rival)
        game_services.game_start(game_id=game.pk, user=creator)
        return game.pk

    a_started_game(alice, bob)
    newest = a_started_game(charlie, bob)
    horizon = rows.stream_events([], stream.ROW_KINDS).horizon
    Game.objects.filter(pk=newest).delete()
    assert rows.stream_events([], stream.ROW_KINDS).horizon >= horizon
    assert not stream.ahead(stream.Cursor(horizon, 0))


def test_past_the_cap_a_stream_is_a_429_with_retry_after_and_a_closed_one_frees_its_slot(bob):
    with asgi_server({"STREAM_MAX_PER_USER": "2"}) as port:
        bob_key = key_of(bob)
        with open_stream(port, bob_key) as one, open_stream(port, bob_key) as two:
            assert (one.status, two.status) == (200, 200)
            third = open_stream(port, bob_key)
            with third as refused:
                assert refused.status == 429
                assert refused.headers["retry-after"] == "2"
                assert refused.error()["code"] == "too_many_streams"
        for _ in range(100):  # bounded: the server notices the closed ones
            with open_stream(port, bob_key) as again:
                if again.status == 200:
                    break
        assert again.status == 200


def test_a_stream_carries_the_headers_the_middleware_gives_every_answer(server, bob):
    """The stream's start passes the middleware on a thread, then the stream is sent from
    the event loop with the start's headers (and no Content-Length: it never ends)."""
    bob_key = key_of(bob)
    for sse in (False, True):
        with open_stream(server, bob_key, sse=sse) as stream:
            assert stream.status == 200
            headers = stream.headers
            assert headers["content-type"].startswith(
                "text/event-stream" if sse else "application/x-ndjson")
            assert headers["cache-control"] == "no-cache"
            assert headers["x-accel-buffering"] == "no"
            assert headers["x-content-type-options"] == "nosniff"  # SecurityMiddleware's
            assert headers["x-frame-options"] == "DENY"
            assert "content-length" not in headers
            assert stream.next(heartbeats=True)["type"] == "heartbeat"


def _threads_of_the_worker(port: int) -> int:
    """Threads of the one gunicorn worker serving ``port`` (the master's child)."""
    found = subprocess.run(["pgrep", "-f", f"bind=127.0.0.1:{port} "], capture_output=True,
                           text=True, check=True).stdout.split()
    parents = {pid: Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
               for pid in found}
    (worker,) = [pid for pid, parent in parents.items() if parent in parents]
    return len(list(Path(f"/proc/{worker}/task").iterdir()))


def test_open_streams_hold_no_thread_each(django_user_model):
    """Django's ASGI handler gives each request a thread for its synchronous parts until it
    ends: a stream held one for as long as it was open. Ten more open streams, no more
    threads (beyond the first stream's, which starts the process's pools)."""
    keys = [key_of(django_user_model.objects.create_user(f"streamer-{i}")) for i in range(11)]
    with asgi_server({"STREAM_HEARTBEAT_SECONDS": "1"}) as port, ExitStack() as streams:
        first = streams.enter_context(open_stream(port, keys[0]))
        assert first.next(heartbeats=True)["type"] == "heartbeat"
        before = _threads_of_the_worker(port)
        for key in keys[1:]:
            stream = streams.enter_context(open_stream(port, key))
            assert stream.status == 200
            assert stream.next(heartbeats=True)["type"] == "heartbeat"  # open, and served
        assert _threads_of_the_worker(port) <= before


def test_a_wsgi_server_streams_too_one_thread_a_stream(alice, bob):
    """The embedded default serves WSGI (runserver): each stream holds a thread there."""
    with asgi_server({"STREAM_HEARTBEAT_SECONDS": "1"}, serving="wsgi") as port:
        alice_key, bob_key = key_of(alice), key_of(bob)
        with open_stream(port, bob_key) as stream:
            assert stream.status == 200
            game = start_a_game(port, alice_key, bob_key)
            started = stream.until(lambda e: e["type"] == "started")
            assert started["game"] == game["id"]
            assert stream.next(heartbeats=True)["type"] in ("turn", "heartbeat")
        with open_stream(port, bob_key) as again:  # the first one's slot is free again
            assert again.status == 200


def test_a_stopping_server_ends_its_open_streams_so_a_restart_does_not_wait_on_them(bob):
    """Without the cancel (arena.workers' graceful-shutdown bound) a worker holding a stream
    waited gunicorn's whole graceful timeout, longer than live_server waits for it to stop."""
    bob_key = key_of(bob)
    with ExitStack() as stack:
        with asgi_server({"STREAM_HEARTBEAT_SECONDS": "1"}) as port:
            stream = stack.enter_context(open_stream(port, bob_key))
            assert stream.next(heartbeats=True)["type"] == "heartbeat"
        with pytest.raises(AssertionError, match="the stream ended"):
            for _ in range(100):  # bounded: what was sent before the stop, then the end
                stream.next(heartbeats=True)


def test_a_game_started_between_a_fresh_streams_two_first_reads_gets_its_start_and_turn(
    alice, bob, monkeypatch
):
    """A fresh stream reads the seats, then the rows: a game still open at the first read and
    started before the second has its ``started`` behind the stream's cursor, so only the
    snapshot can send it (and its turn waits for it). Seen in CI: such a stream stayed
    silent until the test gave up."""
    from games import rows, stream
    from games import services as game_services
    from games.engine_state import load_state

    game = game_services.game_create(user=alice, options={"single_hand": True}, seats=2)
    game_services.seat_join(game_id=game.pk, user=bob)
    seats_read = rows.stream_seats

    def seats_then_the_start(user_id: int, *, ended_since: Any) -> Any:
        found = seats_read(user_id, ended_since=ended_since)
        assert [status for _, _, status in found] == ["open"]
        game_services.game_start(game_id=game.pk, user=alice)
        return found

    monkeypatch.setattr(rows, "stream_seats", seats_then_the_start)
    state, first = stream.open_stream(user_id=bob.pk, since=None)

    started = load_state(type(game).objects.get(pk=game.pk))
    assert [event["type"] for event in first][:1] == ["started"]
    assert first[0]["game"] == game.pk
    awaited = [event for event in first if event["type"] == "turn"]
    assert len(awaited) == (1 if started.awaiting == 1 else 0)
    assert not state.held


def test_a_stream_opened_after_a_turn_ran_out_sends_the_strike_then_the_turn_not_the_stale_one(
    alice, bob
):
    """A bot writer's review: resumed after its clock ran out, a stream sent that turn, then
    played the clock (a strike) and sent the next; a move for the first was bound to be a 409.
    Now the clock is played first."""
    import time

    with asgi_server({"STREAM_HEARTBEAT_SECONDS": "1"}) as port:
        keys = {"alice": key_of(alice), "bob": key_of(bob)}
        status, game, _ = call(port, "POST", "/api/games/", key=keys["alice"], body={
            "seats": 2, "turn_seconds": 1, "max_strikes": 3, "options": {"single_hand": True}})
        assert status == 201
        call(port, "POST", f"/api/games/{game['id']}/join/", key=keys["bob"])
        call(port, "POST", f"/api/games/{game['id']}/start/", key=keys["alice"])
        view = call(port, "GET", f"/api/games/{game['id']}/view/", key=keys["alice"])[1]
        awaited = ("alice", "bob")[view["view"]["awaiting"]]
        time.sleep(1.5)  # past the deadline; nothing reads the game meanwhile
        with open_stream(port, keys[awaited]) as stream:
            turn = stream.until(lambda e: e["type"] == "turn")
        kinds = [event["type"] for event in stream.seen]
        assert "strike" in kinds[:kinds.index("turn")], kinds
        assert turn["version"] > view["version"], stream.seen
