"""A game's engine state as its row stores it: ``load_state`` reads it off the row,
``sync_public`` writes it back together with the public facts lists show. Below
``games.book`` and ``games.steps`` (both write through ``sync_public``), so neither imports
the other back.
"""

from __future__ import annotations

from games import uno as engine
from games.models import Game


def load_state(game: Game) -> engine.GameState:
    data = game.state
    if "rng" not in data:  # stored apart (a state written before that carries its own)
        data = {**data, "rng": game.rng}
    return engine.GameState.from_json(data)


def sync_public(game: Game, state: engine.GameState) -> bool:
    """Store the engine state and copy the public facts lists show out of it. Returns whether
    the RNG part changed (cards were shuffled)."""
    data = state.to_json()
    rng = data.pop("rng")
    rng_changed = rng != game.rng or "rng" in (game.state or {})
    game.state, game.rng = data, rng
    game.awaiting = state.awaiting
    game.hand_number = state.hand_number
    game.scores = state.scores
    game.winner = state.winner
    return rng_changed
