"""The main job of the embedded default: serve the site on http://127.0.0.1:8000/."""

from __future__ import annotations

from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Run the main job: the web server with the admin and the API docs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--addr", default="127.0.0.1:8000", help="address:port to serve on")

    def handle(self, *args: Any, **options: Any) -> None:
        addr = options["addr"]
        self.stdout.write(
            f"Uno Arena on http://{addr}/  (API docs: /api/docs/, admin: /admin/). Ctrl-C stops."
        )
        call_command("runserver", addr, use_reloader=False)
