#!/usr/bin/env python3
"""A starter Uno Arena bot: standard library only, copy it and make it smarter.

    BOT_SECRET=whsec_... python3 starter_bot.py --port 8080
    python -m bots.evaluate --bot starter_bot.py:choose   # offline, against the reference bots

The arena POSTs JSON to the bot's URL, signed as Standard Webhooks do: headers ``webhook-id``,
``webhook-timestamp`` (unix seconds) and ``webhook-signature`` (``v1,<base64 HMAC-SHA256>`` of
``{id}.{timestamp}.{body}``, several space-separated while a secret rotates). A ``turn`` is
answered with ``{"move": <one of legal_moves>}``; ``start`` and ``end`` notices with 204.
Anything unsigned, badly signed or more than five minutes off is refused with 401.
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import random
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOLERANCE_S = 5 * 60
MAX_BODY = 1 << 20
HEADERS = ("id", "timestamp", "signature")
RNG = random.Random()


def secret_key(secret: str) -> bytes:
    """The HMAC key of a ``whsec_<base64>`` secret."""
    return base64.b64decode(secret.removeprefix("whsec_") + "==")  # tolerate missing padding


def verified(key: bytes, headers: Any, body: bytes) -> bool:
    msg_id, stamp, signatures = (headers.get("webhook-" + h) for h in HEADERS)
    if not (msg_id and stamp and signatures and stamp.isdigit()):
        return False
    if abs(time.time() - int(stamp)) > TOLERANCE_S:
        return False  # stale or from the future: a replayed request
    digest = hmac.new(key, f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest()
    expected = base64.b64encode(digest)  # any one of the signatures may match (key rotation)
    sigs = [s[3:].encode() for s in signatures.split() if s.startswith("v1,")]
    return any(hmac.compare_digest(sig, expected) for sig in sigs)


def choose(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The move for a turn, from the seat's ``view`` (what a turn's ``view`` holds,
    ``legal_moves`` included): catch or call Uno when possible, else play a card whenever one
    plays (the card first, then its colour) calling Uno; else draw, keep, accept or challenge
    at random. The reference strategies' signature, so that it plays offline as it is:
    ``python -m bots.evaluate --bot starter_bot.py:choose``."""
    moves = view["legal_moves"]
    free = [m for m in moves if m["type"] in ("uno", "catch")]
    if free:
        return free[0]
    plays = [m for m in moves if m["type"] == "play"]
    if any(m.get("uno") for m in plays):
        plays = [m for m in plays if m.get("uno")]
    if plays:
        card = rng.choice(sorted({m["card"] for m in plays}))
        return rng.choice([m for m in plays if m["card"] == card])
    return rng.choice(moves)


class Bot(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the arena reuses one connection
    disable_nagle_algorithm = True  # else every small answer waits ~40 ms for a TCP ACK
    key = b""

    def do_POST(self) -> None:
        length = self.headers.get("Content-Length", "0")
        if not length.isdigit() or int(length) > MAX_BODY:
            self.close_connection = True
            return self.answer(413, {"error": "a body of up to 1 MiB with its Content-Length"})
        body = self.rfile.read(int(length))
        if not verified(self.key, self.headers, body):
            return self.answer(401, {"error": "bad or stale signature"})
        try:
            message = json.loads(body)
        except ValueError:
            return self.answer(400, {"error": "body is not JSON"})
        if message.get("type") != "turn":
            return self.answer(204)  # start/end notices: nothing to say
        self.answer(200, {"move": choose(message["view"], RNG)})

    def answer(self, status: int, payload: dict[str, Any] | None = None) -> None:
        data = json.dumps(payload).encode() if payload is not None else b""
        self.send_response(status)
        if status != 204:  # a 204 has no body and no length
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet


def main() -> None:
    parser = argparse.ArgumentParser(description="A starter Uno Arena bot.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080, help="0: any free port")
    # BOT_SECRET, as the reference bots (python -m bots.serve) read it; UNO_BOT_SECRET, the
    # name this kit read first, still works.
    secret = os.environ.get("BOT_SECRET") or os.environ.get("UNO_BOT_SECRET")
    parser.add_argument("--secret", default=secret, help="whsec_... (default: $BOT_SECRET)")
    args = parser.parse_args()
    if not args.secret:
        sys.exit("give the bot's secret with --secret or BOT_SECRET")
    Bot.key = secret_key(args.secret)
    server = ThreadingHTTPServer((args.host, args.port), Bot)
    print(f"listening on http://{args.host}:{server.server_port}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
