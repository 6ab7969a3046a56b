"""``manage.py tournament run``: play a tournament in this process, with a live progress bar
and the final table.

    manage.py tournament run 12                      # an existing tournament, by id
    manage.py tournament run --bots my-bot heuristic --games-per-pairing 10 \\
        --options '{"single_hand": true}' --seed 7   # a new one between these bots

The reference bots (random, greedy, heuristic) registered by ``manage.py demo`` are served by
this command itself while it runs, so they can always be named here. A running tournament's
matches that a worker or the server already plays are followed to their end (the bar moves
with them), then the final table is printed.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena import local_bots, services
from arena.models import Tournament, TournamentStatus
from arena.reports import final_table, refusals, run_in_foreground
from bots.models import Bot


class Command(BaseCommand):
    help = "Tournaments from the terminal: `tournament run` plays one in the foreground."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        run = sub.add_parser("run", help="Run a tournament here, with a progress bar.")
        run.add_argument("tournament", nargs="?", type=int,
                         help="An existing tournament's id (draft or running).")
        run.add_argument("--bots", nargs="+", metavar="NAME",
                         help="Create a tournament between these bots (by name).")
        run.add_argument("--name", default="", help="The new tournament's name.")
        run.add_argument("--owner", default="", help="Its owner (a user name; default: the "
                         "demo user).")
        run.add_argument("--options", default="{}", help="Engine options as JSON.")
        run.add_argument("--table-size", type=int, default=2)
        run.add_argument("--games-per-pairing", type=int, default=2)
        run.add_argument("--duplicate-deals", action="store_true")
        run.add_argument("--turn-timeout-ms", type=int, default=1000)
        run.add_argument("--max-strikes", type=int, default=3)
        run.add_argument("--seed", type=int, default=None)
        run.add_argument("--unrated", action="store_true", help="Leave the Elo ratings alone.")

    def handle(self, *args: Any, **options: Any) -> None:
        if (options["tournament"] is None) == (not options["bots"]):
            raise CommandError("Give either a tournament id or --bots NAME NAME ...")
        with local_bots.hosted() as hosted:
            if options["tournament"] is not None:
                tournament = Tournament.objects.filter(pk=options["tournament"]).first()
                if tournament is None:
                    raise CommandError(f"No tournament {options['tournament']}.")
                if tournament.status not in (TournamentStatus.DRAFT, TournamentStatus.RUNNING):
                    raise CommandError(f"Tournament {tournament.pk} is {tournament.status}.")
                bots = list(Bot.objects.filter(entries__tournament=tournament))
            else:
                bots = [_bot(name) for name in options["bots"]]
            _host_reference_bots(hosted, bots, self.stdout.write)
            if options["tournament"] is None:
                tournament = _create(options, bots)
                self.stdout.write(f"Tournament {tournament.pk} ({tournament.name}): "
                                  f"{len(bots)} bots")
            with refusals():
                tournament = run_in_foreground(tournament, self.stdout)
        self.stdout.write(final_table(tournament))


def _bot(name: str) -> Bot:
    bot = Bot.objects.filter(name__iexact=name).first()
    if bot is None:
        raise CommandError(f"No bot named {name!r}.")
    return bot


def _host_reference_bots(hosted: local_bots.LocalBots, bots: list[Bot], say: Any) -> None:
    """Serve the demo's reference bots here (their servers lived in the demo's process)."""
    owner = local_bots.demo_owner()
    for bot in {b.pk: b for b in bots}.values():  # each once (a name given twice is refused)
        if bot.owner_id == owner.pk and bot.name in local_bots.REFERENCE:
            hosted.serve_reference(bot.name, owner)
    hosted.verify_all(say)


def _create(options: dict[str, Any], bots: list[Bot]) -> Tournament:
    try:
        engine_options = json.loads(options["options"])
    except ValueError as exc:
        raise CommandError(f"--options is not JSON: {exc}") from None
    if options["owner"]:
        owner = get_user_model().objects.filter(username=options["owner"]).first()
        if owner is None:
            raise CommandError(f"No user {options['owner']!r}.")
    else:
        owner = local_bots.demo_owner()
    names = ", ".join(b.name for b in bots)
    with refusals():  # created, entered and started in one transaction, or nothing is
        return services.tournament_create_started(
            owner=owner, bots=bots, name=options["name"] or f"Round robin: {names}"[:100],
            options=engine_options, table_size=options["table_size"],
            games_per_pairing=options["games_per_pairing"],
            duplicate_deals=options["duplicate_deals"],
            turn_timeout_ms=options["turn_timeout_ms"], max_strikes=options["max_strikes"],
            seed=options["seed"], rated=not options["unrated"],
        )
