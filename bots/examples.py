"""Fabricated example bodies for the schema (never a real secret)."""

from __future__ import annotations

from typing import Any

CREATE_REQUEST = {"name": "greedy-1", "url": "https://bots.example.org/uno",
                  "description": "Plays its highest card.", "enabled": True}
UPDATE_REQUEST = {"url": "https://bots.example.org/uno/v2"}
PUBLIC: dict[str, Any] = {
    "id": 3, "name": "greedy-1", "owner": "alice", "description": "Plays its highest card.",
    "verified": True, "created_at": "2026-01-05T10:00:00Z",
}
OWNED: dict[str, Any] = {
    **PUBLIC, "url": "https://bots.example.org/uno", "enabled": True,
    "verified_at": "2026-01-05T10:02:00Z",
    "verification": {"result": "passed", "reasons": [], "turns": 20,
                     "checked_at": "2026-01-05T10:02:00Z"},
    "previous_secret_until": None, "updated_at": "2026-01-05T10:02:00Z",
}
CREATED: dict[str, Any] = {
    **OWNED, "verified": False, "verified_at": None, "verification": {},
    "secret": "whsec_MfKQ9r8GKYqrTZjUPmd6Y/hNOTAREALSECRET0=",
}
SECRET = {"secret": "whsec_c2VjcmV0LWZvci10aGUtZXhhbXBsZS1vbmx5AA==",
          "previous_secret_until": "2026-01-06T10:00:00Z",
          "previous_valid_until": "2026-01-06T10:00:00Z"}
STATS = {
    "bot": 3, "calls": 1840, "failed": 7,
    "latency": {"p50_ms": 4.2, "p99_ms": 31.8, "window": 500},
    "errors": {"timeout": 5, "illegal": 2}, "strikes": {"timeout": 4, "illegal": 2},
}
CALL = {"id": 9120, "kind": "turn", "game": 7, "version": 12, "seat": 1, "status": 200,
        "latency_ms": 4.7, "error": "", "detail": "", "outcome": "move",
        "created_at": "2026-01-05T10:04:00Z"}
CALL_FAILED = {**CALL, "id": 9121, "version": 14, "status": None, "latency_ms": 1000.4,
               "error": "timeout", "detail": "No answer within 1000 ms.", "outcome": "strike"}
VERIFIED = {"bot": 3, "verified": True, "result": "passed", "reasons": [], "turns": 20}
VERIFY_FAILED = {"bot": 3, "verified": False, "result": "failed", "turns": 0, "reasons": [
    "A notice signed with a wrong secret got 200: the bot must check webhook-signature and "
    "refuse it with a 4xx (401)."
]}
