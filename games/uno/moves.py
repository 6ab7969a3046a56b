"""Moves: the public, JSON-serialisable actions a seat can take.

A move never carries hidden information (a ``draw`` does not name the drawn card), so the
move log of a game is public. Moves are validated for *shape* on construction
(``MalformedMove``); whether a move is *allowed* is decided by the engine (``IllegalMove``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .cards import CODE_TO_CARD, CODES, COLOR_INDEX, COLORS, IS_WILD, NUM_KINDS, RANK_OF
from .errors import MalformedMove

PLAY: Final = "play"  # play ``card`` (+ ``color`` for wilds, ``target`` for Seven-O 7s, ``uno``)
DRAW: Final = "draw"  # draw from the deck (a pass when deck and discard are both exhausted)
KEEP: Final = "keep"  # keep the card just drawn (playable or not); the turn ends
CHALLENGE: Final = "challenge"  # challenge the Wild Draw Four just played on you
ACCEPT: Final = "accept"  # take the pending penalty (Wild Draw Four, or a stacked draw)
CATCH: Final = "catch"  # catch ``target``, who played the penultimate card without calling Uno
UNO: Final = "uno"  # the offender's late Uno call, closing the catch window
COLOR: Final = "color"  # choose the first colour when the first discard is a Wild

MOVE_TYPES: Final = frozenset({PLAY, DRAW, KEEP, CHALLENGE, ACCEPT, CATCH, UNO, COLOR})
_FIELDS: Final = frozenset({"type", "card", "color", "target", "uno"})
_MAX_SEAT: Final = 9


@dataclass(frozen=True, slots=True)
class Move:
    """One action. Construct directly or with ``Move.from_json``; both validate the shape."""

    type: str
    card: str | None = None
    color: str | None = None
    target: int | None = None
    uno: bool = False

    def __post_init__(self) -> None:
        _check_shape(self)

    @classmethod
    def from_json(cls, data: object) -> Move:
        if not isinstance(data, dict):
            raise MalformedMove("a move must be a JSON object")
        for key in data:
            if key not in _FIELDS:
                raise MalformedMove(f"unknown move field {key!r}")
        if "type" not in data:
            raise MalformedMove("a move needs a 'type'")
        for key in ("card", "color", "target"):  # an absent field is left out, not null
            if key in data and data[key] is None:
                raise MalformedMove(f"'{key}' must not be null: leave it out")
        uno = data.get("uno", False)
        if type(uno) is not bool:
            raise MalformedMove("'uno' must be a boolean")
        return cls(
            type=data["type"],
            card=data.get("card"),
            color=data.get("color"),
            target=data.get("target"),
            uno=uno,
        )

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"type": self.type}
        if self.card is not None:
            out["card"] = self.card
        if self.color is not None:
            out["color"] = self.color
        if self.target is not None:
            out["target"] = self.target
        if self.uno:
            out["uno"] = True
        return out


def _check_shape(move: Move) -> None:
    kind = move.type
    if not isinstance(kind, str) or kind not in MOVE_TYPES:
        raise MalformedMove(f"unknown move type {kind!r}")
    if move.card is not None and (not isinstance(move.card, str) or move.card not in CODE_TO_CARD):
        raise MalformedMove(f"unknown card code {move.card!r}")
    if move.color is not None and (
        not isinstance(move.color, str) or move.color not in COLOR_INDEX
    ):
        raise MalformedMove(f"unknown colour {move.color!r}; use one of {', '.join(COLORS)}")
    if move.target is not None and (
        type(move.target) is not int or not 0 <= move.target <= _MAX_SEAT
    ):
        raise MalformedMove("'target' must be a seat number 0-9")
    if type(move.uno) is not bool:
        raise MalformedMove("'uno' must be a boolean")
    if kind == PLAY:
        _check_play_shape(move)
        return
    if move.card is not None:
        raise MalformedMove(f"a {kind!r} move takes no card")
    if move.uno:
        raise MalformedMove("'uno' is only called together with a play")
    if kind == COLOR:
        if move.color is None or move.target is not None:
            raise MalformedMove("a 'color' move takes exactly a colour")
    elif kind == CATCH:
        if move.target is None or move.color is not None:
            raise MalformedMove("a 'catch' move takes exactly a target seat")
    elif move.color is not None or move.target is not None:
        raise MalformedMove(f"a {kind!r} move takes no other field")


def _check_play_shape(move: Move) -> None:
    if move.card is None:
        raise MalformedMove("a 'play' move needs a card")
    card = CODE_TO_CARD[move.card]
    if IS_WILD[card] and move.color is None:
        raise MalformedMove("a wild card needs the colour you declare")
    if not IS_WILD[card] and move.color is not None:
        raise MalformedMove("only a wild card takes a colour")
    if move.target is not None and (IS_WILD[card] or RANK_OF[card] != 7):
        raise MalformedMove("only a 7 (Seven-O) takes a target")


# Interned moves: the engine hands out these shared objects so legal-move generation does not
# allocate, and ``apply`` can validate by identity (``in`` checks identity before equality).
DRAW_MOVE: Final = Move(DRAW)
KEEP_MOVE: Final = Move(KEEP)
CHALLENGE_MOVE: Final = Move(CHALLENGE)
ACCEPT_MOVE: Final = Move(ACCEPT)
UNO_MOVE: Final = Move(UNO)
COLOR_MOVES: Final = tuple(Move(COLOR, color=c) for c in COLORS)
CATCH_MOVES: Final = tuple(Move(CATCH, target=s) for s in range(_MAX_SEAT + 1))


def _play_variants(card: int, uno: bool) -> tuple[Move, ...]:
    if IS_WILD[card]:
        return tuple(Move(PLAY, card=CODES[card], color=c, uno=uno) for c in COLORS)
    return (Move(PLAY, card=CODES[card], uno=uno),)


# PLAY_MOVES[card]: the plays of that card without an Uno call; PLAY_MOVES_UNO[card]: the same
# plus the variants that call Uno (offered when the play leaves exactly one card).
PLAY_MOVES: Final = tuple(_play_variants(c, False) for c in range(NUM_KINDS))
PLAY_MOVES_UNO: Final = tuple(
    _play_variants(c, False) + _play_variants(c, True) for c in range(NUM_KINDS)
)
# SEVEN_MOVES[(card, target, uno)]: Seven-O plays of a 7 naming the swap target.
SEVEN_MOVES: Final = {
    (card, target, uno): Move(PLAY, card=CODES[card], target=target, uno=uno)
    for card in range(NUM_KINDS)
    if not IS_WILD[card] and RANK_OF[card] == 7
    for target in range(_MAX_SEAT + 1)
    for uno in (False, True)
}
