"""The admin pages over a tournament really played: reference bots over HTTP on 127.0.0.1,
the services' own schedule, games, standings, Elo and Bradley-Terry, then browsed by staff."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from arena import selectors, services
from arena.models import TournamentGame, TournamentStatus
from tests.arena.tournament_helpers import http_bots, tournament_of
from tests.bots.helpers import close_default_transport

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _bots_played_here(settings: Any, fresh_cache: None) -> Iterator[None]:
    settings.BOTS_ALLOW_PRIVATE = True
    settings.BOTS_RUNNER = "off"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    yield
    close_default_transport()


def test_a_played_tournament_reads_the_same_in_the_admin_as_in_the_selectors(
    alice: Any, django_user_model: Any
) -> None:
    with http_bots(alice, ["random", "greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots, games_per_pairing=2)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        done = services.tournament_run_foreground(tournament_id=tournament.pk)
    assert done.status == TournamentStatus.FINISHED
    # A staff member without any model permission: staff see everything.
    staff = django_user_model.objects.create_user("dana", password="dana-pw-1", is_staff=True)
    client = Client()
    client.force_login(staff)

    board = client.get(f"/admin/arena/rating/?rule_set={done.rule_set}").content.decode()
    shown = re.findall(r'class="leaderboard-bot">([^<]+)</a>', board)
    expected = selectors.leaderboard(rule_set=done.rule_set)
    assert shown == [row["name"] for row in expected]
    for row in expected:
        fitted = row["interval"]
        assert fitted["tournament"] == done.pk
        shown_fit = f'{fitted["rating"]:.0f} [{fitted["low"]:.0f}, {fitted["high"]:.0f}]</a>'
        assert shown_fit in board

    page = client.get(f"/admin/arena/tournament/{done.pk}/change/").content.decode()
    assert f'<progress id="tournament-progress" value="{done.games_total}"' in page
    standings = re.findall(r'<td><a href="/admin/bots/bot/\d+/change/">([^<]+)</a></td>', page)
    assert standings == [row["name"] for row in done.standings]
    games = list(TournamentGame.objects.filter(tournament=done).values_list("game_id", flat=True))
    assert len(games) == done.games_total == 6
    for game_id in games:
        assert f'href="/admin/games/game/{game_id}/change/"' in page

    bot_page = client.get(f"/admin/bots/bot/{bots[2].pk}/change/").content.decode()
    assert f'data-rule-set="{done.rule_set}"' in bot_page and "<polyline" in bot_page

    game_page = client.get(f"/admin/games/game/{games[0]}/change/").content.decode()
    assert 'id="move-log"' in game_page and "bot:" in game_page
    replay = client.get(f"/admin/games/game/{games[0]}/replay.json")
    assert replay.status_code == 200 and json.loads(replay.content)["game"] == games[0]
