"""What the tournament commands print: the run's progress, its final table, the leaderboard."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from django.core.management.base import CommandError, OutputWrapper
from rest_framework.exceptions import APIException

from arena import presenters, services
from arena.models import MatchStatus, Tournament, TournamentStatus
from arena.serializers import progress_data
from arena.terminal import ProgressBar, table
from core.api_errors import error_body


@contextmanager
def refusals() -> Iterator[None]:
    """The services' refusals (a bad field, an ineligible bot, too few entrants) as one line
    with the API's own message, not a traceback."""
    try:
        yield
    except APIException as exc:
        raise CommandError(error_body(exc)["detail"]) from None


def _progress_of(update: Any) -> Mapping[str, Any]:
    if isinstance(update, Tournament):
        return progress_data(update)
    return update


def run_in_foreground(tournament: Tournament, out: OutputWrapper) -> Tournament:
    """Play every match of the tournament in this process, drawing the progress bar; the
    matches other runners hold (a worker, the server) are followed to their end."""
    if tournament.status == TournamentStatus.DRAFT:  # scheduled, but no task sent: played here
        tournament = services.tournament_start(tournament_id=tournament.pk,
                                               user=tournament.owner, dispatch=False)
    elif tournament.matches.filter(status=MatchStatus.RUNNING).exists():
        out.write(f"Tournament {tournament.pk} has matches claimed elsewhere (a worker, the "
                  "server): following it to its end.\n")
    bar = ProgressBar(out._out if isinstance(out, OutputWrapper) else out)
    bar.update(progress_data(tournament))
    try:
        services.tournament_run_foreground(
            tournament_id=tournament.pk, on_progress=lambda u: bar.update(_progress_of(u)),
            follow=True,
        )
    finally:
        tournament.refresh_from_db()
        bar.update(progress_data(tournament))
        bar.finish()
    if tournament.status == TournamentStatus.CANCELLED:
        out.write(f"Tournament {tournament.pk} was cancelled while it ran: the table is of the "
                  f"{tournament.games_done} of {tournament.games_total} games played "
                  f"({tournament.matches_dropped} matches dropped).\n")
    elif tournament.status == TournamentStatus.RUNNING:
        out.write(f"Tournament {tournament.pk} is not over: a match failed here (see the log); "
                  "the sweep, or running this again, takes it over.\n")
    return tournament


def final_table(tournament: Tournament) -> str:
    rows = presenters.standings_rows(tournament=tournament)
    elo = presenters.elo_of(bot_ids=[r["bot"] for r in rows], rule_set=tournament.rule_set)
    body = table(
        ["#", "bot", "games", "wins", "win rate", "points", "avg left", "strikes",
         "forfeits", "BT", "95% interval", "Elo"],
        [[r["rank"], r["name"], r["games"], r["wins"], _percent(r["win_rate"]), r["points"],
          r["avg_points_left"], r["strikes"], r["forfeits"], r["rating"], _interval(r),
          elo.get(r["bot"])] for r in rows],
    )
    return (f"\nTournament {tournament.pk} ({tournament.name}) is {tournament.status}: "
            f"{tournament.games_done} games, rule set {tournament.rule_set!r}\n{body}\n")


def leaderboard_table(rule_set: str, *, limit: int = 20) -> str:
    ratings = list(presenters.leaderboard_queryset(rule_set=rule_set)[:limit])
    rows = presenters.leaderboard_rows(ratings)
    body = table(
        ["#", "bot", "owner", "Elo", "last BT", "BT 95% interval", "games", "win rate",
         "p50 ms", "p99 ms", "strikes"],
        [[r["rank"], r["name"], r["owner"], r["elo"], r["bradley_terry"], _interval(r), r["games"],
          _percent(r["win_rate"]),
          r["p50_ms"], r["p99_ms"], r["strikes"]] for r in rows],
    )
    return (f"\nLeaderboard ({rule_set}):\n{body}\n(BT: the Bradley-Terry rating in the bot's "
            "latest finished rated tournament of these rules, with its 95% interval.)\n")


def _percent(rate: float | None) -> str | None:
    return None if rate is None else f"{100 * rate:.0f}%"


def _interval(row: Mapping[str, Any]) -> str | None:
    low, high = row.get("low"), row.get("high")
    if low is None or high is None:
        return None
    return f"{low:.0f}..{high:.0f}"
