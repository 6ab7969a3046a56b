"""Two players through a whole game with nothing but a client generated from the served schema
(openapi-python-client) and its typed models. ``test_generated_client.py`` generates the
client next to this script, type-checks both with ``mypy --strict``, then runs it against a
live server:

    python client_driver.py BASE_URL USER:PASSWORD USER:PASSWORD

It prints a JSON summary of the game. Any answer that is not the typed model expected is an
error (the generated parsers raise on a body that does not match the schema).
"""

from __future__ import annotations

import base64
import json
import random
import sys
import uuid
from typing import Any, TypeVar

from uno_arena_client.api.accounts import accounts_create, tokens_create
from uno_arena_client.api.games import games_create, games_join, games_replay, games_start
from uno_arena_client.api.play import games_events, games_moves_create, games_view
from uno_arena_client.client import AuthenticatedClient, Client
from uno_arena_client.models import (
    Error,
    EventsOut,
    GameCreateInputRequest,
    GameOut,
    GameStatus,
    JoinInputRequest,
    MoveEvent,
    MoveInputRequest,
    MovePlayedOut,
    MoveType,
    OptionsRequest,
    PendingDrawn,
    ReplayOut,
    ReplayState,
    SeatView,
    SignupInputRequest,
    TokenCreatedOut,
    TokenCreateInputRequest,
    UserOut,
    ViewOut,
)
from uno_arena_client.models import Move as LegalMove
from uno_arena_client.types import Unset

T = TypeVar("T")


def expect(answer: Any, model: type[T]) -> T:
    """The answer as ``model``; an error body (or no body) is a failure."""
    if not isinstance(answer, model):
        detail = answer.to_dict() if isinstance(answer, Error) else answer
        raise SystemExit(f"expected {model.__name__}, got {detail!r}")
    return answer


def sign_up(base_url: str, credentials: str) -> None:
    username, password = credentials.split(":", 1)
    with Client(base_url=base_url) as anonymous:
        made = accounts_create.sync(
            client=anonymous, body=SignupInputRequest(username=username, password=password)
        )
    assert expect(made, UserOut).username == username


def token(base_url: str, credentials: str) -> AuthenticatedClient:
    """A token got with the player's password over HTTP Basic, and a client that sends it.
    (openapi-python-client asks an AuthenticatedClient of any operation with a security
    requirement; Basic credentials are the "token" of this one, with the "Basic" prefix.)"""
    basic = base64.b64encode(credentials.encode()).decode()
    with AuthenticatedClient(base_url=base_url, token=basic, prefix="Basic") as login:
        made = tokens_create.sync(client=login, body=TokenCreateInputRequest(expires_in=3600))
    key = expect(made, TokenCreatedOut).key
    return AuthenticatedClient(base_url=base_url, token=key, prefix="Token", timeout=None)


def choose(rng: random.Random, legal: list[LegalMove]) -> LegalMove:
    """A greedy bot: a play (with the Uno call when there is one), else anything legal."""
    plays = [move for move in legal if move.type_ is MoveType.PLAY]
    calls = [move for move in plays if move.uno is True]
    return rng.choice(calls or plays or legal)


def view_of(client: AuthenticatedClient, game_id: int) -> ViewOut:
    return expect(games_view.sync(game_id, client=client), ViewOut)


def dealt(seen: ViewOut) -> SeatView:
    """The view of a dealt game (null only before the deal)."""
    assert seen.view is not None, seen
    return seen.view


def check_view(seen: ViewOut) -> SeatView:
    view = dealt(seen)
    pending = view.pending
    if isinstance(pending, PendingDrawn) and pending.seat != seen.seat:
        # Only the drawer is shown the drawn card.
        assert isinstance(pending.card, Unset), pending
    assert len(view.hand) == view.hand_counts[seen.seat]
    return view


def play(clients: list[AuthenticatedClient], game_id: int, rng: random.Random) -> int:
    """Whoever is awaited plays, until the game is over; returns how many moves were made."""
    for moves in range(5000):
        views = [view_of(client, game_id) for client in clients]
        if views[0].status is not GameStatus.RUNNING:
            return moves
        awaited = next(seen for seen in views if check_view(seen).awaiting == seen.seat)
        move = choose(rng, dealt(awaited).legal_moves)
        played = games_moves_create.sync(
            game_id,
            client=clients[awaited.seat],
            body=MoveInputRequest(version=awaited.version, move=move),
            idempotency_key=str(uuid.uuid4()),
        )
        record = expect(played, MovePlayedOut).played
        assert record.move.to_dict() == move.to_dict()  # the legal move, sent as it was given
    raise SystemExit("the game did not end")


def main(base_url: str, first: str, second: str) -> dict[str, Any]:
    for credentials in (first, second):
        sign_up(base_url, credentials)
    clients = [token(base_url, first), token(base_url, second)]
    options = OptionsRequest(single_hand=True)
    body = GameCreateInputRequest(seats=2, options=options, turn_seconds=3600)
    game = expect(games_create.sync(client=clients[0], body=body), GameOut)
    expect(games_join.sync(game.id, client=clients[1], body=JoinInputRequest()), GameOut)
    started = expect(games_start.sync(game.id, client=clients[0]), GameOut)
    assert started.status is GameStatus.RUNNING

    moves = play(clients, game.id, random.Random(7))

    final = view_of(clients[1], game.id)
    replay = expect(games_replay.sync(game.id, client=clients[0]), ReplayOut)
    assert isinstance(replay.final, ReplayState) and replay.final.finished
    assert len(replay.moves) == moves and replay.winner == dealt(final).winner
    events = expect(games_events.sync(game.id, client=clients[1], since=0), EventsOut)
    logged = [event for event in events.events if isinstance(event, MoveEvent)]
    assert [event.data.move.to_dict() for event in logged] == [
        move.move.to_dict() for move in replay.moves
    ]
    for client in clients:
        client.get_httpx_client().close()
    return {
        "game": game.id,
        "status": final.status.value,
        "winner": dealt(final).winner,
        "moves": moves,
        "events": sorted({type(event).__name__ for event in events.events}),
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], sys.argv[3])))
