"""The admin at scale: a year of ladder play is millions of moves, calls and events and
thousands of games per tournament. Every page runs a fixed number of queries whatever its
rows, searches compare ids and names exactly (an index, not a scan), filters offer fixed
choices (no SELECT DISTINCT over a big table), big lists never COUNT(*) the whole table, and
long tables are capped with a link to the rest."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from arena import admin_tables
from arena.models import Entrant, Match, MatchStatus, RatingChange, TournamentGame
from bots.models import Bot, BotCall, CallKind
from games import admin as games_admin
from games.models import Game, GameStatus, MoveRecord, Seat
from tests.arena.admin_fixtures import World, build_world

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_quick")]


@pytest.fixture
def world(alice: Any, bob: Any) -> World:
    return build_world(alice, bob)


def _queries(client: Client, url: str) -> list[str]:
    """The page's queries once warm (the first load also caches the content types)."""
    client.get(url)
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, url
    return [q["sql"] for q in captured.captured_queries]


def _games(owner: Any, count: int, **fields: Any) -> list[Game]:
    """Finished games with a (big) engine state, as a long tournament leaves them."""
    values = {"options": {}, "seed": 1, "created_by": owner, "status": GameStatus.FINISHED,
              "end_reason": "match", "state": {"deck": ["R1"] * 200}, **fields}
    return [Game.objects.create(**values) for _ in range(count)]


def _grow_tournament(world: World, owner: Any, matches: int) -> None:
    """More bots, tables and recorded games in the finished cup."""
    tournament = world.finished
    start = Match.objects.filter(tournament=tournament).count()
    for n in range(matches):
        bots = [Bot.objects.create(owner=owner, name=f"extra-{start + n}-{side}",
                                   url="http://127.0.0.1:9/x", secret="s" * 32)
                for side in range(2)]
        Entrant.objects.bulk_create(Entrant(tournament=tournament, bot=b) for b in bots)
        match = Match.objects.create(tournament=tournament, number=start + n + 1,
                                     bots=[b.pk for b in bots], status=MatchStatus.DONE,
                                     games_total=2, games_done=2)
        for number, game in enumerate(_games(owner, 2), start=1):
            Seat.objects.bulk_create(Seat(game=game, index=i, bot=b) for i, b in enumerate(bots))
            TournamentGame.objects.create(match=match, tournament=tournament, game=game,
                                          number=number, deal=1, seats=[b.pk for b in bots],
                                          result={"winner": 0})


# --- the tournament page ------------------------------------------------------------------------
def test_the_tournament_page_runs_a_fixed_number_of_queries_whatever_its_matches(
    staff: Client, world: World, alice: Any
) -> None:
    url = f"/admin/arena/tournament/{world.finished.pk}/change/"
    _grow_tournament(world, alice, 1)
    few = _queries(staff, url)
    _grow_tournament(world, alice, 6)
    many = _queries(staff, url)
    assert len(many) == len(few)
    # The games' engine state is never read for the table of games.
    assert not [q for q in many if '"games_game"."state"' in q]


def test_the_tournament_page_names_every_matchs_bots(staff: Client, world: World,
                                                      alice: Any) -> None:
    _grow_tournament(world, alice, 2)
    html = staff.get(f"/admin/arena/tournament/{world.finished.pk}/change/").content.decode()
    assert "heuristic v greedy" in html
    assert "extra-1-0 v extra-1-1" in html and "extra-2-0 v extra-2-1" in html


def test_the_tournament_page_shows_the_latest_games_and_links_to_all_of_them(
    staff: Client, world: World, alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(admin_tables, "TOURNAMENT_GAMES", 3)
    _grow_tournament(world, alice, 2)  # 2 + 4 games
    tournament = world.finished
    html = staff.get(f"/admin/arena/tournament/{tournament.pk}/change/").content.decode()
    newest = list(TournamentGame.objects.filter(tournament=tournament)
                  .order_by("-number", "-id").values_list("game_id", flat=True)[:3])
    assert re.findall(r'href="/admin/games/game/(\d+)/change/" class="tournament-game"',
                      html) == [str(pk) for pk in newest]
    assert "The latest 3 of 6 games" in html
    every = f"/admin/games/game/?tournament={tournament.pk}"
    assert f'href="{every}" id="tournament-games-every"' in html
    # The link is the game list filtered on the tournament: all six, nothing else.
    listing = staff.get(every)
    assert listing.status_code == 200  # an allowed filter, not a redirect to ?e=1
    shown = {game.pk for game in listing.context["cl"].result_list}
    assert shown == set(TournamentGame.objects.filter(tournament=tournament)
                        .values_list("game_id", flat=True))
    assert "Spring cup" in listing.content.decode()  # the filter names what it shows
    assert list(staff.get("/admin/games/game/?tournament=x").context["cl"].result_list) == []
    # Past any id (on SQLite the driver overflowed: a 500): nothing, named as not found.
    huge = staff.get("/admin/games/game/?tournament=99999999999999999999999")
    assert huge.status_code == 200 and list(huge.context["cl"].result_list) == []
    assert "no tournament 99999999999999999999999" in huge.content.decode()


def test_a_tournament_with_few_games_shows_them_all_without_a_note(
    staff: Client, world: World
) -> None:
    html = staff.get(f"/admin/arena/tournament/{world.finished.pk}/change/").content.decode()
    assert len(re.findall(r'class="tournament-game"', html)) == 2
    assert 'id="tournament-games-every"' not in html


# --- the game list --------------------------------------------------------------------------------
def test_the_game_list_searches_ids_and_usernames_exactly(
    staff: Client, alice: Any, bob: Any
) -> None:
    games = _games(alice, 12) + _games(bob, 1)
    wanted = games[1]
    found = staff.get(f"/admin/games/game/?q={wanted.pk}").context["cl"].result_list
    assert [g.pk for g in found] == [wanted.pk]  # not every id with these digits in it
    assert [g.pk for g in staff.get("/admin/games/game/?q=BOB").context["cl"].result_list] == [
        games[-1].pk]
    assert list(staff.get("/admin/games/game/?q=bo").context["cl"].result_list) == []
    queries = _queries(staff, f"/admin/games/game/?q={wanted.pk}")
    assert not [q for q in queries if "LIKE" in q.upper() and "games_game" in q]


def test_the_game_list_filters_on_fixed_end_reasons_without_scanning_for_them(
    staff: Client, alice: Any
) -> None:
    _games(alice, 2)
    aborted = _games(alice, 1, end_reason="staff", status=GameStatus.ABORTED)
    queries = _queries(staff, "/admin/games/game/")
    assert not [q for q in queries if "DISTINCT" in q]
    assert not [q for q in queries if '"games_game"."state"' in q or '"games_game"."rng"' in q]
    listing = staff.get("/admin/games/game/?end_reason=staff")
    assert [g.pk for g in listing.context["cl"].result_list] == [aborted[0].pk]
    assert "?end_reason=forfeit" in listing.content.decode()  # offered, though never seen


def test_the_game_list_never_counts_every_game_twice(staff: Client, alice: Any) -> None:
    _games(alice, 3)
    queries = _queries(staff, "/admin/games/game/?status__exact=finished")
    assert len([q for q in queries if "COUNT(" in q.upper()]) <= 1  # the page's, no "of N"


# --- big tables: counts, filters, searches ------------------------------------------------------
@pytest.mark.parametrize(("url", "table"), [
    ("/admin/games/moverecord/", "games_moverecord"),
    ("/admin/games/gameevent/", "games_gameevent"),
    ("/admin/bots/botcall/", "bots_botcall"),
    ("/admin/arena/ratingchange/", "arena_ratingchange"),
    ("/admin/games/seat/", "games_seat"),
    ("/admin/games/game/", "games_game"),
])
def test_a_big_tables_list_takes_the_estimated_count_instead_of_counting(
    staff: Client, world: World, url: str, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(games_admin, "table_estimate", lambda model, alias: 5_000_000)
    queries = _queries(staff, url)
    assert not [q for q in queries if "COUNT(" in q.upper()]
    assert not [q for q in queries if "DISTINCT" in q and table in q]  # filters: fixed choices
    listing = staff.get(url)
    assert listing.context["cl"].result_count == 5_000_000
    assert '<span id="result-count">about 5000000</span>' in listing.content.decode()


def test_a_small_or_unknown_table_is_counted_for_real(staff: Client, world: World,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    for estimate in (None, 10):  # SQLite or never analysed; a small table
        monkeypatch.setattr(games_admin, "table_estimate", lambda model, alias, e=estimate: e)
        listing = staff.get("/admin/games/moverecord/")
        assert listing.context["cl"].result_count == MoveRecord.objects.count()


def test_a_filtered_big_list_counts_its_matches_up_to_a_cap(
    staff: Client, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(games_admin, "COUNT_CAP", 3)
    game = world.games[0]
    listing = staff.get(f"/admin/games/moverecord/?game__id__exact={game.pk}")
    assert game.moves.count() > 3
    assert listing.context["cl"].result_count == 3
    assert '<span id="result-count">3 or more</span>' in listing.content.decode()


@pytest.mark.postgres
def test_the_estimate_is_postgresqls_row_estimate_of_the_table(world: World) -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE games_moverecord")
    estimate = games_admin.table_estimate(MoveRecord, "default")
    assert estimate is not None
    assert abs(estimate - MoveRecord.objects.count()) <= MoveRecord.objects.count() * 0.2 + 1


def test_the_call_list_filters_on_fixed_errors_and_outcomes(staff: Client, world: World) -> None:
    bot = world.bots["greedy"]
    BotCall.objects.create(bot=bot, kind=CallKind.TURN, latency_ms=1000.0, error="timeout",
                           outcome="strike")
    queries = _queries(staff, "/admin/bots/botcall/")
    assert not [q for q in queries if "DISTINCT" in q]
    page = staff.get("/admin/bots/botcall/").content.decode()
    for offered in ("?error=timeout", "?error=illegal", "?outcome=strike", "?outcome=clock"):
        assert offered in page
    for query in ("error=timeout", "outcome=strike"):
        calls = staff.get(f"/admin/bots/botcall/?{query}").context["cl"].result_list
        assert [(c.error, c.outcome) for c in calls] == [("timeout", "strike")]
    found = staff.get("/admin/bots/botcall/?q=greed").context["cl"].result_list
    assert found and {c.bot_id for c in found} == {bot.pk}  # part of a name still finds it


def test_the_move_list_filters_on_its_sources(staff: Client, world: World) -> None:
    queries = _queries(staff, "/admin/games/moverecord/?source__exact=clock")
    assert not [q for q in queries if "DISTINCT" in q]


def test_the_seat_list_searches_names_and_game_ids_exactly(staff: Client, world: World,
                                                           alice: Any) -> None:
    game = world.games[0]
    searched = {
        term: {(s.game_id, s.index) for s in
               staff.get(f"/admin/games/seat/?q={term}").context["cl"].result_list}
        for term in ("heuristic", "HEURISTIC", "heur", str(game.pk))
    }
    bot = world.bots["heuristic"]
    assert searched["heuristic"] == set(Seat.objects.filter(bot=bot)
                                        .values_list("game_id", "index"))
    assert searched["HEURISTIC"] == searched["heuristic"]
    assert searched["heur"] == set()  # exact names: no LIKE scan of every seat
    assert searched[str(game.pk)] == {(game.pk, 0), (game.pk, 1)}
    _games(alice, 1)[0].seats.create(index=0, user=alice)
    assert [s.user_id for s in
            staff.get("/admin/games/seat/?q=alice").context["cl"].result_list] == [alice.pk]


# --- the "game" column: no query per row --------------------------------------------------------
def test_the_rating_history_runs_a_fixed_number_of_queries_whatever_its_rows(
    staff: Client, world: World, alice: Any
) -> None:
    few = _queries(staff, "/admin/arena/ratingchange/")
    rating = RatingChange.objects.first().rating
    RatingChange.objects.bulk_create(RatingChange(rating=rating, game=game, before=1.0,
                                                  after=2.0) for game in _games(alice, 10))
    many = _queries(staff, "/admin/arena/ratingchange/")
    assert len(many) == len(few)
    html = staff.get("/admin/arena/ratingchange/").content.decode()
    assert f'href="/admin/games/game/{world.games[0].pk}/change/"' in html


def test_the_call_list_runs_a_fixed_number_of_queries_whatever_its_rows(
    staff: Client, world: World, alice: Any
) -> None:
    few = _queries(staff, "/admin/bots/botcall/")
    bot = world.bots["heuristic"]
    BotCall.objects.bulk_create(BotCall(bot=bot, game=game, kind=CallKind.TURN, latency_ms=2.0)
                                for game in _games(alice, 10))
    many = _queries(staff, "/admin/bots/botcall/")
    assert len(many) == len(few)


# --- a game's page: the first moves ---------------------------------------------------------------
def test_a_long_games_page_shows_its_first_moves_and_links_to_the_rest(
    staff: Client, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(games_admin, "MOVE_LOG_SHOWN", 5)
    game = world.games[0]
    total = game.moves.count()
    html = staff.get(f"/admin/games/game/{game.pk}/change/").content.decode()
    rows = re.findall(r'<tr class="uno-move-', html)
    assert len(rows) == 5
    assert f"The first 5 of {total} moves" in html
    assert f"The other {total - 5} moves are" in html
    assert f'href="/admin/games/game/{game.pk}/replay.json" download>the replay' in html
    every = f"/admin/games/moverecord/?game__id__exact={game.pk}"
    assert f'href="{every}" id="move-log-every"' in html
    listing = staff.get(every)
    assert listing.status_code == 200
    assert {m.game_id for m in listing.context["cl"].result_list} == {game.pk}
    assert listing.context["cl"].result_count == total


def test_a_games_page_runs_a_fixed_number_of_queries_whatever_its_moves(
    staff: Client, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(games_admin, "MOVE_LOG_SHOWN", 5)
    short, long = sorted(world.games[:2], key=lambda g: g.moves.count())
    sizes = [len(_queries(staff, f"/admin/games/game/{g.pk}/change/")) for g in (short, long)]
    assert sizes[0] == sizes[1]
