"""``Idempotency-Key``: a retried POST gets the first response instead of acting twice."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.exceptions import ValidationError

from games.errors import IdempotencyKeyReused
from games.models import Game, IdempotencyRecord

MAX_KEY_LENGTH = 255
# How long a key is remembered (Stripe's choice): retries come within seconds; a day covers a
# bot that was down, and keeps the table small.
KEY_LIFETIME = timedelta(hours=24)


def request_fingerprint(*, method: str, path: str, body: Any) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(f"{method} {path}\n{canonical}".encode()).hexdigest()


def idempotent_call(
    *,
    user: AbstractBaseUser,
    key: str,
    fingerprint: str,
    game_id: int,
    produce: Callable[[], tuple[int, Any]],
) -> tuple[int, Any, bool]:
    """Run ``produce`` until it succeeds once per (user, key); returns (status, body,
    replayed).

    The game row is locked first, so two concurrent retries of one request are serialised:
    the second finds the first one's record instead of racing it. Only a success (2xx) is
    stored, as Stripe does: a refused request changed nothing, so running it again gives the
    same answer (a move is pinned to its version), and a corrected request may use the key.
    A key is remembered for ``KEY_LIFETIME``; the user's older records are swept here.

    One key sent at once for two different games (each request locks only its own game) is
    caught by the key's unique constraint: the late request is rolled back whole, its move
    included, and answered from the record that won.
    """
    _check_key(key)
    try:
        with transaction.atomic():
            Game.objects.select_for_update().filter(pk=game_id).first()
            IdempotencyRecord.objects.filter(
                user=user, created_at__lt=timezone.now() - KEY_LIFETIME
            ).delete()
            known = _recorded(user=user, key=key, fingerprint=fingerprint)
            if known is not None:
                return known
            status_code, body = produce()
            if 200 <= status_code < 300:
                IdempotencyRecord.objects.create(
                    user=user, key=key, fingerprint=fingerprint, status_code=status_code,
                    response_body=body,
                )
            return status_code, body, False
    except IntegrityError:
        known = _recorded(user=user, key=key, fingerprint=fingerprint)
        if known is None:
            raise  # not the key's constraint
        return known


def _check_key(key: str) -> None:
    if not key.strip():
        raise ValidationError({"Idempotency-Key": ["Must not be blank."]})
    if len(key) > MAX_KEY_LENGTH:
        raise ValidationError({"Idempotency-Key": [f"At most {MAX_KEY_LENGTH} characters."]})
    if "\x00" in key:  # PostgreSQL refuses NUL in text (HTTP servers refuse it in headers)
        raise ValidationError({"Idempotency-Key": ["Must not contain NUL."]})


def _recorded(
    *, user: AbstractBaseUser, key: str, fingerprint: str
) -> tuple[int, Any, bool] | None:
    """The stored answer to the key, if any: the same request's, or a 422 for another's."""
    record = IdempotencyRecord.objects.filter(user=user, key=key).first()
    if record is None:
        return None
    if record.fingerprint != fingerprint:
        raise IdempotencyKeyReused()
    return record.status_code, record.response_body, True
