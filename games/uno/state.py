"""The mutable game state and its exact JSON round-trip.

The state is deliberately a bag of small ints and int lists (see ``cards``) mutated in place by
the engine; it is not meant to be edited by callers. Hidden information (hands, deck order,
seed, RNG) lives here; ``view`` decides what a seat may see.
"""

from __future__ import annotations

import base64
import random
import struct
from collections import Counter
from typing import Any, Final

from .cards import (
    CODE_TO_CARD,
    CODES,
    COLORS,
    DRAW_TWO,
    NO_COLOR,
    WILD,
    WILD_DRAW_FOUR,
    WILD_SHUFFLE,
    build_deck,
)
from .errors import UnoError
from .moves import Move
from .options import Options

# Phases: which mandatory decision the game waits for from ``turn``.
PLAY: Final = 0  # normal turn: play a card or draw
DRAWN: Final = 1  # play the card just drawn, or keep it
CHOOSE_COLOR: Final = 2  # first discard was a Wild: the first player declares the colour
CHALLENGE: Final = 3  # a Wild Draw Four was played on ``turn``: challenge or accept (or stack)
STACK: Final = 4  # stacking: a Draw Two penalty is pending on ``turn``: stack or accept
OVER: Final = 5  # the match is finished
PHASE_NAMES: Final = ("play", "drawn", "color", "challenge", "stack", "over")


class GameState:
    """Complete state of a match. Use the engine functions to change it."""

    __slots__ = (
        "_hand_number",
        "_move_count",
        "_options",
        "_rng",
        "_rng_packed",
        "_scores",
        "_seed",
        "_winner",
        "cache_moves",
        "cache_seat",
        "cache_ver",
        "color",
        "dealer",
        "deck",
        "direction",
        "discard",
        "drawn",
        "hand_moves",
        "hands",
        "last_hand",
        "n",
        "out_of_play",
        "penalty",
        "phase",
        "reveal_hand",
        "reveal_player",
        "reveal_seat",
        "turn",
        "uno_seat",
        "w4_hand",
        "w4_illegal",
        "w4_player",
    )

    def __init__(self, options: Options, seed: int) -> None:
        self._options = options
        self._seed = seed
        self._rng: random.Random | None = None  # made on first use, see ``rng``
        self._rng_packed: list[Any] | None = None  # the stored form of a loaded state's RNG
        self.n = options.players
        self.hands: list[list[int]] = [[] for _ in range(options.players)]
        self.deck: list[int] = []  # the next card drawn is deck[-1]
        self.discard: list[int] = []  # the top card is discard[-1]
        # Cards of the options' deck in no hand, deck or discard pile: 0 in every dealt hand;
        # a ``scenario`` with a short explicit deck leaves some out (see ``check_state``).
        self.out_of_play = 0
        self.color = NO_COLOR
        self.direction = 1  # 1 clockwise (to the left, seat + 1), -1 counterclockwise
        self.turn = 0
        self.dealer = 0
        self.phase = PLAY
        self.penalty = 0  # cards the seat in CHALLENGE/STACK phase would draw on "accept"
        self.w4_player = -1  # who played the Wild Draw Four now open to challenge
        self.w4_illegal = False  # did that player hold a card of the previous colour?
        self.w4_hand: list[int] = []  # that player's hand right after playing it (never mutated)
        # A challenge's reveal: ``reveal_player``'s hand right after its Wild Draw Four, shown
        # to the challenger ``reveal_seat`` only (-1: none) until that seat's next move.
        self.reveal_seat = -1
        self.reveal_player = -1
        self.reveal_hand: list[int] = []  # never mutated in place (copies may share it)
        self.drawn = -1  # the card drawn this turn, in the DRAWN phase
        self.uno_seat = -1  # seat that may be caught for not calling Uno, -1 when none
        self._scores = [0] * options.players
        self._hand_number = 1
        self._move_count = 0
        self.hand_moves = 0
        self._winner: int | None = None
        self.last_hand: dict[str, Any] | None = None
        self.cache_ver = -1  # legal-move cache: valid for (move_count, seat)
        self.cache_seat = -1
        self.cache_moves: tuple[Move, ...] = ()

    # --- public read-only properties -------------------------------------------------------
    @property
    def options(self) -> Options:
        return self._options

    @property
    def seed(self) -> int:
        return self._seed

    @property
    def rng(self) -> random.Random:
        """The match's RNG (``random.Random(seed)`` at the start), made on first use. A loaded
        state keeps its stored form until a shuffle needs the RNG, so the many moves that
        shuffle nothing neither unpack nor re-pack it."""
        if self._rng is None:
            self._rng = random.Random(self._seed)
            if self._rng_packed is not None:
                self._rng.setstate(_unpack_rng(self._rng_packed))
                self._rng_packed = None
        return self._rng

    @property
    def awaiting(self) -> int | None:
        """Seat whose mandatory decision the game waits for; None once the match is over."""
        return None if self.phase == OVER else self.turn

    @property
    def finished(self) -> bool:
        return self.phase == OVER

    @property
    def winner(self) -> int | None:
        return self._winner

    @property
    def scores(self) -> list[int]:
        return list(self._scores)

    @property
    def hand_number(self) -> int:
        return self._hand_number

    @property
    def move_count(self) -> int:
        return self._move_count

    # --- the same facts as the view speaks them (codes and names, not ints) -----------------
    # ``turn`` is the seat whose turn it is (it stays on the last seat once the match is over);
    # ``awaiting`` is the same seat but None once over. ``uno_seat`` is the engine's int (-1
    # when none); ``uno_window`` is the view's name and form (None when none).
    @property
    def top(self) -> str:
        """The top discard's code, e.g. ``"R7"`` (``view["top"]``)."""
        return CODES[self.discard[-1]]

    @property
    def color_name(self) -> str | None:
        """The current colour, e.g. ``"red"``; None before the first colour is chosen
        (``view["color"]``)."""
        return COLORS[self.color] if self.color < NO_COLOR else None

    @property
    def phase_name(self) -> str:
        """One of ``PHASE_NAMES``: play, drawn, color, challenge, stack, over
        (``view["phase"]``)."""
        return PHASE_NAMES[self.phase]

    @property
    def uno_window(self) -> int | None:
        """The seat that may be caught for a missed Uno call, or None (``view["uno_window"]``)."""
        return self.uno_seat if self.uno_seat >= 0 else None

    def hand(self, seat: int) -> list[str]:
        """``seat``'s cards as codes (``view(state, seat)["hand"]``)."""
        return [CODES[c] for c in self.hands[seat]]

    # --- copying and serialisation -----------------------------------------------------------
    def copy(self) -> GameState:
        new = GameState.__new__(GameState)
        for name in GameState.__slots__:
            setattr(new, name, getattr(self, name))
        if self._rng is not None:
            new._rng = random.Random()
            new._rng.setstate(self._rng.getstate())
        new.hands = [list(h) for h in self.hands]
        new.deck = list(self.deck)
        new.discard = list(self.discard)
        new._scores = list(self._scores)
        new.last_hand = last_hand_copy(self.last_hand)
        new.cache_ver = -1
        new.cache_moves = ()
        return new

    def to_json(self) -> dict[str, Any]:
        data = {
            "options": self._options.to_json(),
            "seed": self._seed,
            "rng": self._stored_rng(),
            "hands": [[CODES[c] for c in h] for h in self.hands],
            "deck": [CODES[c] for c in self.deck],
            "discard": [CODES[c] for c in self.discard],
            "color": self.color,
            "direction": self.direction,
            "turn": self.turn,
            "dealer": self.dealer,
            "phase": PHASE_NAMES[self.phase],
            "penalty": self.penalty,
            "w4_player": self.w4_player,
            "w4_illegal": self.w4_illegal,
            "w4_hand": [CODES[c] for c in self.w4_hand],
            "challenge_reveal": self._reveal_json(),
            "drawn": CODES[self.drawn] if self.drawn >= 0 else None,
            "uno_seat": self.uno_seat,
            "scores": list(self._scores),
            "hand_number": self._hand_number,
            "move_count": self._move_count,
            "hand_moves": self.hand_moves,
            "winner": self._winner,
            "last_hand": last_hand_copy(self.last_hand),
        }
        if self.out_of_play:  # only a scenario's state: a dealt game's JSON has no such key
            data["out_of_play"] = self.out_of_play
        return data

    def _reveal_json(self) -> dict[str, Any] | None:
        if self.reveal_seat < 0:
            return None
        return {
            "seat": self.reveal_seat,
            "player": self.reveal_player,
            "hand": [CODES[c] for c in self.reveal_hand],
        }

    def _stored_rng(self) -> list[Any]:
        if self._rng is None and self._rng_packed is not None:
            return list(self._rng_packed)
        version, internal, gauss = self.rng.getstate()
        return _pack_rng(version, internal, gauss)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameState:
        try:
            state = cls(Options.from_json(data["options"]), _whole(data["seed"]))
            state._rng_packed = _checked_rng(data["rng"])
            state.hands = [[CODE_TO_CARD[c] for c in h] for h in data["hands"]]
            state.deck = [CODE_TO_CARD[c] for c in data["deck"]]
            state.discard = [CODE_TO_CARD[c] for c in data["discard"]]
            state.color = _whole(data["color"])
            state.direction = _whole(data["direction"])
            state.turn = _whole(data["turn"])
            state.dealer = _whole(data["dealer"])
            state.phase = PHASE_NAMES.index(data["phase"])
            state.penalty = _whole(data["penalty"])
            state.w4_player = _whole(data["w4_player"])
            state.w4_illegal = bool(data["w4_illegal"])
            # States stored before these keys existed: a pending Wild Draw Four's player is
            # shown as it holds its hand now, and no reveal is open.
            if "w4_hand" in data:
                state.w4_hand = [CODE_TO_CARD[c] for c in data["w4_hand"]]
            elif state.phase == CHALLENGE and 0 <= state.w4_player < len(state.hands):
                state.w4_hand = list(state.hands[state.w4_player])
            reveal = data.get("challenge_reveal")
            if reveal is not None:
                state.reveal_seat = _whole(reveal["seat"])
                state.reveal_player = _whole(reveal["player"])
                state.reveal_hand = [CODE_TO_CARD[c] for c in reveal["hand"]]
            state.drawn = -1 if data["drawn"] is None else CODE_TO_CARD[data["drawn"]]
            state.uno_seat = _whole(data["uno_seat"])
            state._scores = [_whole(s) for s in data["scores"]]
            state._hand_number = _whole(data["hand_number"])
            state._move_count = _whole(data["move_count"])
            state.hand_moves = _whole(data["hand_moves"])
            state._winner = None if data["winner"] is None else _whole(data["winner"])
            state.last_hand = last_hand_copy(data["last_hand"])
            state.out_of_play = _whole(data.get("out_of_play", 0))
        except UnoError:
            raise
        except (KeyError, ValueError, TypeError, AttributeError, struct.error) as exc:
            raise UnoError(f"corrupt game state: {exc!r}") from exc
        check_state(state, "corrupt game state")
        return state


# The Mersenne Twister's state is 625 32-bit words; as a JSON list of numbers it was most of a
# stored game. Packed little-endian and base64-encoded it is a third of the size and much
# faster to store and parse. A list (the older form) is still read.
_MT_WORDS: Final = len(random.Random(0).getstate()[1])


def _pack_rng(version: int, internal: tuple[int, ...], gauss: float | None) -> list[Any]:
    words = base64.b64encode(struct.pack(f"<{len(internal)}I", *internal)).decode("ascii")
    return [version, words, gauss]


def _unpack_rng(packed: list[Any]) -> tuple[Any, ...]:
    version, words, gauss = packed
    return (version, struct.unpack(f"<{_MT_WORDS}I", base64.b64decode(words)), gauss)


def _checked_rng(data: list[Any]) -> list[Any]:
    """The packed form of a stored RNG state, checked now (it is unpacked only when needed):
    what ``random.Random.setstate`` would refuse raises ValueError here."""
    version, internal, gauss = data
    if not isinstance(internal, str):
        internal = _pack_rng(version, tuple(internal), gauss)[1]
    raw = base64.b64decode(internal, validate=True)
    if version != random.Random.VERSION or len(raw) != 4 * _MT_WORDS:
        raise ValueError("RNG state of the wrong version or size")
    (position,) = struct.unpack_from("<I", raw, 4 * (_MT_WORDS - 1))
    if position > _MT_WORDS - 1 or not (gauss is None or isinstance(gauss, float)):
        raise ValueError("RNG state out of range")
    return [version, internal, gauss]


def last_hand_copy(last_hand: dict[str, Any] | None) -> dict[str, Any] | None:
    """A copy of the last hand's summary that nobody else holds (its one list included)."""
    if last_hand is None:
        return None
    return {key: list(v) if isinstance(v, list) else v for key, v in last_hand.items()}


def _whole(value: object) -> int:
    """An integer from JSON, as written (not a float, string or boolean to coerce)."""
    if type(value) is not int:
        raise UnoError(f"corrupt game state: {value!r} is not a whole number")
    return value


# Every card of the deck (with or without the 2018 cards), sorted, and how many copies it has.
_FULL_DECK: Final = {flag: sorted(build_deck(flag)) for flag in (False, True)}
_COPIES: Final = {flag: Counter(build_deck(flag)) for flag in (False, True)}


def check_state(state: GameState, what: str) -> None:
    """Refuse a state the rules could not continue from (a stored state edited by hand, an
    impossible ``scenario``): raise ``UnoError("{what}: {the problem}")``.

    ``from_json`` runs it on every load (every move the server plays), so the common case is
    kept to a few comparisons and one sort of the cards in play."""
    problem = _seats_problem(state) or _phase_problem(state) or _cards_problem(state)
    if problem:
        raise UnoError(f"{what}: {problem}")


def _is_seat(value: object, n: int) -> bool:
    return type(value) is int and 0 <= value < n


def _seats_problem(state: GameState) -> str | None:
    n = state.n
    if len(state.hands) != n:
        return f"{len(state.hands)} hands for {n} players: it needs one hand per player"
    scores = state._scores
    if len(scores) != n:
        return f"{len(scores)} scores for {n} players: it needs one score per player"
    if not all(type(s) is int and s >= 0 for s in scores):
        return f"scores {scores!r}: each must be a whole number, 0 or more"
    if not state.discard:
        return "no card on the discard pile"
    if not (type(state.color) is int and 0 <= state.color <= NO_COLOR):
        return f"colour {state.color!r} is not a colour"
    if type(state.direction) is not int or state.direction not in (1, -1):
        return f"direction {state.direction!r}: it must be 1 (clockwise) or -1"
    if not _is_seat(state.turn, n):
        return f"turn {state.turn!r} is not a seat of this {n}-player game"
    if not _is_seat(state.dealer, n):
        return f"dealer {state.dealer!r} is not a seat of this {n}-player game"
    if not (-1 <= state.uno_seat < n and -1 <= state.w4_player < n):
        return "the Uno window's seat or the Wild Draw Four player is not a seat"
    if state.reveal_seat >= 0 and not (
        state.reveal_seat < n
        and 0 <= state.reveal_player < n
        and state.reveal_player != state.reveal_seat
        and state.reveal_hand
    ):
        return "a challenge reveal needs a challenger, another seat's Wild Draw Four and a hand"
    if state.reveal_seat < 0 and (state.reveal_seat < -1 or state.reveal_hand):
        return "a challenge reveal without a challenger among the seats"
    if state._winner is not None and not 0 <= state._winner < n:
        return f"winner {state._winner!r} is not a seat"
    if not (state.last_hand is None or isinstance(state.last_hand, dict)):
        return "the last hand's summary is not an object"
    if state.out_of_play < 0:
        return "a negative number of cards out of play"
    return None


def _phase_problem(state: GameState) -> str | None:
    """What the phase needs: the card just drawn, a pending penalty."""
    phase = state.phase
    if phase in (PLAY, OVER):
        return None
    if phase == DRAWN:
        if not (state.drawn >= 0 and state.drawn in state.hands[state.turn]):
            return f"phase drawn: seat {state.turn} on turn does not hold a drawn card"
    elif phase == CHALLENGE:
        w4 = state.w4_player
        if not (w4 >= 0 and w4 != state.turn and state.penalty >= 4):
            return "phase challenge: no Wild Draw Four (player and penalty) is pending"
        if state.discard[-1] != WILD_DRAW_FOUR:
            return "phase challenge: the top discard is not a Wild Draw Four"
    elif phase == STACK:
        top = state.discard[-1]
        if not (state._options.stacking and state.penalty >= 2 and top < WILD
                and top % 13 == DRAW_TWO):
            return "phase stack: no Draw Two penalty (stacking, penalty, top card) is pending"
    return None


def _cards_problem(state: GameState) -> str | None:
    """Hands, deck and discard hold the options' deck: each card as often as the deck has it,
    all of them but ``out_of_play`` (0 in a dealt game: all of them)."""
    deck_2018 = state._options.deck_2018
    full = _FULL_DECK[deck_2018]
    cards = state.deck + state.discard
    for hand in state.hands:
        cards += hand
    if not state.out_of_play and len(cards) == len(full):
        cards.sort()
        if cards == full:
            return None
    copies = _COPIES[deck_2018]
    for card, count in sorted(Counter(cards).items()):
        if count > copies[card]:
            if not copies[card]:
                kind = "Wild Shuffle Hands" if card == WILD_SHUFFLE else "blank Wild"
                return f"{CODES[card]} ({kind}) is only in the 2018 deck, and deck_2018 is off"
            return f"{count} copies of {CODES[card]}: the deck has {copies[card]}"
    if len(cards) + state.out_of_play != len(full):
        return (
            f"{len(cards)} cards in the hands, deck and discard pile ({state.out_of_play} out "
            f"of play): the deck has {len(full)}"
        )
    return None
