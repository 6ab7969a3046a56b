"""Accounts and API tokens. Tokens are django-rest-knox tokens: only a digest is stored, the
key is shown once at creation. A token is named by its public prefix (``token_key``, the first
15 characters of the key), never by its digest."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.exceptions import ValidationError

USERNAME_TAKEN = "A user with that username already exists."


@transaction.atomic
def user_create(*, username: str, password: str) -> AbstractBaseUser:
    User = get_user_model()
    # Compared as Django stores it, NFKC-normalised (fullwidth letters are plain ones), any case.
    username = User.normalize_username(username)
    if User.objects.filter(username__iexact=username).exists():
        raise ValidationError({"username": [USERNAME_TAKEN]})
    user = User(username=username)
    try:
        validate_password(password, user=user)
    except DjangoValidationError as exc:
        raise ValidationError({"password": list(exc.messages)}) from None
    user.set_password(password)
    try:
        user.full_clean(exclude=["password"])
    except DjangoValidationError as exc:
        raise ValidationError(exc.message_dict) from None
    try:
        with transaction.atomic():  # a savepoint: the same name signed up at the same moment
            user.save()
    except IntegrityError:
        raise ValidationError({"username": [USERNAME_TAKEN]}) from None
    return user


def token_create(
    *, user: AbstractBaseUser, expires_in: int | None = None, not_after: datetime | None = None
) -> tuple[AuthToken, str]:
    """A new token; returns (record, key). The key is not stored and cannot be shown again.

    ``not_after``: the expiry of the token the request came with, if any. A token made with a
    token lives no longer than it, or a stolen short-lived key could mint a permanent one."""
    expiry = timedelta(seconds=expires_in) if expires_in else None
    if not_after is not None:
        left = max(not_after - timezone.now(), timedelta(0))
        expiry = left if expiry is None else min(expiry, left)
    tokens_expired_delete(user=user)
    return AuthToken.objects.create(user=user, expiry=expiry)


def token_list(*, user: AbstractBaseUser) -> QuerySet[AuthToken]:
    tokens_expired_delete(user=user)
    return AuthToken.objects.filter(user=user).order_by("-created")


def tokens_expired_delete(*, user: AbstractBaseUser) -> int:
    """Sweep the user's expired tokens (authentication only refuses the one it is shown)."""
    deleted, _ = AuthToken.objects.filter(user=user, expiry__lt=timezone.now()).delete()
    return deleted


def token_revoke(*, user: AbstractBaseUser, token_id: str) -> bool:
    if "\x00" in token_id:  # names no token; PostgreSQL refuses NUL in text even to compare
        return False
    deleted, _ = AuthToken.objects.filter(user=user, token_key=token_id).delete()
    return deleted > 0
