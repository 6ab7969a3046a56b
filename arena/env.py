"""Strict readers for settings that come from the environment.

A malformed value stops start-up with a message that names the variable: a typo in a
deployment should fail loudly at boot, not half-work at the first request.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class Env:
    """Typed access to a mapping of environment variables (``os.environ`` by default)."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self.environ = os.environ if environ is None else environ

    def _raw(self, name: str) -> str | None:
        value = self.environ.get(name)
        if value is None or value.strip() == "":
            return None
        return value.strip()

    def str(self, name: str, default: str = "") -> str:
        value = self._raw(name)
        return default if value is None else value

    def choice(self, name: str, default: str, choices: tuple[str, ...]) -> str:
        """One of ``choices`` (compared without case, returned as spelled there)."""
        value = self._raw(name)
        if value is None:
            return default
        for choice in choices:
            if value.lower() == choice.lower():
                return choice
        raise ImproperlyConfigured(
            f"{name}={value!r} is not one of {', '.join(c for c in choices if c)}."
        )

    def required(self, name: str, why: str) -> str:
        value = self._raw(name)
        if value is None:
            raise ImproperlyConfigured(f"{name} must be set {why}.")
        return value

    def bool(self, name: str, default: bool) -> bool:
        value = self._raw(name)
        if value is None:
            return default
        if value.lower() in _TRUE:
            return True
        if value.lower() in _FALSE:
            return False
        raise ImproperlyConfigured(
            f"{name}={value!r} is not a boolean; use one of true/false, 1/0, yes/no, on/off."
        )

    def int(self, name: str, default: int, *, minimum: int | None = None) -> int:
        value = self._raw(name)
        if value is None:
            return default
        try:
            number = int(value)
        except ValueError:
            raise ImproperlyConfigured(f"{name}={value!r} is not a whole number.") from None
        if minimum is not None and number < minimum:
            raise ImproperlyConfigured(f"{name}={number} is below its minimum of {minimum}.")
        return number

    def list(self, name: str, default: list[str] | None = None) -> list[str]:
        value = self._raw(name)
        if value is None:
            return list(default or [])
        items = [item.strip() for item in value.split(",")]
        if any(item == "" for item in items):
            raise ImproperlyConfigured(f"{name}={value!r} has an empty item in its list.")
        return items

    def as_written(self, name: str) -> str:
        """The value exactly as set, spaces included (a password); "" when unset."""
        return self.environ.get(name, "")

    def url(self, name: str, schemes: tuple[str, ...]) -> str | None:
        value = self._raw(name)
        if value is None:
            return None
        scheme = value.split("://", 1)[0] if "://" in value else ""
        if scheme not in schemes:
            raise ImproperlyConfigured(
                f"{name} must be a URL starting with one of {', '.join(s + '://' for s in schemes)}"
            )
        return value

    def rate(self, name: str, default: str) -> str:
        """A DRF throttle rate: ``<requests>/<second|minute|hour|day>`` (DRF reads only the
        unit's first letter, and would fail at the first request on anything else)."""
        value = self.str(name, default)
        if not re.fullmatch(r"[0-9]+/(s|sec|second|m|min|minute|h|hour|d|day)", value):
            raise ImproperlyConfigured(
                f"{name}={value!r} is not a rate like 20/hour (per second, minute, hour, day)."
            )
        return value


def parse_database_url(url: str, **options: Any) -> dict[str, Any]:
    """``dj_database_url.parse``, its refusal named: a raw ``/``, ``?`` or ``#`` in a password
    splits the URL elsewhere. The message leaves the URL out, as it may hold that password."""
    try:
        return dict(dj_database_url.parse(url, **options))
    except ValueError as exc:
        raise ImproperlyConfigured(
            "DATABASE_URL is not a valid URL. A password with / ? # or % in it must be "
            "percent-encoded there (%2F %3F %23 %25); or leave it out of the URL and set "
            "DATABASE_PASSWORD to it as it is."
        ) from exc
