"""API token authentication: knox tokens (hashed at rest), sent as ``Token`` or ``Bearer``."""

from __future__ import annotations

import binascii
import functools
import re
from dataclasses import dataclass
from hmac import compare_digest
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from knox.crypto import hash_token
from knox.models import get_token_model
from knox.settings import CONSTANTS, knox_settings
from rest_framework import exceptions
from rest_framework.authentication import (
    BaseAuthentication,
    BasicAuthentication,
    get_authorization_header,
)
from rest_framework.request import Request

from core.postgresql.prepared import prepared_cursor

_PRINTABLE_ASCII = re.compile(rb"[!-~]+")


class TokenAuthentication(KnoxTokenAuthentication):
    """Knox token authentication that also accepts the ``Bearer`` scheme most clients default to."""

    schemes = (b"token", b"bearer")

    def authenticate(self, request: Request) -> Any:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in self.schemes:
            return None
        # A key is printable ASCII: knox would crash on anything else, and a control character
        # (NUL) would reach PostgreSQL, which refuses it in text.
        if len(parts) != 2 or not _PRINTABLE_ASCII.fullmatch(parts[1]):
            raise exceptions.AuthenticationFailed(
                "Invalid Authorization header: expected 'Token <key>' or 'Bearer <key>'."
            )
        return self.authenticate_credentials(parts[1])

    def authenticate_credentials(self, token: bytes) -> tuple[Any, Any]:
        """Knox's, with the candidates found by ``tokens_with_users`` (the same query, compiled
        once per process instead of on every request)."""
        key = token.decode()
        for auth_token in tokens_with_users(key[: CONSTANTS.TOKEN_KEY_LENGTH]):
            if self._cleanup_token(auth_token):
                continue
            try:
                digest = hash_token(key)
            except (TypeError, binascii.Error) as error:
                raise exceptions.AuthenticationFailed("Invalid token.") from error
            if compare_digest(digest, auth_token.digest):
                if knox_settings.AUTO_REFRESH and auth_token.expiry:
                    self.renew_token(auth_token)
                return self.validate_user(auth_token)
        raise exceptions.AuthenticationFailed("Invalid token.")

    def _cleanup_token(self, auth_token: Any) -> bool:
        """Refuse (and delete) this token if it expired. Knox also sweeps every other token of
        the user here, one extra query on every request; we sweep those when tokens are
        listed or created instead (``arena.accounts.services``)."""
        if auth_token.expiry is not None and auth_token.expiry < timezone.now():
            auth_token.delete()
            return True
        return False


def tokens_with_users(token_key: str) -> list[Any]:
    """The tokens whose key starts ``token_key``, each with its user loaded: what knox's
    ``filter(token_key=...).select_related("user")`` returns. Every authenticated request asks
    this first, and building and compiling that query cost about 0.4 ms of CPU, against about
    0.1 ms for running it (docs/scaling.md). So the ORM compiles it once (``_lookup``), and
    each request runs it and makes the two instances from the row."""
    lookup = _lookup()
    with prepared_cursor() as cursor:
        cursor.execute(lookup.sql, [token_key])
        rows = cursor.fetchall()
    split = len(lookup.token_fields)
    found = []
    for values in map(lookup.converted, rows):
        auth_token = lookup.token_model.from_db(
            connection.alias, lookup.token_fields, values[:split])
        auth_token.user = lookup.user_model.from_db(
            connection.alias, lookup.user_fields, values[split:])
        found.append(auth_token)
    return found


@dataclass(frozen=True)
class _Lookup:
    sql: str  # its one parameter: the token key
    token_model: Any
    user_model: Any
    token_fields: list[str]
    user_fields: list[str]  # the columns: the token's fields, then its user's
    converters: list[tuple[int, tuple[list[Any], Any]]]  # the backend's, as the ORM applies them

    def converted(self, row: tuple[Any, ...]) -> list[Any]:
        """A row's values as the ORM gives them (SQLite's datetimes made aware, for one)."""
        values = list(row)
        for position, (functions, expression) in self.converters:
            for function in functions:
                values[position] = function(values[position], expression, connection)
        return values


@functools.cache
def _lookup() -> _Lookup:
    """The lookup as the ORM writes it, compiled once per process."""
    Token, User = get_token_model(), get_user_model()
    token_fields = [field.attname for field in Token._meta.concrete_fields]
    user_fields = [field.attname for field in User._meta.concrete_fields]
    query = Token.objects.filter(token_key="").values_list(
        *token_fields, *(f"user__{name}" for name in user_fields)
    ).query
    compiler = query.get_compiler(connection.alias)
    sql, params = compiler.as_sql()
    assert params == ("",), params  # the key is the query's only parameter
    converters = compiler.get_converters([column for column, _sql, _alias in compiler.select])
    return _Lookup(sql, Token, User, token_fields, user_fields, list(converters.items()))


class PasswordAuthentication(BasicAuthentication):
    """HTTP Basic for the endpoint that trades a password for a token. Wrong credentials
    are not refused here but by the view (``password_refused``): DRF authenticates before it
    throttles, so refusing here would let password guesses bypass the rate limit."""

    def authenticate(self, request: Request) -> Any:
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            return None

    def authenticate_credentials(self, userid: str, password: str, request: Any = None) -> Any:
        # No username holds NUL (sign-up allows letters, digits and @.+-_ only), and PostgreSQL
        # refuses it in text: wrong credentials, found without asking the database.
        if "\x00" in userid:
            raise exceptions.AuthenticationFailed("Invalid username/password.")
        return super().authenticate_credentials(userid, password, request)


def sends_password(request: Request) -> bool:
    """Whether the request sends HTTP Basic credentials."""
    parts = get_authorization_header(request).split()
    return bool(parts) and parts[0].lower() == b"basic"


def password_refused(request: Request) -> bool:
    """Whether the request sent HTTP Basic credentials that did not authenticate it."""
    return sends_password(request) and not request.user.is_authenticated


PASSWORD_NOT_ACCEPTED = (
    "A password (HTTP Basic) only creates and lists tokens (/api/tokens/); send a token here: "
    "'Authorization: Token <key>'."
)


class PasswordNotAccepted(BaseAuthentication):
    """Last of the default authenticators: HTTP Basic sent where only a token is accepted is
    refused as that, not answered "credentials were not provided" (they were)."""

    def authenticate(self, request: Request) -> None:
        if sends_password(request):
            raise exceptions.AuthenticationFailed(PASSWORD_NOT_ACCEPTED)
        return None


class PasswordAuthenticationScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "core.authentication.PasswordAuthentication"
    name = "basicAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "basic"}


class TokenAuthenticationScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "core.authentication.TokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "`Authorization: Token <key>` or `Authorization: Bearer <key>`.",
        }


class PasswordNotAcceptedScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    """Not a way in: nothing to declare."""

    target_class = "core.authentication.PasswordNotAccepted"
    name: list[str] = []

    def get_security_requirement(self, auto_schema: Any) -> None:
        return None

    def get_security_definition(self, auto_schema: Any) -> list[dict[str, str]]:
        return []
