"""Standard Webhooks signatures for every call to a bot (and for bots checking them).

The HMAC itself is the maintained ``standardwebhooks`` package's (``Webhook.sign``), so a bot
written against that package agrees with us byte for byte. Verification parses the headers
here, because the package's ``verify`` fixes the clock (no ``now`` to test a stale timestamp)
and lets a malformed header escape as ``ValueError``/``binascii.Error`` instead of a refusal.

Signed content: ``f"{msg_id}.{timestamp}.".encode() + body``. A secret is ``whsec_`` followed
by the base64 of the key bytes; the header carries one ``v1,<base64>`` entry per secret.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import math
import secrets as _secrets
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache

from standardwebhooks.webhooks import EmptyWebhookSecretError, Webhook

SECRET_PREFIX = "whsec_"
TOLERANCE_SECONDS = 300  # the spec's five minutes either way
# Header values are bounded so a hostile sender cannot make us decode megabytes of base64.
_MAX_SIGNATURE_HEADER = 4096
_MAX_ID = 256


class SignatureError(Exception):
    """The request is not signed by a secret we know, or not recently enough."""


def new_secret() -> str:
    """A fresh secret: 32 random bytes, as ``whsec_<base64>``."""
    return SECRET_PREFIX + base64.b64encode(_secrets.token_bytes(32)).decode("ascii")


@lru_cache(maxsize=1024)
def _webhook(secret: str) -> Webhook:
    # Decoding the key is the package's own code (prefix stripped, padding tolerated).
    try:
        return Webhook(secret)
    except (binascii.Error, ValueError, EmptyWebhookSecretError) as exc:
        raise ValueError("a bot secret must be whsec_ followed by base64") from exc


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """``v1,<base64 HMAC-SHA256>`` of ``"{msg_id}.{timestamp}.{body}"`` under ``secret``."""
    when = datetime.fromtimestamp(int(timestamp), tz=UTC)
    return _webhook(secret).sign(msg_id, when, body.decode("utf-8"))


def signature_header(secrets: Sequence[str], msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` value: one entry per secret (two during a rotation)."""
    if not secrets:
        raise ValueError("at least one secret is needed to sign a call")
    return " ".join(sign(secret, msg_id, timestamp, body) for secret in secrets)


def headers_for(secrets: Sequence[str], msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The three Standard Webhooks headers for one call."""
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(timestamp)),
        "webhook-signature": signature_header(secrets, msg_id, timestamp, body),
    }


def _header(headers: Mapping[str, str], name: str) -> str:
    # Mappings from web frameworks are case-insensitive already; a plain dict may not be.
    value = headers.get(name)
    if value is None:
        for key, candidate in headers.items():
            if key.lower() == name:
                value = candidate
                break
    if not value:
        raise SignatureError(f"missing {name} header")
    return value


def _timestamp(raw: str, *, tolerance: int, now: float) -> int:
    if not raw.isascii() or not raw.isdigit() or len(raw) > 15:
        raise SignatureError("webhook-timestamp must be whole unix seconds")
    stamp = int(raw)
    if math.fabs(now - stamp) > tolerance:
        raise SignatureError(f"webhook-timestamp is more than {tolerance} s away from now")
    return stamp


def _candidates(header: str) -> list[bytes]:
    if len(header) > _MAX_SIGNATURE_HEADER:
        raise SignatureError("webhook-signature header is too long")
    found = []
    for entry in header.split():
        version, _, encoded = entry.partition(",")
        if version != "v1":
            continue  # other schemes (v1a, ...) are allowed beside ours and ignored
        try:
            found.append(base64.b64decode(encoded, validate=True))
        except (binascii.Error, ValueError):
            continue
    return found


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    tolerance: int = TOLERANCE_SECONDS,
    now: float | None = None,
) -> None:
    """Accept the request if one ``v1`` signature matches ``secret``; else ``SignatureError``."""
    msg_id = _header(headers, "webhook-id")
    if len(msg_id) > _MAX_ID or "." in msg_id:
        raise SignatureError("webhook-id is malformed")
    stamp = _timestamp(
        _header(headers, "webhook-timestamp"),
        tolerance=tolerance,
        now=time.time() if now is None else now,
    )
    candidates = _candidates(_header(headers, "webhook-signature"))
    try:
        expected = base64.b64decode(sign(secret, msg_id, stamp, body).partition(",")[2])
    except UnicodeDecodeError:
        raise SignatureError("the body is not UTF-8") from None
    # compare_digest against every entry: which one matched must not show in the timing.
    matched = False
    for candidate in candidates:
        matched |= hmac.compare_digest(expected, candidate)
    if not matched:
        raise SignatureError("no webhook-signature entry matches the secret")
