"""The admin is where staff browse rankings: the leaderboard, tournament pages, and each
bot's chart, games and call log. Staff see everything; anyone else, none of it. Staff add
tournaments there too, checked as the API checks them."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client

from arena.models import Tournament, TournamentStatus
from tests.arena.admin_fixtures import World, build_world, cancel_part_way, finished_game

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_quick")]


@pytest.fixture
def root(django_user_model: Any) -> Any:
    return django_user_model.objects.create_superuser("root", password="root-pw-1")


@pytest.fixture
def staff(root: Any) -> Client:
    client = Client()
    client.force_login(root)
    return client


@pytest.fixture
def organiser(django_user_model: Any) -> Client:
    """Staff, not a superuser: no model permissions of their own."""
    user = django_user_model.objects.create_user("organiser", password="org-pw-1", is_staff=True)
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def world(alice: Any, bob: Any) -> World:
    return build_world(alice, bob)


def _leaderboard_rows(html: str) -> list[str]:
    return re.findall(r'class="leaderboard-bot">([^<]+)</a>', html)


def test_the_leaderboard_is_in_the_admin_index(staff: Client, world: World) -> None:
    index = staff.get("/admin/").content.decode()
    assert 'href="/admin/arena/rating/"' in index
    assert 'href="/admin/arena/tournament/"' in index


def test_the_leaderboard_ranks_official_elo_with_intervals_latency_and_strikes(
    staff: Client, world: World
) -> None:
    page = staff.get("/admin/arena/rating/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Leaderboard: Elo, official rules" in html
    assert _leaderboard_rows(html) == ["heuristic", "greedy", "random"]  # 1516, 1484, 1480
    # Heuristic's Bradley-Terry rating and interval in the finished cup, linked to the cup.
    cup = f"/admin/arena/tournament/{world.finished.pk}/change/"
    assert re.search(rf'field-interval_shown"><a href="{cup}"[^>]*>1620 \[1540, 1710\]</a>',
                     html)
    assert "75%" in html  # heuristic: 3 wins in 4 games
    assert '<td class="field-latency_shown">4 / 40</td>' in html  # p50 / p99 (ms)
    assert '<td class="field-strikes_shown">1</td>' in html  # greedy's timeout


def test_the_leaderboard_searches_and_filters(staff: Client, world: World) -> None:
    by_owner = staff.get("/admin/arena/rating/?q=bob").content.decode()
    assert sorted(_leaderboard_rows(by_owner)) == ["greedy", "random"]
    by_name = staff.get("/admin/arena/rating/?q=heur").content.decode()
    assert _leaderboard_rows(by_name) == ["heuristic"]
    assert " total</a>" not in by_name  # a count of every ladder's ratings is not this ladder's
    verified = staff.get("/admin/arena/rating/?bot__verified__exact=0").content.decode()
    assert _leaderboard_rows(verified) == ["random"]
    other = staff.get("/admin/arena/rating/?rule_set=stacking").content.decode()
    assert _leaderboard_rows(other) == []


def test_the_leaderboard_leaves_out_a_cancelled_tournaments_fit(
    staff: Client, world: World
) -> None:
    """A cancelled tournament is finalized on the games it played: its fit does not count."""
    Tournament.objects.filter(pk=world.finished.pk).update(status=TournamentStatus.CANCELLED)
    html = staff.get("/admin/arena/rating/").content.decode()
    assert _leaderboard_rows(html) == ["heuristic", "greedy", "random"]
    assert "field-interval_shown\"><a" not in html


def test_the_leaderboard_ignores_unrated_tournaments(staff: Client, world: World) -> None:
    """An unrated trial newer than the Spring cup: the column stays the cup's fit."""
    trial = Tournament.objects.get(pk=world.finished.pk)
    trial.pk, trial.name, trial.rated = None, "Unrated trial", False
    trial.bradley_terry = {"ratings": [{"bot": world.bots["heuristic"].pk, "rating": 1400.0,
                                        "low": 1300.0, "high": 1500.0, "games": 2}]}
    trial.save()
    Tournament.objects.filter(pk=trial.pk).update(
        finalized_at=world.finished.finalized_at + timedelta(minutes=5))
    html = staff.get("/admin/arena/rating/").content.decode()
    cup = f"/admin/arena/tournament/{world.finished.pk}/change/"
    assert re.search(rf'field-interval_shown"><a href="{cup}"[^>]*>1620 \[1540, 1710\]</a>',
                     html)
    assert f"/admin/arena/tournament/{trial.pk}/change/" not in html


def test_the_leaderboard_opens_on_the_busiest_ladder_while_nobody_is_rated_on_official(
    staff: Client, world: World
) -> None:
    """The demo plays single hands: its leaderboard must not open empty."""
    from arena.models import Rating

    Rating.objects.filter(bot=world.bots["random"]).update(rule_set="stacking")
    Rating.objects.exclude(bot=world.bots["random"]).update(rule_set="single_hand")
    html = staff.get("/admin/arena/rating/").content.decode()
    assert "Leaderboard: Elo, single_hand rules" in html
    assert _leaderboard_rows(html) == ["heuristic", "greedy"]
    picked = staff.get("/admin/arena/rating/?rule_set=official").content.decode()
    assert "Leaderboard: Elo, official rules" in picked
    assert _leaderboard_rows(picked) == []


def test_a_running_tournament_page_shows_progress_standings_games_and_buttons(
    staff: Client, world: World
) -> None:
    page = staff.get(f"/admin/arena/tournament/{world.running.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert '<progress id="tournament-progress" value="2" max="6"' in html
    assert "2 of 6 games, 1 of 3 matches done" in html
    assert 'id="standings"' in html and ">heuristic</a>" in html
    for tg in world.running.tournament_games.all():
        assert f'href="/admin/games/game/{tg.game_id}/change/"' in html
    assert 'id="tournament-cancel"' in html and 'id="tournament-start"' not in html


def test_a_finished_tournament_shows_bradley_terry_intervals_and_no_buttons(
    staff: Client, world: World
) -> None:
    html = staff.get(f"/admin/arena/tournament/{world.finished.pk}/change/").content.decode()
    assert "1380 [1290, 1460]" in html
    assert 'id="tournament-cancel"' not in html and 'id="tournament-start"' not in html
    assert "2 of 2 games, 1 of 1 matches done</span>" in html  # no time left to estimate
    listing = staff.get("/admin/arena/tournament/").content.decode()
    assert "Spring cup" in listing and "Live cup" in listing


def test_a_bot_with_no_games_shows_dashes_not_a_zero_win_rate_or_a_rating(
    staff: Client, world: World
) -> None:
    cancelled = cancel_part_way(world)
    html = staff.get(f"/admin/arena/tournament/{cancelled.pk}/change/").content.decode()
    rows = re.findall(r"<tr><td>(\d+)</td><td><a [^>]*>([^<]+)</a></td>(.*?)</tr>", html)
    assert [name for _, name, _ in rows][-1] == "random" and len(rows) == 3
    cells = re.findall(r"<td>([^<]*)</td>", rows[-1][2])
    # games, wins, win rate, points, avg points left, strikes, forfeits, Bradley-Terry
    assert cells == ["0", "0", "—", "0", "—", "0", "0", "—"]


def test_a_cancelled_tournaments_progress_bar_says_the_rest_was_dropped(
    staff: Client, world: World
) -> None:
    running = staff.get(f"/admin/arena/tournament/{world.running.pk}/change/").content.decode()
    assert "dropped" not in running
    cancelled = cancel_part_way(world)
    html = staff.get(f"/admin/arena/tournament/{cancelled.pk}/change/").content.decode()
    assert ("2 of 6 games, 1 of 3 matches done; cancelled: 2 matches dropped (4 games not "
            "played)</span>") in html
    listing = staff.get("/admin/arena/tournament/").content.decode()
    assert "cancelled: 2 matches dropped" in listing


def test_a_bot_with_no_turn_calls_yet_shows_no_latency_not_none(staff: Client, root: Any) -> None:
    from tests.bots.helpers import register

    bot, _ = register(root, "newcomer", "http://127.0.0.1:9/")
    html = staff.get(f"/admin/bots/bot/{bot.pk}/change/").content.decode()
    assert "no turn calls yet" in html and "None" not in html


def test_the_bot_page_has_an_svg_elo_chart_recent_games_and_the_call_log(
    staff: Client, world: World
) -> None:
    bot = world.bots["heuristic"]
    page = staff.get(f"/admin/bots/bot/{bot.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    svg = re.search(r'<figure class="arena-chart" data-rule-set="official">\s*(<svg .*?</svg>)',
                    html, re.S)
    assert svg is not None and "<polyline" in svg.group(1)
    assert "http" not in svg.group(1).replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "Elo 1516 after 4 rated games" in html
    assert 'id="recent-games"' in html
    for game in world.games:
        assert f'href="/admin/games/game/{game.pk}/change/"' in html
    assert "bot:greedy" in html  # the opponent
    # The call log: the newest calls with their latency rounded, and a link to all of them.
    assert 'id="recent-calls"' in html
    calls = re.findall(r'<tr><td>[^<]+</td><td>turn</td>.*?</tr>', html)
    assert calls and all(re.search(r"<td>\d+\.\d</td>", row) for row in calls)
    every = f'href="/admin/bots/botcall/?bot__id__exact={bot.pk}"'
    assert every in html
    listing = staff.get(f"/admin/bots/botcall/?bot__id__exact={bot.pk}")
    assert listing.status_code == 200  # the filter is allowed (not a redirect to ?e=1)
    assert {row.bot_id for row in listing.context["cl"].result_list} == {bot.pk}
    # A decision struck without a call (the bot disabled) has no latency: a blank cell (the
    # list was a 500 when latency became null for those).
    from bots import services as bot_services

    bot_services.call_record(bot_id=bot.pk, kind="turn", latency_ms=None, status=None,
                             error="disabled", outcome="strike", strike=True)
    assert staff.get(f"/admin/bots/botcall/?bot__id__exact={bot.pk}").status_code == 200
    assert staff.get(f"/admin/bots/bot/{bot.pk}/change/").status_code == 200


def test_the_bot_actions_take_the_permission_to_change_bots(
    world: World, organiser: Client
) -> None:
    """A staff member without it sees the bots but cannot rotate their secrets or verify."""
    page = organiser.get("/admin/bots/bot/")
    assert page.status_code == 200
    assert "rotate_secrets" not in page.content.decode()
    bot = world.bots["random"]
    before = bot.secret
    organiser.post("/admin/bots/bot/", {"action": "rotate_secrets", "_selected_action": [bot.pk]})
    bot.refresh_from_db()
    assert bot.secret == before and bot.previous_secret_until is None


def test_staff_cancel_a_running_tournament_with_the_button(
    staff: Client, world: World
) -> None:
    response = staff.post(f"/admin/arena/tournament/{world.running.pk}/cancel/", follow=True)
    assert response.status_code == 200
    assert Tournament.objects.get(pk=world.running.pk).status == TournamentStatus.CANCELLED


def test_the_buttons_refuse_a_get(staff: Client, world: World) -> None:
    response = staff.get(f"/admin/arena/tournament/{world.running.pk}/cancel/")
    assert response.status_code == 405
    assert Tournament.objects.get(pk=world.running.pk).status == TournamentStatus.RUNNING


PAGES = [
    "/admin/",
    "/admin/arena/rating/",
    "/admin/arena/tournament/",
    "/admin/arena/tournament/{running}/change/",
    "/admin/bots/bot/{heuristic}/change/",
]


def _paths(world: World) -> list[str]:
    ids = {"running": world.running.pk, "heuristic": world.bots["heuristic"].pk}
    return [p.format(**ids) for p in PAGES]


def test_a_signed_in_user_who_is_not_staff_sees_none_of_it(alice: Any, world: World) -> None:
    client = Client()
    client.force_login(alice)  # alice owns heuristic and the tournaments
    for path in _paths(world):
        response = client.get(path)
        assert response.status_code == 302, path
        assert response["Location"].startswith("/admin/login/"), path
        assert b"heuristic" not in response.content
    assert client.post(f"/admin/arena/tournament/{world.running.pk}/cancel/").status_code == 302
    assert Tournament.objects.get(pk=world.running.pk).status == TournamentStatus.RUNNING


def test_anonymous_visitors_are_sent_to_the_login(world: World) -> None:
    client = Client()
    for path in _paths(world):
        response = client.get(path)
        assert response.status_code == 302, path
        assert response["Location"].startswith("/admin/login/"), path


def _draft(world: World, owner: Any, *names: str) -> Tournament:
    from arena.models import Entrant

    draft = Tournament.objects.create(name="Draft cup", owner=owner, options={},
                                      rule_set="official", seed=11)
    Entrant.objects.bulk_create(Entrant(tournament=draft, bot=world.bots[n]) for n in names)
    return draft


def test_staff_start_a_draft_tournament_with_the_changelist_action(
    staff: Client, world: World, alice: Any
) -> None:
    draft = _draft(world, alice, "heuristic", "greedy")
    draft.name = "draft cup"  # as its owner spelt it: not capitalised by the admin's message
    draft.save(update_fields=["name"])
    page = staff.get(f"/admin/arena/tournament/{draft.pk}/change/").content.decode()
    assert 'id="tournament-start"' in page
    response = staff.post("/admin/arena/tournament/", {
        "action": "start_tournaments", "_selected_action": [str(draft.pk)]}, follow=True)
    assert "Started tournament draft cup." in response.content.decode()
    draft.refresh_from_db()
    assert draft.status == TournamentStatus.RUNNING
    assert draft.matches.count() == 1 and draft.games_total == draft.games_per_pairing


def test_a_start_the_service_refuses_is_told_and_changes_nothing(
    staff: Client, world: World, alice: Any
) -> None:
    lonely = _draft(world, alice, "heuristic")  # one entrant: no round robin to play
    response = staff.post(f"/admin/arena/tournament/{lonely.pk}/start/", follow=True)
    assert response.status_code == 200
    assert 'class="error"' in response.content.decode()
    lonely.refresh_from_db()
    assert lonely.status == TournamentStatus.DRAFT and lonely.matches.count() == 0
    again = staff.post(f"/admin/arena/tournament/{world.running.pk}/start/", follow=True)
    assert "The tournament has started." in again.content.decode()


def test_a_cancel_without_the_csrf_token_is_refused(root: Any, world: World) -> None:
    forged = Client(enforce_csrf_checks=True)  # a form posted from another site
    forged.force_login(root)
    response = forged.post(f"/admin/arena/tournament/{world.running.pk}/cancel/")
    assert response.status_code == 403
    assert Tournament.objects.get(pk=world.running.pk).status == TournamentStatus.RUNNING


# --- adding a tournament: a draft, checked as the API checks one ------------------------------
ADD = "/admin/arena/tournament/add/"


def form(**changes: Any) -> dict[str, Any]:
    fields = {"name": "Sunday cup", "options": "{}", "table_size": "2",
              "games_per_pairing": "4", "turn_timeout_ms": "1000", "max_strikes": "3",
              "seed": "", "rated": "on"}
    return {**fields, **changes}


def test_the_tournament_list_offers_to_add_one(staff: Client) -> None:
    assert f'href="{ADD}"' in staff.get("/admin/arena/tournament/").content.decode()
    page = staff.get(ADD)
    assert page.status_code == 200
    for field in ("name", "options", "table_size", "games_per_pairing", "duplicate_deals",
                  "turn_timeout_ms", "max_strikes", "seed", "rated"):
        assert f'name="{field}"' in page.content.decode()


def test_staff_add_a_draft_tournament_that_they_own(staff: Client, root: Any) -> None:
    answer = staff.post(ADD, form(options='{"stacking": true}', seed="42"))

    tournament = Tournament.objects.get()
    assert answer.status_code == 302
    assert answer["Location"] == f"/admin/arena/tournament/{tournament.pk}/change/"
    assert tournament.owner == root
    assert tournament.status == TournamentStatus.DRAFT
    assert (tournament.name, tournament.seed, tournament.games_per_pairing) == (
        "Sunday cup", 42, 4)
    assert tournament.options["stacking"] is True
    assert tournament.rule_set != "official"
    page = staff.get(answer["Location"]).content.decode()
    assert f"/api/tournaments/{tournament.pk}/entrants/" in page  # where owners enter bots


def test_a_blank_seed_gets_a_random_one_and_empty_options_are_the_official_rules(
    staff: Client
) -> None:
    staff.post(ADD, form(options=""))

    tournament = Tournament.objects.get()
    assert tournament.rule_set == "official"
    assert 0 <= tournament.seed < 2**63


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"options": '{"stacking": "yes"}'}, "options", "must be a boolean"),
    ({"options": '{"players": 3}'}, "options", "must equal table_size (2)"),
    ({"options": "{not json"}, "options", "Enter a valid JSON"),
    # JSON, but no object: a 500 once (dict() of it), and [] or 0 passed as the default rules.
    ({"options": "[1, 2]"}, "options", "must be a JSON object"),
    ({"options": '"x"'}, "options", "must be a JSON object"),
    ({"options": "true"}, "options", "must be a JSON object"),
    ({"options": "[]"}, "options", "must be a JSON object"),
    ({"options": "0"}, "options", "must be a JSON object"),
    ({"duplicate_deals": "on", "games_per_pairing": "3"}, "games_per_pairing",
     "multiple of the table size"),
    ({"table_size": "11"}, "table_size", "from 2 to 10"),
    ({"name": "   "}, "name", "This field is required."),
])
def test_a_bad_field_is_shown_on_the_form_and_nothing_is_created(
    staff: Client, changes: dict[str, str], field: str, message: str
) -> None:
    answer = staff.post(ADD, form(**changes))

    assert answer.status_code == 200
    errors = answer.context["adminform"].form.errors
    assert message in " ".join(errors.get(field, [])), errors
    assert not Tournament.objects.exists()


def test_a_signed_in_user_who_is_not_staff_cannot_add_one(alice: Any) -> None:
    client = Client()
    client.force_login(alice)

    assert client.get(ADD).status_code == 302  # to the admin's login
    assert client.post(ADD, form()).status_code == 302
    assert not Tournament.objects.exists()


def test_save_and_add_another_comes_back_to_an_empty_form(staff: Client) -> None:
    answer = staff.post(ADD, {**form(), "_addanother": "Save and add another"})

    assert answer.status_code == 302 and answer["Location"] == ADD
    assert Tournament.objects.count() == 1


def test_an_interval_the_games_could_not_give_shows_as_unknown_not_as_a_point(
    staff: Client, world: World
) -> None:
    """A Bradley-Terry fit without an interval (too few resampling units, a bot without
    games: docs/ratings.md) shows its rating and a dash, on the leaderboard and the page."""
    heuristic, greedy = world.bots["heuristic"], world.bots["greedy"]
    Tournament.objects.filter(pk=world.finished.pk).update(bradley_terry={"ratings": [
        {"bot": heuristic.pk, "rating": 1675.8, "low": None, "high": None, "games": 2},
        {"bot": greedy.pk, "rating": 1324.2, "low": None, "high": None, "games": 2},
    ]})
    board = staff.get("/admin/arena/rating/")
    assert board.status_code == 200
    cup = f"/admin/arena/tournament/{world.finished.pk}/change/"
    assert re.search(rf'field-interval_shown"><a href="{cup}"[^>]*>1676 \[—\]</a>',
                     board.content.decode())
    page = staff.get(cup)
    assert page.status_code == 200
    html = page.content.decode()
    assert "1676 [—]" in html and "1324 [—]" in html
    assert "1676 [1676" not in html


def test_staff_who_are_not_superusers_get_no_link_they_cannot_open(
    organiser: Client, world: World
) -> None:
    # Django links a read-only foreign key to the related object's page without asking whether
    # the user may open it: the owner links were a 403 for staff who are not superusers.
    pages = [f"/admin/arena/tournament/{world.finished.pk}/change/",
             f"/admin/games/game/{world.games[0].pk}/change/",
             f"/admin/bots/bot/{world.bots['heuristic'].pk}/change/"]
    for page in pages:
        answer = organiser.get(page)
        assert answer.status_code == 200, page
        html = answer.content.decode()
        assert "/admin/auth/user/" not in html, page
        for link in set(re.findall(r'href="(/admin/[^"#?]+)"', html)):
            assert organiser.get(link).status_code in (200, 302), (page, link)


def test_staff_cannot_guess_a_bots_secret_by_filtering_the_bot_list_on_it(
    organiser: Client, staff: Client, world: World
) -> None:
    # The admin takes a lookup on any field of the model from the query string: whether the bot
    # stayed in the list answered a guess at its secret's next character.
    bot = world.bots["heuristic"]
    bot.refresh_from_db()
    for client in (organiser, staff):
        for field in ("secret", "previous_secret"):
            for guess in (bot.secret[:8], "nothing-like-it"):
                answer = client.get("/admin/bots/bot/", {f"{field}__startswith": guess})
                assert answer.status_code == 400, (field, guess)
                assert bot.name.encode() not in answer.content
    assert organiser.get("/admin/bots/bot/", {"enabled__exact": "1"}).status_code == 200


def test_a_tournament_games_page_links_back_to_its_tournament(staff: Client, world: World
                                                               ) -> None:
    record = world.running.tournament_games.order_by("number").first()
    assert record is not None
    html = staff.get(f"/admin/games/game/{record.game_id}/change/").content.decode()
    assert f'href="/admin/arena/tournament/{world.running.pk}/change/"' in html
    assert f"Live cup</a> (game {record.number} of it)" in html


def test_a_game_outside_tournaments_names_none(staff: Client, alice: Any, bob: Any) -> None:
    game = finished_game(alice, bob, seed=5)
    html = staff.get(f"/admin/games/game/{game.pk}/change/").content.decode()
    assert "Tournament:" in html and " of it)" not in html


def test_staff_deleting_a_tournaments_owner_are_told_what_protects_them(
    staff: Client, world: World, alice: Any
) -> None:
    """A tournament's games and Elo history are other users' bots' too: the admin shows what
    protects the user (deactivate it instead), deletes nothing, and answers no 500."""
    owner = world.running.owner
    page = staff.get(f"/admin/auth/user/{owner.pk}/delete/")
    assert page.status_code == 200
    assert "Cannot delete user" in page.content.decode()
    refused = staff.post(f"/admin/auth/user/{owner.pk}/delete/", {"post": "yes"})
    assert refused.status_code in (200, 403)
    assert type(owner).objects.filter(pk=owner.pk).exists()
    assert Tournament.objects.filter(pk=world.running.pk).exists()


def test_the_leaderboard_reads_a_ladder_named_in_any_order_as_the_api_does(
    staff: Client, world: World
) -> None:
    from arena.models import Rating

    Rating.objects.filter(bot=world.bots["random"]).update(rule_set="single_hand,stacking")
    html = staff.get("/admin/arena/rating/?rule_set=stacking,single_hand").content.decode()
    assert "Leaderboard: Elo, single_hand,stacking rules" in html
    assert _leaderboard_rows(html) == ["random"]


def test_the_leaderboard_refuses_a_ladder_name_that_spells_no_rules(
    staff: Client, world: World
) -> None:
    """Django's answer to a filter value it cannot use: back to the page, with ``?e=1``."""
    page = staff.get("/admin/arena/rating/?rule_set=no_such_rule")
    assert page.status_code == 302
    assert page["Location"].endswith("/admin/arena/rating/?e=1")
