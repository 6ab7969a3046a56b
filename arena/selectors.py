"""Reads of tournaments and ratings: progress, standings, the leaderboard, rating histories."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db.models import F, QuerySet, Sum

from arena import records
from arena.models import (
    Match,
    MatchStatus,
    Rating,
    RatingChange,
    Tournament,
    TournamentGame,
    TournamentStatus,
)
from arena.ratings import OFFICIAL, GameResult
from bots import selectors as bot_selectors
from bots.models import Bot, BotCounter
from core.throttling import with_cache
from games.models import Game, Seat


def is_tournament_game(game: Game, user: object) -> bool:
    """Whether ``game`` was played in a tournament: its replay is open to every user
    (``games.hooks``' replay reader), as the tournament's standings and ratings are."""
    return TournamentGame.objects.filter(game_id=game.pk).exists()


def games_in_flight() -> set[int]:
    """The games a running match has in flight (``Match.live``: begun, not yet recorded), in
    whichever process its worker runs, alive or not (``games.hooks``' driven games). Their
    stored turn clocks are not their real ones: the worker plays them in memory. If it dies,
    its claim goes stale and the match's next worker aborts them and deals them again
    (``services.live_settle``); nothing else may move them meanwhile. One query: running
    matches are few, each with at most TOURNAMENT_MATCH_CONCURRENCY games live."""
    lives = Match.objects.filter(status=MatchStatus.RUNNING).values_list("live", flat=True)
    return {int(game_id) for live in lives for game_id in live.values()}


def replay_held(game: Game) -> bool:
    """Whether ``game``'s replay stays closed for now (``games.hooks``' replay hold): a
    tournament's game until the tournament is finalized, as its deal may still be played
    (every seating of a duplicate deal has the same seed). Not merely until it ends: a
    cancelled tournament's running matches finish the games they are playing, and it is
    finalized once they have. A game that ended but is not recorded yet (its match records
    the games that end together, within a second) is found on its running match (``live``).
    A game cut off by its worker's end (``interrupted``: ``services.live_settle``) was dealt
    again from its seed, and nothing here says which tournament it was for: it stays closed
    (staff see it in the admin)."""
    if game.end_reason == "interrupted":
        return True
    # Live on a running match first (a few rows: the matches workers play), then recorded:
    # a game's record and its leaving ``live`` commit together, so a game not found live is
    # found recorded if it is a tournament's at all. (In the other order, a record committed
    # between the two reads left it in neither.)
    if game.pk in games_in_flight():
        return True
    recorded = TournamentGame.objects.filter(game_id=game.pk).values_list(
        "tournament__finalized_at", flat=True)
    return any(finalized_at is None for finalized_at in recorded[:1])


def tournament_progress(*, tournament: Tournament) -> dict[str, Any]:
    """Matches and games done out of the totals (and those a cancel dropped), the fraction
    done, and the time left (estimated from the time per game so far; None before the first
    game or once over)."""
    total = tournament.games_total
    return {
        "status": tournament.status,
        "matches_done": tournament.matches_done,
        "matches_total": tournament.matches_total,
        "games_done": tournament.games_done,
        "games_total": total,
        "matches_dropped": tournament.matches_dropped,
        "games_dropped": tournament.games_dropped,
        "fraction": round(tournament.games_done / total, 4) if total else 0.0,
        "eta_seconds": tournament.eta_seconds,
        "started_at": tournament.started_at,
        "finished_at": tournament.finished_at,
    }


def tournament_standings(*, tournament: Tournament) -> list[dict[str, Any]]:
    """The final table once finalized; while running, the table of the games recorded so far
    (computed from the stored results once per game recorded: ``_table_so_far``)."""
    if tournament.finalized_at is not None:
        return list(tournament.standings)
    if tournament.status == TournamentStatus.DRAFT:
        return records.standings_rows(tournament, [])
    return list(_table_so_far(tournament, STANDINGS))


def tournament_bradley_terry(*, tournament: Tournament) -> dict[str, Any]:
    """The finalizer's ratings with intervals, or (not finalized) a fit of the games so far
    (once per game recorded: ``_table_so_far``)."""
    if tournament.finalized_at is not None:
        return dict(tournament.bradley_terry)
    return dict(_table_so_far(tournament, BRADLEY_TERRY))


STANDINGS, BRADLEY_TERRY = "standings", "bradley_terry"
_TABLES: dict[str, Callable[[Tournament, list[GameResult]], Any]] = {
    STANDINGS: records.standings_rows, BRADLEY_TERRY: records.bradley_terry_json}
# Long enough for any poll between two games; a key stops being asked for once a game is
# recorded (the key names ``games_done``), so this only bounds what the cache keeps.
TABLE_CACHE_SECONDS = 3600
# How long one request has to make a table that others wait for (they are served the latest
# table meanwhile): past it, another request makes it too.
TABLE_MAKING_SECONDS = 30


def _table_so_far(tournament: Tournament, table: str) -> Any:
    """A running tournament's ``table`` of its games so far, from the cache (Redis, shared by
    every process; local memory without it) keyed by the tournament and its ``games_done``:
    polls between two games cost a cache hit instead of reading every result again (and, for
    the fit, 0.9 s of Bradley-Terry at 1,560 games). The results are read once per
    ``tournament`` object, whichever tables are asked of it (the admin's page asks both). An
    unreachable cache only costs the computation.

    One request makes a new table; the others asking for it meanwhile (a busy tournament's
    viewers, each poll after a game) get the latest table made, a game or a few behind,
    instead of all making the same one at once (``TABLE_MAKING_SECONDS``). Only if there is
    none yet do they make it too.

    ``games_done`` is read with the tournament, before its results: a game recorded in
    between is in the table (one game fresher than its key says), never one short of it."""
    key = f"arena:{table}:{tournament.pk}:{tournament.games_done}"
    latest = f"arena:{table}:{tournament.pk}:latest"
    found = _cached(key)
    if found is not None:
        return found
    if not _first_to_make(f"{key}:making"):
        found = _cached(latest)
        if found is not None:
            return found
    found = _TABLES[table](tournament, _results_so_far(tournament))
    with_cache(lambda: cache.set_many({key: found, latest: found}, TABLE_CACHE_SECONDS),
               failed=None, counter=None, what="tournament table kept")
    return found


def _cached(key: str) -> Any:
    return with_cache(lambda: cache.get(key), failed=None, counter=None,
                      what="tournament table read")


def _first_to_make(key: str) -> bool:
    """Whether this request is the one to make the table (an unreachable cache: every one)."""
    return bool(with_cache(lambda: cache.add(key, 1, TABLE_MAKING_SECONDS), failed=True,
                           counter=None, what="tournament table claimed"))


def _results_so_far(tournament: Tournament) -> list[GameResult]:
    """The recorded results, read once for this tournament object (at its ``games_done``)."""
    read: tuple[int, list[GameResult]] | None = getattr(tournament, "_results_read",
                                                                None)
    if read is None or read[0] != tournament.games_done:
        read = (tournament.games_done, records.tournament_results(tournament))
        tournament._results_read = read  # type: ignore[attr-defined]
    return read[1]


def tournament_games(*, tournament: Tournament) -> QuerySet[TournamentGame]:
    """The tournament's recorded games by their number in the schedule (the order they were
    recorded in is the Elo's: ``records.recorded_games``)."""
    return TournamentGame.objects.filter(tournament=tournament).order_by("number", "id")


def latest_bradley_terry(*, rule_set: str, bot_ids: Collection[int] | None = None,
                         look_back: int = 50) -> dict[int, dict[str, Any]]:
    """Each bot's Bradley-Terry line (``rating``, ``low``, ``high``, and the ``tournament``'s
    id) in the latest finished rated tournament it played on this rule set, among the
    ``look_back`` latest; ``bot_ids``: only these bots. A cancelled tournament is finalized
    too, but its fit is of part of its games, so it does not count; nor does an unrated one
    (a trial that leaves the Elo alone leaves the leaderboard alone too)."""
    wanted = None if bot_ids is None else set(bot_ids)
    found: dict[int, dict[str, Any]] = {}
    finished = Tournament.objects.filter(
        rule_set=rule_set, rated=True, status=TournamentStatus.FINISHED,
        finalized_at__isnull=False,
    ).order_by("-finalized_at", "-id").values_list("pk", "bradley_terry")
    for tournament_id, fitted in finished[:look_back]:
        for row in (fitted or {}).get("ratings", []):
            bot = row["bot"]
            if (wanted is None or bot in wanted) and bot not in found:
                found[bot] = {"rating": row.get("rating"), "low": row.get("low"),
                              "high": row.get("high"), "tournament": tournament_id}
        if wanted is not None and len(found) == len(wanted):
            break
    return found


def leaderboard(*, rule_set: str = OFFICIAL) -> list[dict[str, Any]]:
    """Every rated bot on ``rule_set``, best Elo first (``leaderboard_lines`` of the whole
    ladder: the same few queries for any number of bots)."""
    return leaderboard_lines(ratings=ladder(rule_set=rule_set))


def ladder(*, rule_set: str = OFFICIAL) -> list[Rating]:
    return list(Rating.objects.filter(rule_set=rule_set).select_related("bot", "bot__owner")
                .order_by("-elo", "bot_id"))


def leaderboard_lines(*, ratings: Sequence[Rating]) -> list[dict[str, Any]]:
    """The leaderboard's lines of some ratings of one ladder (a page of it, or all of it), in
    their order: each bot's rank on the whole ladder (whatever filter picked the ratings), its
    Elo, Bradley-Terry rating and interval (from the latest finished rated tournament it
    played, or None; its ``low`` and ``high`` None where the games gave no interval), games,
    wins, win rate, turn latency p50/p99 and strikes (all its games).

    A constant number of queries, whatever the number of ratings: the admin and the API read
    only the page they show (one query per bot for the latency cost 803 queries, 1.1 s, on an
    803-bot ladder)."""
    if not ratings:
        return []
    rule_set = ratings[0].rule_set
    facts = ladder_facts(rule_set=rule_set, bot_ids=[r.bot_id for r in ratings])
    rows = []
    for rating in ratings:
        fitted, latency = facts.intervals.get(rating.bot_id), facts.latencies[rating.bot_id]
        rows.append({
            "rank": facts.ranks[rating.bot_id], "bot": rating.bot_id, "name": rating.bot.name,
            "owner": rating.bot.owner.get_username(), "verified": rating.bot.verified,
            "enabled": rating.bot.enabled, "rule_set": rule_set, "elo": round(rating.elo, 1),
            "interval": None if fitted is None or fitted["rating"] is None else fitted,
            "bradley_terry_tournament": None if fitted is None else fitted["tournament"],
            "games": rating.games, "wins": rating.wins,
            "win_rate": round(rating.wins / rating.games, 4) if rating.games else 0.0,
            "latency_p50_ms": latency["p50_ms"], "latency_p99_ms": latency["p99_ms"],
            "strikes": facts.strikes.get(rating.bot_id, 0),
        })
    return rows


@dataclass(frozen=True)
class LadderFacts:
    """What the leaderboard says of some bots of one ladder besides their ``Rating``."""

    ranks: dict[int, int]  # place on the whole ladder, 1: the best Elo
    intervals: dict[int, dict[str, Any]]  # ``latest_bradley_terry``
    latencies: dict[int, dict[str, Any]]  # ``bots.selectors.latencies``
    strikes: dict[int, int]  # at every table they sat at


def ladder_facts(*, rule_set: str, bot_ids: Sequence[int]) -> LadderFacts:
    """Four reads for any number of bots (and the Bradley-Terry look-back's tournaments)."""
    return LadderFacts(
        ranks=ladder_ranks(rule_set=rule_set, bot_ids=bot_ids),
        intervals=latest_bradley_terry(rule_set=rule_set, bot_ids=bot_ids),
        latencies=bot_selectors.latencies(bot_ids=bot_ids),
        strikes=strikes(bot_ids=bot_ids),
    )


def ladder_ranks(*, rule_set: str, bot_ids: Sequence[int]) -> dict[int, int]:
    """Each bot's place on the whole ladder of ``rule_set`` (1: the best Elo), whatever a
    filter shows of it: the admin's leaderboard and the API number their rows so."""
    wanted = set(bot_ids)
    order = (Rating.objects.filter(rule_set=rule_set).order_by("-elo", "bot_id")
             .values_list("bot_id", flat=True))
    return {bot: place for place, bot in enumerate(order, start=1) if bot in wanted}


def strikes(*, bot_ids: Sequence[int]) -> dict[int, int]:
    """Each bot's strikes at every table it sat at (tournament or not)."""
    return {bot_id: int(n or 0) for bot_id, n in Seat.objects.filter(bot_id__in=bot_ids)
            .values("bot_id").annotate(n=Sum("strikes")).values_list("bot_id", "n")}


def rating_history(*, bot: Bot, rule_set: str = OFFICIAL) -> QuerySet[RatingChange]:
    """The bot's Elo on ``rule_set``, game by game, in the order it was updated."""
    return RatingChange.objects.filter(rating__bot=bot, rating__rule_set=rule_set).order_by("id")


def rating_history_with_tournaments(*, bot: Bot, rule_set: str = OFFICIAL
                                    ) -> QuerySet[RatingChange]:
    """``rating_history``, each change with its game's ``tournament_id`` (one join: every
    rated game is a tournament's)."""
    return rating_history(bot=bot, rule_set=rule_set).annotate(
        tournament_id=F("game__tournament_game__tournament_id"))


def rating_history_newest(*, bot: Bot, rule_set: str = OFFICIAL, limit: int | None = None,
                          before: int | None = None) -> tuple[list[RatingChange], bool]:
    """``rating_history_with_tournaments``, only its newest ``limit`` changes (all without a
    limit), still oldest first; and whether older ones were left out. ``before``: the game
    of a change in that history, to page back from: only the changes older than it count
    (``RatingChange.DoesNotExist`` if the game has no change there). The busiest bot's whole
    history was 3,052 points (297 KB) and grows with every game: a chart of its recent form
    asks for a page of it, read newest first off the index."""
    history = rating_history_with_tournaments(bot=bot, rule_set=rule_set)
    if before is not None:
        older_than = rating_history(bot=bot, rule_set=rule_set).get(game_id=before).pk
        history = history.filter(id__lt=older_than)
    if limit is None:
        return list(history), False
    newest = list(history.order_by("-id")[:limit + 1])  # one more: are there older ones?
    return newest[:limit][::-1], len(newest) > limit


def bot_ladders(*, bot: Bot) -> list[str]:
    """The rule sets the bot has an Elo on, the official one first."""
    found = set(Rating.objects.filter(bot=bot).values_list("rule_set", flat=True))
    return sorted(found, key=lambda name: (name != OFFICIAL, name))


def default_rule_set() -> str:
    """The ladder shown unless one is picked: the official rules', or while nobody is rated on
    them (``manage.py demo`` plays single hands), the one with the most rated games, a game
    counted once for each bot at its table (the sum of the ratings' games: no scan of the
    history)."""
    if Rating.objects.filter(rule_set=OFFICIAL).exists():
        return OFFICIAL
    busiest = (Rating.objects.values("rule_set").annotate(n=Sum("games"))
               .order_by("-n", "rule_set").first())
    return str(busiest["rule_set"]) if busiest else OFFICIAL


def rule_sets() -> list[str]:
    """The rule sets anyone is rated on, the official one first."""
    found = set(Rating.objects.values_list("rule_set", flat=True).distinct())
    return sorted(found, key=lambda name: (name != OFFICIAL, name))


def strike_counters(*, bot: Bot) -> int:
    """Strikes counted by the bots app (every table, tournament or not)."""
    return int(BotCounter.objects.filter(bot=bot, name__startswith="strike:")
               .aggregate(n=Sum("count"))["n"] or 0)
