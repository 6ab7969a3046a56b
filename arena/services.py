"""Tournaments: create, enter, start, cancel, play (``arena.runner``), record, finalize.

Execution (docs/scaling.md): ``tournament_start`` cuts the round robin into matches (one table
of bots and its games) and sends one Celery task per match once the start commits; on the
embedded default (no broker) a background thread of the server process plays them instead.
A match is claimed with a conditional update, and each finished game is recorded in one
transaction (``records.games_record``), so a redelivered, duplicated or taken-over task never
plays or records a game twice. The last match to end, or the periodic sweep, finalizes the
tournament once (a conditional update on ``finalized_at``).

Recording the games and the Elo order: ``arena.records``.
"""

from __future__ import annotations

import logging
import math
import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import close_old_connections, connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from rest_framework.exceptions import ValidationError

from arena import records, schedule
from arena.errors import BotNotEligible, NotBotOwner, NotTournamentOwner, TournamentError
from arena.models import (
    Entrant,
    Match,
    MatchStatus,
    Tournament,
    TournamentGame,
    TournamentStatus,
)
from arena.ratings import canonical_rule_set
from bots.models import Bot, eligible
from core import broker, metrics
from core.api_errors import ApiError
from games import batch
from games import services as game_services
from games.models import Game, GameStatus, Seat
from games.uno import Options

log = logging.getLogger(__name__)

MAX_GAMES = 100_000  # games one tournament may schedule
FOLLOW_POLL_SECONDS = 0.5  # how often a run that follows other runners looks at their matches


# --- create, enter, withdraw -----------------------------------------------------------------
def _may_run(tournament: Tournament, user: AbstractBaseUser) -> None:
    if tournament.owner_id != user.pk and not user.is_staff:
        raise NotTournamentOwner()


def _locked(tournament_id: int) -> Tournament:
    return Tournament.objects.select_for_update().get(pk=tournament_id)


def _check_range(field: str, value: object, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise ValidationError({field: [f"Must be a whole number from {low} to {high}."]})
    return value


def tournament_options(*, options: Mapping[str, object], table_size: int) -> Options:
    """The engine's options for the tournament's tables (a bad one: a 400 naming it). Their
    number of players is the table size: ``players`` may be left out, or must agree."""
    players = options.get("players") if isinstance(options, Mapping) else None
    if players is not None and players != table_size:
        raise ValidationError({"options.players": [
            f"must equal table_size ({table_size}), or be left out: a tournament's tables "
            "have table_size seats."]})
    return game_services.parse_options(options, seats=table_size)


@transaction.atomic
def tournament_create(*, owner: AbstractBaseUser, **fields: Any) -> Tournament:
    """A draft tournament of ``owner``'s, with ``fields`` as ``tournament_check`` takes them."""
    return Tournament.objects.create(owner=owner, **tournament_check(**fields))


def tournament_check(
    *,
    name: str,
    options: Mapping[str, object],
    table_size: int = 2,
    games_per_pairing: int = 2,
    duplicate_deals: bool = False,
    turn_timeout_ms: int = 1000,
    max_strikes: int = 3,
    seed: int | None = None,
    rated: bool = True,
) -> dict[str, Any]:
    """A new tournament's fields as ``tournament_create`` stores them (a random seed if none
    is given), or a ValidationError naming what is wrong: the API's 400, the admin form's
    errors."""
    _check_range("table_size", table_size, schedule.MIN_TABLE, schedule.MAX_TABLE)
    _check_range("games_per_pairing", games_per_pairing, 1, 1000)
    _check_range("turn_timeout_ms", turn_timeout_ms, 1, 10_000)
    _check_range("max_strikes", max_strikes, 1, 100)
    if seed is None:
        seed = secrets.randbits(63)
    _check_range("seed", seed, 0, 2**63 - 1)
    if duplicate_deals and games_per_pairing % table_size:
        raise ValidationError({"games_per_pairing": [
            f"With duplicate deals it must be a multiple of the table size ({table_size})."]})
    if not str(name).strip():
        raise ValidationError({"name": ["This field may not be blank."]})
    parsed = tournament_options(options=options, table_size=table_size)
    return {
        "name": str(name).strip()[:100], "options": parsed.to_json(),
        "rule_set": canonical_rule_set(parsed), "table_size": table_size,
        "games_per_pairing": games_per_pairing, "duplicate_deals": bool(duplicate_deals),
        "turn_timeout_ms": turn_timeout_ms, "max_strikes": max_strikes, "seed": seed,
        "rated": bool(rated),
    }


# The settings a draft's owner may change (``tournament_update``): all but the seed, which the
# API never shows or takes (each finished game's replay has its own).
EDITABLE = ("name", "options", "table_size", "games_per_pairing", "duplicate_deals",
            "turn_timeout_ms", "max_strikes", "rated")


@transaction.atomic
def tournament_update(*, tournament_id: int, user: AbstractBaseUser,
                      changes: Mapping[str, Any]) -> Tournament:
    """Change a draft's settings (any of ``EDITABLE``), its owner or staff: checked together
    with the ones kept, as ``tournament_check`` checks a new tournament's (a table size the
    options disagree with, duplicate deals that do not fit the games per pairing: a 400, and
    nothing changes). Its entrants stay entered. Once started, its settings are its record."""
    tournament = _locked(tournament_id)
    _may_run(tournament, user)
    if tournament.status != TournamentStatus.DRAFT:
        raise TournamentError(f"The tournament {_past_its_draft(tournament)}: only a draft's "
                              "settings can change.")
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise ValidationError({name: ["Not a setting that can change."] for name in unknown})
    kept = {name: getattr(tournament, name) for name in EDITABLE}
    merged = {**kept, **changes, "seed": tournament.seed}
    # Options merge as the settings do: those named change, the others are kept (the number
    # of players follows the table size, unless named).
    options = {k: v for k, v in kept["options"].items()
               if k != "players" or "table_size" not in changes}
    merged["options"] = {**options, **changes.get("options", {})}
    checked = tournament_check(**merged)
    for name, value in checked.items():
        setattr(tournament, name, value)
    tournament.save(update_fields=list(checked))
    return tournament


@transaction.atomic
def tournament_create_started(*, owner: AbstractBaseUser, bots: Sequence[Bot],
                              **fields: Any) -> Tournament:
    """A tournament of ``owner``'s between ``bots``, in one transaction: created (``fields``
    as ``tournament_check`` takes them), each bot entered by its owner (verified and enabled,
    or refused), and started with nothing dispatched: the caller plays it
    (``tournament_run_foreground``: ``manage.py tournament run``, ``demo``). A refusal, the
    same the API gives at each step, leaves nothing written."""
    seen: set[int] = set()
    for bot in bots:
        if bot.pk in seen:
            raise ValidationError({"bots": [f"{bot.name} is named twice: a bot enters once."]})
        seen.add(bot.pk)
    tournament = tournament_create(owner=owner, **fields)
    for bot in bots:
        entrant_enter(tournament_id=tournament.pk, bot_id=bot.pk, user=bot.owner)
    return tournament_start(tournament_id=tournament.pk, user=owner, dispatch=False)


@transaction.atomic
def entrant_enter(*, tournament_id: int, bot_id: int, user: AbstractBaseUser
                  ) -> tuple[Entrant, bool]:
    """Enter ``user``'s own verified, enabled bot while the tournament takes entrants. The
    entrant, and whether it is new (entering a bot again changes nothing)."""
    tournament = _locked(tournament_id)
    bot = Bot.objects.filter(pk=bot_id).first()
    if bot is None:
        raise ValidationError({"bot": ["No such bot."]})
    if bot.owner_id != user.pk:
        raise NotBotOwner()
    if not bot.eligible:
        raise BotNotEligible(f"{bot.name} is not verified and enabled: only verified, enabled "
                             "bots can enter a tournament.")
    if tournament.status != TournamentStatus.DRAFT:
        raise TournamentError(f"The tournament {_past_its_draft(tournament)}: it takes no more "
                              "entrants.")
    return Entrant.objects.get_or_create(tournament=tournament, bot=bot)


@transaction.atomic
def entrant_withdraw(*, tournament_id: int, bot_id: int, user: AbstractBaseUser) -> None:
    """The bot's owner, the tournament's owner or staff takes a bot out before the start."""
    tournament = _locked(tournament_id)
    entrant = Entrant.objects.select_related("bot").filter(
        tournament=tournament, bot_id=bot_id).first()
    if entrant is None:
        raise ValidationError({"bot": ["That bot is not entered."]})
    if entrant.bot.owner_id != user.pk and tournament.owner_id != user.pk and not user.is_staff:
        raise NotBotOwner()
    if tournament.status != TournamentStatus.DRAFT:
        raise TournamentError(f"The tournament {_past_its_draft(tournament)}: its entrants are "
                              "fixed.")
    entrant.delete()


def _past_its_draft(tournament: Tournament) -> str:
    return {TournamentStatus.RUNNING: "has started", TournamentStatus.FINISHED: "is finished",
            TournamentStatus.CANCELLED: "was cancelled"}.get(tournament.status, "has started")


# --- start, cancel ---------------------------------------------------------------------------
@transaction.atomic
def tournament_start(
    *, tournament_id: int, user: AbstractBaseUser, dispatch: bool = True
) -> Tournament:
    """Schedule the round robin, create its matches and, once committed, send one task per
    match (embedded default: play them in a background thread). ``dispatch=False``: send
    nothing; the caller plays it (``tournament_run_foreground``)."""
    tournament = _locked(tournament_id)
    _may_run(tournament, user)
    if tournament.status != TournamentStatus.DRAFT:
        raise TournamentError(f"The tournament {_past_its_draft(tournament)}.")
    _entrants_still_eligible(tournament)
    bots = list(tournament.entrants.order_by("bot_id").values_list("bot_id", flat=True))
    total = schedule.games_count(len(bots), table_size=tournament.table_size,
                                 games_per_pairing=tournament.games_per_pairing)
    if total > MAX_GAMES:  # before the schedule is built: that alone took seconds
        raise TournamentError(f"That schedules {total} games; the most is {MAX_GAMES}.")
    try:
        planned = schedule.round_robin(
            bots, seed=tournament.seed, table_size=tournament.table_size,
            games_per_pairing=tournament.games_per_pairing,
            duplicate_deals=tournament.duplicate_deals,
        )
    except schedule.ScheduleError as exc:
        raise TournamentError(str(exc)) from None
    tables: dict[frozenset[int], list[dict[str, Any]]] = {}
    for game in planned:
        tables.setdefault(frozenset(game.players), []).append({
            "number": game.index, "seats": list(game.players), "deal": game.deal,
            "seed": game.seed,
        })
    matches = [
        Match(tournament=tournament, number=i, bots=sorted(table), plan=plan,
              games_total=len(plan))
        for i, (table, plan) in enumerate(tables.items())
    ]
    Match.objects.bulk_create(matches)
    tournament.status = TournamentStatus.RUNNING
    tournament.started_at = timezone.now()
    tournament.matches_total = len(matches)
    tournament.games_total = len(planned)
    tournament.save()
    if dispatch:
        tid = tournament.pk
        transaction.on_commit(lambda: _dispatch(tid))
    return tournament


def _entrants_still_eligible(tournament: Tournament) -> None:
    """Entrants were verified and enabled when entered; a bot disabled, or whose URL changed
    (which clears its verification), since then does not start in the tournament. (One
    disabled once the tournament runs forfeits its games instead: the tournament goes on.)"""
    unfit = list(tournament.entrants.exclude(eligible("bot__"))
                 .order_by("bot_id").values_list("bot__name", flat=True))
    if unfit:
        raise BotNotEligible(
            f"No longer verified and enabled: {', '.join(unfit)}. Their owners may verify or "
            "enable them again, or the tournament's owner may withdraw them.")


def _dispatch(tournament_id: int) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        # No broker: never inside the request. One background thread plays the tournament.
        _play_in_background(tournament_id)
        return
    for match_id in Match.objects.filter(
            tournament_id=tournament_id, status=MatchStatus.PENDING).values_list("pk", flat=True):
        match_send(match_id=match_id)


def match_send(*, match_id: int) -> bool:
    """A worker's task for the match; False if the broker cannot take it. The start is
    committed (answering it 500 would leave a running tournament its owner cannot start
    again), and a pending match is the tournament sweep's to send again."""
    from arena.tasks import match_play as task

    return broker.send(
        lambda: task.apply_async((match_id,), queue=settings.TOURNAMENT_QUEUE),
        counter=metrics.MATCH_PUBLISH_ERRORS,
        what=f"match {match_id}", instead="left to the tournament sweep",
    )


# The tournaments a thread of this process plays (the embedded default, which has no broker).
_playing: set[int] = set()
_playing_lock = threading.Lock()


def _play_in_background(tournament_id: int) -> bool:
    """Play the tournament on a background thread of this process, unless one already does
    (SQLite takes one writer at a time). False if one does."""
    with _playing_lock:
        if tournament_id in _playing:
            return False
        _playing.add(tournament_id)
    threading.Thread(target=_run_in_background, args=(tournament_id,), daemon=True,
                     name=f"tournament-{tournament_id}").start()
    return True


def _run_in_background(tournament_id: int) -> None:
    close_old_connections()
    try:
        tournament_run_foreground(tournament_id=tournament_id)
    except Exception:
        log.exception("tournament %s: background run failed", tournament_id)
    finally:
        with _playing_lock:
            _playing.discard(tournament_id)
        connection.close()


@transaction.atomic
def tournament_delete(*, tournament_id: int, user: AbstractBaseUser) -> None:
    """Delete a draft (its entrants with it): the owner's way out of a typo, before anything
    is played. A tournament that has started keeps its record: cancel it instead."""
    tournament = _locked(tournament_id)
    _may_run(tournament, user)
    if tournament.status != TournamentStatus.DRAFT:
        instead = " (cancel it instead)" if tournament.status == TournamentStatus.RUNNING else ""
        raise TournamentError(
            f"The tournament {_past_its_draft(tournament)}: only a draft can be deleted"
            f"{instead}; a tournament that has started keeps its record.")
    tournament.delete()


@transaction.atomic
def tournament_cancel(*, tournament_id: int, user: AbstractBaseUser) -> Tournament:
    """Drop the matches not started; running ones stop before their next game (the game in
    play is finished and recorded). The standings of what was played are kept."""
    tournament = _locked(tournament_id)
    _may_run(tournament, user)
    if tournament.status not in (TournamentStatus.DRAFT, TournamentStatus.RUNNING):
        raise TournamentError("The tournament is already over.")
    tournament.status = TournamentStatus.CANCELLED
    tournament.finished_at = timezone.now()
    tournament.save(update_fields=["status", "finished_at"])
    Match.objects.filter(tournament=tournament, status=MatchStatus.PENDING).update(
        status=MatchStatus.CANCELLED, finished_at=timezone.now())
    tid = tournament.pk
    transaction.on_commit(lambda: tournament_finalize(tournament_id=tid))
    return tournament


# --- claim, play -----------------------------------------------------------------------------
def match_claim(*, match_id: int) -> str | None:
    """Take the match: pending, or running under a claim not renewed for
    TOURNAMENT_CLAIM_STALE_SECONDS (its worker died). One conditional UPDATE on the match's
    own columns, so of two concurrent claims exactly one wins. Returns the claim's token."""
    token = secrets.token_hex(16)
    now = timezone.now()
    stale = now - timedelta(seconds=settings.TOURNAMENT_CLAIM_STALE_SECONDS)
    taken = Match.objects.filter(pk=match_id).filter(
        Q(status=MatchStatus.PENDING) | Q(status=MatchStatus.RUNNING, claimed_at__lt=stale)
    ).update(status=MatchStatus.RUNNING, claim_token=token, claimed_at=now)
    return token if taken else None


def match_play(*, match_id: int, on_progress: Callable[[], None] | None = None,
               chain: bool | None = None) -> bool:
    """Claim the match and play its unrecorded games, then (``chain``; default the
    TOURNAMENT_CHAIN_MATCHES setting) the tournament's next pending matches as its last games
    leave room (``arena.runner.MatchRun.run``). False if someone else has it (or it is over).
    Finalizes the tournament if this was its last match."""
    if chain is None:
        chain = settings.TOURNAMENT_CHAIN_MATCHES
    from arena import runner

    token = match_claim(match_id=match_id)
    if token is None:
        return False
    match = Match.objects.select_related("tournament").get(pk=match_id)
    runner.MatchRun(match, token, on_progress=on_progress, chain=chain).run()
    tournament_finalize(tournament_id=match.tournament_id)
    return True


def match_heartbeat(*, match_id: int, token: str) -> bool:
    """Renew the claim; False if it is no longer ours (taken over, or the match ended)."""
    return bool(Match.objects.filter(
        pk=match_id, claim_token=token, status=MatchStatus.RUNNING,
    ).update(claimed_at=timezone.now()))


@transaction.atomic
def match_end(*, match_id: int, token: str, cancelled: bool) -> bool:
    """The claim's holder ends the match: done once every game is recorded, else cancelled
    (the tournament was, and the match stopped before its next game)."""
    match = Match.objects.select_for_update().filter(
        pk=match_id, claim_token=token, status=MatchStatus.RUNNING).first()
    if match is None:
        return False
    done = match.games_done >= match.games_total
    if not done and not cancelled:
        return False  # a game failed to record: the claim goes stale and the sweep resends it
    match.status = MatchStatus.DONE if done else MatchStatus.CANCELLED
    match.finished_at = timezone.now()
    match.save(update_fields=["status", "finished_at"])
    return True  # (the tournament's ``matches_done`` counted it with its last game's record)


def game_turn_seconds(turn_timeout_ms: int) -> int:
    """The turn clock of a tournament's game: the bot's budget, doubled, plus a second for the
    server's own work, so it never strikes a bot that answered within its budget."""
    return math.ceil(turn_timeout_ms / 1000) * 2 + 1


@transaction.atomic
def games_begin(*, match_id: int, token: str,
                items: Sequence[Mapping[str, Any]]) -> list[tuple[Game, list[Seat]]] | None:
    """Create and start the planned games ``items`` together (their bots seated, each dealt
    from its seed: ``games.batch``, a few multi-row statements) and note them as live on the
    match, if the claim is still ours and the tournament not cancelled (else None, creating
    nothing). Each game's row and seats. No turn-clock tasks: the caller drives the games
    (``arena.runner``) and must mark them driven before the commit."""
    match = _match_claimed(match_id, token)
    if match is None:
        return None
    tournament = match.tournament
    tables = batch.tables_create_started(
        user=tournament.owner, options=tournament.options,
        tables=[(item["seed"], item["seats"]) for item in items],
        turn_seconds=game_turn_seconds(tournament.turn_timeout_ms),
        max_strikes=tournament.max_strikes, clock_tasks=False,
    )
    match.live = {**match.live, **{str(item["number"]): game.pk
                                   for item, (game, _) in zip(items, tables, strict=True)}}
    match.save(update_fields=["live"])
    return tables


def _match_claimed(match_id: int, token: str) -> Match | None:
    """The match, locked, if ``token``'s claim on it still runs and its tournament is not
    cancelled (a running match stops before its next game)."""
    match = Match.objects.select_for_update(of=("self",)).select_related(
        "tournament", "tournament__owner").get(pk=match_id)
    if match.claim_token != token or match.status != MatchStatus.RUNNING:
        return None
    if match.tournament.status == TournamentStatus.CANCELLED:
        return None
    return match


def live_settle(*, match_id: int, token: str) -> tuple[int, int]:
    """Settle the games a dead worker left live (unrecorded) on the match now claimed by
    ``token``: one that finished is recorded as it is; one still running is aborted and will
    be dealt again from the same seed. Returns (recorded, aborted)."""
    match = Match.objects.get(pk=match_id)
    if not match.live:
        return 0, 0  # the common case: nothing was left live
    recorded_numbers = set(TournamentGame.objects.filter(match=match)
                           .values_list("number", flat=True))
    recorded = aborted = 0
    for number, game_id in match.live.items():
        if int(number) in recorded_numbers:
            continue
        status = Game.objects.filter(pk=game_id).values_list("status", flat=True).first()
        if status == GameStatus.FINISHED:
            recorded += records.game_record(match_id=match_id, token=token,
                                            number=int(number), game_id=game_id)
            continue
        try:
            game_services.game_abort(game_id=game_id, reason="interrupted")
            aborted += 1
        except ApiError:
            # Over already. Finished meanwhile (its worker was stopped, not dead, and wrote
            # it on waking): recorded as it is, else its number would be dealt again from
            # the same seed while its replay lay open. Aborted: it is dealt again.
            if Game.objects.filter(pk=game_id, status=GameStatus.FINISHED).exists():
                recorded += records.game_record(match_id=match_id, token=token,
                                                number=int(number), game_id=game_id)
    with transaction.atomic():
        locked = Match.objects.select_for_update().get(pk=match_id)
        if locked.claim_token == token and locked.live:
            locked.live = {}
            locked.save(update_fields=["live"])
    return recorded, aborted


# --- finalize, sweep, foreground -------------------------------------------------------------
def tournament_finalize(*, tournament_id: int) -> bool:
    """Standings and Bradley-Terry, once, when no match is pending or running any more.
    Idempotent: the write is conditional on ``finalized_at`` being unset."""
    tournament = Tournament.objects.get(pk=tournament_id)
    if tournament.finalized_at is not None or tournament.status == TournamentStatus.DRAFT:
        return False
    if tournament.matches.filter(status__in=(MatchStatus.PENDING, MatchStatus.RUNNING)).exists():
        return False
    results = records.tournament_results(tournament)
    table = records.standings_rows(tournament, results)
    fitted = records.bradley_terry_json(tournament, results)
    now = timezone.now()
    with transaction.atomic():
        done = Tournament.objects.filter(pk=tournament_id, finalized_at__isnull=True).update(
            finalized_at=now, standings=table, bradley_terry=fitted)
        if done:
            Tournament.objects.filter(pk=tournament_id, status=TournamentStatus.RUNNING).update(
                status=TournamentStatus.FINISHED, finished_at=now)
    return bool(done)


def tournament_sweep() -> dict[str, int]:
    """The periodic sweep (celery beat): re-send the task of every match of a running
    tournament that is pending (its task may be lost) or claimed by a worker that stopped
    renewing its claim; finalize every tournament left unfinalized. Duplicates are harmless:
    a match is played by whoever claims it."""
    sent = 0
    for match_id in _matches_unplayed().values_list("pk", flat=True):
        sent += match_send(match_id=match_id)  # one not sent is tried at the next sweep
    return {"sent": sent, "finalized": _finalize_the_unfinalized()}


def tournament_sweep_in_process() -> dict[str, int]:
    """The sweep of the embedded default (no broker, no beat; its main job runs this at start
    and every TOURNAMENT_SWEEP_SECONDS): a running tournament with a match left unplayed (by a
    server stopped mid-tournament: its claim goes stale) goes on in a background thread of
    this process, unless one plays it already; the unfinalized ones are finalized."""
    tournaments = set(_matches_unplayed().values_list("tournament_id", flat=True))
    started = sum(_play_in_background(tid) for tid in sorted(tournaments))
    return {"started": started, "finalized": _finalize_the_unfinalized()}


def _matches_unplayed() -> QuerySet[Match]:
    """A running tournament's matches that are pending (their task may be lost), and those
    claimed by a worker that stopped renewing its claim, the tournament running or cancelled:
    a cancelled one's match is taken over only to be ended (its games in flight aborted, none
    begun), as nothing else settles those games (the turn clock leaves them to their match)
    and the tournament is finalized only once no match runs."""
    stale = timezone.now() - timedelta(seconds=settings.TOURNAMENT_CLAIM_STALE_SECONDS)
    return Match.objects.filter(
        Q(status=MatchStatus.PENDING, tournament__status=TournamentStatus.RUNNING)
        | Q(status=MatchStatus.RUNNING, claimed_at__lt=stale,
            tournament__status__in=(TournamentStatus.RUNNING, TournamentStatus.CANCELLED)))


def _finalize_the_unfinalized() -> int:
    finalized = 0
    for tid in Tournament.objects.filter(finalized_at__isnull=True).exclude(
            status=TournamentStatus.DRAFT).values_list("pk", flat=True):
        finalized += tournament_finalize(tournament_id=tid)
    return finalized


def tournament_run_foreground(
    *, tournament_id: int, on_progress: Callable[[Tournament], None] | None = None,
    follow: bool = False,
) -> Tournament:
    """Play every match of a started tournament in this process (``manage.py demo``,
    ``tournament run``, and the embedded default's background thread), then finalize it.

    A match another runner holds (a worker, the server's background thread) is left to it.
    ``follow``: then wait for them (``on_progress`` every FOLLOW_POLL_SECONDS), taking over a
    match whose claim goes stale, until the tournament is finalized: finished, or cancelled
    and its running matches stopped. Unless a match failed here: its claim goes stale, and a
    later run or the sweep takes it over."""

    def progress() -> None:
        if on_progress is not None:
            on_progress(Tournament.objects.get(pk=tournament_id))

    failed = _play_unclaimed(tournament_id, progress)
    tournament_finalize(tournament_id=tournament_id)
    while follow and not failed and Tournament.objects.filter(
            pk=tournament_id, finalized_at__isnull=True).exists():
        time.sleep(FOLLOW_POLL_SECONDS)
        progress()
        failed = _play_unclaimed(tournament_id, progress)
        tournament_finalize(tournament_id=tournament_id)
    return Tournament.objects.get(pk=tournament_id)


def _play_unclaimed(tournament_id: int, progress: Callable[[], None]) -> bool:
    """Claim and play, in order, each match of the tournament that nobody plays: pending, or
    its runner's claim gone stale (after a cancel, only to end it: no game begins). Whether
    one of them failed here."""
    failed = False
    for match_id in Match.objects.filter(
            tournament_id=tournament_id, status__in=(MatchStatus.PENDING, MatchStatus.RUNNING)
    ).order_by("number").values_list("pk", flat=True):
        try:
            match_play(match_id=match_id, on_progress=progress)
        except Exception:
            # One match's failure (a database error mid-game) does not stop the others; its
            # claim goes stale, and a later run or the sweep takes it over.
            log.exception("tournament %s: match %s failed", tournament_id, match_id)
            failed = True
    return failed
