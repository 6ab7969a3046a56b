"""The OpenAPI schema as served: generated once per process, and tidied for client generators.

drf-spectacular builds the schema on every request, and loads its extensions lazily on the
first one; that loading is not thread-safe, so a fresh server process given several schema
requests at once answered some of them 500. Here the schema is generated under a lock, once,
and every later request is answered from that copy (the API does not change while the
process runs).
"""

from __future__ import annotations

import re
import threading
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.views import SpectacularAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_errors import json_answer

_lock = threading.Lock()
_generated: dict[str, Any] = {}


class SchemaView(SpectacularAPIView):
    """``/api/schema/``: the schema generated once; a request for another language or version
    (``?lang=``, ``?version=``) is generated on its own, under the same lock."""

    def _get_schema_response(self, request: Request) -> Response:
        if set(request.query_params) - {"format"}:
            with _lock:
                return super()._get_schema_response(request)
        with _lock:
            if "schema" not in _generated:
                _generated["schema"] = super()._get_schema_response(request).data
        filename = self._get_filename(request, None)
        return Response(
            data=_generated["schema"],
            headers={"Content-Disposition": f'inline; filename="{filename}"'},
        )


def merge_identical_request_components(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """A postprocessing hook: where ``XRequest`` (COMPONENT_SPLIT_REQUEST) is the same schema
    as ``X``, refer to ``X`` only, so a client can send back what it was given (a legal move)
    as it is, without converting it to a request model of its own."""
    schemas = result.get("components", {}).get("schemas", {})
    same = {
        name: name.removesuffix("Request")
        for name, schema in schemas.items()
        if name.endswith("Request") and schemas.get(name.removesuffix("Request")) == schema
    }
    if not same:
        return result
    for name in same:
        del schemas[name]
    prefix = "#/components/schemas/"
    renamed = {prefix + old: prefix + new for old, new in same.items()}

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                key: renamed.get(value, value) if key == "$ref" else rewrite(value)
                for key, value in node.items()
            }
        if isinstance(node, list):
            return [rewrite(item) for item in node]
        return node

    return rewrite(result)  # type: ignore[no-any-return]


# --- query parameters: the schema's, and no others ----------------------------------------------
_ROUTE_PARAMETER = re.compile(r"<(?:\w+:)?(\w+)>")


_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
_HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
_BODY_METHODS = ("put", "post", "patch")


def every_operation_refuses_bad_input(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """A postprocessing hook: what the API answers on every operation, said on every one. A
    query parameter the operation does not take is a 400 naming it (``KnownQueryParameters``),
    also where the operation takes none; a body that is not JSON is a 415
    (``unsupported_media_type``) and one over the size limit a 413 (``request_too_large``)
    wherever a body is read, which is every POST, PUT and PATCH. A client generated from the schema
    then knows these answers instead of meeting undeclared statuses."""
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in _HTTP_METHODS:
                continue
            responses = operation.setdefault("responses", {})
            responses.setdefault("400", {
                "description": "A query parameter the operation does not take (named in "
                "`fields`), one given twice, or one given empty.",
                "content": _ERROR,
            })
            # Also where no body is declared: an action with nothing to send (start, cancel,
            # verify) still reads one, refusing anything but nothing or ``{}``.
            if "requestBody" in operation or method in _BODY_METHODS:
                responses.setdefault("413", {
                    "description": "The body is larger than the server takes "
                    "(`request_too_large`).",
                    "content": _ERROR,
                })
                responses.setdefault("415", {
                    "description": "The body is not JSON (send `Content-Type: "
                    "application/json`).",
                    "content": _ERROR,
                })
    return result


def query_parameters() -> dict[tuple[str, str], frozenset[str]]:
    """(path as the schema writes it, method) -> the query parameters the schema names for that
    operation. Generated once per process, under the schema's lock, on first need."""
    known: dict[tuple[str, str], frozenset[str]] | None = _generated.get("query")
    if known is not None:  # every request after the first: no lock
        return known
    with _lock:
        if "query" not in _generated:
            schema = SchemaGenerator().get_schema(request=None, public=True)
            _generated["query"] = {
                (path, method): frozenset(p["name"] for p in operation.get("parameters", [])
                                          if p.get("in") == "query")
                for path, operations in schema["paths"].items()
                for method, operation in operations.items()
            }
        found: dict[tuple[str, str], frozenset[str]] = _generated["query"]
        return found


def _refusal(request: HttpRequest, route: str) -> HttpResponse | None:
    """The 400 for a query parameter the operation (its URL pattern ``route``) does not take
    by the schema, or None."""
    path = "/" + _ROUTE_PARAMETER.sub(r"{\1}", route)
    method = "get" if request.method == "HEAD" else (request.method or "").lower()
    known = query_parameters().get((path, method))
    if known is None:  # not an operation of the schema: the schema and docs pages
        return None
    unknown = sorted(set(request.GET) - known)
    if unknown:
        return _invalid_query(unknown, "Unknown query parameter.")
    # None of the API's query parameters is a list: ``?since=0&since=9`` is ambiguous (Django
    # keeps the last), so it is refused rather than guessed at.
    repeated = sorted(name for name, values in request.GET.lists() if len(values) > 1)
    if repeated:
        return _invalid_query(repeated, "Given more than once; give it once.")
    return None


def _invalid_query(names: list[str], message: str) -> HttpResponse:
    fields = {name: [message] for name in names}
    return json_answer({"code": "invalid", "detail": f"{names[0]}: {message}",
                        "fields": fields}, 400)


def _asks_api_with_query(request: HttpRequest) -> bool:
    return bool(request.GET) and request.path.startswith("/api/")


class KnownQueryParameters:
    """Middleware: a query parameter the operation's schema does not name (``?wiat=25``,
    ``?foo=1``) is a 400 naming it, on every operation of the API, not silently ignored. Some
    views checked their own (``core.strict.QuerySerializer``); the schema is the one list.
    Requests without a query string cost nothing here.

    Synchronous handling checks in ``process_view``, with the URL Django has just resolved.
    Asynchronous handling (the streams) checks in the call, resolving the URL itself: a
    synchronous ``process_view`` there would hand every stream to a thread on its way, so the
    instance has one only when synchronous."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)
        else:
            self.process_view = self._check_view

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        return self.get_response(request)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        if _asks_api_with_query(request):
            if "query" not in _generated:  # built once, off the event loop
                await sync_to_async(query_parameters, thread_sensitive=False)()
            try:
                match = resolve(request.path_info, getattr(request, "urlconf", None))
            except Resolver404:
                match = None
            refused = None if match is None else _refusal(request, match.route)
            if refused is not None:
                return refused
        return await self.get_response(request)  # type: ignore[no-any-return]

    def _check_view(self, request: HttpRequest, view: Any, args: Any, kwargs: Any
                    ) -> HttpResponse | None:
        if not _asks_api_with_query(request) or request.resolver_match is None:
            return None
        return _refusal(request, request.resolver_match.route)
