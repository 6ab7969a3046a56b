"""Create (or reset) the demo admin of the embedded default and print its login."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

USERNAME = "admin"


class Command(BaseCommand):
    help = "Create or reset the demo admin user (embedded default only) and print its login."

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.PRODUCTION:
            raise CommandError("demo_admin is refused when ARENA_PRODUCTION=true.")
        # A fresh password each run: nothing guessable survives on a developer's machine.
        password = secrets.token_urlsafe(12)
        user, _ = get_user_model().objects.get_or_create(username=USERNAME)
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        self.stdout.write(
            self.style.SUCCESS(f"Admin login: username {USERNAME!r}, password {password!r}")
        )
