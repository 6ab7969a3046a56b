"""The canonical name of a rule set: which Elo ladder a game counts for."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields

from games.uno import Options

OFFICIAL = "official"

# The table size is not a rule set: a four-seat game feeds the same ladder as a two-seat one
# through the pairwise expansion (see ``elo``), as one chess rating covers every opponent.
_NOT_RULES = frozenset({"players"})
_DEFAULTS = Options()


def canonical_rule_set(options: Mapping[str, object] | Options) -> str:
    """A stable key for the rules of ``options``: ``"official"`` when every rule is the
    default, else the non-default rules sorted by name and joined by commas, a switched-on
    boolean by its name alone (``"jump_in,stacking,target_score=200"``).

    The options are validated as the engine validates them (``OptionsError`` if not valid), so
    the same rules always get the same key whatever the order or spelling of the JSON.
    """
    parsed = options if isinstance(options, Options) else Options.from_json(options)
    parts = []
    for spec in sorted(fields(Options), key=lambda f: f.name):
        name = spec.name
        value = getattr(parsed, name)
        if name in _NOT_RULES or value == getattr(_DEFAULTS, name):
            continue
        if value is True:
            parts.append(name)
        elif value is False:
            parts.append(f"{name}=false")
        else:
            parts.append(f"{name}={value}")
    return ",".join(parts) or OFFICIAL
