"""``manage.py demo``: the reference bots and the starter bot, served over local HTTP by this
command, verified, and played against each other in a round robin; then the leaderboard.

Safe to re-run: the bots are reused by name (their URLs re-pointed to this run's servers, and
verified again when that changed), and each run adds one more tournament.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena import local_bots, services
from arena.management.commands.arena_main import browsable
from arena.reports import final_table, leaderboard_table, refusals, run_in_foreground

# Single hands keep the demo short (a whole game to 500 points is several hands); duplicate
# deals (with an even number of games per pairing) make its few games tell the strategies
# apart better.
DEMO_OPTIONS = {"single_hand": True}


class Command(BaseCommand):
    help = ("Serve the reference bots and the starter bot locally, verify them, run a round "
            "robin between them and print the leaderboard.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--games-per-pairing", type=int, default=4)
        parser.add_argument("--no-starter", action="store_true",
                            help="Leave the starter bot (a subprocess) out.")
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--admin-url", default=None,
                            help="Where the summary says to browse the results (the admin of "
                            "the server that will serve them; dev.py run passes its own).")

    def handle(self, *args: Any, **options: Any) -> None:
        from django.conf import settings

        if settings.PRODUCTION:
            raise CommandError("demo is for the embedded default, not ARENA_PRODUCTION=true.")
        began = time.monotonic()
        fields = {"options": DEMO_OPTIONS, "table_size": 2,
                  "games_per_pairing": options["games_per_pairing"],
                  "duplicate_deals": options["games_per_pairing"] % 2 == 0,
                  "seed": options["seed"]}
        with refusals():  # before any bot is served: a bad number is one line, not a traceback
            services.tournament_check(name="Demo", **fields)
        owner = local_bots.demo_owner()
        with local_bots.hosted() as hosted:
            for name in local_bots.REFERENCE:
                hosted.serve_reference(name, owner)
            if not options["no_starter"]:
                hosted.start_starter(owner)
            for name, bot in hosted.bots.items():
                self.stdout.write(f"bot {name} at {bot.url}")
            hosted.verify_all(self.stdout.write)
            tournament = services.tournament_create_started(
                owner=owner, bots=list(hosted.bots.values()),
                name=f"Demo round robin {time.strftime('%Y-%m-%d %H:%M:%S')}", **fields)
            self.stdout.write(f"Tournament {tournament.pk}: {len(hosted.bots)} bots, "
                              f"{options['games_per_pairing']} games per pairing")
            tournament = run_in_foreground(tournament, self.stdout)
        self.stdout.write(final_table(tournament))
        self.stdout.write(leaderboard_table(tournament.rule_set))
        what = f"(leaderboard, tournament {tournament.pk}, each game's move log)"
        if options["admin_url"]:
            # Served on every interface (0.0.0.0): the address a browser here asks instead.
            url = urlsplit(options["admin_url"])
            admin = url._replace(netloc=browsable(url.netloc)).geturl().rstrip("/")
            where = f"Browse the results in the admin: {admin}/arena/"
        else:  # run on its own: no server is known to serve them yet
            where = ("Serve the site (python3 dev.py run --no-demo, or manage.py arena_main) "
                     "and browse the results in its admin, under /admin/arena/")
        self.stdout.write(self.style.SUCCESS(
            f"Demo done in {time.monotonic() - began:.0f} s. {where} {what}."))
