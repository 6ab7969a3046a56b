"""Bots a command hosts itself: the reference strategies over local HTTP (``bots.serve``) and
the starter bot (``examples/starter_bot.py``, a subprocess), registered under a demo user.

Re-running reuses the bots by name. Each server first tries its bot's previous port, so that
the URL, and with it the verification, survives; when that port is taken the bot gets a new
one, its URL is re-pointed (which clears the verification) and it is verified again.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from bots import services as bot_services
from bots import verify as bot_verify
from bots.models import Bot
from bots.strategies import STRATEGIES

DEMO_USER = "demo"
REFERENCE = ("random", "greedy", "heuristic")
STARTER = "starter"
STARTER_SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "starter_bot.py"
_PLACEHOLDER = "http://127.0.0.1:9/"  # until the server listens (port 9: discard)
_STARTUP_SECONDS = 20


def demo_owner() -> Any:
    user, created = get_user_model().objects.get_or_create(username=DEMO_USER)
    if created:
        user.set_unusable_password()  # nobody signs in as the demo user
        user.save(update_fields=["password"])
    return user


def _bot_named(name: str, owner: Any, description: str) -> Bot:
    bot = Bot.objects.filter(name__iexact=name).first()
    if bot is None:
        bot, _ = bot_services.bot_create(owner=owner, name=name, url=_PLACEHOLDER,
                                         description=description)
    elif bot.owner_id != owner.pk:
        raise CommandError(f"A bot named {name!r} belongs to another user; rename it first.")
    if not bot.enabled:
        bot = bot_services.bot_update(bot=bot, data={"enabled": True})
    return bot


def _previous_port(bot: Bot) -> int:
    port = urlsplit(bot.url).port
    return port if port and bot.url != _PLACEHOLDER else 0


@dataclass
class LocalBots:
    """The hosted bots of one run; ``close()`` stops them all."""

    bots: dict[str, Bot] = field(default_factory=dict)
    _stops: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        _close_default_transport()  # its pooled connections lead to the servers stopped here
        while self._stops:
            with contextlib.suppress(Exception):
                self._stops.pop()()

    def _point(self, bot: Bot, url: str) -> None:
        if bot.url != url:
            bot = bot_services.bot_update(bot=bot, data={"url": url})
        self.bots[bot.name] = bot

    def serve_reference(self, name: str, owner: Any) -> Bot:
        if name not in STRATEGIES:
            raise CommandError(f"No reference strategy {name!r}: {', '.join(REFERENCE)}.")
        from bots.serve import serve_in_thread

        bot = _bot_named(name, owner, f"Reference strategy {name!r} (bots/strategies.py).")
        try:
            url, stop = serve_in_thread(name, bot.secret, port=_previous_port(bot))
        except OSError:  # the old port is taken now
            url, stop = serve_in_thread(name, bot.secret)
        self._stops.append(stop)
        self._point(bot, url)
        return self.bots[bot.name]

    def start_starter(self, owner: Any) -> Bot:
        bot = _bot_named(STARTER, owner, "The starter bot (examples/starter_bot.py).")
        port = _previous_port(bot)
        try:
            url = self._spawn_starter(bot, port)
        except CommandError:
            if not port:
                raise
            url = self._spawn_starter(bot, 0)
        self._point(bot, url)
        return self.bots[bot.name]

    def _spawn_starter(self, bot: Bot, port: int) -> str:
        # The secret goes in the environment, not the command line (ps shows that).
        env = {**os.environ, "BOT_SECRET": bot.secret, "PYTHONUNBUFFERED": "1"}
        process = subprocess.Popen(
            [sys.executable, str(STARTER_SCRIPT), "--port", str(port)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
        )
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(process.stdout.readline()),
                                  daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(_STARTUP_SECONDS)
        first = line[0].strip() if line else ""
        if not first.startswith("listening on "):
            process.kill()
            process.wait(10)
            raise CommandError(f"The starter bot did not start: {first or 'no answer'}")

        def stop() -> None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
            if process.stdout is not None:
                process.stdout.close()

        self._stops.append(stop)
        return first.removeprefix("listening on ")

    def verify_all(self, report: Callable[[str], None]) -> None:
        """Verify every hosted bot that is not (a new URL cleared it, or it never was)."""
        for name, bot in self.bots.items():
            if bot.verified:
                continue
            result = bot_verify.verify(bot_id=bot.pk)
            if not result["verified"]:
                raise CommandError(f"Bot {name!r} failed verification: "
                                   + "; ".join(result["reasons"]))
            report(f"verified {name} ({result['turns']} turns)")
            self.bots[name] = Bot.objects.get(pk=bot.pk)


def _close_default_transport() -> None:
    """Close the process's bot transport (a command ends here; nothing else will use it), so
    that its HTTP sessions are closed, not reported as leaked at exit."""
    from bots import transport

    with transport._default_lock:
        used, transport._default = transport._default, None
    if used is not None:
        used.close()


@contextlib.contextmanager
def hosted() -> Iterator[LocalBots]:
    local = LocalBots()
    try:
        yield local
    finally:
        local.close()
