"""Uno rules engine: pure Python, standard library only, no Django.

See ``docs/rules.md`` for every rule choice and ``docs/engine.md`` for using it to build and
test a bot. Typical use::

    state = new_game(Options(players=3), seed=42)
    moves = legal_moves(state, state.awaiting)
    apply(state, state.awaiting, random_move(moves, rng))
    public = view(state, seat=1)
"""

from .cards import CODES as CARD_CODES
from .cards import COLORS
from .engine import (
    HAND_MOVE_CAP,
    MAX_HANDS,
    apply,
    default_move,
    legal_moves,
    new_game,
)
from .errors import IllegalMove, MalformedMove, OptionsError, UnoError
from .helpers import (
    all_legal_moves,
    apply_recorded,
    card_color,
    honest_moves,
    is_bluff,
    random_move,
    replay,
    view_bluffs,
)
from .moves import MOVE_TYPES, Move
from .options import Options
from .sample import sample_state
from .scenario import deal, scenario
from .state import PHASE_NAMES as PHASES
from .state import GameState
from .view import full_view, view

__all__ = [
    "CARD_CODES",
    "COLORS",
    "HAND_MOVE_CAP",
    "MAX_HANDS",
    "MOVE_TYPES",
    "PHASES",
    "GameState",
    "IllegalMove",
    "MalformedMove",
    "Move",
    "Options",
    "OptionsError",
    "UnoError",
    "all_legal_moves",
    "apply",
    "apply_recorded",
    "card_color",
    "deal",
    "default_move",
    "full_view",
    "honest_moves",
    "is_bluff",
    "legal_moves",
    "new_game",
    "random_move",
    "replay",
    "sample_state",
    "scenario",
    "view",
    "view_bluffs",
]
