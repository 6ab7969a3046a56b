"""``manage.py demo`` and ``manage.py tournament run``: real reference bots over local HTTP (served
by the commands themselves), the starter bot as a real process, games played in the
foreground, the tables printed."""

from __future__ import annotations

import io
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from rest_framework.exceptions import ValidationError

from arena import runner, services
from arena.local_bots import DEMO_USER, REFERENCE, STARTER
from arena.models import (
    Entrant,
    Match,
    MatchStatus,
    Rating,
    Tournament,
    TournamentGame,
    TournamentStatus,
)
from arena.terminal import ProgressBar, table
from bots import services as bot_services
from bots.models import Bot
from core.api_errors import error_body

# Games run on threads of their own (connections of their own): committed data, not a test
# transaction they cannot see.
pytestmark = pytest.mark.django_db(transaction=True)


def run(*args: Any) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_the_demo_registers_verifies_and_ranks_the_reference_and_starter_bots() -> None:
    text = run("demo", "--games-per-pairing", "2", "--seed", "1")
    bots = {b.name: b for b in Bot.objects.filter(owner__username=DEMO_USER)}
    assert set(bots) == {*REFERENCE, STARTER}
    assert all(b.verified and b.enabled for b in bots.values())
    tournament = Tournament.objects.get()
    assert tournament.status == TournamentStatus.FINISHED and tournament.finalized_at
    assert TournamentGame.objects.filter(tournament=tournament).count() == 12  # 6 pairs x 2
    assert Rating.objects.filter(rule_set="single_hand").count() == 4
    assert "Leaderboard (single_hand)" in text and "/admin/" in text
    for name in bots:
        assert re.search(rf"^\d+\s+{name}\s", text, re.M), text
    assert "12/12 games" in text


@pytest.mark.parametrize(("args", "message"), [
    (("--games-per-pairing", "0"), "games_per_pairing"),
    (("--games-per-pairing", "1001"), "games_per_pairing"),
    (("--seed", "-5"), "seed"),
])
def test_the_demo_refuses_bad_numbers_in_one_line_before_serving_any_bot(
    args: tuple[str, ...], message: str
) -> None:
    """Before: a ValidationError's traceback, after the bots were served and verified."""
    with pytest.raises(CommandError, match=message):
        run("demo", "--no-starter", *args)
    assert not Bot.objects.exists() and not Tournament.objects.exists()


def test_running_the_demo_again_reuses_the_bots_and_their_verification() -> None:
    run("demo", "--games-per-pairing", "1", "--no-starter")
    first = {b.name: (b.pk, b.url, b.verified_at) for b in Bot.objects.all()}
    text = run("demo", "--games-per-pairing", "1", "--no-starter")
    again = {b.name: (b.pk, b.url, b.verified_at) for b in Bot.objects.all()}
    assert {name: pk for name, (pk, _, _) in again.items()} == {
        name: pk for name, (pk, _, _) in first.items()}
    for name, (_, url, verified_at) in again.items():
        if url == first[name][1]:  # its old port was free again: the verification stands
            assert verified_at == first[name][2]
    assert all(b.verified for b in Bot.objects.all())
    assert Tournament.objects.filter(status=TournamentStatus.FINISHED).count() == 2
    assert "Leaderboard" in text


def test_tournament_run_creates_and_plays_a_tournament_between_named_bots() -> None:
    run("demo", "--games-per-pairing", "1", "--no-starter")
    text = run("tournament", "run", "--bots", "heuristic", "random", "greedy",
               "--table-size", "3", "--games-per-pairing", "3", "--duplicate-deals",
               "--seed", "9", "--options", '{"single_hand": true}', "--name", "Threes")
    tournament = Tournament.objects.get(name="Threes")
    assert tournament.status == TournamentStatus.FINISHED and tournament.seed == 9
    assert tournament.table_size == 3 and tournament.games_done == 3
    assert "3/3 games" in text and "is finished" in text
    assert re.search(r"^1\s+\S+\s+3\s", text, re.M), text  # the table: 3 games each


def test_tournament_run_plays_an_existing_draft_tournament(alice: Any) -> None:
    run("demo", "--games-per-pairing", "1", "--no-starter")
    demo = Bot.objects.get(name="random").owner
    tournament = services.tournament_create(owner=demo, name="Existing",
                                            options={"single_hand": True}, games_per_pairing=2)
    for name in ("random", "greedy"):
        services.entrant_enter(tournament_id=tournament.pk,
                               bot_id=Bot.objects.get(name=name).pk, user=demo)
    text = run("tournament", "run", str(tournament.pk))
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.FINISHED and tournament.games_done == 2
    assert f"Tournament {tournament.pk} (Existing) is finished" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "Give either"),
        (("1", "--bots", "a", "b"), "Give either"),
        (("424242",), "No tournament 424242"),
        (("--bots", "nobody-by-that-name", "random"), "No bot named"),
    ],
)
def test_tournament_run_refuses_what_it_cannot_run(args: tuple[str, ...], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        run("tournament", "run", *args)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--bots", "heuristic", "random", "--table-size", "3"),
         "^a table of 3 needs at least 3 entrants$"),
        (("--bots", "heuristic", "random", "--table-size", "11"),
         r"^table_size: Must be a whole number from 2 to 10\.$"),
        (("--bots", "heuristic", "random", "--seed", "-1"),
         r"^seed: Must be a whole number from 0 to \d+\.$"),
        (("--bots", "heuristic", "random", "--options", '{"stacking": 1}'),
         "^options.stacking: must be a boolean$"),
        (("--bots", "heuristic", "random", "--options", '{"players": 3}'),
         r"^options.players: must equal table_size \(2\)"),
        (("--bots", "heuristic", "unverified"),
         "^unverified is not verified and enabled: only verified, enabled bots can enter"),
        (("--bots", "heuristic", "heuristic"), "^bots: heuristic is named twice"),
        (("--bots", "heuristic", "HEURISTIC"), "^bots: heuristic is named twice"),
    ],
)
def test_it_refuses_bad_input_in_one_line_and_leaves_no_tournament_behind(
    args: tuple[str, ...], message: str
) -> None:
    run("demo", "--games-per-pairing", "1", "--no-starter")
    demo = Bot.objects.get(name="random").owner
    bot_services.bot_create(owner=demo, name="unverified", url="http://127.0.0.1:9/")
    before = set(Tournament.objects.values_list("pk", flat=True))
    entrants = Entrant.objects.count()
    with pytest.raises(CommandError, match=message):
        run("tournament", "run", *args)
    assert set(Tournament.objects.values_list("pk", flat=True)) == before
    assert Entrant.objects.count() == entrants


def test_it_refuses_with_the_message_the_api_gives_for_the_same_fields() -> None:
    run("demo", "--games-per-pairing", "1", "--no-starter")
    with pytest.raises(ValidationError) as api:
        services.tournament_check(name="x", options={}, table_size=11)
    with pytest.raises(CommandError) as command:
        run("tournament", "run", "--bots", "heuristic", "random", "--table-size", "11")
    assert str(command.value) == error_body(api.value)["detail"]


def test_it_refuses_to_start_a_draft_with_too_few_entrants_and_leaves_it_a_draft() -> None:
    run("demo", "--games-per-pairing", "1", "--no-starter")
    demo = Bot.objects.get(name="random").owner
    lonely = services.tournament_create(owner=demo, name="Lonely", options={"single_hand": True})
    services.entrant_enter(tournament_id=lonely.pk, bot_id=Bot.objects.get(name="random").pk,
                           user=demo)
    with pytest.raises(CommandError, match=r"^a table of 2 needs at least 2 entrants$"):
        run("tournament", "run", str(lonely.pk))
    lonely.refresh_from_db()
    assert lonely.status == TournamentStatus.DRAFT and not lonely.matches.exists()


def _elsewhere(match: Match, token: str,
               then: Callable[[], None] = lambda: None) -> threading.Thread:
    """Another runner (a worker, the server's thread) holding ``match``'s claim: after a
    moment, ``then``, and it plays the match (or ends it, cancelled) and finalizes."""

    def play() -> None:
        try:
            time.sleep(1.0)
            then()
            runner.MatchRun(Match.objects.select_related("tournament").get(pk=match.pk),
                            token).run()
            services.tournament_finalize(tournament_id=match.tournament_id)
        finally:
            connection.close()

    return threading.Thread(target=play, daemon=True)


def _started_with_one_match_claimed_elsewhere() -> tuple[Tournament, Match, str]:
    run("demo", "--games-per-pairing", "1", "--no-starter")
    tournament = services.tournament_create_started(
        owner=Bot.objects.get(name="random").owner,
        bots=list(Bot.objects.filter(name__in=["random", "greedy", "heuristic"])),
        name="Shared", options={"single_hand": True}, games_per_pairing=2, seed=5)
    match = tournament.matches.order_by("number").last()
    assert match is not None
    token = services.match_claim(match_id=match.pk)
    assert token is not None
    return tournament, match, token


def test_it_follows_a_tournament_played_elsewhere_too_to_its_final_table() -> None:
    tournament, match, token = _started_with_one_match_claimed_elsewhere()
    other = _elsewhere(match, token)
    other.start()
    text = run("tournament", "run", str(tournament.pk))
    other.join(timeout=60)
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.FINISHED and tournament.finalized_at
    assert tournament.games_done == tournament.games_total == 6
    assert "claimed elsewhere" in text and "6/6 games" in text
    assert f"Tournament {tournament.pk} (Shared) is finished: 6 games" in text
    assert all(line["low"] is not None or line["games"] == 0
               for line in tournament.bradley_terry["ratings"])
    # The final table, with the Bradley-Terry column filled in.
    for row in tournament.bradley_terry["ratings"]:
        name = Bot.objects.get(pk=row["bot"]).name
        assert re.search(rf"^\d+\s+{name}\s.*\s{row['rating']:.1f}\s", text, re.M), text
    assert Match.objects.get(pk=match.pk).status == MatchStatus.DONE


def test_it_says_so_when_the_tournament_it_follows_is_cancelled() -> None:
    tournament, match, token = _started_with_one_match_claimed_elsewhere()
    owner = tournament.owner

    def cancel() -> None:  # the other runner's match then stops before its first game
        services.tournament_cancel(tournament_id=tournament.pk, user=owner)

    other = _elsewhere(match, token, then=cancel)
    other.start()
    text = run("tournament", "run", str(tournament.pk))
    other.join(timeout=60)
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.CANCELLED and tournament.finalized_at
    assert f"Tournament {tournament.pk} was cancelled while it ran" in text
    assert f"({tournament.matches_dropped} matches dropped)" in text
    assert f"Tournament {tournament.pk} (Shared) is cancelled" in text
    assert Match.objects.get(pk=match.pk).status == MatchStatus.CANCELLED


def test_the_progress_bar_redraws_in_place_on_a_terminal_and_prints_lines_elsewhere() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    step = {"games_done": 1, "games_total": 4, "matches_done": 0, "matches_total": 2,
            "eta_seconds": 3.0}
    for out, tty in ((Tty(), True), (io.StringIO(), False)):
        bar = ProgressBar(out)
        bar.update(step)
        bar.update(step)  # unchanged: not drawn again
        bar.update({**step, "games_done": 4, "matches_done": 2, "eta_seconds": None})
        bar.finish()
        text = out.getvalue()
        if tty:
            assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1
        else:
            assert "\r" not in text and text.count("\n") == 2
        assert "1/4 games" in text and "4/4 games" in text and "about 3s left" in text


def test_tables_align_numbers_right_and_text_left() -> None:
    out = table(["bot", "Elo", "win rate"], [["a", 1500.0, "50%"], ["longer", 1612.25, "100%"]])
    lines = out.splitlines()
    assert lines[0] == "bot        Elo  win rate"
    assert lines[2] == "a       1500.0       50%"
    assert lines[3] == "longer  1612.2      100%"


def test_the_final_table_shows_an_interval_one_game_cannot_give_as_unknown() -> None:
    run("demo", "--games-per-pairing", "1", "--no-starter")
    text = run("tournament", "run", "--bots", "heuristic", "random", "--games-per-pairing", "1",
               "--options", '{"single_hand": true}', "--seed", "3")
    tournament = Tournament.objects.latest("id")
    assert all(row["low"] is None and row["high"] is None
               for row in tournament.bradley_terry["ratings"])
    for row in tournament.bradley_terry["ratings"]:
        name = Bot.objects.get(pk=row["bot"]).name
        # ... BT, then the interval as unknown ("-"), then the Elo.
        assert re.search(rf"^\d+\s+{name}\s.*\s{row['rating']:.1f}\s+-\s+\d+\.\d$", text,
                         re.M), text
