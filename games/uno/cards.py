"""Card encoding and precomputed tables.

Cards are small ints so that hands, deck and discard are plain ``list[int]`` and every
rule lookup is one index into a precomputed table (the engine's hot path).

* coloured cards: ``colour * 13 + rank`` with colour 0..3 (red, yellow, green, blue) and
  rank 0..9 (numbers), 10 Skip, 11 Reverse, 12 Draw Two -> ids 0..51
* 52 Wild ("W"), 53 Wild Draw Four ("W4"), 54 Wild Shuffle Hands ("WS", 2018 deck),
  55 Wild Customizable ("WC", 2018 deck; blank, played as a plain Wild)
"""

from __future__ import annotations

from typing import Final

COLORS: Final = ("red", "yellow", "green", "blue")
COLOR_LETTERS: Final = "RYGB"
COLOR_INDEX: Final = {name: i for i, name in enumerate(COLORS)}
NO_COLOR: Final = 4  # "colour not chosen yet" (first discard is a Wild)

SKIP: Final = 10
REVERSE: Final = 11
DRAW_TWO: Final = 12
WILD: Final = 52
WILD_DRAW_FOUR: Final = 53
WILD_SHUFFLE: Final = 54
WILD_CUSTOM: Final = 55
NUM_KINDS: Final = 56

_RANK_SUFFIX: Final = "0123456789SRD"


def _code(card: int) -> str:
    if card < WILD:
        return COLOR_LETTERS[card // 13] + _RANK_SUFFIX[card % 13]
    return ("W", "W4", "WS", "WC")[card - WILD]


CODES: Final[tuple[str, ...]] = tuple(_code(c) for c in range(NUM_KINDS))
CODE_TO_CARD: Final[dict[str, int]] = {code: i for i, code in enumerate(CODES)}

# Colour of a card (NO_COLOR for wilds) and rank (13.. for wilds, never equal to a coloured rank).
COLOR_OF: Final[tuple[int, ...]] = tuple(
    c // 13 if c < WILD else NO_COLOR for c in range(NUM_KINDS)
)
RANK_OF: Final[tuple[int, ...]] = tuple(
    c % 13 if c < WILD else 13 + c - WILD for c in range(NUM_KINDS)
)
IS_WILD: Final[tuple[bool, ...]] = tuple(c >= WILD for c in range(NUM_KINDS))
IS_NUMBER: Final[tuple[bool, ...]] = tuple(c < WILD and c % 13 < 10 for c in range(NUM_KINDS))


def _points(card: int, rules_2022: bool) -> int:
    if card >= WILD:
        # 2018 rules: Wild Shuffle Hands and customizable wilds are worth 40. The 2022 rules:
        # "each Wild card is worth 50 points regardless of type".
        return 40 if card in (WILD_SHUFFLE, WILD_CUSTOM) and not rules_2022 else 50
    rank = card % 13
    return rank if rank < 10 else 20


# Points a card left in a hand scores for the winner: POINTS under the 2018 values (the
# default), POINTS_2022 under the 2022 rules (``Options.start_2022``).
POINTS: Final[tuple[int, ...]] = tuple(_points(c, False) for c in range(NUM_KINDS))
POINTS_2022: Final[tuple[int, ...]] = tuple(_points(c, True) for c in range(NUM_KINDS))


def _playable(color: int, top: int, card: int) -> bool:
    """Official matching rule: same colour, same number/symbol, or any wild."""
    if card >= WILD:
        return True
    if COLOR_OF[card] == color:
        return True
    return top < WILD and RANK_OF[card] == RANK_OF[top]


# PLAYABLE[color * NUM_KINDS + top][card] -> 1 if ``card`` may be played on ``top`` when the
# current colour is ``color``. Wild Draw Four is always "playable": its colour restriction is
# enforced by the challenge, exactly as at a real table (an unchallenged bluff stands).
PLAYABLE: Final[tuple[bytes, ...]] = tuple(
    bytes(_playable(color, top, card) for card in range(NUM_KINDS))
    for color in range(NO_COLOR + 1)
    for top in range(NUM_KINDS)
)

# The same as sets of card ids, intersected with a hand in C.
PLAYABLE_SETS: Final[tuple[frozenset[int], ...]] = tuple(
    frozenset(card for card in range(NUM_KINDS) if row[card]) for row in PLAYABLE
)


def build_deck(deck_2018: bool) -> list[int]:
    """The 108-card deck (112 with the 2018 Wild Shuffle Hands and three blank wilds)."""
    deck: list[int] = []
    for color in range(4):
        base = color * 13
        deck.append(base)
        for rank in range(1, 13):
            deck.append(base + rank)
            deck.append(base + rank)
    deck.extend([WILD] * 4 + [WILD_DRAW_FOUR] * 4)
    if deck_2018:
        deck.extend([WILD_SHUFFLE] + [WILD_CUSTOM] * 3)
    return deck


def parse_card(code: str) -> int:
    """Card id for a code; KeyError if unknown (callers turn it into their own error)."""
    return CODE_TO_CARD[code]
