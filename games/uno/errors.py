"""Exceptions raised by the engine. Every error carries a short human ``reason``."""

from __future__ import annotations


class UnoError(Exception):
    """Base class of every engine error."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class MalformedMove(UnoError):
    """The move is not a well-formed move at all (bad JSON shape, unknown card code...)."""


class IllegalMove(UnoError):
    """The move is well formed but not allowed for this seat in this state."""


class OptionsError(UnoError):
    """Invalid game options; ``field`` names the offending key."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"
