"""A bot seat's decision that is never taken (its task lost with a broker or a worker, or no
runner at all) does not freeze the table: the turn clock plays the seat's default move and
strikes it, as it does a person who never comes back, and at the table's max strikes the seat
is forfeited and the game ends."""

from __future__ import annotations

from typing import Any

import pytest

from games import services
from games.models import EventKind, Game, GameEvent, GameStatus
from tests.bots.helpers import bot_table
from tests.games.conftest import FakeClock, fake_clock  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


def test_a_bot_seat_whose_decisions_are_lost_is_struck_then_forfeited_by_the_clock(
    settings: Any, alice: Any, two_reference_bots: list[Any], fake_clock: FakeClock  # noqa: F811
) -> None:
    settings.BOTS_RUNNER = "off"  # nothing takes the decisions: every one of them is lost
    game = bot_table(alice, two_reference_bots, max_strikes=2, turn_seconds=30)
    first = game.awaiting
    assert first is not None
    for strikes in (1, 2):
        fake_clock.advance(31)
        assert services.turn_clock_sweep() == 1
        seat = Game.objects.get(pk=game.pk).seats.get(index=first)
        assert seat.strikes == strikes
        if strikes == 1:  # the other bot's turn now, lost too: struck once as well
            fake_clock.advance(31)
            assert services.turn_clock_sweep() == 1
    ended = Game.objects.get(pk=game.pk)
    assert ended.status == GameStatus.FINISHED and ended.end_reason == "forfeit"
    assert ended.winner == 1 - first
    kinds = list(GameEvent.objects.filter(game=ended).values_list("kind", flat=True))
    assert kinds.count(EventKind.STRIKE) == 3 and kinds[-2:] == [EventKind.FORFEITED,
                                                                  EventKind.FINISHED]
