"""What the arena's admin pages show, read out as plain rows for the templates: a
tournament's progress and standings, its Bradley-Terry intervals, a bot's rating charts and
recent games. Reads only; the pages are in ``arena.admin``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.db.models import OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from arena import charts, selectors
from arena.models import Match, Rating, Tournament, TournamentGame
from bots.models import Bot
from games.models import Seat

RECENT_GAMES = 20
TOURNAMENT_GAMES = 200  # on a tournament's page, the latest; the game list has them all


@dataclass(frozen=True, slots=True)
class Progress:
    games_done: int
    games_total: int
    matches_done: int
    matches_total: int
    eta_seconds: float | None
    matches_dropped: int = 0  # by a cancel: never to be played
    games_dropped: int = 0

    @property
    def percent(self) -> int:
        return round(100 * self.games_done / self.games_total) if self.games_total else 0


def progress(tournament: Tournament) -> Progress:
    return Progress(
        tournament.games_done, tournament.games_total, tournament.matches_done,
        tournament.matches_total, tournament.eta_seconds, tournament.matches_dropped,
        tournament.games_dropped,
    )


def duration(seconds: float | None) -> str:
    """``75`` -> ``1 min 15 s``: how long is left, as a person reads it."""
    if seconds is None:
        return "—"
    whole = max(round(seconds), 0)
    minutes, rest = divmod(whole, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def _bot_id(row: dict[str, Any]) -> int | None:
    for key in ("bot_id", "bot", "entrant"):
        value = row.get(key)
        if isinstance(value, int):
            return value
        if isinstance(value, dict) and isinstance(value.get("id"), int):
            return int(value["id"])
    return None


def bt_intervals(result: Any) -> dict[int, tuple[float, float, float]]:
    """Bot id -> (rating, low, high) from a tournament's Bradley-Terry result
    (``{"ratings": [{"bot", "rating", "low", "high"}, ...]}``; low/high None when unknown)."""
    data: Any = result or {}
    if isinstance(data, dict) and isinstance(data.get("ratings"), list | dict):
        data = data["ratings"]
    rows: list[tuple[int | None, Any]]
    if isinstance(data, dict):
        rows = [(int(k) if str(k).isdigit() else None, v) for k, v in data.items()]
    else:
        rows = [(None, v) for v in data if isinstance(v, dict)]
    out = {}
    for key, row in rows:
        if not isinstance(row, dict):
            continue
        bot = key if key is not None else _bot_id(row)
        rating, low, high = (_number(row.get(name)) for name in ("rating", "low", "high"))
        if bot is not None and rating is not None:
            out[bot] = (rating, low if low is not None else math.nan,
                        high if high is not None else math.nan)
    return out


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not math.isnan(float(value)):
        return float(value)
    return None


NO_INTERVAL = "—"  # the games gave no interval (docs/ratings.md): unknown, not zero-wide


def interval_text(interval: tuple[float, float, float] | None) -> str:
    if interval is None:
        return ""
    rating, low, high = interval
    if math.isnan(low) or math.isnan(high):
        return f"{rating:.0f} [{NO_INTERVAL}]"
    return f"{rating:.0f} [{low:.0f}, {high:.0f}]"


def strikes_subquery() -> Coalesce:
    """A bot's strikes at every table it sat at (as ``arena.selectors.leaderboard`` counts
    them), for sorting the leaderboard by them."""
    total = (Seat.objects.filter(bot_id=OuterRef("bot_id")).values("bot_id")
             .annotate(total=Sum("strikes")).values("total"))
    return Coalesce(Subquery(total), 0)


def standings_rows(tournament: Tournament) -> list[dict[str, Any]]:
    """The standings (final, or of the games so far) with each bot's name and Bradley-Terry
    rating and interval (final, or fitted to the games so far) attached; a bot without games
    has no win rate, average or rating (None; ``NO_INTERVAL`` for the rating)."""
    rows = [dict(row) for row in selectors.tournament_standings(tournament=tournament)]
    ids = {i for i in (_bot_id(row) for row in rows) if i is not None}
    names = dict(Bot.objects.filter(pk__in=ids).values_list("pk", "name"))
    intervals = bt_intervals(selectors.tournament_bradley_terry(tournament=tournament))
    for rank, row in enumerate(rows, start=1):
        bot = _bot_id(row)
        games = row.get("games") or 0
        row.setdefault("rank", rank)
        row["bot_id"] = bot
        row["bot_name"] = names.get(bot, row.get("name") or f"bot {bot}") if bot else "?"
        # None (shown as a dash) for a bot without games: no rate, no average, no rating.
        if "win_rate" not in row:
            row["win_rate"] = (row.get("wins") or 0) / games if games else None
        if "avg_points_left" not in row:
            row["avg_points_left"] = (row["points_left"] / games if games and "points_left" in row
                                      else None)
        row["bt"] = interval_text(intervals.get(bot)) if bot in intervals else NO_INTERVAL
    return rows


def rating_charts(bot: Bot) -> list[dict[str, Any]]:
    """One SVG line chart of Elo over the bot's rated games per rule set it has a rating in
    (official first)."""
    out = []
    ratings = sorted(Rating.objects.filter(bot=bot), key=lambda r: (r.rule_set != "official",
                                                                     r.rule_set))
    for rating in ratings:
        changes = list(selectors.rating_history(bot=bot, rule_set=rating.rule_set)
                       .values_list("before", "after"))
        points = [(0, changes[0][0])] if changes else []
        points += [(i, after) for i, (_, after) in enumerate(changes, start=1)]
        svg = charts.rating_history_svg(points, title=f"Elo, {rating.rule_set}")
        out.append({"rating": rating, "svg": svg, "games": len(changes)})
    return out


def recent_games(bot: Bot, limit: int = RECENT_GAMES) -> list[dict[str, Any]]:
    """The bot's newest games: who it played, how it ended, and the tournament if any."""
    seats = list(Seat.objects.filter(bot=bot).select_related("game")
                 .order_by("-game__created_at", "-game_id")[:limit])
    game_ids = [s.game_id for s in seats]
    others: dict[int, list[str]] = {}
    for seat in (Seat.objects.filter(game_id__in=game_ids).filter(~Q(bot=bot) | Q(bot__isnull=True))
                 .select_related("user", "bot").order_by("index")):
        others.setdefault(seat.game_id, []).append(seat.player or "(open)")
    tournaments = dict(TournamentGame.objects.filter(game_id__in=game_ids)
                       .values_list("game_id", "tournament_id"))
    rows = []
    for seat in seats:
        game = seat.game
        if not game.is_over:
            outcome = game.get_status_display()
        elif game.winner is None:
            outcome = "no winner"
        else:
            outcome = "won" if game.winner == seat.index else "lost"
        rows.append({"game": game, "seat": seat.index, "opponents": others.get(game.pk, []),
                     "outcome": outcome, "tournament_id": tournaments.get(game.pk)})
    return rows


def tournament_games(tournament: Tournament, limit: int | None = None) -> list[dict[str, Any]]:
    """The tournament's games (the latest ``limit``, newest first, when given), with their
    match, their bots' names by seat and the winner's name: three queries, however many
    games. The games' engine state and RNG are left unread (big, and not shown), and so are
    the matches' plans: only their number and status are shown."""
    records = selectors.tournament_games(tournament=tournament).select_related("game").defer(
        "game__state", "game__rng")
    if limit is not None:
        records = records.reverse()[:limit]
    records = list(records)
    matches = Match.objects.only("number", "status").in_bulk({r.match_id for r in records})
    ids = {bot for r in records for bot in r.seats or [] if isinstance(bot, int)}
    names = dict(Bot.objects.filter(pk__in=ids).values_list("pk", "name"))
    rows = []
    for record in records:
        seats = [names.get(bot, f"bot {bot}") for bot in record.seats or []]
        winner = (record.result or {}).get("winner")
        rows.append({
            "record": record, "game": record.game, "match": matches.get(record.match_id),
            "seats": seats,
            "winner": seats[winner] if isinstance(winner, int) and winner < len(seats) else "",
        })
    return rows


def tournament_matches(tournament: Tournament) -> list[dict[str, Any]]:
    """The tournament's matches by number, each with its bots' names ("a v b"): two queries,
    however many matches (a bot no longer there shows as ``#id``)."""
    matches = list(Match.objects.filter(tournament=tournament).order_by("number")
                   .only("number", "bots", "status", "games_done", "games_total", "finished_at"))
    ids = {bot for match in matches for bot in match.bots or () if isinstance(bot, int)}
    names = dict(Bot.objects.filter(pk__in=ids).values_list("pk", "name"))
    return [{"match": match,
             "bots": " v ".join(names.get(bot, f"#{bot}") for bot in match.bots or ())}
            for match in matches]
