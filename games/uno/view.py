"""What leaves the engine: ``view`` for one seat during play, ``full_view`` for staff/replays."""

from __future__ import annotations

from typing import Any

from .cards import CODES, COLORS, NO_COLOR
from .engine import legal_moves
from .state import CHALLENGE, CHOOSE_COLOR, DRAWN, PHASE_NAMES, STACK, GameState, last_hand_copy


def _public(state: GameState) -> dict[str, Any]:
    return {
        "options": state.options.to_json(),
        "hand_counts": [len(h) for h in state.hands],
        "top": CODES[state.discard[-1]],
        "color": COLORS[state.color] if state.color < NO_COLOR else None,
        "direction": state.direction,
        "turn": state.turn,
        "awaiting": state.awaiting,
        "phase": PHASE_NAMES[state.phase],
        "uno_window": state.uno_seat if state.uno_seat >= 0 else None,
        "scores": state.scores,
        "hand_number": state.hand_number,
        "dealer": state.dealer,
        "deck_count": len(state.deck),
        "discard_count": len(state.discard),
        "move_count": state.move_count,
        "finished": state.finished,
        "winner": state.winner,
        "last_hand": last_hand_copy(state.last_hand),
    }


def _pending(state: GameState, seat: int) -> dict[str, Any] | None:
    """The mandatory decision the game waits for (None: an ordinary turn, or match over)."""
    phase = state.phase
    if phase == DRAWN:
        out: dict[str, Any] = {"type": "drawn", "seat": state.turn}
        if seat == state.turn:  # only the drawer learns which card is waiting
            out["card"] = CODES[state.drawn]
        return out
    if phase == CHOOSE_COLOR:
        return {"type": "color", "seat": state.turn}
    if phase == CHALLENGE:
        return {
            "type": "challenge",
            "seat": state.turn,
            "player": state.w4_player,
            "penalty": state.penalty,
        }
    if phase == STACK:
        return {"type": "stack", "seat": state.turn, "penalty": state.penalty}
    return None


def _reveal(state: GameState, seat: int) -> dict[str, Any] | None:
    """The hand a challenged Wild Draw Four player showed: to the challenger only, until the
    challenger's next move (or the hand's end). None for everyone else and the rest of the
    time."""
    if state.reveal_seat != seat:
        return None
    return {"seat": state.reveal_player, "hand": [CODES[c] for c in state.reveal_hand]}


def view(state: GameState, seat: int) -> dict[str, Any]:
    """Everything ``seat`` may know: own hand, public table state, own legal moves."""
    moves = legal_moves(state, seat)  # also validates the seat number
    out = _public(state)
    out["seat"] = seat
    out["hand"] = [CODES[c] for c in state.hands[seat]]
    out["pending"] = _pending(state, seat)
    out["challenge_reveal"] = _reveal(state, seat)
    out["legal_moves"] = [m.to_json() for m in moves]
    return out


def full_view(state: GameState) -> dict[str, Any]:
    """Everything, hidden information included: for finished matches (replays) and staff."""
    out = _public(state)
    out["seed"] = state.seed
    out["hands"] = [[CODES[c] for c in h] for h in state.hands]
    out["deck"] = [CODES[c] for c in reversed(state.deck)]  # next card to draw first
    out["discard"] = [CODES[c] for c in state.discard]  # bottom first, top last
    out["pending"] = _pending(state, state.turn)
    if state.phase == CHALLENGE:
        out["pending"]["player_held_color"] = state.w4_illegal
    out["legal_moves"] = {
        str(s): [m.to_json() for m in legal_moves(state, s)] for s in range(state.n)
    }
    return out
