"""Query filters of the game list (django-filter; documented in the schema automatically)."""

from __future__ import annotations

import django_filters
from django.db.models import QuerySet
from django_filters.rest_framework import BooleanFilter

from core.strict import StrictFilterForm
from games.models import Game, GameStatus
from games.selectors import lobby_order


class GameFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=GameStatus.choices)
    # django-filter's REST BooleanFilter reads 1/0 as well as true/false, as every boolean
    # query parameter of the API does (the plain one's widget read 1 as "no filter").
    mine = BooleanFilter(method="filter_mine", label="Only games I have a seat in")
    open_seats = BooleanFilter(
        method="filter_open_seats", label="Only open games with a free seat"
    )

    class Meta:
        model = Game
        fields = ("status", "mine", "open_seats")
        form = StrictFilterForm

    def filter_mine(self, queryset: QuerySet[Game], name: str, value: bool) -> QuerySet[Game]:
        if not value:
            return queryset
        return queryset.filter(seats__user=self.request.user).distinct()

    def filter_open_seats(
        self, queryset: QuerySet[Game], name: str, value: bool
    ) -> QuerySet[Game]:
        if not value:
            return queryset
        return lobby_order(queryset.filter(status=GameStatus.OPEN, open_seat_count__gt=0))

