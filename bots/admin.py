"""Admin for bots: staff see every bot with its aggregates and recent calls, and may verify a
bot or rotate its secret (actions call the services). The call log is read-only."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html_join

from bots import runner, selectors, services, transport, verify
from bots.errors import BotDisabled
from bots.filters import OUTCOMES
from bots.models import Bot, BotCall, BotCounter
from games.admin import BigTableAdmin, ReadOnly, choice_filter, game_link

RECENT_CALLS = 50  # on the bot's page; the whole kept log is the call list, filtered
SEARCH_BOTS = 500  # a search of the call log matches at most this many bots' names

# Never shown, and never filtered on either: the admin accepts a lookup on any field of the
# model in its query string, and whether a bot stays in the list then answers a guess
# (``?secret__startswith=whsec_a``), so staff could read a secret a character at a time.
PRIVATE_FIELDS = frozenset({"secret", "previous_secret"})

# What a failed call's ``error`` may be: the transport's kinds and the runner's verdicts on
# the answer. Fixed, so the filter needs no SELECT DISTINCT over the whole call log.
CALL_ERRORS = (*transport.ERROR_KINDS, runner.MALFORMED, runner.ILLEGAL, runner.DISABLED)


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "enabled", "verified", "url", "created_at")
    list_filter = ("enabled", "verified")
    search_fields = ("name", "owner__username", "url")
    fields = ("name", "owner_name", "url", "description", "enabled", "verified", "verified_at",
              "verification_shown", "previous_secret_until", "aggregates", "recent_calls",
              "created_at", "updated_at")
    readonly_fields = ("owner_name", "verified", "verified_at", "verification_shown",
                       "previous_secret_until", "aggregates", "recent_calls", "created_at",
                       "updated_at")
    actions = ["verify_bots", "rotate_secrets"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # bots are registered by their owners (the API): they need a secret

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None
                       ) -> bool:
        if lookup.split(LOOKUP_SEP, 1)[0] in PRIVATE_FIELDS:
            return False  # the admin answers 400 (DisallowedModelAdminLookup)
        return super().lookup_allowed(lookup, value, request)

    @admin.display(description="Owner")
    def owner_name(self, bot: Bot) -> str:
        # A name, not a link to the user's page, which staff who are not superusers may not open.
        return str(bot.owner.get_username())

    @admin.display(description="Latency and strikes")
    def aggregates(self, bot: Bot) -> Any:
        counters = selectors.counters(bot=bot)
        latency = selectors.latency(bot=bot)
        if latency["window"]:
            shown = f"{latency['p50_ms']} / {latency['p99_ms']} over {latency['window']} calls"
        else:  # no turn in a game yet (verification calls are not a table's turns)
            shown = "no turn calls yet"
        rows = [("p50 / p99 latency (ms)", shown)]
        rows += sorted((name, str(count)) for name, count in counters.items())
        return format_html_join("", "<div><b>{}</b>: {}</div>", rows)

    @admin.display(description="Verification")
    def verification_shown(self, bot: Bot) -> Any:
        found = bot.verification or {}
        if not found:
            return "No verification recorded."
        lines = [("Result", str(found.get("result", "?")))]
        if "turns" in found:
            lines.append(("Turns", str(found["turns"])))
        lines += [("Reason", reason) for reason in found.get("reasons") or []]
        return format_html_join("", "<div><b>{}</b>: {}</div>", lines)

    @admin.display(description="Recent calls")
    def recent_calls(self, bot: Bot) -> Any:
        calls = list(BotCall.objects.filter(bot=bot).order_by("-id")[:RECENT_CALLS])
        every = reverse("admin:bots_botcall_changelist") + f"?bot__id__exact={bot.pk}"
        return render_to_string("admin/bots/recent_calls.html",
                                {"calls": calls, "every": every, "shown": RECENT_CALLS})

    def save_model(self, request: HttpRequest, obj: Bot, form: Any, change: bool) -> None:
        # Through the service: a new URL is checked and clears the verification.
        data = {name: form.cleaned_data[name] for name in form.changed_data
                if name in ("name", "url", "description", "enabled")}
        services.bot_update(bot=obj, data=data)

    # Both change the bot (its verification; its secret, which its owner's server must then
    # learn), so they take the permission to change bots, not just staff status.
    @admin.action(description="Verify the selected bots (handshake and a validation game)",
                  permissions=["change"])
    def verify_bots(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        for bot in queryset:
            try:
                result = verify.verify(bot_id=bot.pk)
            except BotDisabled as exc:
                self.message_user(request, f"{bot.name}: {exc.detail}", messages.WARNING)
                continue
            level = messages.SUCCESS if result["verified"] else messages.WARNING
            reasons = "; ".join(result["reasons"]) or "passed"
            self.message_user(request, f"{bot.name}: {reasons}", level)

    @admin.action(description="Rotate the selected bots' signing secrets",
                  permissions=["change"])
    def rotate_secrets(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        for bot in queryset:
            services.bot_rotate_secret(bot=bot)
        self.message_user(
            request, f"Rotated {queryset.count()} secret(s); the old ones stay valid for the "
            "grace period. Owners get the new secret only by rotating it themselves.",
            messages.SUCCESS,
        )


@admin.register(BotCall)
class BotCallAdmin(ReadOnly, BigTableAdmin):
    list_display = ("created_at", "bot", "kind", game_link, "version", "status", "latency",
                    "error", "outcome")
    list_filter = ("kind", choice_filter("error", "error", CALL_ERRORS),
                   choice_filter("outcome", "outcome", OUTCOMES))
    search_fields = ("bot__name",)
    list_select_related = ("bot",)

    def get_search_results(self, request: HttpRequest, queryset: QuerySet[BotCall],
                           search_term: str) -> tuple[QuerySet[BotCall], bool]:
        # The bots whose names hold the term, looked up in the (small) bots table first: the
        # calls are then read by their indexed bot column, not joined row by row.
        term = search_term.strip()
        if not term:
            return queryset, False
        bots = Bot.objects.filter(name__icontains=term).values_list("pk", flat=True)
        return queryset.filter(bot_id__in=list(bots[:SEARCH_BOTS])), False

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None
                       ) -> bool:
        # One bot's calls: the bot page links here with ``?bot__id__exact=<id>``.
        return lookup == "bot__id__exact" or super().lookup_allowed(lookup, value, request)

    @admin.display(description="Latency (ms)", ordering="latency_ms")
    def latency(self, call: BotCall) -> str:
        return "" if call.latency_ms is None else f"{call.latency_ms:.1f}"  # None: not called


@admin.register(BotCounter)
class BotCounterAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ("bot", "name", "count")
    list_filter = ("name",)
    list_select_related = ("bot",)
