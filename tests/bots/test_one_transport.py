"""One module calls bots: no other application code may open outgoing HTTP connections.

A static check over the apps' source (tests, benchmarks and the bot server ``bots/serve.py``,
which only listens, are outside it). A new outgoing call belongs in ``bots/transport.py``,
behind the address guard.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("arena", "core", "games", "bots")
ALLOWED = {Path("bots/transport.py"), Path("bots/serve.py")}
OUTGOING = re.compile(
    r"ClientSession|urlopen|HTTPS?Connection\(|create_connection\(|open_connection\("
    r"|^\s*(import|from) (requests|httpx|urllib3|aiohttp|pycurl)\b",
    re.MULTILINE,
)


def test_only_the_transport_opens_outgoing_connections() -> None:
    offenders = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative in ALLOWED or "migrations" in relative.parts:
                continue
            for match in OUTGOING.finditer(path.read_text(encoding="utf-8")):
                offenders.append(f"{relative}: {match.group(0).strip()}")
    assert offenders == [], "outgoing connections outside bots/transport.py: " + ", ".join(
        offenders
    )
