"""Query filters of a bot's call log (django-filter; documented in the schema automatically):
the calls of one game, of one kind, with one outcome, or only the failed ones, for a bot
writer finding out what went wrong where."""

from __future__ import annotations

import django_filters
from django.db.models import QuerySet
from django_filters.rest_framework import BooleanFilter

from bots import runner
from bots.models import BotCall, CallKind
from core.strict import StrictFilterForm

# The call log's ``outcome`` values, as bots.runner writes them.
OUTCOMES = [(value, value) for value in (runner.MOVED, runner.STRUCK, runner.STALE,
                                         runner.CLOCK)]


class CallFilter(django_filters.FilterSet):
    game = django_filters.NumberFilter(field_name="game_id", label="Only the calls of this game")
    kind = django_filters.ChoiceFilter(choices=CallKind.choices)
    outcome = django_filters.ChoiceFilter(choices=OUTCOMES)
    failed = BooleanFilter(method="filter_failed", label="Only failed calls (or only answered)")

    class Meta:
        model = BotCall
        fields = ("game", "kind", "outcome", "failed")
        form = StrictFilterForm

    def filter_failed(self, queryset: QuerySet[BotCall], name: str, value: bool
                      ) -> QuerySet[BotCall]:
        return queryset.exclude(error="") if value else queryset.filter(error="")
