"""API token authentication: knox tokens (hashed at rest), sent as ``Token`` or ``Bearer``."""

from __future__ import annotations

import re
from typing import Any

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from rest_framework import exceptions
from rest_framework.authentication import (
    BaseAuthentication,
    BasicAuthentication,
    get_authorization_header,
)
from rest_framework.request import Request

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

    def _cleanup_token(self, auth_token: Any) -> bool:
        """Refuse (and delete) this token if it expired. Knox also sweeps every other token of
        the user here, one extra query on every request; we sweep those when tokens are
        listed or created instead (``arena.accounts.services``)."""
        if auth_token.expiry is not None and auth_token.expiry < timezone.now():
            auth_token.delete()
            return True
        return False


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
