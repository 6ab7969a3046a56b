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

import json
from typing import Any

from django.contrib import admin, messages
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Prefetch, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from games import selectors, services
from games.errors import GameNotRunning
from games.models import Game, GameEvent, IdempotencyRecord, MoveRecord, Seat

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


class SeatInline(ReadOnly, admin.TabularInline):
    model = Seat
    extra = 0
    fields = ("index", "user", "bot", "strikes", "forfeited", "joined_at")


@admin.register(Game)
class GameAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ("id", "status", "end_reason", "version", "move_count", "created_by",
                    "created_at", "finished_at")
    list_filter = ("status", "end_reason")
    search_fields = ("id", "created_by__username")
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
        body = json.dumps(selectors.game_replay_cached(game=game), cls=DjangoJSONEncoder)
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
        return render_to_string("admin/games/move_log.html", {"rows": move_rows(game)})

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


def move_rows(game: Game) -> list[dict[str, Any]]:
    """The move log as rows a person reads: who (player name, or ``bot:<name>``) played what."""
    names = {s.index: s.player or f"seat {s.index}"
             for s in game.seats.select_related("user", "bot")}
    rows = []
    for record in selectors.move_list(game=game):
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


@admin.register(Seat)
class SeatAdmin(ReadOnly, admin.ModelAdmin):
    # Who sat there: a person (``user``) or a bot (the seat hook); one of the two is empty.
    list_display = ("game", "index", "user", "bot", "strikes", "forfeited")
    list_select_related = ("game", "user", "bot")
    search_fields = ("user__username", "bot__name")
    raw_id_fields = ("game", "user", "bot")


@admin.register(MoveRecord)
class MoveRecordAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ("game", "number", "seat", "move", "source", "created_at")
    list_filter = ("source",)
    raw_id_fields = ("game",)
    readonly_fields = ("game", "number", "version", "seat", "move", "source", "created_at")


@admin.register(GameEvent)
class GameEventAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ("game", "version", "kind", "seat", "created_at")
    list_filter = ("kind",)
    raw_id_fields = ("game",)
    readonly_fields = ("game", "version", "kind", "seat", "data", "created_at")


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(ReadOnly, admin.ModelAdmin):
    # Read-only like the rest: a record is the answer a retried request gets, written once.
    list_display = ("user", "key", "status_code", "created_at")
    raw_id_fields = ("user",)
    readonly_fields = ("user", "key", "fingerprint", "status_code", "response_body", "created_at")
