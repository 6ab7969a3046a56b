"""What a tournament keeps of its games: each finished game recorded once (its
``TournamentGame``, the progress counters, and the Elo update with its history, in one
transaction), and what the standings and the Bradley-Terry fit are computed from.

Elo order (docs/ratings.md): a game's Elo update is made in the transaction that records it,
under row locks on its bots' ``Rating`` rows taken before the ``TournamentGame`` row is
inserted. So games sharing a bot are rated in the order of their ``TournamentGame`` ids, and
replaying every rated game of a rule set in id order gives the stored ratings exactly.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from arena.models import Match, Rating, RatingChange, Tournament, TournamentGame
from arena.ratings import EloLadder, GameResult, bradley_terry, standings
from bots.models import Bot
from games import rows as game_rows
from games.engine_state import load_state
from games.models import Game, GameStatus, Seat
from games.uno.cards import POINTS, POINTS_2022


def game_result(game: Game, *, seats: Sequence[Seat] | None = None,
                disabled: Collection[int] = ()) -> dict[str, Any]:
    """What the tournament keeps of a finished game (see ``TournamentGame.result``);
    ``seats``: its seats, if read already; ``disabled``: bots disabled as it is recorded."""
    seats = sorted(seats if seats is not None else Seat.objects.filter(game=game),
                   key=lambda s: s.index)
    points_left = _points_left(game, len(seats))
    forfeited = [s.index for s in seats if s.forfeited]
    result = GameResult(
        players=tuple(s.bot_id for s in seats), winner=game.winner,
        points_left=tuple(points_left), forfeited=frozenset(forfeited),
    )
    places = result.places()
    return {
        "winner": game.winner,
        "scores": list(game.scores or [0] * len(seats)),
        "points_left": points_left,
        "places": list(places),
        "order": sorted(range(len(seats)), key=lambda s: (places[s], s)),
        "strikes": [s.strikes for s in seats],
        "forfeited": forfeited,
        "end_reason": game.end_reason,
        "rated": _won_by_play(game, seats, disabled),
    }


def _won_by_play(game: Game, seats: Sequence[Seat], disabled: Collection[int]) -> bool:
    """Whether the game's result may move ratings: not when staff aborted it (it stopped
    wherever it was, and its hands would decide it), nor when every seat forfeited it (a
    table of disabled bots: nobody played), nor when it was won by forfeit by a bot disabled
    itself (disabled mid-game on both sides: the first struck out lost, the other "won")."""
    if game.status == GameStatus.ABORTED or all(s.forfeited for s in seats):
        return False
    won_by_forfeit = game.end_reason == "forfeit" and game.winner is not None
    return not (won_by_forfeit and seats[game.winner].bot_id in disabled)


def _points_left(game: Game, n: int) -> list[int]:
    """The value of the cards each seat held at the end: the last hand's ``hand_points`` when
    the game ended with its hand, else counted from the hands (a forfeit, an abort)."""
    if game.state is None:
        return [0] * n
    state = load_state(game)
    last = state.last_hand or {}
    if game.end_reason == "match" and len(last.get("hand_points") or []) == n:
        return list(last["hand_points"])
    table = POINTS_2022 if state.options.start_2022 else POINTS
    return [sum(table[c] for c in hand) for hand in state.hands]


def game_record(*, match_id: int, token: str, number: int, game_id: int) -> bool:
    """Record a finished game of the match in one transaction: its ``TournamentGame``, the
    progress counters and (rated) the Elo update with its history. False, writing nothing,
    if the claim is no longer ours or the game is recorded already."""
    return bool(games_record(match_id=match_id, token=token, finished=[(number, game_id)]))


@transaction.atomic
def games_record(*, match_id: int, token: str, finished: Sequence[tuple[int, int]],
                 known: Mapping[int, tuple[Game, Sequence[Seat]]] | None = None) -> int:
    """``game_record`` for several finished games of the match (``(number, game id)`` each)
    in one transaction: one lock of the match and of the seats' ratings, one insert of the
    ``TournamentGame`` rows (their ids in the order given: the Elo order) and one update of
    the counters. Games recorded already are skipped; nothing is written if the claim is no
    longer ours. Returns how many games it recorded. ``known``: games (and their seats) as
    the caller has just written them, finished (a match's driver): not read again."""
    # The match's row only: its tournament's is taken by the counter's update, briefly.
    match = Match.objects.select_for_update(of=("self",)).select_related(
        "tournament").get(pk=match_id)
    if match.claim_token != token:
        return 0
    done = set(TournamentGame.objects.filter(
        match=match, number__in=[n for n, _ in finished]).values_list("number", flat=True))
    todo = []
    for number, game_id in finished:
        if number not in done:
            done.add(number)
            todo.append((number, game_id))
    if not todo:
        return 0
    plan = {i["number"]: i for i in match.plan}
    known = known or {}
    games = {g: known[g][0] for _, g in todo if g in known}
    seats = {g: list(known[g][1]) for g in games}
    unknown = [g for _, g in todo if g not in games]
    if unknown:
        games.update(Game.objects.in_bulk(unknown))
        for seat in Seat.objects.filter(game_id__in=unknown).order_by("game_id", "index"):
            seats.setdefault(seat.game_id, []).append(seat)
    tournament = match.tournament
    now = timezone.now()
    forfeit_bots = {b for number, g in todo if games[g].end_reason == "forfeit"
                    for b in plan[number]["seats"]}  # (read only where it can matter)
    disabled = set(Bot.objects.filter(pk__in=forfeit_bots, enabled=False).values_list(
        "pk", flat=True)) if forfeit_bots else set()
    records = [
        TournamentGame(
            match=match, tournament=tournament, game=games[game_id], number=number,
            deal=plan[number]["deal"], seats=plan[number]["seats"],
            result=game_result(games[game_id], seats=seats[game_id], disabled=disabled),
            finished_at=now)
        for number, game_id in todo
    ]
    ratings = None
    # The bots of the games that move ratings (none: no rating made for a bot that has none).
    bots = sorted({b for r in records if r.result["rated"] for b in r.seats})
    if tournament.rated and bots:
        # Locked before the rows' ids are drawn: the ids are the Elo order, so a transaction
        # sharing a bot with this one must draw its ids, and rate, wholly before or after it.
        ratings = _ratings_locked(tournament, bots)
    game_rows.insert_new(TournamentGame, records)  # ids in the order given: the Elo order
    if ratings is not None:
        _elo_apply(ratings, records)
    recorded = {str(n) for n, _ in todo}
    # The match's row is locked: its count is current. Its last game counts the match done in
    # the same write, so progress never shows every game played and a match still to go
    # (``services.match_end`` then only sets the match's status).
    completes = match.games_done + len(todo) >= match.games_total
    match.live = {k: v for k, v in match.live.items() if k not in recorded}
    match.games_done = F("games_done") + len(todo)
    match.claimed_at = now
    match.save(update_fields=["live", "games_done", "claimed_at"])
    Tournament.objects.filter(pk=tournament.pk).update(
        games_done=F("games_done") + len(todo), matches_done=F("matches_done") + int(completes))
    return len(todo)


def _ratings_locked(tournament: Tournament, bots: list[int]) -> dict[int, Rating]:
    """The seats' ratings on the tournament's rule set, locked (in bot id order, so two
    transactions never wait on each other in a cycle)."""
    rows = Rating.objects.select_for_update().filter(
        bot_id__in=bots, rule_set=tournament.rule_set).order_by("bot_id")
    found = {r.bot_id: r for r in rows}
    if len(found) == len(set(bots)):
        return found  # the usual case: one statement
    start = float(settings.ELO_START)
    Rating.objects.bulk_create(
        [Rating(bot_id=b, rule_set=tournament.rule_set, elo=start) for b in bots
         if b not in found],
        ignore_conflicts=True,
    )
    return {r.bot_id: r for r in rows.all()}


def result_of(record: TournamentGame) -> GameResult:
    """The ratings modules' view of a recorded game."""
    r = record.result
    return GameResult(
        players=tuple(record.seats), winner=r.get("winner"),
        points_left=tuple(r.get("points_left", ())), scores=tuple(r.get("scores", ())),
        strikes=tuple(r.get("strikes", ())), forfeited=frozenset(r.get("forfeited", ())),
        game_id=record.game_id, deal=record.deal, rated=r.get("rated", True),
    )


def _elo_apply(ratings: dict[int, Rating], records: Sequence[TournamentGame]) -> None:
    """The Elo updates of ``records``, one game after another in the order given (their ids'
    order), each rating written once at the end."""
    ladder = EloLadder(start=float(settings.ELO_START), k=float(settings.ELO_K),
                       ratings={b: r.elo for b, r in ratings.items()})
    changes = []
    touched: dict[int, Rating] = {}
    for record in records:
        result = result_of(record)
        for change in ladder.apply(result):
            rating = ratings[change.entrant]
            rating.elo = change.after
            rating.games += 1
            rating.wins += result.players.index(change.entrant) == result.winner
            touched[rating.pk] = rating
            changes.append(RatingChange(rating=rating, game_id=record.game_id,
                                        before=change.before, after=change.after))
    now = timezone.now()
    for rating in touched.values():
        rating.updated_at = now  # (bulk_update leaves auto_now fields as they are)
    Rating.objects.bulk_update(list(touched.values()), ["elo", "games", "wins", "updated_at"])
    game_rows.insert_many(RatingChange, changes)



# --- what the standings and the fit are computed from ----------------------------------------
def recorded_games(tournament: Tournament) -> QuerySet[TournamentGame]:
    """The tournament's recorded games in the order they were recorded (their Elo order)."""
    return TournamentGame.objects.filter(tournament=tournament).order_by("id")


def tournament_results(tournament: Tournament) -> list[GameResult]:
    return [result_of(r) for r in recorded_games(tournament)]


def standings_rows(tournament: Tournament, results: list[GameResult]) -> list[dict[str, Any]]:
    # In the order they entered: entrants still level after every key keep it (ratings.md).
    entrants = list(tournament.entrants.order_by("id").values_list("bot_id", flat=True))
    names = dict(Bot.objects.filter(pk__in=entrants).values_list("pk", "name"))
    return [
        {"rank": i + 1, "bot": s.entrant, "name": names.get(s.entrant, ""), "games": s.games,
         "wins": s.wins, "win_rate": _rounded(s.win_rate, 4), "points": s.points,
         "avg_points_left": _rounded(s.avg_points_left, 2), "strikes": s.strikes,
         "forfeits": s.forfeits}
        for i, s in enumerate(standings(results, entrants=entrants))
    ]


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def bradley_terry_json(tournament: Tournament, results: list[GameResult]) -> dict[str, Any]:
    """The fit's lines, best first; an entrant without games last, with a null rating."""
    entrants = list(tournament.entrants.order_by("bot_id").values_list("bot_id", flat=True))
    if not results:
        return {"ratings": []}
    fitted = bradley_terry(results, entrants=entrants, seed=tournament.seed % 2**32)

    def plain(x: float) -> float | None:
        return None if math.isnan(x) else round(x, 1)

    rows = sorted(fitted.values(),
                  key=lambda r: math.inf if math.isnan(r.rating) else -r.rating)
    return {"ratings": [
        {"bot": r.entrant, "rating": plain(r.rating), "low": plain(r.low), "high": plain(r.high),
         "games": r.games} for r in rows
    ]}
