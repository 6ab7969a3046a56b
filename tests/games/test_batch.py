"""Tables created and dealt together (``games.batch``) are exactly what
``game_create_seated`` + ``game_start`` make of each (ids and timestamps aside)."""

from __future__ import annotations

from typing import Any

import pytest
from django.forms.models import model_to_dict

from bots import services as bot_services
from games import batch
from games import services as game_services
from games.models import Game, GameEvent, GameStatus, Seat

pytestmark = pytest.mark.django_db

_GAME_APART = {"id", "created_at", "updated_at", "started_at", "turn_deadline"}


def _rows(game: Game) -> dict[str, Any]:
    row = {k: v for k, v in model_to_dict(Game.objects.get(pk=game.pk)).items()
           if k not in _GAME_APART}
    seats = [{k: v for k, v in model_to_dict(s).items() if k not in {"id", "game", "joined_at"}}
             for s in Seat.objects.filter(game=game).order_by("index")]
    events = list(GameEvent.objects.filter(game=game).order_by("version")
                  .values("version", "kind", "seat", "data"))
    return {"game": row, "seats": seats, "events": events}


@pytest.mark.parametrize("options", [{"single_hand": True}, {}, {"players": 4}])
def test_tables_made_together_are_the_tables_made_one_by_one(alice: Any,
                                                              options: dict[str, Any]) -> None:
    seats = 4 if options.get("players") == 4 else 2
    bots = [bot_services.bot_create(owner=alice, name=f"b{i}", url=f"http://127.0.0.1:9/{i}")[0]
            for i in range(seats)]
    tables = [(seed, [b.pk for b in (bots[i % seats:] + bots[:i % seats])])
              for i, seed in enumerate((7, 2026, 99, 123456789))]
    one_by_one = []
    for seed, seated in tables:
        game = game_services.game_create_seated(user=alice, options=options, seed=seed,
                                                bots=seated, turn_seconds=3, max_strikes=2)
        one_by_one.append(game_services.game_start(game_id=game.pk, user=alice))
    together = batch.tables_create_started(user=alice, options=options, tables=tables,
                                           turn_seconds=3, max_strikes=2)
    assert len(together) == len(tables)
    for (made, seated), expected in zip(together, one_by_one, strict=True):
        assert made.pk != expected.pk
        assert [s.game_id for s in seated] == [made.pk] * seats
        assert [s.pk for s in seated] == list(
            Seat.objects.filter(game=made).order_by("index").values_list("pk", flat=True))
        assert made.status == GameStatus.RUNNING and made.turn_deadline is not None
        assert _rows(made) == _rows(expected)


def test_no_tables_make_nothing(alice: Any) -> None:
    assert batch.tables_create_started(user=alice, options={}, tables=[], turn_seconds=3,
                                       max_strikes=2) == []
    assert not Game.objects.exists()
