"""Per-game rule options. Defaults are the official (pre-2018 deck) rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from .errors import OptionsError

MIN_PLAYERS = 2
MAX_PLAYERS = 10
MAX_TARGET_SCORE = 1_000_000


@dataclass(frozen=True, slots=True)
class Options:
    """Rule options of one game; validated on construction (raises ``OptionsError``)."""

    players: int = 2
    stacking: bool = False
    seven_o: bool = False
    jump_in: bool = False
    draw_until_playable: bool = False
    deck_2018: bool = False
    start_2022: bool = False  # the 2022 changes: a number card starts, every wild scores 50
    single_hand: bool = False
    target_score: int = 500

    def __post_init__(self) -> None:
        for name, is_bool in _FIELDS:
            value = getattr(self, name)
            if is_bool:
                if type(value) is not bool:
                    raise OptionsError(name, "must be a boolean")
            elif type(value) is not int:  # bool is a subclass of int: reject it explicitly
                raise OptionsError(name, "must be an integer")
        if not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise OptionsError("players", f"must be between {MIN_PLAYERS} and {MAX_PLAYERS}")
        if not 1 <= self.target_score <= MAX_TARGET_SCORE:
            raise OptionsError("target_score", f"must be between 1 and {MAX_TARGET_SCORE}")

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Options:
        """Strictly validated construction from JSON; missing keys take their defaults."""
        if not isinstance(data, Mapping):
            raise OptionsError("options", "must be a JSON object")
        for key in data:
            if not isinstance(key, str) or key not in _NAMES:
                raise OptionsError(str(key), "unknown option")
        kwargs: dict[str, Any] = dict(data)
        return cls(**kwargs)

    def to_json(self) -> dict[str, object]:
        # Not dataclasses.asdict: it deep-copies every value, and a state is saved every move.
        return {name: getattr(self, name) for name, _ in _FIELDS}


# Each field's name and whether it is a boolean (else an integer), worked out once.
_FIELDS: tuple[tuple[str, bool], ...] = tuple(
    (f.name, f.type == "bool" or f.type is bool) for f in fields(Options)
)
_NAMES = frozenset(name for name, _ in _FIELDS)
