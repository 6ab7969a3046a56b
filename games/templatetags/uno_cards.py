"""``{% load uno_cards %}``: ``{% uno_card "R5" %}`` draws a card as a small coloured chip,
``{% uno_color "red" %}`` a chosen colour. Both need ``games/cards.css`` on the page."""

from __future__ import annotations

from django import template

from games.cards_display import CardFace, card_face, color_face

register = template.Library()


@register.inclusion_tag("games/card.html")
def uno_card(code: str) -> dict[str, CardFace]:
    return {"card": card_face(str(code))}


@register.inclusion_tag("games/card.html")
def uno_color(color: str) -> dict[str, CardFace]:
    return {"card": color_face(str(color))}
