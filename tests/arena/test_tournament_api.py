"""Tournaments over the API, and who may do what: alice owns a tournament and a bot, bob has a
bot of his own, charlie has none. Everyone signed in sees every tournament, its standings, the
leaderboard and any bot's rating history; only a bot's owner enters or withdraws it; only the
tournament's owner (or staff) starts and cancels it."""

from __future__ import annotations

import importlib
import itertools
import re
from datetime import timedelta
from typing import Any

import pytest
from django.db.models import ProtectedError
from rest_framework.test import APIClient

from arena import records
from arena.models import Entrant, Rating, Tournament, TournamentGame
from arena.ratings import GameResult
from bots.models import Bot
from tests.arena.admin_fixtures import build_world, cancel_part_way
from tests.bots.helpers import register
from tests.games.conftest import client_for

# A cache of each test's own: running tournaments' tables are cached by id (the same ids in
# every xdist worker's database, one Redis).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]


@pytest.fixture(autouse=True)
def _quick(settings: Any) -> None:
    settings.BOTS_RUNNER = "off"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def verified_bot(owner: Any, name: str, *, verified: bool = True) -> Bot:
    bot, _ = register(owner, name, "http://127.0.0.1:9/")
    Bot.objects.filter(pk=bot.pk).update(verified=verified)  # verification itself: tests/bots
    return Bot.objects.get(pk=bot.pk)


@pytest.fixture
def alice_api(alice: Any) -> APIClient:
    return client_for(alice)


@pytest.fixture
def bob_api(bob: Any) -> APIClient:
    return client_for(bob)


@pytest.fixture
def charlie_api(charlie: Any) -> APIClient:
    return client_for(charlie)


@pytest.fixture
def alice_bot(alice: Any) -> Bot:
    return verified_bot(alice, "alices-bot")


@pytest.fixture
def bob_bot(bob: Any) -> Bot:
    return verified_bot(bob, "bobs-bot")


def create(client: APIClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/tournaments/", {"name": "Friday", **body}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def enter(client: APIClient, tournament: dict[str, Any], bot: Bot) -> Any:
    return client.post(f"/api/tournaments/{tournament['id']}/entrants/", {"bot": bot.pk},
                       format="json")


def test_alice_creates_a_draft_tournament_that_everyone_signed_in_sees(
    alice_api: APIClient, charlie_api: APIClient
) -> None:
    made = create(alice_api, options={"single_hand": True}, games_per_pairing=4)
    assert made["status"] == "draft" and made["owner"] == "alice"
    assert made["rule_set"] == "single_hand" and made["games_per_pairing"] == 4
    assert made["progress"] == {"matches_done": 0, "matches_total": 0, "games_done": 0,
                                "games_total": 0, "matches_dropped": 0, "games_dropped": 0,
                                "eta_seconds": None}
    assert "seed" not in made  # the deals stay secret
    seen = charlie_api.get(f"/api/tournaments/{made['id']}/")
    assert seen.status_code == 200 and seen.json() == made
    listed = charlie_api.get("/api/tournaments/").json()["results"]
    assert [t["id"] for t in listed] == [made["id"]]


def test_the_list_filters_by_status_and_mine(
    alice_api: APIClient, bob_api: APIClient, charlie_api: APIClient, bob_bot: Bot
) -> None:
    first = create(alice_api)
    second = create(alice_api)
    assert enter(bob_api, second, bob_bot).status_code == 201
    assert charlie_api.post(f"/api/tournaments/{first['id']}/cancel/").status_code == 403
    assert alice_api.post(f"/api/tournaments/{first['id']}/cancel/").status_code == 200

    def ids(client: APIClient, query: str) -> list[int]:
        response = client.get(f"/api/tournaments/?{query}")
        assert response.status_code == 200, response.content
        return [t["id"] for t in response.json()["results"]]

    assert ids(charlie_api, "status=draft") == [second["id"]]
    assert ids(charlie_api, "status=cancelled") == [first["id"]]
    assert ids(alice_api, "mine=true") == [second["id"], first["id"]]
    assert ids(bob_api, "mine=true") == [second["id"]]  # his bot is in it
    assert ids(charlie_api, "mine=true") == []
    for bad in ("status=over", "mine=perhaps", "mine=", "wat=1"):
        response = charlie_api.get(f"/api/tournaments/?{bad}")
        assert response.status_code == 400, bad
        assert response.json()["code"] == "invalid"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"options": {"stacking": "yes"}}, "options.stacking"),
        ({"table_size": 11}, "table_size"),
        ({"table_size": 1}, "table_size"),
        ({"games_per_pairing": 0}, "games_per_pairing"),
        ({"turn_timeout_ms": 10001}, "turn_timeout_ms"),
        ({"seed": 7}, "seed"),  # not an API field: the deals' seed is never the client's
        ({"name": ""}, "name"),
        ({"table_size": 3, "options": {"players": 2}}, "options.players"),
    ],
)
def test_it_rejects_a_malformed_tournament_naming_the_field(
    alice_api: APIClient, body: dict[str, Any], field: str
) -> None:
    response = alice_api.post("/api/tournaments/", {"name": "Friday", **body}, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["fields"], response.json()


def test_owners_enter_and_withdraw_their_own_verified_bots(
    alice_api: APIClient, bob_api: APIClient, alice_bot: Bot, bob_bot: Bot
) -> None:
    tournament = create(alice_api)
    entered = enter(bob_api, tournament, bob_bot)
    assert entered.status_code == 201, entered.content
    assert [e["name"] for e in entered.json()["entrants"]] == ["bobs-bot"]
    assert enter(alice_api, tournament, alice_bot).status_code == 201
    again = enter(bob_api, tournament, bob_bot)  # in already: nothing changes
    assert again.status_code == 200 and len(again.json()["entrants"]) == 2

    url = f"/api/tournaments/{tournament['id']}/entrants/{bob_bot.pk}/"
    assert bob_api.delete(url).status_code == 204
    gone = bob_api.delete(url)
    assert gone.status_code == 404 and gone.json()["code"] == "not_entered"
    names = [e["name"] for e in bob_api.get(f"/api/tournaments/{tournament['id']}/").json()[
        "entrants"]]
    assert names == ["alices-bot"]


def test_it_refuses_to_enter_someone_elses_bot_or_one_that_does_not_exist(
    alice_api: APIClient, bob_api: APIClient, charlie_api: APIClient, alice_bot: Bot
) -> None:
    tournament = create(alice_api)
    for client in (bob_api, charlie_api):
        response = enter(client, tournament, alice_bot)
        assert response.status_code == 403 and response.json()["code"] == "not_bot_owner"
    missing = charlie_api.post(f"/api/tournaments/{tournament['id']}/entrants/",
                               {"bot": 999999}, format="json")
    assert missing.status_code == 400 and "bot" in missing.json()["fields"]
    nowhere = enter(alice_api, {"id": 999999}, alice_bot)
    assert nowhere.status_code == 404
    assert alice_api.get(f"/api/tournaments/{tournament['id']}/").json()["entrants"] == []


def test_bob_cannot_withdraw_alices_bot(
    alice_api: APIClient, bob_api: APIClient, alice_bot: Bot
) -> None:
    tournament = create(alice_api)
    assert enter(alice_api, tournament, alice_bot).status_code == 201
    url = f"/api/tournaments/{tournament['id']}/entrants/{alice_bot.pk}/"
    response = bob_api.delete(url)
    assert response.status_code == 403 and response.json()["code"] == "not_bot_owner"


def test_an_unverified_bot_is_a_409_until_it_is_verified(
    alice: Any, alice_api: APIClient
) -> None:
    bot = verified_bot(alice, "untested", verified=False)
    tournament = create(alice_api)
    response = enter(alice_api, tournament, bot)
    assert response.status_code == 409 and response.json()["code"] == "bot_not_eligible"
    Bot.objects.filter(pk=bot.pk).update(verified=True)
    assert enter(alice_api, tournament, bot).status_code == 201


def test_a_disabled_bot_is_a_409(alice: Any, alice_api: APIClient) -> None:
    bot = verified_bot(alice, "sleeping")
    Bot.objects.filter(pk=bot.pk).update(enabled=False)
    response = enter(alice_api, create(alice_api), bot)
    assert response.status_code == 409 and response.json()["code"] == "bot_not_eligible"


def test_entering_a_bot_again_changes_nothing_and_says_so_with_a_200(
    alice_api: APIClient, alice_bot: Bot
) -> None:
    tournament = create(alice_api)
    assert enter(alice_api, tournament, alice_bot).status_code == 201
    again = enter(alice_api, tournament, alice_bot)
    assert again.status_code == 200
    assert [e["bot"] for e in again.json()["entrants"]] == [alice_bot.pk]
    # ... while it is eligible: disabled since, it is told so (and stays entered).
    Bot.objects.filter(pk=alice_bot.pk).update(enabled=False)
    refused = enter(alice_api, tournament, alice_bot)
    assert refused.status_code == 409 and refused.json()["code"] == "bot_not_eligible"
    entrants = alice_api.get(f"/api/tournaments/{tournament['id']}/").json()["entrants"]
    assert [e["bot"] for e in entrants] == [alice_bot.pk]


def test_a_start_refuses_entrants_no_longer_verified_or_enabled_naming_them(
    alice_api: APIClient, bob_api: APIClient, alice_bot: Bot, bob_bot: Bot, bob: Any
) -> None:
    """Eligible when entered; one disabled since, or whose URL changed (which clears its
    verification), would forfeit or play unverified: the start says which, and waits."""
    from bots import services as bot_services

    tournament = create(alice_api)
    assert enter(alice_api, tournament, alice_bot).status_code == 201
    assert enter(bob_api, tournament, bob_bot).status_code == 201
    bot_services.bot_update(bot=bob_bot, data={"url": "http://127.0.0.1:10/"})
    start = f"/api/tournaments/{tournament['id']}/start/"
    refused = alice_api.post(start)
    assert refused.status_code == 409 and refused.json()["code"] == "bot_not_eligible"
    assert "bobs-bot" in refused.json()["detail"]
    assert alice_api.get(f"/api/tournaments/{tournament['id']}/").json()["status"] == "draft"
    # The tournament's owner takes it out, and the start goes ahead... with too few entrants.
    assert alice_api.delete(f"/api/tournaments/{tournament['id']}/entrants/{bob_bot.pk}/"
                            ).status_code == 204
    assert alice_api.post(start).json()["code"] == "tournament_conflict"


def test_a_cancelled_draft_says_it_was_cancelled(
    alice_api: APIClient, alice_bot: Bot
) -> None:
    tournament = create(alice_api)
    assert alice_api.post(f"/api/tournaments/{tournament['id']}/cancel/").status_code == 200
    for response in (alice_api.post(f"/api/tournaments/{tournament['id']}/start/"),
                     enter(alice_api, tournament, alice_bot)):
        assert response.status_code == 409
        assert "was cancelled" in response.json()["detail"], response.json()


def test_only_the_owner_or_staff_start_and_cancel(
    alice_api: APIClient, bob: Any, bob_api: APIClient, charlie: Any, charlie_api: APIClient,
    bob_bot: Bot,
) -> None:
    tournament = create(alice_api)
    assert enter(bob_api, tournament, bob_bot).status_code == 201
    url = f"/api/tournaments/{tournament['id']}/"
    for client in (bob_api, charlie_api):
        for action in ("start", "cancel"):
            response = client.post(f"{url}{action}/")
            assert response.status_code == 403, (action, response.content)
            assert response.json()["code"] == "not_tournament_owner"
    assert alice_api.get(url).json()["status"] == "draft"
    few = alice_api.post(f"{url}start/")  # one entrant, two seats per table
    assert few.status_code == 409 and few.json()["code"] == "tournament_conflict"
    charlie.is_staff = True
    charlie.save(update_fields=["is_staff"])
    cancelled = charlie_api.post(f"{url}cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    late = bob_api.post(f"/api/tournaments/{tournament['id']}/entrants/", {"bot": bob_bot.pk},
                        format="json")
    assert late.status_code == 409 and late.json()["code"] == "tournament_conflict"
    again = alice_api.post(f"{url}cancel/")
    assert again.status_code == 409 and again.json()["code"] == "tournament_conflict"


def test_the_owner_deletes_a_draft_with_its_entrants(
    alice_api: APIClient, bob_api: APIClient, bob_bot: Bot
) -> None:
    tournament = create(alice_api)
    assert enter(bob_api, tournament, bob_bot).status_code == 201
    url = f"/api/tournaments/{tournament['id']}/"
    refused = bob_api.delete(url)  # an entrant's owner is not the tournament's
    assert refused.status_code == 403 and refused.json()["code"] == "not_tournament_owner"
    deleted = alice_api.delete(url)
    assert deleted.status_code == 204 and deleted.content == b""
    assert alice_api.get(url).status_code == 404
    assert not Tournament.objects.filter(pk=tournament["id"]).exists()
    assert not Entrant.objects.filter(tournament_id=tournament["id"]).exists()
    assert Bot.objects.filter(pk=bob_bot.pk).exists()
    assert alice_api.delete(url).status_code == 404


def test_the_owner_changes_a_draft_and_its_entrants_stay(
    alice_api: APIClient, bob_api: APIClient, bob_bot: Bot
) -> None:
    tournament = create(alice_api, options={"single_hand": True})
    assert enter(bob_api, tournament, bob_bot).status_code == 201
    url = f"/api/tournaments/{tournament['id']}/"
    seed = Tournament.objects.get(pk=tournament["id"]).seed
    changed = alice_api.patch(url, {"name": "Saturday", "games_per_pairing": 6,
                                    "options": {"stacking": True}}, format="json")
    assert changed.status_code == 200, changed.content
    body = changed.json()
    assert body["name"] == "Saturday" and body["games_per_pairing"] == 6
    assert body["options"]["stacking"] is True and body["options"]["single_hand"] is True
    assert body["rule_set"] == "single_hand,stacking" and body["table_size"] == 2  # kept
    assert [e["bot"] for e in body["entrants"]] == [bob_bot.pk]
    stored = Tournament.objects.get(pk=tournament["id"])
    assert stored.seed == seed and stored.rule_set == "single_hand,stacking"
    assert alice_api.get(url).json() == body
    off = alice_api.patch(url, {"options": {"single_hand": False}}, format="json")
    assert off.json()["options"]["stacking"] is True and off.json()["rule_set"] == "stacking"


def test_a_draft_takes_a_new_table_size_without_repeating_its_options(
    alice_api: APIClient,
) -> None:
    tournament = create(alice_api, options={"single_hand": True})
    url = f"/api/tournaments/{tournament['id']}/"
    bigger = alice_api.patch(url, {"table_size": 3}, format="json")
    assert bigger.status_code == 200, bigger.content
    assert bigger.json()["options"]["players"] == 3
    assert bigger.json()["options"]["single_hand"] is True


def test_a_change_that_contradicts_what_is_kept_is_refused_whole(
    alice_api: APIClient,
) -> None:
    tournament = create(alice_api, games_per_pairing=4)
    url = f"/api/tournaments/{tournament['id']}/"
    for body, field in [
        ({"name": "Later", "table_size": 3, "duplicate_deals": True}, "games_per_pairing"),
        ({"options": {"players": 4}}, "options.players"),
        ({"seed": 7}, "seed"),
        ({"games_per_pairing": 0}, "games_per_pairing"),
        ({"name": "  "}, "name"),
    ]:
        refused = alice_api.patch(url, body, format="json")
        assert refused.status_code == 400, (body, refused.content)
        assert field in refused.json()["fields"], (body, refused.json())
    assert alice_api.patch(url, [1], format="json").status_code == 400
    assert alice_api.get(url).json() == tournament


def test_only_the_owner_or_staff_change_a_draft_and_nobody_one_that_started(
    alice_api: APIClient, bob_api: APIClient, charlie: Any, charlie_api: APIClient,
) -> None:
    draft, cancelled = create(alice_api), create(alice_api)
    refused = bob_api.patch(f"/api/tournaments/{draft['id']}/", {"name": "Mine"},
                            format="json")
    assert refused.status_code == 403 and refused.json()["code"] == "not_tournament_owner"
    missing = alice_api.patch("/api/tournaments/999999/", {"name": "X"}, format="json")
    assert missing.status_code == 404
    charlie.is_staff = True
    charlie.save(update_fields=["is_staff"])
    staff = charlie_api.patch(f"/api/tournaments/{draft['id']}/", {"max_strikes": 5},
                              format="json")
    assert staff.status_code == 200 and staff.json()["max_strikes"] == 5
    assert alice_api.post(f"/api/tournaments/{cancelled['id']}/cancel/").status_code == 200
    kept = alice_api.patch(f"/api/tournaments/{cancelled['id']}/", {"name": "X"},
                           format="json")
    assert kept.status_code == 409 and kept.json()["code"] == "tournament_conflict"
    assert Tournament.objects.get(pk=cancelled["id"]).name == "Friday"


def test_an_entered_bot_is_not_deleted_from_under_its_tournament(
    alice_api: APIClient, bob_api: APIClient, alice_bot: Bot, bob_bot: Bot
) -> None:
    """A started tournament's schedule names its entrants: deleting one left its matches
    unplayable, and the tournament running for ever. A draft's entrant is withdrawn first."""
    draft, started = create(alice_api), create(alice_api)
    for tournament in (draft, started):
        assert enter(alice_api, tournament, alice_bot).status_code == 201
    assert enter(bob_api, started, bob_bot).status_code == 201
    assert alice_api.post(f"/api/tournaments/{started['id']}/start/").status_code == 200
    for client, bot in ((bob_api, bob_bot), (alice_api, alice_bot)):
        kept = client.delete(f"/api/bots/{bot.pk}/")
        assert kept.status_code == 409 and kept.json()["code"] == "bot_entered", kept.content
        assert Bot.objects.filter(pk=bot.pk).exists()
    assert Entrant.objects.filter(tournament_id=started["id"]).count() == 2
    withdrawn = alice_api.post(f"/api/tournaments/{started['id']}/cancel/")
    assert withdrawn.status_code == 200  # cancelled: its entrants are still its record
    assert bob_api.delete(f"/api/bots/{bob_bot.pk}/").status_code == 409


def test_a_bot_withdrawn_from_every_draft_can_be_deleted(
    alice_api: APIClient, bob_api: APIClient, bob_bot: Bot
) -> None:
    tournament = create(alice_api)
    assert enter(bob_api, tournament, bob_bot).status_code == 201
    assert bob_api.delete(f"/api/bots/{bob_bot.pk}/").status_code == 409
    url = f"/api/tournaments/{tournament['id']}/entrants/{bob_bot.pk}/"
    assert bob_api.delete(url).status_code == 204
    assert bob_api.delete(f"/api/bots/{bob_bot.pk}/").status_code == 204


def test_a_user_who_owns_a_tournament_is_not_deleted_with_it(
    alice: Any, alice_api: APIClient
) -> None:
    """Its games and Elo history are other users' bots' too: the admin deactivates such a
    user instead (a delete is refused, and deletes nothing)."""
    tournament = create(alice_api)
    with pytest.raises(ProtectedError):
        alice.delete()
    assert Tournament.objects.filter(pk=tournament["id"]).exists()


def test_staff_delete_a_draft_and_nobody_deletes_one_that_started(
    alice_api: APIClient, charlie: Any, charlie_api: APIClient, alice_bot: Bot
) -> None:
    draft, cancelled = create(alice_api), create(alice_api)
    assert alice_api.post(f"/api/tournaments/{cancelled['id']}/cancel/").status_code == 200
    kept = alice_api.delete(f"/api/tournaments/{cancelled['id']}/")
    assert kept.status_code == 409 and kept.json()["code"] == "tournament_conflict"
    assert kept.json()["detail"] == ("The tournament was cancelled: only a draft can be deleted; "
                                     "a tournament that has started keeps its record.")
    assert Tournament.objects.filter(pk=cancelled["id"]).exists()
    assert charlie_api.delete(f"/api/tournaments/{draft['id']}/").status_code == 403
    charlie.is_staff = True
    charlie.save(update_fields=["is_staff"])
    assert charlie_api.delete(f"/api/tournaments/{draft['id']}/").status_code == 204


def test_standings_leaderboard_and_history_answer_everyone_signed_in(
    alice_api: APIClient, charlie_api: APIClient, alice_bot: Bot
) -> None:
    tournament = create(alice_api)
    standings = charlie_api.get(f"/api/tournaments/{tournament['id']}/standings/")
    assert standings.status_code == 200, standings.content
    assert standings.json()["final"] is False and standings.json()["tournament"] == tournament[
        "id"]
    board = charlie_api.get("/api/leaderboard/")
    assert board.status_code == 200 and board.json()["results"] == []
    history = charlie_api.get(f"/api/bots/{alice_bot.pk}/ratings/")
    assert history.status_code == 200
    assert history.json() == {"bot": alice_bot.pk, "rule_set": "official", "elo": None,
                              "games": 0, "ladders": [], "history": [], "more": False}
    assert charlie_api.get("/api/bots/999999/ratings/").status_code == 404
    for bad in ("verified=maybe", "active=", "colour=red"):
        assert charlie_api.get(f"/api/leaderboard/?{bad}").status_code == 400, bad


def test_nothing_is_answered_without_signing_in(alice_api: APIClient) -> None:
    tournament = create(alice_api)
    anonymous = APIClient()
    for url in ("/api/tournaments/", f"/api/tournaments/{tournament['id']}/",
                f"/api/tournaments/{tournament['id']}/standings/", "/api/leaderboard/"):
        assert anonymous.get(url).status_code == 401, url


@pytest.mark.django_db(transaction=True)
def test_a_tournament_started_over_the_api_plays_in_the_background_to_its_standings(
    alice: Any, bob: Any, charlie_api: APIClient, settings: Any
) -> None:
    """The embedded default (no broker): the start answers at once, the games run on a
    thread of the server's process, and progress, standings, the leaderboard and the rating
    history follow them. Real HTTP bots on 127.0.0.1."""
    import time

    from bots.serve import serve_in_thread
    from tests.bots.helpers import close_default_transport

    settings.CELERY_TASK_ALWAYS_EAGER = True
    stops = []
    try:
        bots = []
        for owner, name, strategy in ((alice, "alices-bot", "heuristic"),
                                      (bob, "bobs-bot", "random")):
            bot = verified_bot(owner, name)
            url, stop = serve_in_thread(strategy, bot.secret)
            stops.append(stop)
            Bot.objects.filter(pk=bot.pk).update(url=url)
            bots.append(bot)
        alice_api, bob_api = client_for(alice), client_for(bob)
        tournament = create(alice_api, options={"single_hand": True}, games_per_pairing=4,
                            duplicate_deals=True)
        assert enter(alice_api, tournament, bots[0]).status_code == 201
        assert enter(bob_api, tournament, bots[1]).status_code == 201
        started = alice_api.post(f"/api/tournaments/{tournament['id']}/start/")
        assert started.status_code == 200, started.content
        assert started.json()["status"] == "running"
        assert started.json()["progress"]["games_total"] == 4
        seen = started.json()
        for _ in range(1200):  # bounded: 120 s
            seen = charlie_api.get(f"/api/tournaments/{tournament['id']}/").json()
            if seen["status"] == "finished":
                break
            time.sleep(0.1)
        assert seen["status"] == "finished", seen
        assert seen["progress"]["games_done"] == 4 and seen["progress"]["matches_done"] == 1
        assert seen["progress"]["eta_seconds"] is None
        table = charlie_api.get(f"/api/tournaments/{tournament['id']}/standings/").json()
        assert table["final"] is True
        assert sorted(line["name"] for line in table["standings"]) == ["alices-bot", "bobs-bot"]
        assert sum(line["games"] for line in table["standings"]) == 8  # two seats a game
        # Two duplicate deals: alike (the same bot won both seatings of each, say), every
        # resample is the tournament and there is no interval (docs/ratings.md).
        assert all(line["low"] is line["high"] is None
                   or line["low"] <= line["rating"] <= line["high"] for line in table["standings"])
        board = charlie_api.get("/api/leaderboard/?rule_set=single_hand").json()["results"]
        assert [row["rank"] for row in board] == [1, 2]
        assert board[0]["elo"] >= board[1]["elo"] and all(row["games"] == 4 for row in board)
        # Beside the Elo: this tournament's Bradley-Terry rating of each bot, as its table says.
        fits = {line["bot"]: line for line in table["standings"]}
        for row in board:
            assert row["bradley_terry_tournament"] == tournament["id"]
            assert (row["bradley_terry"], row["low"], row["high"]) == (
                fits[row["bot"]]["rating"], fits[row["bot"]]["low"], fits[row["bot"]]["high"])
        history = charlie_api.get(f"/api/bots/{bots[0].pk}/ratings/?rule_set=single_hand")
        points = history.json()["history"]
        assert len(points) == 4 and points[-1]["after"] == history.json()["elo"]
        assert all(a["after"] == b["before"] for a, b in itertools.pairwise(points))
        mine = charlie_api.get("/api/leaderboard/?rule_set=single_hand&owner=bob").json()
        assert [row["name"] for row in mine["results"]] == ["bobs-bot"]
    finally:
        close_default_transport()
        for stop in stops:
            stop()


def test_options_naming_another_number_of_players_than_the_table_size_say_so(
    alice_api: APIClient,
) -> None:
    response = alice_api.post("/api/tournaments/", {"name": "x", "options": {"players": 3}},
                              format="json")
    assert response.status_code == 400
    assert "table_size (2)" in response.json()["fields"]["options.players"][0]
    three = alice_api.post("/api/tournaments/", {"name": "y", "table_size": 3,
                                                 "options": {"players": 3}}, format="json")
    assert three.status_code == 201, three.content


def test_with_nobody_on_the_official_ladder_the_leaderboard_shows_the_busiest_and_names_all(
    alice: Any, charlie_api: APIClient,
) -> None:
    """As the admin's leaderboard opens (a bot writer's review: a bare ``/api/leaderboard/``
    answered an empty page with no hint after a day of single-hand tournaments)."""
    bot = verified_bot(alice, "single")
    Rating.objects.create(bot=bot, rule_set="single_hand", elo=1520, games=4, wins=3)
    Rating.objects.create(bot=bot, rule_set="single_hand,stacking", elo=1500, games=1, wins=0)
    board = charlie_api.get("/api/leaderboard/").json()
    assert [(row["name"], row["rule_set"]) for row in board["results"]] == [
        ("single", "single_hand")]
    assert board["ladders"] == ["single_hand", "single_hand,stacking"]
    Rating.objects.create(bot=bot, rule_set="official", elo=1490, games=1, wins=0)
    board = charlie_api.get("/api/leaderboard/").json()
    assert board["results"][0]["rule_set"] == "official"
    assert board["ladders"][0] == "official"


def test_a_ladder_is_found_by_its_rules_in_any_order_and_a_name_of_no_rules_is_a_400(
    alice: Any, charlie_api: APIClient,
) -> None:
    bot = verified_bot(alice, "stacker")
    Rating.objects.create(bot=bot, rule_set="single_hand,stacking", elo=1510, games=1, wins=1)
    for spelled in ("single_hand,stacking", "stacking,single_hand", "stacking=true,single_hand"):
        board = charlie_api.get(f"/api/leaderboard/?rule_set={spelled}")
        assert board.status_code == 200
        assert [row["name"] for row in board.json()["results"]] == ["stacker"]
        assert board.json()["results"][0]["rule_set"] == "single_hand,stacking"
        history = charlie_api.get(f"/api/bots/{bot.pk}/ratings/?rule_set={spelled}").json()
        assert (history["rule_set"], history["elo"]) == ("single_hand,stacking", 1510)
    for nonsense in ("nonsense", "stacking,stacking", "target_score=0", "players=3"):
        for path in ("/api/leaderboard/", f"/api/bots/{bot.pk}/ratings/"):
            refused = charlie_api.get(f"{path}?rule_set={nonsense}")
            assert refused.status_code == 400, (path, nonsense)
            assert "rule_set" in refused.json()["fields"]


def _two_seat(first: Bot, second: Bot, *, deal: int | None = None) -> GameResult:
    return GameResult(players=(first.pk, second.pk), winner=0, points_left=(0, 30), deal=deal)


def test_the_fit_gives_no_interval_where_the_games_cannot_give_one(
    alice: Any, bob: Any
) -> None:
    world = build_world(alice, bob)
    heuristic, greedy = world.bots["heuristic"], world.bots["greedy"]
    Entrant.objects.create(tournament=world.finished, bot=world.bots["random"])  # no games
    cases = {
        "one game": [_two_seat(heuristic, greedy)],
        "two games alike": [_two_seat(heuristic, greedy)] * 2,
        "one duplicate deal": [_two_seat(heuristic, greedy, deal=3),
                               _two_seat(greedy, heuristic, deal=3)],
    }
    for case, results in cases.items():
        fitted = records.bradley_terry_json(world.finished, results)["ratings"]
        assert len(fitted) == 3, case
        assert all(row["low"] is None and row["high"] is None for row in fitted), case
        assert all((row["rating"] is None) == (row["games"] == 0) for row in fitted), case
    split = [_two_seat(heuristic, greedy), _two_seat(greedy, heuristic)] * 3
    rows = {r["bot"]: r for r in records.bradley_terry_json(world.finished, split)["ratings"]}
    assert rows[world.bots["random"].pk]["low"] is None  # no games: no interval, no rating
    assert rows[world.bots["random"].pk]["rating"] is None
    assert rows[heuristic.pk]["low"] < rows[heuristic.pk]["rating"] < rows[heuristic.pk]["high"]


def test_an_interval_the_games_could_not_give_is_null_in_standings_and_leaderboard(
    alice: Any, bob: Any, charlie_api: APIClient
) -> None:
    world = build_world(alice, bob)
    heuristic, greedy = world.bots["heuristic"], world.bots["greedy"]
    Tournament.objects.filter(pk=world.finished.pk).update(bradley_terry={"ratings": [
        {"bot": heuristic.pk, "rating": 1675.8, "low": None, "high": None, "games": 2},
        {"bot": greedy.pk, "rating": 1324.2, "low": None, "high": None, "games": 2},
    ]})
    table = charlie_api.get(f"/api/tournaments/{world.finished.pk}/standings/").json()
    lines = {line["bot"]: line for line in table["standings"]}
    assert (lines[heuristic.pk]["rating"], lines[heuristic.pk]["low"],
            lines[heuristic.pk]["high"]) == (1675.8, None, None)
    board = charlie_api.get("/api/leaderboard/").json()["results"]
    row = next(r for r in board if r["bot"] == heuristic.pk)
    assert (row["bradley_terry"], row["low"], row["high"]) == (1675.8, None, None)
    assert row["bradley_terry_tournament"] == world.finished.pk
    assert [r["name"] for r in board] == ["heuristic", "greedy", "random"]  # by Elo, as ever


def test_the_schema_says_an_interval_may_be_null() -> None:
    from drf_spectacular.generators import SchemaGenerator

    schemas = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    for name in ("StandingOut", "LeaderboardRowOut"):
        for end in ("low", "high"):
            assert schemas[name]["properties"][end].get("nullable") is True, (name, end)


def test_the_migration_makes_stored_point_intervals_unknown(alice: Any, bob: Any) -> None:
    """Fits stored before intervals could be unknown kept a point (low == high) for them."""
    from django.apps import apps

    migration = importlib.import_module("arena.migrations.0003_bradley_terry_unknown_intervals")
    world = build_world(alice, bob)
    heuristic, greedy, lonely = (world.bots[n] for n in ("heuristic", "greedy", "random"))
    stored = {"ratings": [
        {"bot": heuristic.pk, "rating": 1675.8, "low": 1675.8, "high": 1675.8, "games": 2},
        {"bot": greedy.pk, "rating": 1324.2, "low": 1250.0, "high": 1400.0, "games": 2},
        {"bot": lonely.pk, "rating": 1500.0, "low": 1450.0, "high": 1550.0, "games": 0},
    ]}
    Tournament.objects.filter(pk=world.finished.pk).update(bradley_terry=stored)
    migration.unknown_intervals(apps, None)
    rows = {r["bot"]: r for r in
            Tournament.objects.get(pk=world.finished.pk).bradley_terry["ratings"]}
    assert (rows[heuristic.pk]["low"], rows[heuristic.pk]["high"]) == (None, None)
    assert (rows[lonely.pk]["low"], rows[lonely.pk]["high"]) == (None, None)
    assert (rows[greedy.pk]["low"], rows[greedy.pk]["high"]) == (1250.0, 1400.0)
    assert rows[heuristic.pk]["rating"] == 1675.8


def test_a_filtered_leaderboard_keeps_each_bots_place_on_the_whole_ladder(
    alice: Any, bob: Any, charlie_api: APIClient,
) -> None:
    # As the admin's leaderboard numbers its rows: bob's bot is third, filters or not.
    for owner, name, elo in [(alice, "first", 1600), (alice, "second", 1550), (bob, "third", 1500)]:
        Rating.objects.create(bot=verified_bot(owner, name), rule_set="official", elo=elo)
    whole = charlie_api.get("/api/leaderboard/").json()["results"]
    assert [(row["rank"], row["name"]) for row in whole] == [
        (1, "first"), (2, "second"), (3, "third")]
    mine = charlie_api.get("/api/leaderboard/?owner=bob").json()["results"]
    assert [(row["rank"], row["name"]) for row in mine] == [(3, "third")]
    second_page = charlie_api.get("/api/leaderboard/?page_size=1&page=2").json()["results"]
    assert [(row["rank"], row["name"]) for row in second_page] == [(2, "second")]


def test_the_leaderboard_ignores_unrated_tournaments(
    alice: Any, bob: Any, charlie_api: APIClient
) -> None:
    """An unrated trial leaves the Elo alone, and the leaderboard's Bradley-Terry column too:
    it keeps the latest finished rated tournament's fit."""
    world = build_world(alice, bob)
    heuristic = world.bots["heuristic"]
    trial = Tournament.objects.get(pk=world.finished.pk)
    trial.pk, trial.name, trial.rated = None, "Unrated trial", False
    trial.bradley_terry = {"ratings": [
        {"bot": heuristic.pk, "rating": 1400.0, "low": 1300.0, "high": 1500.0, "games": 2}]}
    trial.save()
    Tournament.objects.filter(pk=trial.pk).update(finalized_at=world.finished.finalized_at
                                                  + timedelta(minutes=5))
    board = charlie_api.get("/api/leaderboard/").json()["results"]
    row = next(r for r in board if r["bot"] == heuristic.pk)
    assert (row["bradley_terry"], row["bradley_terry_tournament"]) == (1620.0, world.finished.pk)
    # The newer rated tournament, though, takes over.
    Tournament.objects.filter(pk=trial.pk).update(rated=True)
    board = charlie_api.get("/api/leaderboard/").json()["results"]
    row = next(r for r in board if r["bot"] == heuristic.pk)
    assert (row["bradley_terry"], row["bradley_terry_tournament"]) == (1400.0, trial.pk)


def test_a_bot_with_no_games_has_no_rate_average_or_rating_and_comes_last(
    alice: Any, bob: Any, charlie_api: APIClient
) -> None:
    """Cancelled before random's tables were played: its line says it has no figures, rather
    than a 0% win rate, 0 points left and a rating from the prior alone above those who
    played."""
    world = build_world(alice, bob)
    cancelled = cancel_part_way(world)
    table = charlie_api.get(f"/api/tournaments/{cancelled.pk}/standings/").json()
    assert table["final"] is True
    lines = table["standings"]
    assert [line["name"] for line in lines][-1] == "random"
    lonely = lines[-1]
    assert (lonely["rank"], lonely["games"]) == (3, 0)
    assert [lonely[key] for key in ("win_rate", "avg_points_left", "rating", "low", "high")] \
        == [None] * 5
    played = [line for line in lines if line["games"]]
    assert all(line["win_rate"] is not None and line["rating"] is not None for line in played)
    # The ratings are centred on the bots that played.
    assert sum(line["rating"] for line in played) / 2 == pytest.approx(1500, abs=0.1)
    fitted = cancelled.bradley_terry["ratings"]
    assert fitted[-1]["bot"] == world.bots["random"].pk and fitted[-1]["rating"] is None


def test_the_terminal_table_shows_a_dash_for_a_bot_with_no_games(alice: Any, bob: Any) -> None:
    from arena.reports import final_table

    world = build_world(alice, bob)
    text = final_table(cancel_part_way(world))
    line = next(line for line in text.splitlines() if " random " in line)
    # rank, name, games, wins, then win rate and avg left as "-"; BT and interval "-" too.
    assert re.match(r"^3\s+random\s+0\s+0\s+-\s+0\s+-\s+0\s+0\s+-\s+-", line), text


def test_the_schema_says_a_bot_without_games_has_no_win_rate_or_average() -> None:
    from drf_spectacular.generators import SchemaGenerator

    schemas = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    for field in ("win_rate", "avg_points_left", "rating"):
        assert schemas["StandingOut"]["properties"][field].get("nullable") is True, field


def test_a_cancelled_tournaments_progress_says_what_was_dropped(
    alice: Any, bob: Any, charlie_api: APIClient
) -> None:
    world = build_world(alice, bob)
    live = charlie_api.get(f"/api/tournaments/{world.running.pk}/").json()["progress"]
    assert (live["matches_dropped"], live["games_dropped"]) == (0, 0)
    cancelled = cancel_part_way(world)
    progress = charlie_api.get(f"/api/tournaments/{cancelled.pk}/").json()["progress"]
    assert progress == {"matches_done": 1, "matches_total": 3, "games_done": 2,
                        "games_total": 6, "matches_dropped": 2, "games_dropped": 4,
                        "eta_seconds": None}
    table = charlie_api.get(f"/api/tournaments/{cancelled.pk}/standings/").json()
    assert table["progress"] == progress


def test_a_tournaments_games_are_listed_by_number_not_by_when_they_were_recorded(
    alice: Any, bob: Any, charlie_api: APIClient
) -> None:
    """Matches run side by side: game 5 may be recorded before game 0."""
    world = build_world(alice, bob)
    first, second = TournamentGame.objects.filter(tournament=world.finished).order_by("id")
    TournamentGame.objects.filter(pk=first.pk).update(number=5)
    TournamentGame.objects.filter(pk=second.pk).update(number=0)
    listed = charlie_api.get(f"/api/tournaments/{world.finished.pk}/games/").json()["results"]
    assert [(g["number"], g["game"]) for g in listed] == [(0, second.game_id),
                                                          (5, first.game_id)]
    paged = charlie_api.get(f"/api/tournaments/{world.finished.pk}/games/?page_size=1&page=2")
    assert [g["number"] for g in paged.json()["results"]] == [5]


def test_a_bots_rating_history_names_its_ladders_and_each_games_tournament(
    alice: Any, bob: Any, charlie_api: APIClient
) -> None:
    """A bot that only played single hands, asked for the default (official) ladder, says
    where its ratings are; each point of a history names its tournament."""
    world = build_world(alice, bob)
    heuristic, lonely = world.bots["heuristic"], world.bots["random"]
    Rating.objects.filter(bot=lonely).update(rule_set="single_hand")
    Rating.objects.create(bot=heuristic, rule_set="stacking", elo=1510.0, games=1, wins=1)
    elsewhere = charlie_api.get(f"/api/bots/{lonely.pk}/ratings/").json()
    assert (elsewhere["rule_set"], elsewhere["elo"], elsewhere["history"]) == (
        "official", None, [])
    assert elsewhere["ladders"] == ["single_hand"]
    history = charlie_api.get(f"/api/bots/{heuristic.pk}/ratings/").json()
    assert history["ladders"] == ["official", "stacking"]
    assert [(p["game"], p["tournament"]) for p in history["history"]] == [
        (world.games[0].pk, world.finished.pk), (world.games[1].pk, world.finished.pk),
        (world.games[2].pk, world.running.pk), (world.games[3].pk, world.running.pk)]
