"""The rate limit of trading a password for a token."""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

from rest_framework.authentication import get_authorization_header
from rest_framework.request import Request

from core.throttling import FailOpenScopedRateThrottle


class PasswordAttemptThrottle(FailOpenScopedRateThrottle):
    """Counts password attempts per username *and* client address, right ones too; other token
    creations (with a token) per user.

    Per address alone, everyone behind one address shared a count: behind a proxy that
    ``NUM_PROXIES`` did not count, 60 wrong guesses from anyone locked every user out. Right
    passwords count as well: were they let through over the limit, a 201 among the 429s would
    still tell a guesser which guess was right."""

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        username = attempted_username(request)
        if username is not None:
            digest = hashlib.sha256(username.casefold().encode()).hexdigest()[:32]
            ident = f"{digest}:{self.get_ident(request)}"
        elif request.user and request.user.is_authenticated:
            ident = str(request.user.pk)
        else:
            ident = self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}


def attempted_username(request: Request) -> str | None:
    """The username a request tries a password for (HTTP Basic, or the JSON body), if any."""
    parts = get_authorization_header(request).split()
    if len(parts) == 2 and parts[0].lower() == b"basic":
        try:
            decoded = base64.b64decode(parts[1], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return ""  # an unreadable attempt is still an attempt
        return decoded.partition(":")[0]
    data = request.data
    if isinstance(data, dict) and isinstance(data.get("username"), str):
        return str(data["username"])
    return None
