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
_NAMES = frozenset(spec.name for spec in fields(Options)) - _NOT_RULES


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
        if name == "target_score" and parsed.single_hand:
            continue  # one hand is the whole game: no target is ever reached
        if value is True:
            parts.append(name)
        elif value is False:
            parts.append(f"{name}=false")
        else:
            parts.append(f"{name}={value}")
    return ",".join(parts) or OFFICIAL


def rule_set_named(name: str) -> str:
    """The canonical name of the rule set ``name`` spells (as ``canonical_rule_set`` writes
    names, in any order: ``"stacking,single_hand"`` is ``"single_hand,stacking"``). Raises
    ``ValueError`` for a name that spells no valid rules."""
    name = name.strip()
    if name == OFFICIAL:
        return OFFICIAL
    options: dict[str, object] = {}
    for part in name.split(","):
        key, sep, text = part.strip().partition("=")
        if key not in _NAMES:
            raise ValueError(f"no rule is called {key!r}")
        if key in options:
            raise ValueError(f"{key} is given twice")
        default = getattr(_DEFAULTS, key)
        if not sep:
            options[key] = True
        elif isinstance(default, bool):
            if text not in ("true", "false"):
                raise ValueError(f"{key} is true or false")
            options[key] = text == "true"
        else:
            try:
                options[key] = int(text)
            except ValueError:
                raise ValueError(f"{key} takes a whole number") from None
    return canonical_rule_set(options)
