"""The admin login's guard against password guessing (django-axes).

Axes locks a username at one client address out of the admin login after
``ADMIN_LOGIN_FAILURE_LIMIT`` wrong passwords, for ``ADMIN_LOGIN_COOLOFF_SECONDS``. The API's
password login has its own rate limit (``arena.accounts.throttles``): axes leaves it alone."""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler
from django.http import HttpRequest
from rest_framework.throttling import BaseThrottle


def client_address(request: HttpRequest) -> str:
    """The client's address as the API's rate limits see it: ``REMOTE_ADDR``, or the address
    the ``NUM_PROXIES``-th proxy of our own appended to X-Forwarded-For. Behind compose's nginx,
    REMOTE_ADDR is nginx's, and one guesser would lock a user out for everyone."""
    return str(BaseThrottle().get_ident(request))  # type: ignore[arg-type]


class AdminOnlyHandler(AxesDatabaseHandler):  # type: ignore[misc]
    """Axes' database handler for the admin site only. Its backend authenticates every login,
    the API's too; left alone, a user's wrong API passwords would be recorded here and, past
    the limit, the API's JSON answer replaced by axes' lockout page."""

    def user_login_failed(self, sender: Any, credentials: dict[str, Any], request: Any = None,
                          **kwargs: Any) -> None:
        if request is not None and self.is_admin_request(request):
            super().user_login_failed(sender, credentials, request, **kwargs)

    def user_logged_in(self, sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
        if request is not None and self.is_admin_request(request):
            super().user_logged_in(sender, request, user, **kwargs)

    def user_logged_out(self, sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
        if request is not None and self.is_admin_request(request):
            super().user_logged_out(sender, request, user, **kwargs)


class AdminLoginBackend(AxesStandaloneBackend):  # type: ignore[misc]
    """Axes' lockout check, for logins that come with a request. A login without one (a
    script, a test client's ``login``) is no web form anyone could be guessing through; axes
    itself would refuse it with an error."""

    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> None:
        if request is None:
            return None
        return super().authenticate(  # type: ignore[no-any-return]
            request, username=username, password=password, **kwargs
        )
