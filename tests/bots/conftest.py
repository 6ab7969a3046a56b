"""Fixtures for the bot transport: real servers on 127.0.0.1, a transport allowed to reach them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bots import services as bot_services
from bots import signing
from bots.serve import serve_in_thread
from bots.transport import BotTransport
from tests.bots.fault_server import FaultServer, refused_url
from tests.bots.helpers import register

ALICE_SECRET = signing.new_secret()


@pytest.fixture
def quick_bots(settings: Any) -> None:
    """The test drives every decision itself (no background runner), with short turns."""
    settings.BOTS_RUNNER = "off"
    settings.BOTS_TURN_TIMEOUT_MS = 400


@pytest.fixture
def fault_bot() -> Iterator[FaultServer]:
    with FaultServer(mode="ok", delay=3.0, drip_interval=0.05) as server:
        yield server


@pytest.fixture
def refused() -> Iterator[str]:
    url, holder = refused_url()
    try:
        yield url
    finally:
        holder.close()


@pytest.fixture
def transport() -> Iterator[BotTransport]:
    """Private addresses allowed: the bots in these tests live on 127.0.0.1."""
    bots = BotTransport(allow_private=True)
    yield bots
    bots.close()


@pytest.fixture
def guarded_transport() -> Iterator[BotTransport]:
    """Production's stance: private and loopback addresses refused."""
    bots = BotTransport(allow_private=False)
    yield bots
    bots.close()


@pytest.fixture
def two_reference_bots(alice: Any) -> Iterator[list[Any]]:
    """Two of alice's bots, each its own reference server (greedy) on 127.0.0.1."""
    registered = [register(alice, f"ref{i}", "http://127.0.0.1:9/") for i in range(2)]
    stops, bots = [], []
    for bot, secret in registered:
        url, stop = serve_in_thread("greedy", secret, seed=bot.pk)
        stops.append(stop)
        bots.append(bot_services.bot_update(bot=bot, data={"url": url}))
    yield bots
    for stop in stops:
        stop()
