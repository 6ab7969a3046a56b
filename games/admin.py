"""Admin (staff only, as all of /admin/). Staff may see a game's hidden state. Games, seats,
moves and events are shown read-only: every change to a game goes through ``games.services``
and bumps its version, which the move path relies on (``games.rows``), so nobody edits a game
or its log behind the engine's back. What staff may do to a game is an action that calls a
service (abort).

A game's page shows its move log as a table of who played what, each card a coloured chip
(``games/cards.css``, ``{% load uno_cards %}``), and links to the finished game's replay: a
JSON download served by a staff-only admin view (``games.selectors`` builds it, as for the
API)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.db import connections
from django.db.models import Model, Prefetch, Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from rest_framework.renderers import JSONRenderer

from games import selectors, services
from games.errors import GameNotRunning
from games.models import Game, GameEvent, IdempotencyRecord, MoveRecord, Seat
from games.schema import END_REASONS

# A game page shows this many moves of its log; the replay (or the move list) has them all.
MOVE_LOG_SHOWN = 500

# What a move's type reads as in the log; the card, colour and target follow it.
MOVE_VERBS = {
    "play": "played",
    "draw": "drew a card",
    "keep": "kept the card drawn",
    "challenge": "challenged the Wild Draw Four",
    "accept": "took the penalty",
    "catch": "caught",
    "uno": "called Uno",
    "color": "chose",
}


class ReadOnly:
    """Browse, never change: no add, change or delete. Every staff member may browse (staff see
    everything, without per-model permissions to hand out); others never reach the admin."""

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


# --- big tables -------------------------------------------------------------------------------
# A year of play is millions of moves, events and calls: counting them on every page load
# takes seconds (COUNT(*) reads the whole table), and so does a filter offering "every value
# in the column" (SELECT DISTINCT). Lists of big tables show an estimated count, and filter on
# fixed choices.
ESTIMATE_ABOVE = 100_000  # rows: below this a real count is cheap enough
COUNT_CAP = 100_000  # a filtered count stops here: nobody pages through 1,000 pages


class EstimatedCountPaginator(Paginator):
    """The changelist's paginator for a big table. Unfiltered, on PostgreSQL, it takes the
    planner's row estimate (``pg_class.reltuples``, kept by autovacuum's ANALYZE) instead of
    a COUNT(*) of millions of rows; filtered or searched, it counts at most ``COUNT_CAP``
    rows. Small tables, SQLite and never-analysed tables get the real count."""

    @cached_property
    def count(self) -> int:
        queryset = self.object_list
        if queryset.query.where:  # a filter or a search: count the matches, up to the cap
            # Unordered: the database may stop at the cap instead of sorting every match.
            found = int(queryset.order_by().values("pk")[:COUNT_CAP].count())
            self.capped = found >= COUNT_CAP
            return found
        estimate = table_estimate(queryset.model, queryset.db)
        if estimate is not None and estimate >= ESTIMATE_ABOVE:
            self.estimated = True
            return estimate
        return int(queryset.count())

    # What the page says of ``count`` (its pagination.html): "about N", "N or more".
    estimated = False  # the planner's estimate
    capped = False  # stopped at COUNT_CAP


def table_estimate(model: type[Model], alias: str) -> int | None:
    """PostgreSQL's estimate of the table's rows; None elsewhere or when never analysed
    (``reltuples`` is -1 then)."""
    connection = connections[alias]
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass",
                       [model._meta.db_table])
        row = cursor.fetchone()
    return int(row[0]) if row and row[0] >= 0 else None


class BigTableAdmin(admin.ModelAdmin):
    """A changelist of a big table: no full COUNT(*) for "N total" (``show_full_result_count``)
    nor for the pages (``EstimatedCountPaginator``), and ``list_defer`` columns (big JSON,
    never shown in a list) left unread."""

    show_full_result_count = False
    paginator = EstimatedCountPaginator
    list_defer: tuple[str, ...] = ()

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return DeferringChangeList


class DeferringChangeList(ChangeList):
    def get_queryset(self, request: HttpRequest, exclude_parameters: Any = None) -> QuerySet:
        queryset = super().get_queryset(request, exclude_parameters)
        defer = getattr(self.model_admin, "list_defer", ())
        return queryset.defer(*defer) if defer else queryset


def choice_filter(field: str, title: str, choices: Iterable[str | tuple[str, str]]
                  ) -> type[admin.SimpleListFilter]:
    """A list filter on ``field`` offering fixed ``choices`` (values, or (value, label)
    pairs), where the admin's default for a field without choices would offer every value
    found in the column: a SELECT DISTINCT over the whole table on each page load. Its query
    parameter is the field's name, as the default filter's was, so links keep working."""
    pairs = [(c, c) if isinstance(c, str) else c for c in choices]

    class Fixed(admin.SimpleListFilter):
        parameter_name = field

        def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
            return pairs

        def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
            value = self.value()
            return queryset if value is None else queryset.filter(**{field: value})

    Fixed.title = title
    Fixed.__name__ = f"{field.title().replace('_', '')}Filter"
    return Fixed


def user_ids(term: str) -> list[int]:
    """The ids of the users named ``term`` (case aside), to filter a big table on its indexed
    user column rather than join the users and compare names row by row."""
    users = get_user_model().objects.filter(username__iexact=term)
    return list(users.values_list("pk", flat=True)[:10])


def whole_number(term: str) -> int | None:
    """``term`` as an id (``123`` or ``#123``), or None."""
    digits = term.strip().removeprefix("#")
    return int(digits) if digits.isascii() and digits.isdigit() and len(digits) < 19 else None


class SeatInline(ReadOnly, admin.TabularInline):
    model = Seat
    extra = 0
    fields = ("index", "user", "bot", "strikes", "forfeited", "joined_at")


@admin.register(Game)
class GameAdmin(ReadOnly, BigTableAdmin):
    list_display = ("id", "status", "end_reason", "version", "move_count", "created_by",
                    "created_at", "finished_at")
    list_filter = ("status", choice_filter("end_reason", "end reason", END_REASONS))
    list_select_related = ("created_by",)
    list_defer = ("state", "rng")  # the engine's state: big, secret, and not a column here
    # Exact matches only (``get_search_results``): a game's id or its creator's username.
    search_fields = ("=id", "=created_by__username")
    search_help_text = "A game's id, or its creator's username (exact)."
    fieldsets = [
        (None, {"fields": ("status", "end_reason", "players", "replay_download", "winner_shown",
                           "scores", "options", "version", "move_count", "awaiting",
                           "hand_number", "turn_seconds", "max_strikes", "creator",
                           "created_at", "started_at", "finished_at", "updated_at")}),
        ("Move log", {"fields": ("move_log",)}),
        ("Hidden state (staff only)", {"fields": ("seed", "state"), "classes": ("collapse",)}),
    ]
    readonly_fields = ("options", "seed", "state", "version", "move_count", "awaiting",
                       "hand_number", "scores", "winner", "created_at", "started_at",
                       "finished_at", "updated_at", "players", "creator", "replay_download",
                       "move_log", "winner_shown")
    inlines = [SeatInline]
    actions = ["abort"]

    class Media:
        css = {"all": ("games/cards.css",)}

    @admin.display(description="Created by")
    def creator(self, game: Game) -> str:
        # A name, not a link to the user's page, which staff who are not superusers may not open.
        return "" if game.created_by is None else str(game.created_by.get_username())

    def get_search_results(self, request: HttpRequest, queryset: QuerySet[Game],
                           search_term: str) -> tuple[QuerySet[Game], bool]:
        # Django would compare UPPER(id::text) and join the users for their names: a scan of
        # every game. An id and the creators' ids use the indexes instead.
        term = search_term.strip()
        if not term:
            return queryset, False
        match = Q(created_by_id__in=user_ids(term))
        number = whole_number(term)
        if number is not None:
            match |= Q(pk=number)
        return queryset.filter(match), False

    def get_urls(self) -> list[URLPattern]:
        replay = path("<int:game_id>/replay.json", self.admin_site.admin_view(self.replay_view),
                      name="games_game_replay")
        return [replay, *super().get_urls()]

    def replay_view(self, request: HttpRequest, game_id: int) -> HttpResponse:
        """The finished game's replay as a JSON attachment (staff only: ``admin_view``)."""
        if not self.has_view_permission(request):
            raise Http404
        game = _with_players().filter(pk=game_id).first()
        if game is None or not game.is_over:
            raise Http404("No finished game with this id.")
        # Rendered as the API renders it (times to the microsecond, not DjangoJSONEncoder's
        # milliseconds): the same game's replay is the same file from either.
        body = JSONRenderer().render(selectors.game_replay_cached(game=game))
        response = HttpResponse(body, content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="game-{game.pk}-replay.json"'
        return response

    @admin.display(description="Players")
    def players(self, game: Game) -> SafeString:
        seats = game.seats.select_related("user", "bot").order_by("index")
        return format_html_join(
            "", "<div>seat {}: {}</div>", ((s.index, s.player or "(open)") for s in seats)
        )

    @admin.display(description="Winner")
    def winner_shown(self, game: Game) -> str:
        if game.winner is None:
            return ""
        seat = game.seats.select_related("user", "bot").filter(index=game.winner).first()
        return f"seat {game.winner}: {seat.player if seat else '?'}"

    @admin.display(description="Replay")
    def replay_download(self, game: Game) -> SafeString | str:
        if not game.is_over:
            return "available once the game is over"
        url = reverse("admin:games_game_replay", args=[game.pk])
        return format_html('<a href="{}" download id="replay-download">Download the replay '
                           "(JSON)</a>", url)

    @admin.display(description="Moves")
    def move_log(self, game: Game) -> SafeString:
        # The first moves only: a long match has thousands, a page of megabytes. The rest are
        # in the replay (once over) and in the move list, filtered on the game.
        rows = move_rows(game, limit=MOVE_LOG_SHOWN)
        return render_to_string("admin/games/move_log.html", {
            "rows": rows, "total": game.move_count, "rest": max(game.move_count - len(rows), 0),
            "replay": (reverse("admin:games_game_replay", args=[game.pk]) if game.is_over
                       else None),
            "every": reverse("admin:games_moverecord_changelist") + f"?game__id__exact={game.pk}",
        })

    def has_abort_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("games.abort_game"))

    @admin.action(
        description="Abort the selected games (no winner; players are told)",
        permissions=["abort"],
    )
    def abort(self, request: HttpRequest, queryset: QuerySet[Game]) -> None:
        aborted, over = 0, 0
        for game_id in queryset.values_list("id", flat=True):
            try:
                services.game_abort(game_id=game_id)
                aborted += 1
            except GameNotRunning:
                over += 1
        self.message_user(request, f"Aborted {aborted} game(s).", messages.SUCCESS)
        if over:
            self.message_user(request, f"{over} game(s) were already over.", messages.WARNING)


def _with_players() -> QuerySet[Game]:
    seats = Prefetch("seats", queryset=Seat.objects.select_related("user", "bot").order_by("index"))
    return Game.objects.prefetch_related(seats)


def move_rows(game: Game, *, limit: int | None = None) -> list[dict[str, Any]]:
    """The move log as rows a person reads: who (player name, or ``bot:<name>``) played what;
    the first ``limit`` moves when given."""
    names = {s.index: s.player or f"seat {s.index}"
             for s in game.seats.select_related("user", "bot")}
    records = selectors.move_list(game=game)
    rows = []
    for record in records if limit is None else records[:limit]:
        move = record.move if isinstance(record.move, dict) else {}
        kind = str(move.get("type", "?"))
        target = move.get("target")
        rows.append({
            "number": record.number,
            "seat": record.seat,
            "player": names.get(record.seat, f"seat {record.seat}"),
            "type": kind,
            "verb": MOVE_VERBS.get(kind, kind),
            "card": move.get("card"),
            "color": move.get("color"),
            "target_name": _target(kind, target, names),
            "uno": bool(move.get("uno")) and kind == "play",
            "source": record.get_source_display() if record.source != "player" else "",
            "created_at": record.created_at,
        })
    return rows


def _target(kind: str, target: object, names: dict[int, str]) -> str:
    if not isinstance(target, int):
        return ""
    who = names.get(target, f"seat {target}")
    return who if kind == "catch" else f"and swapped hands with {who}"


@admin.display(description="Game", ordering="game")
def game_link(row: Any) -> SafeString | str:
    """The row's game as a link to its page, from the row's own ``game_id``: no join to the
    games (nor a query per row), and never their big state."""
    if row.game_id is None:
        return ""
    url = reverse("admin:games_game_change", args=[row.game_id])
    return format_html('<a href="{}">game {}</a>', url, row.game_id)


@admin.register(Seat)
class SeatAdmin(ReadOnly, BigTableAdmin):
    # Who sat there: a person (``user``) or a bot (the seat hook); one of the two is empty.
    list_display = (game_link, "index", "user", "bot", "strikes", "forfeited")
    list_select_related = ("user", "bot")
    # Exact matches only (``get_search_results``): a username, a bot's name or a game's id.
    search_fields = ("=user__username", "=bot__name", "=game__id")
    search_help_text = "A username, a bot's name or a game's id (exact)."
    raw_id_fields = ("game", "user", "bot")

    def get_search_results(self, request: HttpRequest, queryset: QuerySet[Seat],
                           search_term: str) -> tuple[QuerySet[Seat], bool]:
        # Substring matches on joined names scan every seat; the ids of the user and the bot
        # so named, or the game's id, are indexed columns of the seat itself.
        term = search_term.strip()
        if not term:
            return queryset, False
        bots = (Seat._meta.get_field("bot").related_model  # bots.Bot: not imported here
                ._default_manager.filter(name__iexact=term).values_list("pk", flat=True)[:10])
        match = Q(user_id__in=user_ids(term)) | Q(bot_id__in=list(bots))
        number = whole_number(term)
        if number is not None:
            match |= Q(game_id=number)
        return queryset.filter(match), False


@admin.register(MoveRecord)
class MoveRecordAdmin(ReadOnly, BigTableAdmin):
    list_display = (game_link, "number", "seat", "move", "source", "created_at")
    list_filter = ("source",)  # a field with choices: Django offers them, no DISTINCT
    raw_id_fields = ("game",)
    readonly_fields = ("game", "number", "version", "seat", "move", "source", "created_at")


@admin.register(GameEvent)
class GameEventAdmin(ReadOnly, BigTableAdmin):
    list_display = (game_link, "version", "kind", "seat", "created_at")
    list_filter = ("kind",)  # a field with choices, as above
    raw_id_fields = ("game",)
    readonly_fields = ("game", "version", "kind", "seat", "data", "created_at")


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(ReadOnly, admin.ModelAdmin):
    # Read-only like the rest: a record is the answer a retried request gets, written once.
    list_display = ("user", "key", "status_code", "created_at")
    raw_id_fields = ("user",)
    readonly_fields = ("user", "key", "fingerprint", "status_code", "response_body", "created_at")
