"""Fixtures for the admin pages: finished games played through the services, bots, and a
tournament's state written directly (a page test needs the rows, not the Celery run)."""

from __future__ import annotations

import random
from typing import Any

from games import services
from games import uno as engine
from games.models import Game, GameStatus


def finished_game(first: Any, second: Any, *, seed: int = 0) -> Game:
    """A single-hand game between two users, played to the end with random legal moves."""
    game = services.game_create(user=first, options={"single_hand": True}, seats=2)
    services.seat_join(game_id=game.pk, user=second)
    services.game_start(game_id=game.pk, user=first)
    return play_out(game.pk, seed=seed)


def play_out(game_id: int, *, seed: int = 0, max_moves: int = 5000) -> Game:
    rng = random.Random(seed)
    for _ in range(max_moves):
        game = Game.objects.get(pk=game_id)
        if game.status != GameStatus.RUNNING:
            return game
        state = services.load_state(game)
        seat = game.awaiting
        assert seat is not None
        move = engine.random_move(engine.legal_moves(state, seat), rng)
        services.move_play(game_id=game_id, seat=seat, move=move, expected_version=game.version)
    raise AssertionError(f"game {game_id} did not finish in {max_moves} moves")
