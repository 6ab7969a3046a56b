"""Example bodies for the accounts API's OpenAPI schema (fabricated: no real user or key)."""

from __future__ import annotations

SIGNUP_REQUEST = {"username": "my-bot", "password": "a long passphrase"}
USER = {"id": 3, "username": "my-bot", "date_joined": "2025-01-01T12:00:00Z"}

TOKEN_REQUEST_PASSWORD = {
    "username": "my-bot",
    "password": "a long passphrase",
    "expires_in": 86400,
}
TOKEN_REQUEST_BASIC = {"expires_in": 86400}  # credentials in the Authorization header
TOKEN = {"id": "uno_3f9a1c2b7d0", "created": "2025-01-01T12:00:00Z", "expiry": None}
TOKEN_CREATED = {**TOKEN, "key": "uno_3f9a1c2b7d0" + "0" * 53}
TOKEN_CREATED_EXPIRING = {
    "id": "uno_8e41d07a6c5",
    "created": "2025-01-01T12:00:00Z",
    "expiry": "2025-01-02T12:00:00Z",
    "key": "uno_8e41d07a6c5" + "0" * 53,
}
