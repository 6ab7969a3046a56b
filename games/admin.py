"""Admin (staff only, as all of /admin/). Staff may see a game's hidden state. Games, seats,
moves and events are shown read-only: every change to a game goes through ``games.services``
and bumps its version, which the move path relies on (``games.rows``), so nobody edits a game
or its log behind the engine's back. What staff may do to a game is an action that calls a
service (abort)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from games import services
from games.errors import GameNotRunning
from games.models import Game, GameEvent, IdempotencyRecord, MoveRecord, Seat


class ReadOnly:
    """Browse, never change: no add, change or delete."""

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
    readonly_fields = ("options", "seed", "state", "version", "move_count", "awaiting",
                       "hand_number", "scores", "winner", "created_at", "started_at",
                       "finished_at", "updated_at")
    inlines = [SeatInline]
    actions = ["abort"]

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


@admin.register(Seat)
class SeatAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ("game", "index", "user", "strikes", "forfeited")
    list_select_related = ("game", "user")
    raw_id_fields = ("game", "user")


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
class IdempotencyRecordAdmin(admin.ModelAdmin):
    list_display = ("user", "key", "status_code", "created_at")
    raw_id_fields = ("user",)
    readonly_fields = ("user", "key", "fingerprint", "status_code", "response_body", "created_at")
