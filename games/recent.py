"""The newest committed rows of the games this process recently read or wrote, kept for
``games.rows``: a player's next move, the other seats' waits and the stream's turns then need
not read them again (why that is safe: ``Recent``). Bookkeeping only; the SQL that reads and
writes these rows stays in ``games.rows``."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from django.db import DEFAULT_DB_ALIAS, connection, models, transaction

from games.models import Game, Seat

# JSON columns are kept as text in a record, so every recall decodes fresh objects nobody
# else holds (the engine and the services mutate what they are given).
GAME_FIELDS = Game._meta.concrete_fields
JSON_FIELDS = frozenset(i for i, f in enumerate(GAME_FIELDS) if isinstance(f, models.JSONField))
_VERSION = next(i for i, f in enumerate(GAME_FIELDS) if f.name == "version")
_DATETIMES = frozenset(
    i for i, f in enumerate(GAME_FIELDS) if isinstance(f, models.DateTimeField)
)


def game_record(game: Game, encoded: dict[str, str | None] | None = None) -> tuple[Any, ...]:
    """``game``'s row with JSON as text; ``encoded``: columns' text already made, by name."""
    encoded = encoded or {}
    return tuple(
        encoded.get(field.name) or json_text(field, value)
        if i in JSON_FIELDS and (value := getattr(game, field.attname)) is not None
        else getattr(game, field.attname)
        for i, field in enumerate(GAME_FIELDS)
    )


def json_text(field: models.Field[Any, Any], value: Any) -> str:
    """A JSON column's value as the text to store: orjson for a field with no encoder of its
    own (a game's state is encoded on every move; orjson takes a tenth of the json module's
    time), else the field's encoder."""
    return dumped(value, field.encoder)  # type: ignore[attr-defined]


def dumped(value: Any, encoder: type[json.JSONEncoder] | None = None) -> str:
    if encoder is None:
        try:
            return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:  # what orjson refuses (an integer past 64 bits): as json does
            pass
    return json.dumps(value, cls=encoder)


def loaded(text: str, decoder: type[json.JSONDecoder] | None = None) -> Any:
    """JSON text's value: orjson for a field with no decoder of its own (the same values the
    json module gives), else the field's decoder. Text that may hold an integer orjson reads
    as a float goes to the json module too (``_may_pass_64_bits``)."""
    if decoder is None and not _may_pass_64_bits(text):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:  # what orjson refuses: as json does
            pass
    return json.loads(text, cls=decoder)


def _may_pass_64_bits(text: str) -> bool:
    """Whether ``text`` has a run of 20 digits, or of 19 after a minus: orjson reads integers
    exactly from -2**63 to 2**64 - 1 (every 19-digit number but negative ones, such as a
    game's 64-bit seed), and the others as floats. Digits made zeros and all else spaces, a
    substring search does it: a regular expression took 40 to 90 us on an RNG state's 3 kB
    of base64, read on every move, and this takes a twentieth of that."""
    # (surrogatepass: a lone surrogate is json's to read or refuse, not this check's)
    marked = text.encode("utf-8", "surrogatepass").translate(_DIGITS_AS_ZEROS)
    return _TWENTY_DIGITS in marked or _MINUS_NINETEEN_DIGITS in marked


_DIGITS_AS_ZEROS = bytes(
    ord("0") if byte in b"0123456789" else byte if byte == ord("-") else ord(" ")
    for byte in range(256)
)
_TWENTY_DIGITS = b"0" * 20
_MINUS_NINETEEN_DIGITS = b"-" + b"0" * 19


def seat_from_records(
    seat_values: tuple[Any, ...], game_record: tuple[Any, ...], forfeited: int
) -> Seat:
    game = game_from_record(game_record, forfeited)
    seat = Seat.from_db(connection.alias, None, seat_values)
    Seat.game.field.set_cached_value(seat, game)
    return seat


def game_from_record(game_record: tuple[Any, ...], forfeited: int) -> Game:
    values = [
        loaded(value, field.decoder) if i in JSON_FIELDS and value is not None
        else value
        for i, (value, field) in enumerate(zip(game_record, GAME_FIELDS, strict=True))
    ]
    # The default database's alias, not ``connection``'s: this runs on event loops too.
    game = Game.from_db(DEFAULT_DB_ALIAS, None, values)
    game.forfeited_seats = forfeited
    return game


def game_from_notified(row_text: str) -> Game:
    """The game from the row a NOTIFY carried (``to_jsonb`` of the row, migration 0008): the
    values a read gives, but ``forfeited_seats`` unknown (it counts seats). For a seat's view
    only; never kept in ``recent``, whose rows a move's fast path trusts with that count."""
    row = loaded(row_text)
    values = [
        datetime.fromisoformat(value)
        if i in _DATETIMES and (value := row.get(field.column)) is not None
        else row.get(field.column)
        for i, field in enumerate(GAME_FIELDS)
    ]
    return Game.from_db(DEFAULT_DB_ALIAS, None, values)


@dataclass(frozen=True)
class _Remembered:
    """A game row (JSON as text) and the seats known at that same version, by user id."""

    record: tuple[Any, ...]
    forfeited: int
    seats: dict[object, tuple[Any, ...]]

    @property
    def version(self) -> int:
        return int(self.record[_VERSION])


class Recent:
    """The newest committed row of the games this process recently read or wrote, with the
    seats read at that same version.

    A player's move, decided on version v, arrives on the connection (so the worker process)
    that just answered with v: its seat and game need not be read again. This is safe because
    every change to a game or its seats bumps the game's version and a move is written by
    compare-and-set on it: a seat is recalled only with the game row of the version it was
    read at (or carried to, by a plain move, which changes no seat), so the pair is exactly
    what one read at that version would give, and a recalled version that is out of date only
    makes the write fail; the locked path then answers. Rows are remembered only once
    committed.
    """

    GAMES = 1024

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._games: OrderedDict[int, _Remembered] = OrderedDict()

    def recall(self, game_id: int, user_id: object, version: int) -> Seat | None:
        with self._lock:
            known = self._games.get(game_id)
        if known is None or known.version != version:
            return None
        seat = known.seats.get(user_id)
        if seat is None:
            return None
        return seat_from_records(seat, known.record, known.forfeited)

    def recall_game(self, game_id: int, version: int) -> Game | None:
        with self._lock:
            known = self._games.get(game_id)
        if known is None or known.version != version:
            return None
        return game_from_record(known.record, known.forfeited)

    def remember_read(
        self,
        game_id: int,
        user_id: object,
        seat_values: tuple[Any, ...],
        game_record: tuple[Any, ...],
        forfeited: int,
    ) -> None:
        """A seat and its game, read together (so at the same version)."""
        version = game_record[_VERSION]
        with self._lock:
            known = self._games.get(game_id)
            if known is not None and known.version > version:
                return  # this process already knows a newer row
            seats = known.seats if known is not None and known.version == version else {}
            self._store(game_id, _Remembered(game_record, forfeited, {**seats,
                                                                      user_id: seat_values}))

    def remember_move(
        self, game_id: int, game_record: tuple[Any, ...], forfeited: int, *, previous: int
    ) -> None:
        """A plain move took the game from version ``previous`` to ``game_record``'s by
        compare-and-set: no seat changed, so the seats known at ``previous`` still hold."""
        with self._lock:
            known = self._games.get(game_id)
            if known is not None and known.version >= game_record[_VERSION]:
                return
            seats = known.seats if known is not None and known.version == previous else {}
            self._store(game_id, _Remembered(game_record, forfeited, seats))

    def _store(self, game_id: int, remembered: _Remembered) -> None:  # under _lock
        self._games[game_id] = remembered
        self._games.move_to_end(game_id)
        if len(self._games) > self.GAMES:
            self._games.popitem(last=False)

    def forget_all(self) -> None:
        with self._lock:
            self._games.clear()


recent = Recent()
forget_all = recent.forget_all


def remember_written(game: Game, *, previous: int, encoded: dict[str, str | None]) -> None:
    """Remember ``game`` as just written by a plain move from version ``previous`` (no seat
    changed, none forfeited), once the write commits (at once outside a transaction): the
    other seats' long polls and the mover's next move in this process then need not read it."""
    record = game_record(game, encoded)
    transaction.on_commit(lambda: recent.remember_move(game.pk, record, 0, previous=previous))
