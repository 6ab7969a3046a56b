"""Input that means exactly what the schema says. DRF is lenient where the OpenAPI schema is
not: a CharField takes ``123``, an IntegerField takes ``"60"``, pagination ignores a bad
``page_size`` and django-filter a bad ``status``. A client whose request the schema rejects gets
a 400 naming the field instead of a guess."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django import forms
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.plumbing import get_class
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination


class StrictInput(serializers.Serializer):
    """A request body with only the fields the schema names: a misspelt one (``"seat": 3``
    for ``"seats"``) is a 400 naming it, not silently ignored while its default applies."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


def no_body(request: Any) -> None:
    """For an operation that takes no body (a start, a cancel, a verification): none, or
    ``{}``, is fine. A malformed body is already a 400 (the parser's); fields are a 400 too,
    naming them, as in every other body: a client that sends them expects them to mean
    something, and nothing here would read them."""
    data = request.data
    if isinstance(data, Mapping) and not data:
        return
    if isinstance(data, Mapping):
        raise ValidationError({str(name): ["Unknown field."] for name in sorted(data)})
    raise ValidationError({"body": ["This operation takes no body (or an empty object)."]})


class StrictInputSchema(OpenApiSerializerExtension):
    """In the schema too: ``additionalProperties: false``."""

    target_class = StrictInput
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: Any) -> Any:
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        if not get_class(self.target).__doc__:  # not StrictInput's own, inherited
            schema.pop("description", None)
        return {**schema, "additionalProperties": False}


class StrictCharField(serializers.CharField):
    """Only JSON strings (DRF would turn a number into its digits)."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictRegexField(serializers.RegexField):
    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """Only JSON integers: DRF would also parse the string ``"60"`` and take ``1.0`` as 1."""

    def to_internal_value(self, data: Any) -> int:
        if type(data) is not int:  # not bool either, though it is an int to Python
            self.fail("invalid")
        return super().to_internal_value(data)


QUERY_TRUE = frozenset({"true", "1"})
QUERY_FALSE = frozenset({"false", "0"})


def query_bool(params: Any, name: str, default: bool = False) -> bool:
    """A boolean query parameter: ``true``/``false`` (or ``1``/``0``); anything else is a 400."""
    if name not in params:
        return default
    value = params.get(name, "").lower()
    if value in QUERY_TRUE:
        return True
    if value in QUERY_FALSE:
        return False
    raise ValidationError({name: ["Must be true or false."]})


class StrictFilterForm(forms.Form):
    """Base form of the API's filter sets: a query parameter given with a value the schema does
    not allow (empty, not a boolean) is an error, not a silently ignored filter."""

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        for name in self.fields:
            if name not in self.data:
                continue
            raw = str(self.data.get(name, "")).lower()
            if raw == "":
                self.add_error(name, "This field may not be blank.")
            elif isinstance(self.fields[name], forms.NullBooleanField) and raw not in (
                QUERY_TRUE | QUERY_FALSE
            ):
                self.add_error(name, "Must be true or false.")
        return cleaned


# The largest ``page`` read (nine digits): the schema says so, and a larger one is a 400.
MAX_PAGE = 999_999_999


class StrictPageNumberPagination(PageNumberPagination):
    """A ``page_size`` outside 1..``max_page_size`` (or not a number) is a 400; DRF would
    silently use the default. The schema states the range. So is a ``page`` that is not a
    number from 1; one past the end is a 404."""

    # The list's URL, for the `next`/`previous` links of the schema's examples (page 2 shown).
    example_url = ""
    # Every list of the API pages the same way; a list changes only what differs.
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200

    def get_page_size(self, request: Any) -> int | None:
        name = self.page_size_query_param
        if not name or name not in request.query_params:
            return self.page_size
        raw = request.query_params[name]
        size = int(raw) if re.fullmatch(r"[0-9]{1,9}", raw) else 0
        if not 1 <= size <= (self.max_page_size or size):
            top = f"..{self.max_page_size}" if self.max_page_size else " or more"
            raise ValidationError({name: [f"Must be an integer 1{top}."]})
        return size

    def get_page_number(self, request: Any, paginator: Any) -> Any:
        # What the schema refuses (blank, 0, "x"; DRF would read a blank as page 1) is a 400
        # naming ``page``; a page past the end is DRF's 404.
        name = self.page_query_param
        if name not in request.query_params:
            return 1
        raw = request.query_params[name]
        if not re.fullmatch(r"[1-9][0-9]{0,8}", raw):
            raise ValidationError({name: ["Must be an integer from 1 to 999999999."]})
        return raw

    def get_paginated_response_schema(self, schema: Any) -> dict[str, Any]:
        out = super().get_paginated_response_schema(schema)
        if self.example_url:
            properties = out["properties"]
            properties["count"]["example"] = 41
            properties["next"]["example"] = f"{self.example_url}?page=3"
            properties["previous"]["example"] = self.example_url
        return out

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] = {**parameter["schema"], "minimum": 1}
                if self.max_page_size:
                    parameter["schema"]["maximum"] = self.max_page_size
            if parameter["name"] == self.page_query_param:
                parameter["schema"] = {**parameter["schema"], "minimum": 1, "maximum": MAX_PAGE}
        return parameters


def page_parameters(pagination: type[PageNumberPagination]) -> list[Any]:
    """``page`` and ``page_size`` as the schema's query parameters of a view that paginates by
    hand (an ``APIView`` answering pages: drf-spectacular declares them only for list views),
    with the limits the paginator states."""
    from drf_spectacular.utils import OpenApiParameter

    return [
        OpenApiParameter(found["name"], found["schema"], required=False,
                         description=found.get("description", ""))
        for found in pagination().get_schema_operation_parameters(None)
    ]


class QuerySerializer(serializers.Serializer):
    """For query parameters: one given empty (``?since=``) is invalid, not taken as omitted
    (DRF's rule for HTML form input, where a blank field means "not filled in"), and one the
    operation does not take (``?wiat=25``) is a 400 naming it, not a wait silently skipped."""

    def to_internal_value(self, data: Any) -> Any:
        if hasattr(data, "dict"):  # a QueryDict
            data = data.dict()
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise ValidationError({name: ["Unknown query parameter."] for name in unknown})
        return super().to_internal_value(data)


class QueryIntegerField(serializers.IntegerField):
    """An integer query parameter written as one (DRF would also take ``1.0`` as 1)."""

    def to_internal_value(self, data: Any) -> int:
        # An integer, only too long to be one of ours: say what the limit is.
        if (isinstance(data, str) and re.fullmatch(r"[0-9]{20,}", data)
                and self.max_value is not None):
            self.fail("max_value", max_value=self.max_value)
        if not isinstance(data, str) or not re.fullmatch(r"-?[0-9]{1,19}", data):
            self.fail("invalid")
        return super().to_internal_value(data)


# A number as JSON writes one (leading zeros allowed), in ASCII digits.
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


class QueryFloatField(serializers.FloatField):
    """A number query parameter written as one: DRF's ``float()`` would also read `` 5``,
    ``5_0``, ``nan``, ``infinity`` and other scripts' digits (Arabic-Indic ``\\u0665``)."""

    def to_internal_value(self, data: Any) -> float:
        if not isinstance(data, str) or not _NUMBER.fullmatch(data):
            self.fail("invalid")
        return super().to_internal_value(data)
