"""URL converters shared by the apps' URLconfs."""

from __future__ import annotations

from django.urls import register_converter

# Primary keys are signed 64-bit on PostgreSQL (and SQLite's INTEGER): a longer number names
# nothing, and handing it to the database would fail (an overflow, a 500), not miss.
MAX_ID = 2**63 - 1


class IdConverter:
    """A row id: digits, at most ``MAX_ID``; anything else does not match (so a 404)."""

    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > MAX_ID:
            raise ValueError("beyond a 64-bit id")
        return number

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(IdConverter, "id")
