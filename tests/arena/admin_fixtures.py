"""Fixtures for the admin pages: finished games played through the services, bots, and a
tournament's state written directly (a page test needs the rows, not the Celery run)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from bots.models import Bot, BotCall, CallKind
from games import services
from games import uno as engine
from games.engine_state import load_state
from games.models import Game, GameStatus, Seat


def finished_game(first: Any, second: Any, *, seed: int = 0) -> Game:
    """A single-hand game between two users, played to the end with random legal moves."""
    game = services.game_create(user=first, options={"single_hand": True}, seats=2)
    Game.objects.filter(pk=game.pk).update(seed=1000 + seed)  # the same deal every run
    services.seat_join(game_id=game.pk, user=second)
    services.game_start(game_id=game.pk, user=first)
    return play_out(game.pk, seed=seed)


def play_out(game_id: int, *, seed: int = 0, max_moves: int = 5000) -> Game:
    rng = random.Random(seed)
    for _ in range(max_moves):
        game = Game.objects.get(pk=game_id)
        if game.status != GameStatus.RUNNING:
            return game
        state = load_state(game)
        seat = game.awaiting
        assert seat is not None
        move = engine.random_move(engine.legal_moves(state, seat), rng)
        services.move_play(game_id=game_id, seat=seat, move=move, expected_version=game.version)
    raise AssertionError(f"game {game_id} did not finish in {max_moves} moves")


@dataclass
class World:
    """Three bots with official Elo ratings and histories, a finished tournament with
    Bradley-Terry intervals, and a running one with games done and matches pending."""

    bots: dict[str, Any]
    games: list[Game]
    finished: Any
    running: Any


def bot_games(owner: Any, opponent: Any, winners: list[Any], loser_of: Any) -> list[Game]:
    """Finished games (one per entry of ``winners``), then seated by bots: the winner's bot
    where the game's winner sat, so the move log, results and ratings tell one story."""
    games = []
    for i, winner in enumerate(winners):
        game = finished_game(owner, opponent, seed=i)
        loser = loser_of(winner)
        for index in range(2):
            bot = winner if index == game.winner else loser
            Seat.objects.filter(game=game, index=index).update(user=None, bot=bot)
        games.append(game)
    return games


def build_world(alice: Any, bob: Any) -> World:
    from arena import records
    from arena.models import (
        Entrant,
        Match,
        MatchStatus,
        Rating,
        RatingChange,
        Tournament,
        TournamentGame,
        TournamentStatus,
    )

    bots = {
        name: Bot.objects.create(owner=owner, name=name, url=f"http://127.0.0.1:9/{name}",
                                 secret="s" * 32, verified=verified)
        for name, owner, verified in (("heuristic", alice, True), ("greedy", bob, True),
                                      ("random", bob, False))
    }
    heuristic, greedy, random_bot = bots["heuristic"], bots["greedy"], bots["random"]
    # Spring cup: heuristic beats greedy twice; the live cup: one win each.
    story = [heuristic, heuristic, greedy, heuristic]
    games = bot_games(alice, bob, story,
                      lambda winner: greedy if winner == heuristic else heuristic)
    ratings = {name: Rating.objects.create(bot=bot, rule_set="official", elo=1500.0)
               for name, bot in bots.items()}
    elo = {"heuristic": 1500.0, "greedy": 1500.0}
    for n, game in enumerate(games):
        winner = story[n].name
        for name in elo:
            before = elo[name]
            elo[name] = before + (8.0 if name == winner else -8.0)
            RatingChange.objects.create(rating=ratings[name], game=game, before=before,
                                        after=elo[name])
    for name, value in elo.items():
        Rating.objects.filter(pk=ratings[name].pk).update(elo=value, games=4,
                                                          wins=3 if name == "heuristic" else 1)
    Rating.objects.filter(pk=ratings["random"].pk).update(elo=1480.0, games=2, wins=0)
    for bot, latencies in ((heuristic, [3.0, 4.0, 5.0, 40.0]), (greedy, [2.0, 2.5])):
        BotCall.objects.bulk_create(
            BotCall(bot=bot, kind=CallKind.TURN, status=200, latency_ms=ms) for ms in latencies)
    # greedy timed out once in its first game (a strike at that table).
    Seat.objects.filter(game=games[0], bot=greedy).update(strikes=1)

    now = timezone.now()
    common = {"owner": alice, "options": {}, "rule_set": "official", "seed": 7}
    finished = Tournament.objects.create(
        name="Spring cup", status=TournamentStatus.FINISHED, started_at=now, finished_at=now,
        finalized_at=now, matches_total=1, matches_done=1, games_total=2, games_done=2,
        standings=[
            {"bot": heuristic.pk, "games": 2, "wins": 2, "points": 120, "points_left": 0,
             "strikes": 0, "forfeits": 0},
            {"bot": greedy.pk, "games": 2, "wins": 0, "points": 0, "points_left": 80,
             "strikes": 0, "forfeits": 0},
        ],
        bradley_terry={"ratings": [
            {"bot": heuristic.pk, "rating": 1620.0, "low": 1540.0, "high": 1710.0, "games": 2},
            {"bot": greedy.pk, "rating": 1380.0, "low": 1290.0, "high": 1460.0, "games": 2},
        ]},
        **common,
    )
    running = Tournament.objects.create(
        name="Live cup", status=TournamentStatus.RUNNING, started_at=now, matches_total=3,
        matches_done=1, games_total=6, games_done=2,
        standings=[
            {"bot": heuristic.pk, "games": 2, "wins": 1, "points": 40, "points_left": 10,
             "strikes": 0, "forfeits": 0},
            {"bot": greedy.pk, "games": 2, "wins": 1, "points": 10, "points_left": 40,
             "strikes": 0, "forfeits": 0},
            {"bot": random_bot.pk, "games": 0, "wins": 0, "points": 0, "points_left": 0,
             "strikes": 0, "forfeits": 0},
        ],
        **common,
    )
    for tournament, entrants in ((finished, [heuristic, greedy]),
                                 (running, [heuristic, greedy, random_bot])):
        Entrant.objects.bulk_create(Entrant(tournament=tournament, bot=b) for b in entrants)
    done = Match.objects.create(tournament=finished, number=1, bots=[heuristic.pk, greedy.pk],
                                status=MatchStatus.DONE, games_total=2, games_done=2)
    live = [
        Match.objects.create(tournament=running, number=n, bots=pair, status=status,
                             games_total=2, games_done=played)
        for n, pair, status, played in (
            (1, [heuristic.pk, greedy.pk], MatchStatus.DONE, 2),
            (2, [heuristic.pk, random_bot.pk], MatchStatus.RUNNING, 0),
            (3, [greedy.pk, random_bot.pk], MatchStatus.PENDING, 0),
        )
    ]
    for number, (match, game) in enumerate(
        [(done, games[0]), (done, games[1]), (live[0], games[2]), (live[0], games[3])]
    ):
        TournamentGame.objects.create(
            match=match, tournament=match.tournament, game=game, number=number % 2 + 1,
            deal=game.seed, seats=[s.bot_id for s in game.seats.order_by("index")],
            result=records.game_result(game),
        )
    return World(bots, games, finished, running)


def cancel_part_way(world: World) -> Any:
    """The live cup cancelled as it stands: heuristic and greedy played their table, random
    none (its two tables dropped); finalized on the games played, as the services do."""
    from arena import services
    from arena.models import Match, MatchStatus, Tournament, TournamentStatus

    tournament = world.running
    Tournament.objects.filter(pk=tournament.pk).update(status=TournamentStatus.CANCELLED,
                                                       finished_at=timezone.now())
    Match.objects.filter(tournament=tournament).exclude(status=MatchStatus.DONE).update(
        status=MatchStatus.CANCELLED)
    assert services.tournament_finalize(tournament_id=tournament.pk)
    return Tournament.objects.get(pk=tournament.pk)
