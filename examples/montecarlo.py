"""A Monte Carlo Uno strategy on the engine: sample what the seat cannot see, play it out.

    python -m bots.evaluate --bot examples/montecarlo.py:choose --games 200
    python -m bots.serve --strategy examples/montecarlo.py:choose --port 8080 --secret whsec_...

For each legal move, ``PLAYOUTS`` times: deal the hidden cards at random consistently with the
view (``games.uno.sample_state``), play the move, and let every seat play on with
``random_move`` until the hand ends. The move whose play-outs the seat won most often is
played. It knows only what its view shows, as a bot at the table does. docs/engine.md has
the figures against the reference strategies. More play-outs play better and take longer:
mind the turn's ``budget_ms`` (about 30 ms a decision here at 16 play-outs a move, p99 under
200 ms).
"""

from __future__ import annotations

import random
from typing import Any

from games.uno import Move, apply, legal_moves, random_move, sample_state

PLAYOUTS = 16
PLAYOUT_MOVES = 400  # a hand rarely lasts longer; a play-out cut there counts as lost


def choose(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    moves: list[dict[str, Any]] = view["legal_moves"]
    candidates = _distinct(moves)
    if len(candidates) == 1:
        return candidates[0]
    wins = [sum(_playout(view, move, rng) for _ in range(PLAYOUTS)) for move in candidates]
    return candidates[max(range(len(candidates)), key=lambda i: (wins[i], -i))]


def _distinct(moves: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The moves worth comparing: a free Uno call or catch alone (always right); else the plays,
    if any (drawing instead of playing is rarely better, and play-outs this few cannot tell
    a few per cent apart), a play that may call Uno always calling it; else everything."""
    free = [m for m in moves if m["type"] in ("uno", "catch")]
    if free:
        return free[:1]
    plays = [m for m in moves if m["type"] == "play"]
    calls = {(m.get("card"), m.get("color"), m.get("target")) for m in plays if m.get("uno")}
    plays = [m for m in plays if m.get("uno") or (
        m.get("card"), m.get("color"), m.get("target")) not in calls]
    return plays or moves


def _playout(view: dict[str, Any], move: dict[str, Any], rng: random.Random) -> int:
    """1 if the seat wins the hand after ``move`` in one sampled world, else 0."""
    seat, hand_number = view["seat"], view["hand_number"]
    state = sample_state(view, rng)
    apply(state, seat, Move.from_json(move))
    for _ in range(PLAYOUT_MOVES):
        if state.finished or state.hand_number != hand_number:
            break
        awaited = state.awaiting
        assert awaited is not None
        apply(state, awaited, random_move(legal_moves(state, awaited), rng))
    last = state.last_hand  # the summary of the hand just ended (None while it goes on)
    return int(last is not None and last["hand_number"] == hand_number and last["winner"] == seat)
