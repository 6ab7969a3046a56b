"""Uno rules engine: pure Python, standard library only, no Django.

See ``docs/rules.md`` for every rule choice. Typical use::

    state = new_game(Options(players=3), seed=42)
    moves = legal_moves(state, state.awaiting)
    apply(state, state.awaiting, moves[0])
    public = view(state, seat=1)
"""

from .cards import CODES as CARD_CODES
from .engine import (
    HAND_MOVE_CAP,
    MAX_HANDS,
    apply,
    default_move,
    legal_moves,
    new_game,
    replay,
)
from .errors import IllegalMove, MalformedMove, OptionsError, UnoError
from .moves import Move
from .options import Options
from .state import GameState
from .view import full_view, view

__all__ = [
    "CARD_CODES",
    "HAND_MOVE_CAP",
    "MAX_HANDS",
    "GameState",
    "IllegalMove",
    "MalformedMove",
    "Move",
    "Options",
    "OptionsError",
    "UnoError",
    "apply",
    "default_move",
    "full_view",
    "legal_moves",
    "new_game",
    "replay",
    "view",
]
