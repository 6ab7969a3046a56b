"""Hidden information around a drawn card: its playability stays with the drawer (the drawer
always decides, playable or not)."""

from __future__ import annotations

from typing import Any

from games.uno import GameState, Move, Options, apply, legal_moves, view
from games.uno.scenario import scenario
from games.uno.state import DRAWN

from .conftest import DRAW, KEEP, play, random_game

HANDS = [["G1", "B2"], ["B1", "Y4"], ["B3", "G9"]]


def _after_draw(drawn: str) -> GameState:
    state = scenario(Options(players=3), hands=HANDS, top="R3", deck=[drawn, "Y1", "Y2"])
    apply(state, 0, DRAW)
    return state


def test_opponents_views_and_the_public_log_are_the_same_whether_the_drawn_card_plays_or_not(
) -> None:
    playable, unplayable = _after_draw("R7"), _after_draw("Y7")
    log: dict[str, list[tuple[int, dict[str, Any]]]] = {"R7": [], "Y7": []}
    for state, card in ((playable, "R7"), (unplayable, "Y7")):
        log[card].append((0, DRAW.to_json()))
        assert state.phase == DRAWN and state.awaiting == 0
    for seat in (1, 2):
        assert view(playable, seat) == view(unplayable, seat)
        assert view(playable, seat)["pending"] == {"type": "drawn", "seat": 0}
    # The drawer alone sees the card, and whether it may play it.
    assert view(playable, 0)["pending"]["card"] == "R7"
    assert view(unplayable, 0)["pending"]["card"] == "Y7"
    assert legal_moves(playable, 0) == [play("R7"), KEEP]
    assert legal_moves(unplayable, 0) == [KEEP]
    # Keeping looks the same to everyone else too, and so does the public move log.
    for state, card in ((playable, "R7"), (unplayable, "Y7")):
        apply(state, 0, KEEP)
        log[card].append((0, KEEP.to_json()))
    assert log["R7"] == log["Y7"]
    for seat in (1, 2):
        assert view(playable, seat) == view(unplayable, seat)


def test_every_single_card_draw_leaves_the_drawer_to_play_or_keep() -> None:
    def check(state: GameState, seat: int, move: Move) -> None:
        if move.type == "draw":
            # Only a draw from an exhausted deck and discard pile (nothing drawn) passes.
            drew_nothing = not state.deck and len(state.discard) <= 1
            assert (state.phase == DRAWN and state.awaiting == seat) or drew_nothing

    for seed in range(10):
        random_game(Options(players=3, single_hand=True), seed, seed, on_move=check)
