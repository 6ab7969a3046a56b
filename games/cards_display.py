"""How a card looks on a page: its colour (for the chip), a short face ("5", "Skip", "+4")
and a full name for screen readers and tooltips ("red 5", "Wild Draw Four"). Codes are the
engine's ("R5", "YS", "GD", "W4"); moves carry them as they are."""

from __future__ import annotations

from dataclasses import dataclass

from games.uno.cards import COLOR_LETTERS, COLORS

_RANKS = {"S": ("Skip", "Skip"), "R": ("Rev", "Reverse"), "D": ("+2", "Draw Two")}
_WILDS = {
    "W": ("Wild", "Wild"),
    "W4": ("+4", "Wild Draw Four"),
    "WS": ("Shuffle", "Wild Shuffle Hands"),
    "WC": ("Wild", "Wild Customizable"),
}


@dataclass(frozen=True, slots=True)
class CardFace:
    color: str  # red, yellow, green, blue, wild (a CSS class suffix)
    face: str  # what the chip shows
    name: str  # the full name: accessible text


def card_face(code: str) -> CardFace:
    """The face of a card code; an unknown code is shown as it is (never an error on a page)."""
    if code in _WILDS:
        face, name = _WILDS[code]
        return CardFace("wild", face, name)
    if len(code) == 2 and code[0] in COLOR_LETTERS:
        color = COLORS[COLOR_LETTERS.index(code[0])]
        face, name = _RANKS.get(code[1], (code[1], code[1]))
        return CardFace(color, face, f"{color} {name}")
    return CardFace("unknown", code, code)


def color_face(color: str) -> CardFace:
    """A chosen colour (after a wild) as a chip of that colour."""
    known = color if color in COLORS else "unknown"
    return CardFace(known, color, f"colour {color}")
