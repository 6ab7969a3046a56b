"""Reference strategies that play from a seat's view, in-process: "random", "greedy", "heuristic".

Each is ``choose(view, rng) -> move``: ``view`` is exactly ``games.uno.view(state, seat)`` (the
dict the REST API and the bot protocol send), ``rng`` a ``random.Random`` the caller owns, and
the answer is one of ``view["legal_moves"]`` (a JSON move dict). No Django here: this module
imports only ``games.uno``, so a simulator, a test or a bot server can use it alike.

When to call one. A strategy may be called for any seat whose ``legal_moves`` is not empty, in
turn or out of turn, and it always answers with a move: everything a seat can do out of turn
(catch a missed Uno call, make its own late call, jump in) is worth doing, so being asked out of
turn means acting. A caller that wants out-of-turn play asks, before applying the awaited seat's
move, the other seats whose views show legal moves (``games.uno.all_legal_moves``); a caller that
asks only the awaited seat still gets catches, since a missed call can be caught by the awaited
seat too (its answer is then the catch, and it is asked again for its turn). See
``bots.evaluate.play_game`` for a loop that does both.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from games.uno import COLORS, random_move, view_bluffs

Move = dict[str, Any]
View = Mapping[str, Any]
Strategy = Callable[[View, random.Random], Move]

_LETTER_COLOR = {name[0].upper(): name for name in COLORS}  # "R" -> "red"


# --- card facts from codes ----------------------------------------------------------------
def _color(code: str) -> str | None:
    """``"R7"`` -> ``"red"``; None for a wild (its codes start with W)."""
    return _LETTER_COLOR.get(code[0]) if code[0] != "W" else None


def _rank(code: str) -> str:
    """``"R7"`` -> ``"7"``, ``"GS"`` -> ``"S"``; a wild's whole code (``"W4"``)."""
    return code if code[0] == "W" else code[1:]


def _points(code: str, rules_2022: bool) -> int:
    if code[0] == "W":
        return 40 if code in ("WS", "WC") and not rules_2022 else 50
    rank = _rank(code)
    return int(rank) if rank.isdigit() else 20


def _color_counts(hand: Sequence[str]) -> dict[str, int]:
    counts = dict.fromkeys(COLORS, 0)
    for code in hand:
        color = _color(code)
        if color:
            counts[color] += 1
    return counts


def _without(hand: Sequence[str], code: str) -> list[str]:
    rest = list(hand)
    if code in rest:
        rest.remove(code)
    return rest


def _free_action(moves: Sequence[Move]) -> Move | None:
    """A late Uno call or a catch: they cost nothing and never hurt."""
    for wanted in ("uno", "catch"):
        for move in moves:
            if move["type"] == wanted:
                return move
    return None


def _with_uno(moves: Sequence[Move]) -> list[Move]:
    """Drop the plays that do not call Uno where the same play calling it exists."""
    if any(m.get("uno") for m in moves):
        return [m for m in moves if m["type"] != "play" or m.get("uno")]
    return list(moves)


# --- random --------------------------------------------------------------------------------
def choose_random(view: View, rng: random.Random) -> Move:
    """Sensible random: a card whenever one plays (card first, then colour), always calls Uno
    and catches; otherwise draws, keeps, accepts or challenges at random."""
    move: Move = random_move(list(view["legal_moves"]), rng)
    return move


# --- greedy --------------------------------------------------------------------------------
def choose_greedy(view: View, rng: random.Random) -> Move:
    """Sheds its highest points first and calls Uno; the colour it holds most for a wild; never
    challenges; swaps (Seven-O) with the smallest hand."""
    moves = _with_uno(view["legal_moves"])
    free = _free_action(moves)
    if free:
        return free
    rules_2022 = bool(view["options"].get("start_2022"))
    plays = [m for m in moves if m["type"] == "play"]
    if plays:
        best = max(_points(m["card"], rules_2022) for m in plays)
        plays = [m for m in plays if _points(m["card"], rules_2022) == best]
        return _best_variant(view, plays[rng.randrange(len(plays))]["card"], plays)
    return _fallback(view, moves)


# --- heuristic -----------------------------------------------------------------------------
def choose_heuristic(view: View, rng: random.Random) -> Move:
    """Plays to win: keeps wilds for late, names the colour it holds most, never bluffs a Wild
    Draw Four, challenges one when the odds favour it, catches missed Uno calls, and uses the
    table's house rules (stacks penalties, jumps in, swaps hands with Seven-O...)."""
    moves = _with_uno(view["legal_moves"])
    free = _free_action(moves)
    if free:
        return free
    plays = [m for m in moves if m["type"] == "play"]
    seat = view["seat"]
    pending = view.get("pending") or {}
    if seat != view["awaiting"] or pending.get("type") in ("stack", "challenge"):
        if plays:  # a jump-in, or stacking the penalty onto the next seat: always worth it
            return _best_variant(view, plays[0]["card"], plays)
        if pending.get("type") == "challenge" and _challenge_pays(view):
            return _find(moves, "challenge") or _fallback(view, moves)
        return _fallback(view, moves)
    if plays:
        scored = [(_score(view, card), card) for card in sorted({m["card"] for m in plays})]
        score, card = max(scored)
        drawn = pending.get("type") == "drawn"
        if score > _DRAW_INSTEAD or not (_find(moves, "draw") or drawn):
            return _best_variant(view, card, plays)
        if drawn:
            return _find(moves, "keep") or _best_variant(view, card, plays)
        draw = _find(moves, "draw")
        if draw:
            return draw
    return _fallback(view, moves)


# A play scoring below this is worse than drawing (a bluffed Wild Draw Four, a ruinous swap).
_DRAW_INSTEAD = -50
# Weights of ``_score``, tuned with ``python -m bots.evaluate``.
WILD_HOLD = 100  # keep a wild for later (draw instead) while nobody is near out
W4_BASE = 10  # a Wild Draw Four also hurts the next seat...
W4_ATTACK = 40  # ... most of all when it is about to go out
COLOR_WEIGHT = -3  # per card of the played colour left in hand: shed the colours held least
ACTION_BONUS = 25  # Skip/Reverse/Draw Two heads-up (another turn) or against a near winner
DRAW_TWO_EXTRA = 5
DANGER_SHED = 0.5  # per point of the card, once someone holds two cards or fewer
SWAP_WEIGHT = 30  # Seven-O: per card fewer in the hand we would get


def _score(view: View, card: str) -> float:
    """How good playing ``card`` now is (higher is better)."""
    hand: list[str] = list(view["hand"])
    rest = _without(hand, card)
    if not rest:
        return 1000.0  # going out wins the hand
    counts = view["hand_counts"]
    seat, n, direction = view["seat"], len(counts), view["direction"]
    following = (seat + direction) % n
    danger = min(c for s, c in enumerate(counts) if s != seat) <= 2
    next_danger = counts[following] <= 2
    options = view["options"]
    points = _points(card, bool(options.get("start_2022")))
    color = _color(card)
    rank = _rank(card)
    score = 0.0
    if color is None:  # wilds: keep them for late, unless someone is about to go out
        score -= 0 if len(rest) <= 2 or danger else WILD_HOLD
        if card == "W4":
            if view_bluffs(view):
                return -100.0  # never bluff: a challenge costs four cards
            score += W4_ATTACK if next_danger else W4_BASE
        return score + (points / 5 if danger else 0)
    score += 10 + COLOR_WEIGHT * _color_counts(rest)[color]  # stay in the colour held most
    if rank in ("S", "R", "D"):
        if n == 2 or next_danger:  # heads-up they give another turn; they stop a near winner
            score += ACTION_BONUS
        if rank == "D":
            score += DRAW_TWO_EXTRA
    if danger:
        score += DANGER_SHED * points  # shed points before someone goes out
    if options.get("seven_o") and rank in ("7", "0"):
        mine = len(rest)
        if rank == "7":
            theirs = min(c for s, c in enumerate(counts) if s != seat)
        else:  # every hand passes on: we get the previous seat's
            theirs = counts[(seat - direction) % n]
        score += SWAP_WEIGHT * (mine - theirs)
    return score


def _challenge_pays(view: View) -> bool:
    """Challenge when the chance of a bluff beats the cost: a failed challenge adds 2 cards to
    the penalty, a successful one saves it all, so challenge when P(bluff) > 2 / (penalty + 2).
    P(bluff) is estimated as the chance that the player's remaining cards hold at least one of
    the previous colour (about a quarter of the coloured cards each), the colour itself being
    unknown from the view."""
    pending = view["pending"]
    held: int = view["hand_counts"][pending["player"]]
    p_bluff = 1 - (1 - _COLOR_SHARE) ** held
    penalty: int = pending["penalty"]
    return p_bluff > 2 / (penalty + 2)


_COLOR_SHARE = 25 / 108


def _best_variant(view: View, card: str, plays: Sequence[Move]) -> Move:
    """Among the plays of ``card``: the colour held most afterwards, the Seven-O target with
    the fewest cards."""
    options = [m for m in plays if m["card"] == card]
    rest = _without(view["hand"], card)
    counts = _color_counts(rest)
    sizes = view["hand_counts"]

    def rank(move: Move) -> tuple[int, int]:
        color = move.get("color")
        target = move.get("target")
        return (counts[color] if color else 0, -sizes[target] if target is not None else 0)

    return max(options, key=rank)


def _fallback(view: View, moves: Sequence[Move]) -> Move:
    """No play chosen: the first colour held most, else draw, keep or accept."""
    colors = [m for m in moves if m["type"] == "color"]
    if colors:
        counts = _color_counts(view["hand"])
        return max(colors, key=lambda m: counts[m["color"]])
    for kind in ("accept", "draw", "keep"):
        move = _find(moves, kind)
        if move:
            return move
    return moves[0]


def _find(moves: Sequence[Move], kind: str) -> Move | None:
    return next((m for m in moves if m["type"] == kind), None)


STRATEGIES: dict[str, Strategy] = {
    "random": choose_random,
    "greedy": choose_greedy,
    "heuristic": choose_heuristic,
}
