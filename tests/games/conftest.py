"""API clients for the personas, authenticated with real knox tokens, and a tiny bot."""

from __future__ import annotations

import random
from typing import Any

import pytest
from rest_framework.test import APIClient

from arena.accounts.services import token_create
from games import services
from games.models import Game
from games.uno import Options
from games.uno.scenario import scenario


@pytest.fixture(autouse=True)
def _fast_and_fresh(settings: Any, fresh_cache: None) -> None:
    # Throttle counters start from zero (fresh_cache). Personas' passwords need no real key
    # stretching here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def client_for(user: Any, scheme: str = "Token") -> APIClient:
    client = APIClient()
    _, key = token_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"{scheme} {key}")
    return client


def move_for_the_awaited(game_id: int, clients: dict[int, APIClient]) -> int:
    """A legal move for the awaited seat, over the API; the version it made."""
    seat = Game.objects.get(pk=game_id).awaiting
    assert seat is not None
    view = clients[seat].get(f"/api/games/{game_id}/view/").json()
    answer = clients[seat].post(
        f"/api/games/{game_id}/moves/",
        {"version": view["version"], "move": view["view"]["legal_moves"][0]}, format="json")
    assert answer.status_code == 201, answer.content
    return int(answer.json()["version"])


@pytest.fixture
def alice_api(alice: Any) -> APIClient:
    return client_for(alice)


@pytest.fixture
def bob_api(bob: Any) -> APIClient:
    return client_for(bob, "Bearer")


@pytest.fixture
def charlie_api(charlie: Any) -> APIClient:
    return client_for(charlie)


def create_game(client: APIClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/games/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def running_game(alice_api: APIClient, bob_api: APIClient) -> dict[str, Any]:
    """A started two-seat single-hand game: alice seat 0, bob seat 1."""
    game = create_game(alice_api, seats=2, options={"single_hand": True})
    assert bob_api.post(f"/api/games/{game['id']}/join/").status_code == 200
    started = alice_api.post(f"/api/games/{game['id']}/start/")
    assert started.status_code == 200, started.content
    return started.json()


def play_to_the_end(
    clients: list[APIClient], game_id: int, *, seed: int = 0, max_moves: int = 5000
) -> list[Any]:
    """Random legal moves by whoever is awaited, through HTTP, until the game is over.
    Returns every response seen (for the hidden-information checks)."""
    rng = random.Random(seed)
    seen: list[Any] = []
    first = clients[0].get(f"/api/games/{game_id}/view/")
    seen.append(first)
    awaiting = first.json()["view"]["awaiting"]
    for _ in range(max_moves):
        mine = clients[awaiting].get(f"/api/games/{game_id}/view/")
        seen.append(mine)
        body = mine.json()
        if body["status"] != "running":
            return seen
        move = choose(rng, body["view"]["legal_moves"])
        response = clients[awaiting].post(
            f"/api/games/{game_id}/moves/", {"version": body["version"], "move": move},
            format="json",
        )
        seen.append(response)
        assert response.status_code == 201, response.content
        after = response.json()
        if after["status"] != "running":
            return seen
        awaiting = after["view"]["awaiting"]
    raise AssertionError("the game did not end")


def choose(rng: random.Random, legal: list[dict[str, Any]]) -> dict[str, Any]:
    """A greedy random bot: plays a card (calling Uno) when it can, so games stay short."""
    plays = [m for m in legal if m["type"] == "play"]
    unos = [m for m in plays if m.get("uno")]
    if unos:
        return rng.choice(unos)
    if plays:
        return rng.choice(plays)
    for kind in ("color", "accept", "draw", "keep"):
        options = [m for m in legal if m["type"] == kind]
        if options:
            return rng.choice(options)
    return rng.choice(legal)


class FakeClock:
    """Wall clock and monotonic clock that only move when told (or when the code sleeps)."""

    def __init__(self) -> None:
        from django.utils import timezone

        self.wall = timezone.now()
        self.mono = 1000.0

    def now(self) -> Any:
        return self.wall

    def monotonic(self) -> float:
        return self.mono

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)

    def wait(self, event: Any, seconds: float) -> bool:
        if event.is_set():
            return True
        self.advance(seconds)
        return False

    async def next_change(self, changes: Any, seconds: float) -> Any:
        heard = changes.take()
        if heard is None:
            self.advance(seconds)
        return heard

    def advance(self, seconds: float) -> None:
        from datetime import timedelta

        self.wall += timedelta(seconds=seconds)
        self.mono += seconds


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    from games import clock

    fake = FakeClock()
    monkeypatch.setattr(clock, "now", fake.now)
    monkeypatch.setattr(clock, "monotonic", fake.monotonic)
    monkeypatch.setattr(clock, "sleep", fake.sleep)
    monkeypatch.setattr(clock, "wait", fake.wait)
    monkeypatch.setattr(clock, "next_change", fake.next_change)
    return fake


@pytest.fixture
def asgi_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test client's waiting requests are served as ``arena.serving`` serves them
    (``games.waiting.serve`` with ``arena.wait_urls``), except that their steps run on the
    test's own thread (its transaction) instead of the pool's."""
    from asgiref.sync import async_to_sync, sync_to_async
    from django.test.client import ClientHandler

    from arena import serving
    from games import waiting

    usual = ClientHandler.get_response

    def get_response(self: ClientHandler, request: Any) -> Any:
        found = serving.WAITING_PATH.fullmatch(request.path)
        if found is None or not serving.is_waiting(
            request.path, request.META.get("QUERY_STRING", "").encode()
        ):
            return usual(self, request)
        request.urlconf = serving.WAIT_URLCONF
        return async_to_sync(waiting.serve)(
            request, int(found.group(1)), lambda request: usual(self, request)
        )

    async def in_thread(function: Any, *args: Any, **kwargs: Any) -> Any:
        return await sync_to_async(function, thread_sensitive=True)(*args, **kwargs)

    monkeypatch.setattr(ClientHandler, "get_response", get_response)
    monkeypatch.setattr(waiting, "in_thread", in_thread)


@pytest.fixture(params=["wsgi", "asgi"])
def serving(request: pytest.FixtureRequest) -> str:
    """Both ways a waiting request is served: blocking a thread (a WSGI server: runserver)
    and without one (the ASGI application of compose and the image)."""
    if request.param == "asgi":
        request.getfixturevalue("asgi_waits")
    return str(request.param)


def rigged_game(alice: Any, bob: Any, hands: list[list[str]], deck: list[str]) -> Game:
    """A running two-seat game in a known position: alice (seat 0) to play on a red 3."""
    game = services.game_create(user=alice, options={}, seats=2)
    services.seat_join(game_id=game.pk, user=bob)
    services.game_start(game_id=game.pk, user=alice)
    state = scenario(Options(players=2), hands=hands, top="R3", deck=deck)
    Game.objects.filter(pk=game.pk).update(state=state.to_json(), awaiting=state.awaiting)
    return Game.objects.get(pk=game.pk)
