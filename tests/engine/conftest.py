"""Fixtures and helpers for the engine tests (no Django needed)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import pytest
from hypothesis import strategies as st

from games.uno import GameState, Move, Options, apply, legal_moves, new_game
from games.uno import engine as engine_module
from games.uno.cards import CODE_TO_CARD


def play(card: str, color: str | None = None, target: int | None = None, uno: bool = False) -> Move:
    return Move("play", card=card, color=color, target=target, uno=uno)


DRAW = Move("draw")
KEEP = Move("keep")
ACCEPT = Move("accept")
CHALLENGE = Move("challenge")
UNO = Move("uno")


def catch(seat: int) -> Move:
    return Move("catch", target=seat)


def random_game(
    options: Options,
    seed: int,
    chooser_seed: int,
    out_of_turn: float = 0.1,
    max_moves: int = 200_000,
    on_move: Callable[[GameState, int, Move], None] | None = None,
) -> tuple[GameState, list[tuple[int, Move]]]:
    """Play a game with random legal moves, sometimes letting another seat act out of turn."""
    rnd = random.Random(chooser_seed)
    state = new_game(options, seed)
    log: list[tuple[int, Move]] = []
    while not state.finished and len(log) < max_moves:
        seat = state.awaiting
        assert seat is not None
        if out_of_turn and rnd.random() < out_of_turn:
            other = rnd.randrange(options.players)
            extra = [m for m in legal_moves(state, other) if other != seat]
            if extra:
                move = rnd.choice(extra)
                apply(state, other, move)
                log.append((other, move))
                if on_move:
                    on_move(state, other, move)
                continue
        moves = legal_moves(state, seat)
        plays = [m for m in moves if m.type == "play"]
        # Mostly prefer playing, so hands finish in a reasonable number of moves.
        pool = plays if plays and rnd.random() < 0.8 else moves
        move = rnd.choice(pool)
        apply(state, seat, move)
        log.append((seat, move))
        if on_move:
            on_move(state, seat, move)
    return state, log


@pytest.fixture
def rigged_flips(monkeypatch: pytest.MonkeyPatch) -> Callable[[Options, int, list[str]], GameState]:
    """New game whose successive shuffles put the given cards on top of the deck (flip order)."""

    def make(options: Options, seed: int, flips: list[str]) -> GameState:
        real = engine_module.shuffle
        queue: Iterator[str] = iter(flips)

        def fake(rng: random.Random, cards: list[int]) -> None:
            real(rng, cards)
            code = next(queue, None)
            if code is not None:
                card = CODE_TO_CARD[code]
                cards.remove(card)
                cards.append(card)

        monkeypatch.setattr(engine_module, "shuffle", fake)
        state = new_game(options, seed)
        monkeypatch.setattr(engine_module, "shuffle", real)
        return state

    return make


SINGLE_HANDS, TO_500 = st.just(True), st.just(500)


def options_strategy(
    *, single_hand: st.SearchStrategy[bool] = SINGLE_HANDS,
    target_score: st.SearchStrategy[int] = TO_500,
) -> st.SearchStrategy[Options]:
    """Every rule option at random, 2 to 10 seats; single hands unless told otherwise."""
    return st.builds(
        Options,
        players=st.integers(2, 10),
        stacking=st.booleans(),
        seven_o=st.booleans(),
        jump_in=st.booleans(),
        draw_until_playable=st.booleans(),
        deck_2018=st.booleans(),
        start_2022=st.booleans(),
        single_hand=single_hand,
        target_score=target_score,
    )
