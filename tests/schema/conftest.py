"""The games tests' personas with API clients, fast password hashing and fresh throttles."""

from tests.games.conftest import (  # noqa: F401 - fixtures, found by name
    _fast_and_fresh,
    alice_api,
    bob_api,
    charlie_api,
    fake_clock,
    running_game,
)
