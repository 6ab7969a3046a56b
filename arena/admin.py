"""The admin site is where people browse rankings (staff only, as all of /admin/):

- the leaderboard: the Elo ratings' changelist, one rule set at a time ("official" unless
  another is picked), best first, with each bot's Bradley-Terry interval from its latest
  finished rated tournament, games, win rate, call latency and strikes; search and filters;
- tournaments: a progress bar, the standings, the games (each linking to its game page with
  the coloured move log), and start / cancel as actions and buttons calling the services;
- per bot: the bots app's page plus Elo charts (server-rendered SVG), recent games and the call
  log. The bots app must not import arena, so arena replaces its Bot admin with a subclass;
- a tournament's game page names its tournament (the games app's page, subclassed the same way).

Everything here is read-only except adding a tournament (checked as the API checks one) and
the start/cancel actions: tournaments change through ``arena.services`` only, which keeps the
progress counters and ratings consistent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import ChangeList
from django.db.models import Count, ExpressionWrapper, F, FloatField, QuerySet
from django.db.models.functions import NullIf
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.loader import render_to_string
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.views.decorators.http import require_POST
from rest_framework.exceptions import APIException

from arena import admin_tables, selectors, services
from arena.models import (
    Entrant,
    Rating,
    RatingChange,
    Tournament,
    TournamentGame,
    TournamentStatus,
)
from arena.ratings.rule_sets import rule_set_named
from bots.admin import BotAdmin
from bots.models import Bot
from core.api_errors import error_body
from games.admin import BigTableAdmin, GameAdmin, ReadOnly, game_link, whole_number
from games.models import Game
from games.uno.errors import UnoError

OFFICIAL = "official"


# --- leaderboard ------------------------------------------------------------------------------
class RuleSetFilter(admin.SimpleListFilter):
    """One ladder at a time: the one picked, else the official rules, else (nobody rated on
    them yet: the demo plays single hands) the busiest ladder (``selectors.default_rule_set``)."""

    title = "rule set"
    parameter_name = "rule_set"

    def __init__(self, request: HttpRequest, params: Any, model: Any, model_admin: Any) -> None:
        self.default = (OFFICIAL if self.parameter_name in request.GET
                        else selectors.default_rule_set())
        super().__init__(request, params, model, model_admin)
        # As the API reads it: any order names the same ladder, and a name that spells no
        # rules is an error (the admin's own: back to the page with "?e=1"), not an empty one.
        picked = super().value()
        if picked is not None:
            try:
                self.used_parameters[self.parameter_name] = rule_set_named(str(picked))
            except (ValueError, UnoError) as exc:
                raise IncorrectLookupParameters(exc) from None

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        names = selectors.rule_sets()
        return [(name, name) for name in (names if OFFICIAL in names else [OFFICIAL, *names])]

    def value(self) -> str:
        return str(super().value() or self.default)

    def choices(self, changelist: Any) -> Any:
        # No "All": ratings of different rule sets are not comparable on one ladder.
        for lookup, title in self.lookup_choices:
            yield {
                "selected": self.value() == str(lookup),
                "query_string": changelist.get_query_string({self.parameter_name: lookup}),
                "display": title,
            }

    def queryset(self, request: HttpRequest, queryset: QuerySet[Rating]) -> QuerySet[Rating]:
        return queryset.filter(rule_set=self.value())


class LeaderboardChangeList(ChangeList):
    """The page's rows with what the API's leaderboard says of each bot (``arena.selectors``:
    rank, interval, latency, strikes), so the admin and the API never disagree."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.title = f"Leaderboard: Elo, {self.rule_set()} rules"

    def rule_set(self) -> str:
        return next((spec.value() for spec in self.filter_specs
                     if isinstance(spec, RuleSetFilter)), OFFICIAL)

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        # The lines of the page shown only: building the whole ladder's cost 815 queries and
        # 1.5 s on an 803-bot ladder, for 50 rows.
        self.result_list = list(self.result_list)
        lines = selectors.leaderboard_lines(ratings=self.result_list)
        board = {line["bot"]: line for line in lines}
        for rating in self.result_list:
            rating.board = board.get(rating.bot_id, {})


@admin.register(Rating)
class LeaderboardAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ("rank", "bot_link", "owner", "elo_shown", "interval_shown", "games",
                    "win_rate_shown", "latency_shown", "strikes_shown", "verified", "enabled")
    list_display_links = None
    list_filter = (RuleSetFilter, ("bot__owner", admin.RelatedOnlyFieldListFilter),
                   "bot__verified", "bot__enabled")
    search_fields = ("bot__name", "bot__owner__username")
    list_select_related = ("bot", "bot__owner")
    ordering = ("-elo", "id")
    list_per_page = 50
    # "9 results (25 total)" counted every ladder's ratings beside one ladder's: not a figure
    # of this page (and a count of the whole table a page).
    show_full_result_count = False

    class Media:
        css = {"all": ("arena/admin.css",)}

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return LeaderboardChangeList

    def get_queryset(self, request: HttpRequest) -> QuerySet[Rating]:
        # Sortable columns; what they show comes from the selector (LeaderboardChangeList).
        win_rate = ExpressionWrapper(F("wins") * 1.0 / NullIf(F("games"), 0),
                                     output_field=FloatField())
        return super().get_queryset(request).annotate(
            win_rate=win_rate, strikes=admin_tables.strikes_subquery()
        )

    @admin.display(description="#")
    def rank(self, rating: Any) -> int | None:
        return rating.board.get("rank")  # among all bots of the rule set, filters aside

    @admin.display(description="Bot", ordering="bot__name")
    def bot_link(self, rating: Rating) -> SafeString:
        url = reverse("admin:bots_bot_change", args=[rating.bot_id])
        return format_html('<a href="{}" class="leaderboard-bot">{}</a>', url, rating.bot.name)

    @admin.display(description="Owner", ordering="bot__owner__username")
    def owner(self, rating: Rating) -> str:
        return str(rating.bot.owner.get_username())

    @admin.display(description="Elo", ordering="elo")
    def elo_shown(self, rating: Rating) -> str:
        return f"{rating.elo:.0f}"

    @admin.display(description="Bradley-Terry [95% interval]")
    def interval_shown(self, rating: Any) -> SafeString | None:
        """Its Bradley-Terry rating and interval in its latest finished rated tournament,
        linked to that tournament."""
        fitted = rating.board.get("interval")
        if not fitted:
            return None
        url = reverse("admin:arena_tournament_change", args=[fitted["tournament"]])
        low, high = fitted.get("low"), fitted.get("high")
        interval = admin_tables.NO_INTERVAL if low is None or high is None else (
            f"{low:.0f}, {high:.0f}")
        return format_html('<a href="{}" title="{}">{} [{}]</a>', url,
                           "Its Bradley-Terry rating in its latest finished rated tournament",
                           f"{fitted['rating']:.0f}", interval)

    @admin.display(description="Win rate", ordering="win_rate")
    def win_rate_shown(self, rating: Any) -> str:
        return "" if rating.win_rate is None else f"{100 * rating.win_rate:.0f}%"

    @admin.display(description="Latency p50 / p99 (ms)")
    def latency_shown(self, rating: Any) -> str | None:
        p50, p99 = rating.board.get("latency_p50_ms"), rating.board.get("latency_p99_ms")
        return None if p50 is None else f"{p50:g} / {p99:g}"

    @admin.display(description="Strikes", ordering="strikes")
    def strikes_shown(self, rating: Any) -> int:
        return int(rating.board.get("strikes") or 0)

    @admin.display(description="Verified", boolean=True, ordering="bot__verified")
    def verified(self, rating: Rating) -> bool:
        return bool(rating.bot.verified)

    @admin.display(description="Enabled", boolean=True, ordering="bot__enabled")
    def enabled(self, rating: Rating) -> bool:
        return bool(rating.bot.enabled)


@admin.register(RatingChange)
class RatingChangeAdmin(ReadOnly, BigTableAdmin):
    # The game as a link from ``game_id``: no game row (nor its state) read per change.
    list_display = ("id", "bot", "rule_set", game_link, "before_shown", "after_shown",
                    "created_at")
    list_select_related = ("rating", "rating__bot")
    list_filter = ("rating__rule_set",)  # a DISTINCT over the ratings, a small table
    search_fields = ("rating__bot__name",)
    raw_id_fields = ("rating", "game")

    @admin.display(description="Bot", ordering="rating__bot__name")
    def bot(self, change: RatingChange) -> str:
        return str(change.rating.bot.name)

    @admin.display(description="Rule set", ordering="rating__rule_set")
    def rule_set(self, change: RatingChange) -> str:
        return str(change.rating.rule_set)

    @admin.display(description="Elo before", ordering="before")
    def before_shown(self, change: RatingChange) -> str:
        return f"{change.before:.1f}"

    @admin.display(description="Elo after", ordering="after")
    def after_shown(self, change: RatingChange) -> str:
        return f"{change.after:.1f}"


# --- tournaments --------------------------------------------------------------------------------
class EntrantInline(ReadOnly, admin.TabularInline):
    model = Entrant
    extra = 0
    fields = ("bot", "created_at")
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Entrant]:
        return super().get_queryset(request).select_related("bot")  # not a query per row


def _progress_html(tournament: Tournament, *, compact: bool = False) -> SafeString:
    return SafeString(render_to_string(
        "admin/arena/progress.html",
        {"p": admin_tables.progress(tournament), "compact": compact,
         # Only while there is something to estimate: none before the first game or once over.
         "eta": None if tournament.eta_seconds is None
         else admin_tables.duration(tournament.eta_seconds)},
    ))


class TournamentCreateForm(forms.ModelForm):
    """A new tournament, checked as the API checks one (``services.tournament_check``)."""

    options = forms.JSONField(
        required=False, initial=dict, widget=forms.Textarea(attrs={"rows": 3}),
        help_text='The engine\'s options as JSON, e.g. {"stacking": true}; {} for the '
                  "official rules (docs/rules.md lists them).")
    seed = forms.IntegerField(required=False, help_text="Blank: a random seed.")

    class Meta:
        model = Tournament
        fields = ("name", "options", "table_size", "games_per_pairing", "duplicate_deals",
                  "turn_timeout_ms", "max_strikes", "seed", "rated")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        fields = {name: data.get(name) for name in self._meta.fields or ()}
        if fields["options"] is None:  # left blank: the default rules ([] or 0 are refused)
            fields["options"] = {}
        try:
            services.tournament_check(**fields)
            self.service_fields = fields
        except APIException as error:  # the API's 400: the fields it names, or the form's
            for field, problems in _problems(error).items():
                name = field.split(".")[0]  # "options.stacking": the options field
                self.add_error(name if name in self.fields else None, problems)
        return data


def _problems(error: APIException) -> dict[str, list[str]]:
    """A refusal's problems by field, as the API's error body names them."""
    body = error_body(error)
    return body.get("fields") or {"": [body["detail"]]}


@admin.register(Tournament)
class TournamentAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ("name", "status", "rule_set", "progress_compact", "entrant_count", "owner",
                    "created_at", "finished_at")
    list_filter = ("status", "rule_set", "rated", "duplicate_deals")
    search_fields = ("name", "owner__username")
    list_select_related = ("owner",)
    fieldsets = [
        (None, {"fields": ("name", "status", "progress_bar", "owner_name", "rule_set", "options",
                           "table_size", "games_per_pairing", "duplicate_deals",
                           "turn_timeout_ms", "max_strikes", "seed", "rated")}),
        ("Standings", {"fields": ("standings_table",)}),
        ("Games", {"fields": ("games_table",)}),
        # A table, not an inline: a round robin has hundreds of matches, and an inline renders
        # a form per match (seconds); read-only, the form bought nothing.
        ("Matches", {"fields": ("matches_table",), "classes": ("collapse",)}),
        ("Times", {"fields": ("created_at", "started_at", "finished_at", "finalized_at")}),
    ]
    readonly_fields = ("progress_bar", "owner_name", "standings_table", "games_table",
                       "matches_table")
    inlines = [EntrantInline]

    @admin.display(description="Owner")
    def owner_name(self, tournament: Tournament) -> str:
        # A name, not Django's link to the user's page: staff who are not superusers may not
        # open that (staff browse the arena, not the accounts), and the link was a 403.
        return str(tournament.owner.get_username())
    actions = ["start_tournaments", "cancel_tournaments"]
    change_form_template = "admin/arena/tournament/change_form.html"

    class Media:
        css = {"all": ("arena/admin.css",)}

    def get_queryset(self, request: HttpRequest) -> QuerySet[Tournament]:
        return super().get_queryset(request).annotate(entrant_total=Count("entrants"))

    # Adding one: the tournament as the API creates it, owned by whoever adds it. It is a
    # draft: bot owners enter their own bots (the API), and it is started here or there.
    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False,
                 **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = TournamentCreateForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return [(None, {"fields": TournamentCreateForm.Meta.fields})]
        return super().get_fieldsets(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return () if obj is None else super().get_readonly_fields(request, obj)

    def get_inlines(self, request: HttpRequest, obj: Any) -> Any:
        return [] if obj is None else super().get_inlines(request, obj)

    def save_model(self, request: HttpRequest, obj: Tournament, form: Any,
                   change: bool) -> None:
        created = services.tournament_create(owner=request.user, **form.service_fields)
        obj.pk = created.pk
        obj.refresh_from_db()

    def response_add(self, request: HttpRequest, obj: Tournament,
                     post_url_continue: str | None = None) -> HttpResponse:
        self.message_user(request, (
            f"Created {obj.name} (id {obj.pk}), a draft. Bot owners enter their verified, "
            f"enabled bots with POST /api/tournaments/{obj.pk}/entrants/; start it here when "
            "they have."), messages.SUCCESS)
        if "_addanother" in request.POST:
            return HttpResponseRedirect(reverse("admin:arena_tournament_add"))
        return HttpResponseRedirect(reverse("admin:arena_tournament_change", args=[obj.pk]))

    @admin.display(description="Progress")
    def progress_compact(self, tournament: Tournament) -> SafeString:
        return _progress_html(tournament, compact=True)

    @admin.display(description="Progress")
    def progress_bar(self, tournament: Tournament) -> SafeString:
        return _progress_html(tournament)

    @admin.display(description="Entrants", ordering="entrant_total")
    def entrant_count(self, tournament: Any) -> int:
        return int(tournament.entrant_total)

    @admin.display(description="Standings")
    def standings_table(self, tournament: Tournament) -> SafeString:
        return SafeString(render_to_string(
            "admin/arena/standings.html",
            {"rows": admin_tables.standings_rows(tournament), "tournament": tournament},
        ))

    @admin.display(description="Games")
    def games_table(self, tournament: Tournament) -> SafeString:
        # The latest games only (a long tournament has thousands); the game list, filtered on
        # the tournament, has them all.
        rows = admin_tables.tournament_games(tournament, limit=admin_tables.TOURNAMENT_GAMES)
        total = TournamentGame.objects.filter(tournament=tournament).count()
        return SafeString(render_to_string("admin/arena/tournament_games.html", {
            "rows": rows, "total": total, "rest": total - len(rows),
            "every": reverse("admin:games_game_changelist") + f"?tournament={tournament.pk}",
        }))

    @admin.display(description="Matches")
    def matches_table(self, tournament: Tournament) -> SafeString:
        return SafeString(render_to_string(
            "admin/arena/tournament_matches.html",
            {"rows": admin_tables.tournament_matches(tournament)},
        ))

    # Start and cancel: the tournament's owner or staff may, says the service; here everyone
    # is staff. Both are offered as changelist actions and as buttons on the change page.
    def has_start_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    has_cancel_permission = has_start_permission

    @admin.action(description="Start the selected tournaments", permissions=["start"])
    def start_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        self._each(request, queryset, "tournament_start", "Started")

    @admin.action(description="Cancel the selected tournaments", permissions=["cancel"])
    def cancel_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        self._each(request, queryset, "tournament_cancel", "Cancelled")

    def _each(self, request: HttpRequest, queryset: QuerySet[Tournament],
              service: str, done: str) -> None:
        for tournament in queryset:
            self._call(request, tournament, service, done)

    def _call(self, request: HttpRequest, tournament: Tournament, service: str,
              done: str) -> bool:
        try:
            getattr(services, service)(tournament_id=tournament.pk, user=request.user)
        except APIException as error:  # the service's refusal (wrong state, no entrants...)
            # Named after a word of ours: the admin shows a message with its first letter
            # capitalised, which changed the tournament's own name ("race" as "Race").
            self.message_user(request, f"Tournament {tournament.name}: {_reason(error)}",
                              messages.ERROR)
            return False
        self.message_user(request, f"{done} tournament {tournament.name}.", messages.SUCCESS)
        return True

    def get_urls(self) -> list[URLPattern]:
        def button(service: str, done: str) -> Callable[..., HttpResponse]:
            @require_POST
            def view(request: HttpRequest, object_id: int) -> HttpResponse:
                if not self.has_start_permission(request):
                    raise Http404
                tournament = Tournament.objects.filter(pk=object_id).first()
                if tournament is None:
                    raise Http404("No such tournament.")
                self._call(request, tournament, service, done)
                return HttpResponseRedirect(
                    reverse("admin:arena_tournament_change", args=[object_id]))
            return self.admin_site.admin_view(view)

        return [
            path("<int:object_id>/start/", button("tournament_start", "Started"),
                 name="arena_tournament_start"),
            path("<int:object_id>/cancel/", button("tournament_cancel", "Cancelled"),
                 name="arena_tournament_cancel"),
            *super().get_urls(),
        ]

    def render_change_form(self, request: HttpRequest, context: dict[str, Any], *args: Any,
                           **kwargs: Any) -> Any:
        tournament = context.get("original")
        if tournament is not None:
            context["can_start"] = tournament.status == TournamentStatus.DRAFT
            context["can_cancel"] = tournament.status in (TournamentStatus.DRAFT,
                                                          TournamentStatus.RUNNING)
        return super().render_change_form(request, context, *args, **kwargs)


def _reason(error: APIException) -> str:
    detail = error.detail
    if isinstance(detail, dict):
        return "; ".join(f"{field}: {' '.join(map(str, v)) if isinstance(v, list) else v}"
                         for field, v in detail.items())
    if isinstance(detail, list):
        return " ".join(map(str, detail))
    return str(detail)


# --- bots: the bots app's page, with ratings, recent games and the call log --------------------
admin.site.unregister(Bot)


@admin.register(Bot)
class ArenaBotAdmin(BotAdmin):
    """Any staff member may view a bot's page; changing it still takes the permission."""

    fields = None
    fieldsets = [
        (None, {"fields": BotAdmin.fields}),
        ("Rating history", {"fields": ("rating_charts",)}),
        ("Recent games", {"fields": ("recent_games",)}),
    ]
    readonly_fields = (*BotAdmin.readonly_fields, "rating_charts", "recent_games")

    class Media:
        css = {"all": ("arena/admin.css",)}

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    @admin.display(description="Elo over rated games")
    def rating_charts(self, bot: Bot) -> SafeString:
        return SafeString(render_to_string(
            "admin/arena/rating_charts.html", {"charts": admin_tables.rating_charts(bot)}
        ))

    @admin.display(description="Games")
    def recent_games(self, bot: Bot) -> SafeString:
        return SafeString(render_to_string(
            "admin/arena/recent_games.html", {"rows": admin_tables.recent_games(bot)}
        ))


# --- games: the games app's page, with a link back to the tournament ---------------------------
admin.site.unregister(Game)


class TournamentFilter(admin.SimpleListFilter):
    """The games of one tournament (``?tournament=<id>``, the tournament page's link to all
    its games). It offers no list of tournaments (there are many): only the one picked, by
    name, so the page says what it is filtered on."""

    title = "tournament"
    parameter_name = "tournament"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        # Something to show whenever a value is given: the admin applies only filters that
        # show, and a bad id must show nothing, not every game.
        picked = self.value()
        if picked is None:
            return []
        name = None
        if (tournament_id := whole_number(picked)) is not None:
            name = (Tournament.objects.filter(pk=tournament_id).values_list("name", flat=True)
                    .first())
        return [(picked, name or f"no tournament {picked}")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Game]) -> QuerySet[Game]:
        picked = self.value()
        if picked is None:
            return queryset
        tournament_id = whole_number(picked)  # bounded: past 64 bits SQLite's driver raised
        if tournament_id is None:
            return queryset.none()
        # The ids first (its few thousand games, by the tournament's index): joined instead,
        # the planner walks every game newest first looking for the tournament's (290 ms on
        # a year's 160,000 games, 8 ms this way).
        ids = TournamentGame.objects.filter(tournament_id=tournament_id).values_list("game_id",
                                                                                    flat=True)
        return queryset.filter(pk__in=list(ids))


@admin.register(Game)
class ArenaGameAdmin(GameAdmin):
    """A tournament's game names its tournament and its number there (the games app knows
    no tournaments); the game list filters on a tournament."""

    fieldsets = [(None, {"fields": ("tournament", *GameAdmin.fieldsets[0][1]["fields"])}),
                 *GameAdmin.fieldsets[1:]]
    readonly_fields = ("tournament", *GameAdmin.readonly_fields)
    list_filter = (*GameAdmin.list_filter, TournamentFilter)

    @admin.display(description="Tournament")
    def tournament(self, game: Game) -> str:
        record = (TournamentGame.objects.select_related("tournament")
                  .filter(game_id=game.pk).first())
        if record is None:
            return "-"
        url = reverse("admin:arena_tournament_change", args=[record.tournament_id])
        return format_html('<a href="{}">{}</a> (game {} of it)', url,
                           record.tournament.name, record.number)
