"""Deck composition, dealing, dealer and the first discard's effect."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import pytest

from games.uno import GameState, Options, new_game
from games.uno.cards import CODES, build_deck
from games.uno.engine import shuffle
from games.uno.state import CHOOSE_COLOR, PLAY


def all_cards(state: GameState) -> Counter[int]:
    return Counter(c for h in state.hands for c in h) + Counter(state.deck) + Counter(state.discard)


def test_deck_has_108_cards_with_official_composition() -> None:
    deck = Counter(CODES[c] for c in build_deck(False))
    assert sum(deck.values()) == 108
    for letter in "RYGB":
        assert deck[letter + "0"] == 1
        for rank in "123456789SRD":
            assert deck[letter + rank] == 2
    assert deck["W"] == 4 and deck["W4"] == 4
    assert sum(v for k, v in deck.items() if k.startswith(tuple("RYGB"))) == 100


def test_deck_2018_has_112_cards_with_wild_shuffle_hands_and_three_blank_wilds() -> None:
    deck = Counter(CODES[c] for c in build_deck(True))
    assert sum(deck.values()) == 112
    assert deck["WS"] == 1 and deck["WC"] == 3


@pytest.mark.parametrize("players", range(2, 11))
def test_each_player_is_dealt_seven_cards(players: int) -> None:
    state = new_game(Options(players=players), seed=players)
    counts = [len(h) for h in state.hands]
    # The first discard can be a Draw Two, which gives the first player two more.
    assert sorted(counts)[0] == 7 and sum(counts) in (7 * players, 7 * players + 2)
    assert sum(all_cards(state).values()) == 108


def test_dealer_is_chosen_at_random_from_the_seed() -> None:
    dealers = {new_game(Options(players=5), seed).dealer for seed in range(60)}
    assert dealers == set(range(5))
    assert new_game(Options(players=5), 7).dealer == new_game(Options(players=5), 7).dealer


def test_number_first_discard_player_left_of_dealer_starts_clockwise(
    rigged_flips: Callable[..., GameState],
) -> None:
    state = rigged_flips(Options(players=4), 1, ["R5"])
    assert CODES[state.discard[-1]] == "R5"
    assert state.turn == (state.dealer + 1) % 4
    assert state.direction == 1 and state.phase == PLAY


def test_first_discard_skip_player_left_of_dealer_misses_turn(
    rigged_flips: Callable[..., GameState],
) -> None:
    state = rigged_flips(Options(players=4), 1, ["GS"])
    assert state.turn == (state.dealer + 2) % 4


def test_first_discard_reverse_dealer_plays_first_counterclockwise(
    rigged_flips: Callable[..., GameState],
) -> None:
    state = rigged_flips(Options(players=4), 1, ["BR"])
    assert state.turn == state.dealer and state.direction == -1


def test_first_discard_draw_two_left_player_draws_two_and_misses_turn(
    rigged_flips: Callable[..., GameState],
) -> None:
    state = rigged_flips(Options(players=4), 1, ["YD"])
    left = (state.dealer + 1) % 4
    assert len(state.hands[left]) == 9
    assert state.turn == (state.dealer + 2) % 4 and state.phase == PLAY


def test_first_discard_wild_first_player_declares_colour_then_plays(
    rigged_flips: Callable[..., GameState],
) -> None:
    from games.uno import Move, apply, legal_moves

    state = rigged_flips(Options(players=3), 1, ["W"])
    first = (state.dealer + 1) % 3
    assert state.phase == CHOOSE_COLOR and state.awaiting == first
    assert [m.type for m in legal_moves(state, first)] == ["color"] * 4
    apply(state, first, Move("color", color="green"))
    assert state.turn == first and state.phase == PLAY and state.color == 2


def test_first_discard_wild_draw_four_is_returned_reshuffled_and_flipped_again(
    rigged_flips: Callable[..., GameState],
) -> None:
    state = rigged_flips(Options(players=3), 1, ["W4", "B7"])
    assert CODES[state.discard[-1]] == "B7" and len(state.discard) == 1
    assert sum(all_cards(state).values()) == 108
    assert state.turn == (state.dealer + 1) % 3


def test_start_2022_flips_until_a_number_card(rigged_flips: Callable[..., GameState]) -> None:
    state = rigged_flips(Options(players=3, start_2022=True), 1, ["RS", "W", "GD", "Y4"])
    assert CODES[state.discard[-1]] == "Y4" and len(state.discard) == 1
    assert sum(all_cards(state).values()) == 108


def test_first_discard_reverse_with_two_players_dealer_plays_first(
    rigged_flips: Callable[..., GameState],
) -> None:
    state = rigged_flips(Options(players=2), 3, ["GR"])
    assert state.turn == state.dealer


@pytest.mark.parametrize("seed", range(50))
def test_shuffle_sorts_cards_by_little_endian_64_bit_keys_from_the_rng(seed: int) -> None:
    # The documented mechanism (docs/rules.md): one 64-bit key per card from ``randbytes``,
    # read little-endian; the fast float-packed implementation must give the same order.
    # (It orders by the keys' top 40 bits; a tie there has probability < 1e-8.)
    cards = build_deck(True)
    keys = random.Random(seed).randbytes(8 * len(cards))
    order = sorted(
        range(len(cards)), key=lambda i: int.from_bytes(keys[8 * i : 8 * i + 8], "little")
    )
    shuffled = list(cards)
    shuffle(random.Random(seed), shuffled)
    assert shuffled == [cards[i] for i in order]


def test_shuffle_leaves_short_lists_alone_and_consumes_no_randomness() -> None:
    rng = random.Random(1)
    before = rng.getstate()
    for cards in ([], [7]):
        shuffle(rng, cards)
    assert rng.getstate() == before
