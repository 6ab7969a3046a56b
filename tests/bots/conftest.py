"""Fixtures for the bot transport: real servers on 127.0.0.1, a transport allowed to reach them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bots import signing
from bots.transport import BotTransport
from tests.bots.fault_server import FaultServer, refused_url

ALICE_SECRET = signing.new_secret()


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
