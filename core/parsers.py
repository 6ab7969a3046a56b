"""JSON request bodies read as the schema says, refused with a 400 when no field could mean
anything: nested deeper than any body of ours, or holding a string no database or response can
carry (a lone UTF-16 surrogate such as ``"\\udfff"``, or NUL, which PostgreSQL refuses in text).
And only ``application/json``: a wildcard (``*/*``) is an ``Accept`` value, never a body's type.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils.json import strict_constant

# Our bodies nest three levels at most (a move inside the body, options inside a game); this
# leaves room for any client's wrapping while staying far below the recursion limits of the
# parser, the serializers and the renderer (about a thousand levels for each).
MAX_DEPTH = 32


class StrictJSONParser(JSONParser):
    """DRF's JSON parser with the limits above. The usual small body costs two character
    counts and a substring search beyond parsing; only a body that could break a limit is
    walked (without recursion, at about the cost of parsing it)."""

    def parse(self, stream: Any, media_type: str | None = None,
              parser_context: dict[str, Any] | None = None) -> Any:
        encoding = get_encoding(parser_context or {})
        raw = stream.read()
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise ParseError(f"JSON parse error - the body is not {encoding}: {exc}") from None
        try:
            data = json.loads(text, parse_constant=strict_constant if self.strict else None,
                              object_pairs_hook=object_without_repeats)
        except RecursionError:  # some hundreds of levels, with the stack a request already has
            raise ParseError(_TOO_DEEP) from None
        except ValueError as exc:
            if "int_max_str_digits" in str(exc):  # not Python's advice to the client
                raise ParseError("JSON parse error - a number with more than "
                                 f"{sys.get_int_max_str_digits()} digits.") from None
            raise ParseError(f"JSON parse error - {exc}") from None
        # Brackets inside strings count too: a cheap bound, exact only when it matters.
        if text.count("[") + text.count("{") > MAX_DEPTH and _too_deep(data):
            raise ParseError(_TOO_DEEP)
        # NUL and surrogates can only arrive escaped (a raw control character or an unpaired
        # surrogate is already a parse or decode error), so bodies without "\u" skip the walk.
        if "\\u" in text:
            _refuse_bad_strings(data)
        return data


_TOO_DEEP = f"JSON parse error - nested deeper than {MAX_DEPTH} levels."


class RepeatedKey(ValueError):
    """A JSON object gave ``key`` twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} is given twice")
        self.key = key


def object_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object (``json.loads``' ``object_pairs_hook``); a key given twice raises
    RepeatedKey (``{"seats": 2, "seats": 3}``: the standard library would keep the last, a
    guess at what the client meant). The API's requests and the bots' answers alike."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        raise RepeatedKey(next(key for key, _ in pairs if key in seen or seen.add(key)))
    return found


def _too_deep(data: Any) -> bool:
    """Whether arrays and objects nest deeper than MAX_DEPTH, a level at a time (no recursion:
    the parser can build structures deeper than Python code could recurse into)."""
    level = [data] if isinstance(data, dict | list) else []
    for _ in range(MAX_DEPTH):
        below: list[Any] = []
        for container in level:
            items = container.values() if isinstance(container, dict) else container
            below.extend(item for item in items if isinstance(item, dict | list))
        if not below:
            return False
        level = below
    return True


def _refuse_bad_strings(data: Any) -> None:
    """ParseError for a string (key or value) with NUL or a lone surrogate; no recursion."""
    pending = [data]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            _check_string(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                _check_string(key)
                pending.append(item)
        elif isinstance(value, list):
            pending.extend(value)


def _check_string(value: str) -> None:
    if "\x00" in value:
        raise ParseError("JSON parse error - strings may not contain NUL (\\u0000).")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ParseError(
                "JSON parse error - a string holds a lone surrogate (\\ud800-\\udfff): "
                "not Unicode text."
            ) from None


class ExactContentNegotiation(DefaultContentNegotiation):
    """A body is parsed only when its Content-Type names a parser's type exactly (parameters
    such as ``charset`` aside). DRF would take ``*/*`` or ``application/*`` as JSON."""

    def select_parser(self, request: Any, parsers: Any) -> Any:
        content_type = request.content_type or ""
        if "*" in content_type.split(";", 1)[0]:
            return None  # a 415
        return super().select_parser(request, parsers)
