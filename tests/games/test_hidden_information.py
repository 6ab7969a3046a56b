"""While a game runs nobody sees another hand, the deck or the seed: not through views,
moves, errors, events, lists or the game detail. Checked against the server-side state after
every single response of many games with assorted options."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from rest_framework.test import APIClient

from games import uno
from games.models import Game
from tests.games.conftest import choose, client_for

pytestmark = pytest.mark.django_db

CARD_CODES = set(uno.CARD_CODES)
FORBIDDEN_KEYS = {"hands", "deck", "seed", "rng", "discard", "w4_illegal", "state"}
OPTION_SETS = [
    {},
    {"stacking": True},
    {"seven_o": True},
    {"jump_in": True},
    {"draw_until_playable": True},
    {"deck_2018": True},
    {"start_2022": True},
    {"seven_o": True, "jump_in": True, "stacking": True, "deck_2018": True},
]


def _card_lists(node: Any) -> list[list[str]]:
    """Every JSON array made only of card codes, anywhere in the body (but the challenged hand
    a Wild Draw Four's challenger is shown, which ``_reveals`` checks)."""
    found: list[list[str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            assert key not in FORBIDDEN_KEYS, f"forbidden key {key!r}"
            if key != "challenge_reveal":
                found.extend(_card_lists(value))
    elif isinstance(node, list):
        if node and all(isinstance(v, str) and v in CARD_CODES for v in node):
            found.append(node)
        for value in node:
            found.extend(_card_lists(value))
    return found


def _drawn_cards(node: Any) -> list[tuple[int, str]]:
    if isinstance(node, dict):
        out = []
        if node.get("type") == "drawn" and "card" in node:
            out.append((node["seat"], node["card"]))
        for value in node.values():
            out.extend(_drawn_cards(value))
        return out
    if isinstance(node, list):
        return [item for value in node for item in _drawn_cards(value)]
    return []


def _reveals(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        out = [node["challenge_reveal"]] if node.get("challenge_reveal") is not None else []
        return out + [item for value in node.values() for item in _reveals(value)]
    if isinstance(node, list):
        return [item for value in node for item in _reveals(value)]
    return []


def assert_no_leak(response: Any, game_id: int, viewer: int | None) -> None:
    """``viewer``: the seat this response is for (None: a non-player or public endpoint)."""
    game = Game.objects.get(pk=game_id)
    if game.is_over or not response.content:
        return
    text = response.content.decode()
    assert str(game.seed) not in text
    state = game.state
    own = state["hands"][viewer] if viewer is not None else None
    for cards in _card_lists(json.loads(text)):
        assert viewer is not None and cards == own, (viewer, cards, response.request)
    for seat, _card in _drawn_cards(json.loads(text)):
        assert seat == viewer
    # A challenged hand is shown to its challenger only, as the state keeps it.
    for reveal in _reveals(json.loads(text)):
        kept = state["challenge_reveal"]
        assert kept is not None and viewer == kept["seat"], (viewer, reveal)
        assert reveal == {"seat": kept["player"], "hand": kept["hand"]}
    if len(state["deck"]) >= 3:
        # Not the deck's next cards, outside the viewer's own hand: a hand can end with the
        # same three cards (108 cards, most twice or four times: a streamed turn's hand did).
        shown = text.replace(json.dumps(own)[1:-1], "") if own else text
        assert json.dumps(state["deck"][-3:])[1:-1] not in shown


def _play_and_check(clients: list[APIClient], outsider: APIClient, game_id: int,
                    rng: random.Random) -> int:
    url = f"/api/games/{game_id}"
    checked = 0
    for step in range(2000):
        views = [c.get(f"{url}/view/") for c in clients]
        for seat, response in enumerate(views):
            assert response.status_code == 200
            assert_no_leak(response, game_id, seat)
            checked += 1
        body = views[0].json()
        if body["status"] != "running":
            return checked
        awaiting = body["view"]["awaiting"]
        mine = views[awaiting].json()
        idle = (awaiting + 1) % len(clients)
        # Errors must not leak either: out of turn, illegal (a card of someone else), stale.
        hands = Game.objects.get(pk=game_id).state["hands"]
        foreign = [c for c in hands[idle] if c not in hands[awaiting] and c[0] != "W"]
        illegal = (
            {"type": "play", "card": foreign[0]} if foreign
            else {"type": "challenge"} if mine["view"]["phase"] != "challenge"
            else {"type": "keep"}
        )
        attempts = [
            (idle, {"version": mine["version"], "move": {"type": "draw"}}),
            (awaiting, {"version": mine["version"], "move": illegal}),
            (awaiting, {"version": mine["version"] + 1, "move": {"type": "draw"}}),
        ]
        for seat, payload in attempts:
            response = clients[seat].post(f"{url}/moves/", payload, format="json")
            assert response.status_code in (409, 422), response.content
            assert_no_leak(response, game_id, seat)
        legal = mine["view"]["legal_moves"]
        # Challenge half the Wild Draw Fours, so the challenger's reveal is checked too.
        challenge = [m for m in legal if m["type"] == "challenge"]
        move = challenge[0] if challenge and rng.random() < 0.5 else choose(rng, legal)
        response = clients[awaiting].post(
            f"{url}/moves/", {"version": mine["version"], "move": move}, format="json"
        )
        assert response.status_code == 201, response.content
        assert_no_leak(response, game_id, awaiting)
        if step % 7 == 0:
            for public in (f"{url}/", f"{url}/events/", f"{url}/moves/", "/api/games/",
                           f"{url}/view/", f"{url}/replay/"):
                assert_no_leak(outsider.get(public), game_id, None)
            for public in (f"{url}/events/", f"{url}/moves/"):
                assert_no_leak(clients[idle].get(public), game_id, idle)
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("round_", range(4))
def test_no_response_during_play_shows_another_hand_the_deck_or_the_seed(
    django_user_model: Any, charlie_api: APIClient, round_: int
) -> None:
    rng = random.Random(round_)
    users = [django_user_model.objects.create_user(f"player{round_}-{i}") for i in range(4)]
    clients = [client_for(u) for u in users]
    checked = 0
    for game_number in range(3):
        options = {**OPTION_SETS[(round_ * 3 + game_number) % len(OPTION_SETS)],
                   "single_hand": True}
        seats = rng.randint(2, 4)
        created = clients[0].post("/api/games/", {"seats": seats, "options": options},
                                  format="json")
        assert created.status_code == 201, created.content
        game_id = created.json()["id"]
        for client in clients[1:seats]:
            client.post(f"/api/games/{game_id}/join/")
        assert clients[0].post(f"/api/games/{game_id}/start/").status_code == 200
        checked += _play_and_check(clients[:seats], charlie_api, game_id, rng)
    assert checked > 50
