"""Bot tables for the platform tests: real bots on 127.0.0.1, seated through the services."""

from __future__ import annotations

from typing import Any

from bots import services as bot_services
from bots.models import Bot
from games import services as game_services
from games.models import Game


def register(owner: Any, name: str, url: str) -> tuple[Bot, str]:
    return bot_services.bot_create(owner=owner, name=name, url=url)


def bot_table(owner: Any, bots: list[Bot], *, max_strikes: int = 3, start: bool = True,
              options: dict[str, Any] | None = None, turn_seconds: int = 60) -> Game:
    """A table of ``owner``'s bots, one seat each, started unless ``start`` is false."""
    game = game_services.game_create(
        user=owner, options=options if options is not None else {"single_hand": True},
        seats=len(bots), max_strikes=max_strikes, join=False, turn_seconds=turn_seconds,
    )
    for bot in bots:
        game_services.seat_join(game_id=game.pk, user=owner, bot_id=bot.pk)
    if start:
        game_services.game_start(game_id=game.pk, user=owner)
    return Game.objects.get(pk=game.pk)


def close_default_transport() -> None:
    """Close the process-wide transport a test made the server use (its pool belongs to the
    test's bots), so the next test starts a fresh one."""
    from bots import transport

    with transport._default_lock:
        used, transport._default = transport._default, None
    if used is not None:
        used.close()
