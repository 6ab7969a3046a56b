"""The rules engine: ``new_game``, ``legal_moves``, ``apply``, ``default_move``.

Design for speed: the state is mutated in place, cards are small ints, matching is a lookup in
``cards.PLAYABLE``, moves are interned objects from ``moves``, and ``legal_moves`` fills a
per-(move_count, seat) cache that ``apply`` reuses to validate a move (identity ``in`` check), so
a random player costs one move generation per turn.
"""

from __future__ import annotations

import struct
from random import Random
from typing import Final

from .cards import (
    CODE_TO_CARD,
    CODES,
    COLOR_INDEX,
    COLOR_OF,
    COLORS,
    DRAW_TWO,
    IS_NUMBER,
    NO_COLOR,
    NUM_KINDS,
    PLAYABLE,
    PLAYABLE_SETS,
    POINTS,
    POINTS_2022,
    RANK_OF,
    REVERSE,
    SKIP,
    WILD,
    WILD_DRAW_FOUR,
    WILD_SHUFFLE,
    build_deck,
)
from .errors import IllegalMove, MalformedMove, UnoError
from .moves import (
    ACCEPT,
    ACCEPT_MOVE,
    CATCH,
    CATCH_MOVES,
    CHALLENGE_MOVE,
    COLOR,
    COLOR_MOVES,
    DRAW,
    DRAW_MOVE,
    KEEP,
    KEEP_MOVE,
    PLAY_MOVES,
    PLAY_MOVES_UNO,
    SEVEN_MOVES,
    UNO,
    UNO_MOVE,
    Move,
)
from .moves import CHALLENGE as CHALLENGE_TYPE
from .moves import PLAY as PLAY_TYPE
from .options import Options
from .state import CHALLENGE, CHOOSE_COLOR, DRAWN, OVER, PLAY, STACK, GameState

HAND_SIZE: Final = 7
# Every hand ends: after this many applied moves in one hand it stops with no winner and no
# points (sensible random players stay under 1,000, see docs/rules.md; a stalled table gets here).
HAND_MOVE_CAP: Final = 5000
# Every match ends: after this many hands the highest score wins (None on a tie).
MAX_HANDS: Final = 1000

_DECKS: Final = {False: tuple(build_deck(False)), True: tuple(build_deck(True))}


# --- randomness ----------------------------------------------------------------------------
# A shuffle sorts the cards on independent random keys, read as little-endian 64-bit integers
# from ``rng.randbytes``. For speed each key is re-packed into a float in [1, 2): its top 40 bits
# become the mantissa's high bits, the card id rides along in the lowest byte, and the sign and
# exponent are fixed so every key is finite. Sorting a plain list of floats takes CPython's fast
# float-compare path and the whole shuffle runs in C (no key function, no Python loop).
_KEY: Final = 8  # bytes per key
_KEY_STRUCTS: dict[int, struct.Struct] = {}  # count -> little-endian doubles, built on demand


def shuffle(rng: Random, cards: list[int]) -> None:
    """Shuffle ``cards`` (ids < 256) in place by sorting them on independent random keys.

    The order is that of the keys' top 40 bits; two keys equal there (probability < 1e-8 per
    shuffle of 112 cards) are ordered by card id instead of at random, a negligible bias. The
    permutation depends on the seed only, not on the platform's byte order.
    """
    count = len(cards)
    if count < 2:
        return
    # Shift the random bytes down by two so that key bytes 3..7 land on float bytes 1..5.
    raw = bytearray(rng.randbytes(_KEY * count)[2:] + bytes(2))
    raw[0::_KEY] = bytes(cards)
    raw[6::_KEY] = b"\xf0" * count  # exponent of 1.0 (low bits), top mantissa bits zero
    raw[7::_KEY] = b"\x3f" * count  # sign and exponent of 1.0 (high bits)
    packer = _KEY_STRUCTS.get(count)
    if packer is None:
        packer = _KEY_STRUCTS[count] = struct.Struct(f"<{count}d")
    keys = list(packer.unpack(raw))
    keys.sort()
    cards[:] = packer.pack(*keys)[0::_KEY]


# --- game set-up ---------------------------------------------------------------------------
def new_game(options: Options, seed: int) -> GameState:
    """A new match; the first dealer is drawn at random from the seed, the hand is dealt."""
    if not isinstance(options, Options):
        raise UnoError("options must be an Options instance")
    if type(seed) is not int:
        raise UnoError("seed must be an integer")
    state = GameState(options, seed)
    _start_hand(state, state.rng.randrange(options.players))
    return state


def _start_hand(state: GameState, dealer: int) -> None:
    opts = state._options
    dealt = state.n * HAND_SIZE
    rng = state.rng
    deck = list(_DECKS[opts.deck_2018])
    shuffle(rng, deck)
    state.hands = [deck[i : i + HAND_SIZE] for i in range(0, dealt, HAND_SIZE)]
    del deck[:dealt]
    while True:
        top = deck.pop()
        # A Wild Draw Four (and, with the 2022 start, any non-number card) goes back into the
        # deck, which is reshuffled before flipping again.
        if top == WILD_DRAW_FOUR or (opts.start_2022 and not IS_NUMBER[top]):
            deck.append(top)
            shuffle(rng, deck)
            continue
        break
    state.deck = deck
    state.discard = [top]
    state.out_of_play = 0  # the whole deck is dealt (a scenario's may have left some out)
    state.dealer = dealer
    state.direction = 1
    state.phase = PLAY
    state.penalty = 0
    state.w4_player = -1
    state.w4_illegal = False
    state.w4_hand = []
    state.drawn = -1
    state.uno_seat = -1
    state.hand_moves = 0
    _first_discard_effect(state, top, dealer)


def _first_discard_effect(state: GameState, top: int, dealer: int) -> None:
    """The 'effect as first discard' column of the official table."""
    n = state.n
    first = (dealer + 1) % n
    state.turn = first
    if top >= WILD:  # Wild (and the 2018 wilds): the first player declares the colour
        state.color = NO_COLOR
        state.phase = CHOOSE_COLOR
        return
    state.color = COLOR_OF[top]
    rank = RANK_OF[top]
    if rank == SKIP:
        state.turn = (dealer + 2) % n
    elif rank == REVERSE:
        state.direction = -1
        state.turn = dealer
    elif rank == DRAW_TWO:  # never stackable: nobody played it
        _draw(state, first, 2)
        state.turn = (dealer + 2) % n


# --- drawing -------------------------------------------------------------------------------
def _refill(state: GameState) -> bool:
    """Deck ran out: keep the top discard, shuffle the rest into the deck. False if nothing."""
    discard = state.discard
    if len(discard) <= 1:
        return False
    rest = discard[:-1]
    del discard[:-1]
    shuffle(state.rng, rest)
    state.deck.extend(rest)
    return True


def _draw(state: GameState, seat: int, count: int) -> int:
    """Move up to ``count`` cards to ``seat``; fewer only when deck and discard are exhausted."""
    deck = state.deck
    hand = state.hands[seat]
    if 0 < count <= len(deck):  # the common case, without a Python loop: no refill needed
        drawn = deck[-count:]
        del deck[-count:]
        drawn.reverse()  # the deck's last card is its top: drawn first
        hand += drawn
        return count
    got = 0
    while got < count:
        if not deck and not _refill(state):
            break
        hand.append(deck.pop())
        got += 1
    return got


# --- legal moves ---------------------------------------------------------------------------
def legal_moves(state: GameState, seat: int) -> list[Move]:
    """Every legal move for ``seat`` now, in-turn and out-of-turn (catch, uno, jump-in).

    A held Wild Draw Four is offered even as a bluff (legal; only a challenge punishes it):
    ``helpers.is_bluff`` tells it apart, ``helpers.honest_moves`` leaves it out."""
    # The cache (validating ``apply``) is a tuple, so the list handed out can be the freshly
    # built one: callers may mutate it without touching the cache, and no copy is made.
    move_count = state._move_count
    # ``type(seat) is int``: 1.0 and True equal 1, but only a real seat number may take the
    # fast paths (``_fill_cache`` refuses anything else).
    if state.cache_ver == move_count and state.cache_seat == seat and type(seat) is int:
        return list(state.cache_moves)
    if seat != state.turn or type(seat) is not int or state._options.seven_o:
        return _fill_cache(state, seat)
    # The hot paths (an ordinary turn, or the card just drawn), inlined: the seat is valid since
    # it is the turn. Other phases and Seven-O take the general path.
    phase = state.phase
    hand = state.hands[seat]
    variants = PLAY_MOVES_UNO if len(hand) == 2 else PLAY_MOVES
    moves: list[Move]
    if phase == PLAY:
        moves = []
        for card in PLAYABLE_SETS[state.color * NUM_KINDS + state.discard[-1]].intersection(hand):
            moves += variants[card]
        moves.append(DRAW_MOVE)
    elif phase == DRAWN:  # the drawn card may be played only if it matches; keep always
        drawn = state.drawn
        if PLAYABLE[state.color * NUM_KINDS + state.discard[-1]][drawn]:
            moves = [*variants[drawn], KEEP_MOVE]
        else:
            moves = [KEEP_MOVE]
    else:
        return _fill_cache(state, seat)
    uno_seat = state.uno_seat
    if uno_seat >= 0:
        moves.append(UNO_MOVE if uno_seat == seat else CATCH_MOVES[uno_seat])
    state.cache_moves = tuple(moves)
    state.cache_ver = move_count
    state.cache_seat = seat
    return moves


def _fill_cache(state: GameState, seat: int) -> list[Move]:
    """Generate ``seat``'s legal moves, cache them for ``apply``; return a list of one's own."""
    if type(seat) is not int or not 0 <= seat < state.n:
        raise IllegalMove(f"there is no seat {seat!r} in this game")
    if seat == state.turn and state.phase == PLAY and not state._options.seven_o:
        moves = _ordinary_turn(state, seat)
    else:
        moves = _generate(state, seat)
    state.cache_moves = tuple(moves)
    state.cache_ver = state._move_count
    state.cache_seat = seat
    return moves


def _ordinary_turn(state: GameState, seat: int) -> list[Move]:
    hand = state.hands[seat]
    playable = PLAYABLE_SETS[state.color * NUM_KINDS + state.discard[-1]].intersection(hand)
    moves: list[Move] = []
    variants = PLAY_MOVES_UNO if len(hand) == 2 else PLAY_MOVES
    for card in playable:
        moves += variants[card]
    moves.append(DRAW_MOVE)
    uno_seat = state.uno_seat
    if uno_seat >= 0:
        moves.append(UNO_MOVE if uno_seat == seat else CATCH_MOVES[uno_seat])
    return moves


def _generate(state: GameState, seat: int) -> list[Move]:
    phase = state.phase
    if phase == OVER:
        return []
    hand = state.hands[seat]
    moves: list[Move]
    if seat == state.turn:
        if phase == PLAY:
            moves = _playable_moves(state, seat, hand)
            moves.append(DRAW_MOVE)
        elif phase == DRAWN:
            drawn = state.drawn
            table = PLAYABLE[state.color * NUM_KINDS + state.discard[-1]]
            moves = _variants(state, seat, drawn) if table[drawn] else []
            moves.append(KEEP_MOVE)
        elif phase == CHOOSE_COLOR:
            moves = list(COLOR_MOVES)
        elif phase == CHALLENGE:
            moves = [CHALLENGE_MOVE, ACCEPT_MOVE]
            if state._options.stacking and WILD_DRAW_FOUR in hand:
                moves += _variants(state, seat, WILD_DRAW_FOUR)
        else:  # STACK: only a Draw Two (any colour) may be stacked on a Draw Two
            moves = [ACCEPT_MOVE]
            for card in set(hand):
                if card < WILD and card % 13 == DRAW_TWO:
                    moves += _variants(state, seat, card)
    else:
        moves = []
        if phase == PLAY and state._options.jump_in:
            top = state.discard[-1]
            if top < WILD and top in hand:  # Jump-In: the identical coloured card
                moves = _variants(state, seat, top)
    uno_seat = state.uno_seat
    if uno_seat >= 0:
        moves.append(UNO_MOVE if uno_seat == seat else CATCH_MOVES[uno_seat])
    return moves


def _playable_moves(state: GameState, seat: int, hand: list[int]) -> list[Move]:
    table = PLAYABLE[state.color * NUM_KINDS + state.discard[-1]]
    moves: list[Move] = []
    if state._options.seven_o:
        for card in set(hand):
            if table[card]:
                moves += _variants(state, seat, card)
        return moves
    variants = PLAY_MOVES_UNO if len(hand) == 2 else PLAY_MOVES
    for card in set(hand):
        if table[card]:
            moves += variants[card]
    return moves


def _variants(state: GameState, seat: int, card: int) -> list[Move]:
    """All plays of ``card`` by ``seat``: colour choices, Uno call or not, Seven-O targets."""
    size = len(state.hands[seat])
    unos = (False, True) if size == 2 else (False,)
    if state._options.seven_o and size > 1 and card < WILD and card % 13 == 7:
        return [
            SEVEN_MOVES[(card, target, uno)]
            for target in range(state.n)
            if target != seat
            for uno in unos
        ]
    return list((PLAY_MOVES_UNO if size == 2 else PLAY_MOVES)[card])


# --- applying moves ------------------------------------------------------------------------
def apply(state: GameState, seat: int, move: Move) -> None:
    """Apply ``move`` by ``seat``; raises without mutating anything if it is not legal."""
    move_count = state._move_count
    if state.cache_ver != move_count or state.cache_seat != seat or type(seat) is not int:
        if not isinstance(move, Move):
            raise MalformedMove("a move must be a Move (use Move.from_json for JSON)")
        _fill_cache(state, seat)
    legal_now = state.cache_moves
    # Interned moves are found by identity; an equal Move (e.g. from JSON) by equality.
    for legal in legal_now:
        if legal is move:
            break
    else:
        if not isinstance(move, Move):
            raise MalformedMove("a move must be a Move (use Move.from_json for JSON)")
        if move not in legal_now:
            raise IllegalMove(_why_illegal(state, seat, move))
    state._move_count = move_count + 1
    state.hand_moves += 1
    if state.reveal_seat == seat:  # a challenger sees the hand until its next move
        _end_reveal(state)
    kind = move.type
    if kind == PLAY_TYPE:
        state.uno_seat = -1  # any move but catch/uno closes the Uno catch window
        _play(state, seat, CODE_TO_CARD[move.card], move)  # type: ignore[index]
    elif kind == DRAW:
        state.uno_seat = -1
        _draw_move(state, seat)
    else:
        _execute_other(state, seat, move)
    if state.hand_moves >= HAND_MOVE_CAP and state.phase != OVER:
        _end_hand(state, -1)


def _execute_other(state: GameState, seat: int, move: Move) -> None:
    kind = move.type
    if kind == CATCH:
        _draw(state, state.uno_seat, 2)
        state.uno_seat = -1
        return
    state.uno_seat = -1
    if kind == KEEP:
        _pass_turn(state, seat)
    elif kind == COLOR:
        state.color = COLOR_INDEX[move.color]  # type: ignore[index]
        state.phase = PLAY
    elif kind == CHALLENGE_TYPE:
        _challenge(state)
    elif kind == ACCEPT:
        _accept(state)


def _pass_turn(state: GameState, seat: int) -> None:
    state.turn = (seat + state.direction) % state.n
    state.phase = PLAY
    state.drawn = -1


def _draw_move(state: GameState, seat: int) -> None:
    """A ``draw``: one card, then the same seat decides to play it (if it matches) or keep it.

    The seat stays on turn in the DRAWN phase whether or not the card is playable, so nobody
    else learns which: at a table the drawer decides with the card unseen by the others.
    ``draw_until_playable`` draws until a card matches. Only when nothing could be drawn
    (deck and discard exhausted, or exhausted before a match came) does the turn pass."""
    hand = state.hands[seat]
    table = PLAYABLE[state.color * NUM_KINDS + state.discard[-1]]
    deck = state.deck
    until_playable = state._options.draw_until_playable
    while True:
        if deck:
            card = deck.pop()
            hand.append(card)
        elif _draw(state, seat, 1):
            card = hand[-1]
        else:  # deck and discard exhausted: the draw is a pass
            break
        if not until_playable or table[card]:
            state.phase = DRAWN
            state.drawn = card
            return
    # _pass_turn without its resets: a draw is only legal in the PLAY phase (no drawn card).
    state.turn = (seat + state.direction) % state.n


def _play(state: GameState, seat: int, card: int, move: Move) -> None:
    hand = state.hands[seat]
    hand.remove(card)
    state.discard.append(card)
    phase = state.phase
    prev_color = state.color
    state.drawn = -1
    state.color = COLOR_INDEX[move.color] if card >= WILD else card // 13  # type: ignore[index]
    if not hand:
        state.turn = seat  # a Jump-In takes the turn
        _go_out(state, seat, card, phase)
        return
    state.phase = PLAY
    rank = RANK_OF[card]
    if rank < 10 and not state._options.seven_o:
        # The common case, kept short: a number card passes the turn and touches no hand.
        state.turn = (seat + state.direction) % state.n
        if len(hand) == 1 and not move.uno:
            state.uno_seat = seat
        return
    penultimate = len(hand) == 1
    _card_effect(state, seat, card, move, phase, prev_color)
    # Seven-O swaps and Wild Shuffle Hands may have changed the hand: look it up again.
    if penultimate and not move.uno and len(state.hands[seat]) == 1:
        state.uno_seat = seat


def _card_effect(
    state: GameState, seat: int, card: int, move: Move, phase: int, prev_color: int
) -> None:
    """Effect of a card that did not end the hand; sets the next turn (and phase)."""
    hands = state.hands
    n = state.n
    d = state.direction
    rank = RANK_OF[card]
    if rank < 10:  # Seven-O numbers
        if rank == 7:
            target = move.target
            assert target is not None
            hands[seat], hands[target] = hands[target], hands[seat]
        elif rank == 0:
            state.hands = [hands[(i - d) % n] for i in range(n)]
        state.turn = (seat + d) % n
    elif rank == SKIP:
        state.turn = (seat + 2 * d) % n
    elif rank == REVERSE:
        d = state.direction = -d
        state.turn = seat if n == 2 else (seat + d) % n  # two players: acts as a Skip
    elif rank == DRAW_TWO:
        victim = (seat + d) % n
        if state._options.stacking:
            state.penalty = (state.penalty if phase == STACK else 0) + 2
            state.turn = victim
            state.phase = STACK
        else:
            _draw(state, victim, 2)
            state.turn = (victim + d) % n
    elif card == WILD_DRAW_FOUR:
        state.w4_illegal = prev_color in [COLOR_OF[c] for c in hands[seat]]
        state.w4_hand = list(hands[seat])  # what a challenge shows the challenger
        state.w4_player = seat
        state.penalty = (state.penalty if phase == CHALLENGE else 0) + 4
        state.turn = (seat + d) % n
        state.phase = CHALLENGE
    else:
        if card == WILD_SHUFFLE:
            _shuffle_hands(state, seat)
        state.turn = (seat + d) % n


def _shuffle_hands(state: GameState, seat: int) -> None:
    """Wild Shuffle Hands: all hands are shuffled and re-dealt from the player's left."""
    n = state.n
    pool = [card for hand in state.hands for card in hand]
    shuffle(state.rng, pool)
    hands: list[list[int]] = [[] for _ in range(n)]
    for i, card in enumerate(pool):
        hands[(seat + 1 + i) % n].append(card)
    state.hands = hands


def _go_out(state: GameState, seat: int, card: int, phase: int) -> None:
    """Last card played: a Draw Two / Wild Draw Four still makes the next player draw."""
    stacked = state.penalty if phase in (STACK, CHALLENGE) else 0
    count = 0
    if card == WILD_DRAW_FOUR:
        count = 4 + stacked
    elif card < WILD and card % 13 == DRAW_TWO:
        count = 2 + stacked
    if count:
        _draw(state, (seat + state.direction) % state.n, count)
    state.penalty = 0
    _end_hand(state, seat)


def _challenge(state: GameState) -> None:
    challenger = state.turn
    # The challenged player privately shows the challenger the hand it held right after the
    # Wild Draw Four (``view`` shows it to the challenger only, until its next move).
    state.reveal_seat = challenger
    state.reveal_player = state.w4_player
    state.reveal_hand = state.w4_hand
    if state.w4_illegal:  # the player held the previous colour: they draw 4, challenger plays
        _draw(state, state.w4_player, 4)
        state.phase = PLAY
    else:
        _draw(state, challenger, state.penalty + 2)
        _pass_turn(state, challenger)
    _clear_penalty(state)


def _accept(state: GameState) -> None:
    victim = state.turn
    _draw(state, victim, state.penalty)
    _pass_turn(state, victim)
    _clear_penalty(state)


def _clear_penalty(state: GameState) -> None:
    state.penalty = 0
    state.w4_player = -1
    state.w4_illegal = False
    state.w4_hand = []


def _end_reveal(state: GameState) -> None:
    state.reveal_seat = -1
    state.reveal_player = -1
    state.reveal_hand = []


def _end_hand(state: GameState, winner: int) -> None:
    """Score the hand; deal the next one or finish the match. ``winner`` -1: turn cap hit."""
    opts = state.options
    table = POINTS_2022 if opts.start_2022 else POINTS
    hand_points = [sum([table[c] for c in hand]) for hand in state.hands]
    points = sum(hand_points) if winner >= 0 else 0
    if winner >= 0:
        state._scores[winner] += points
    state.last_hand = {
        "hand_number": state.hand_number,
        "winner": winner if winner >= 0 else None,
        "points": points,
        "reason": "out" if winner >= 0 else "turn_cap",
        "hand_points": hand_points,
    }
    state.uno_seat = -1
    _end_reveal(state)  # a reveal lasts no longer than its hand
    if winner >= 0 and (opts.single_hand or state._scores[winner] >= opts.target_score):
        state._winner = winner
        state.phase = OVER
    elif opts.single_hand:
        state.phase = OVER
    elif state.hand_number >= MAX_HANDS:
        best = max(state._scores)
        leaders = [s for s, score in enumerate(state._scores) if score == best]
        state._winner = leaders[0] if len(leaders) == 1 else None
        state.phase = OVER
    else:
        state._hand_number += 1
        _start_hand(state, (state.dealer + 1) % state.n)  # the deal passes to the left


# --- server helpers ------------------------------------------------------------------------
def default_move(state: GameState, seat: int) -> Move:
    """The move the server makes for ``seat`` when its clock runs out (always legal)."""
    if state.phase == OVER or seat != state.turn:
        raise IllegalMove(f"seat {seat} has no pending decision")
    phase = state.phase
    if phase == PLAY:
        return DRAW_MOVE
    if phase == DRAWN:
        return KEEP_MOVE
    if phase == CHOOSE_COLOR:
        counts = [0] * 5
        for card in state.hands[seat]:
            counts[COLOR_OF[card]] += 1
        best = max(range(4), key=lambda c: (counts[c], -c))  # most held, ties to R, Y, G, B
        return COLOR_MOVES[best]
    return ACCEPT_MOVE  # challenge window or stacked penalty: take the cards, never challenge


# --- explanations for illegal moves (error path only) --------------------------------------
def _why_illegal(state: GameState, seat: int, move: Move) -> str:
    if state.phase == OVER:
        return "the match is over"
    kind = move.type
    if kind == CATCH:
        return _why_catch(state, seat, move)
    if kind == UNO:
        return "you have no missed Uno call to make up"
    if seat != state.turn:
        if kind == PLAY_TYPE and state._options.jump_in:
            if state.phase != PLAY:
                return "you may only jump in on an ordinary turn, not while a decision is pending"
            return "out of turn you may only jump in with the exact card on top of the pile"
        return f"it is not your turn (waiting for seat {state.turn})"
    phase_reason = _why_phase(state, move)
    if phase_reason:
        return phase_reason
    if kind == PLAY_TYPE:
        return _why_play(state, seat, move)
    return f"you cannot {kind} now"


def _why_catch(state: GameState, seat: int, move: Move) -> str:
    if state.uno_seat < 0:
        return "nobody can be caught for a missed Uno call now"
    if seat == state.uno_seat:
        return "you cannot catch yourself"
    return f"seat {move.target} cannot be caught; seat {state.uno_seat} can"


def _why_phase(state: GameState, move: Move) -> str | None:
    phase = state.phase
    kind = move.type
    if phase == CHOOSE_COLOR and kind != COLOR:
        return "choose the first colour with a 'color' move"
    if phase == CHALLENGE and kind not in (CHALLENGE_TYPE, ACCEPT, PLAY_TYPE):
        return "a Wild Draw Four was played on you: challenge or accept"
    if phase == CHALLENGE and kind == PLAY_TYPE and not state._options.stacking:
        return "a Wild Draw Four was played on you: challenge or accept"
    if phase == STACK and kind not in (ACCEPT, PLAY_TYPE):
        return "a Draw Two penalty is pending: stack a Draw Two or accept"
    if phase == DRAWN and kind == PLAY_TYPE and move.card != CODES[state.drawn]:
        return "after drawing you may only play the card you drew, or keep it"
    if phase == DRAWN and kind not in (PLAY_TYPE, KEEP):
        return "play the card you drew or keep it"
    if phase == PLAY and kind not in (PLAY_TYPE, DRAW):
        return f"there is nothing to {kind} now: play a card or draw"
    return None


def _why_play(state: GameState, seat: int, move: Move) -> str:
    hand = state.hands[seat]
    card = CODE_TO_CARD[move.card]  # type: ignore[index]
    if card not in hand:
        return f"you do not hold {move.card}"
    if state.phase == STACK:
        return "only a Draw Two can be stacked on a Draw Two"
    if state.phase == CHALLENGE:
        return "only a Wild Draw Four can be stacked on a Wild Draw Four"
    if not PLAYABLE[state.color * NUM_KINDS + state.discard[-1]][card]:
        color = COLORS[state.color] if state.color < NO_COLOR else "none"
        return f"{move.card} matches neither the colour ({color}) nor the top card"
    if move.uno and len(hand) != 2:
        return "Uno is called only together with playing your penultimate card"
    if state._options.seven_o and card % 13 == 7 and card < WILD and len(hand) > 1:
        if move.target is None:
            return "Seven-O: a 7 needs the seat to swap hands with ('target')"
        return "Seven-O: the swap target must be another seat at this table"
    if move.target is not None:
        return "a target is only used by a 7 under the Seven-O rule (not when going out)"
    return "that play is not legal now"
