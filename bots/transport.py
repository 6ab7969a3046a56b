"""The one way the arena calls a bot: a guarded, signed, time-boxed HTTP POST.

Nothing else in the project opens a connection to a user-supplied address. Every call:

* is checked: the URL's syntax (``guard.check_url``), then the address. Names resolve through
  ``guard.resolve`` inside the connector (a custom aiohttp resolver), so the address that was
  checked is the one connected to, while ``Host`` and TLS SNI keep the name. IP literals never
  reach a resolver in aiohttp, so they are checked here before the request.
* is signed the Standard Webhooks way (``bots.signing``), with a fresh id and timestamp.
* has one deadline for the whole call (connect, send, read): a bot that drips its answer a byte
  at a time is cut off at the deadline like one that never answers.
* reads at most ``max_body`` bytes (never more are buffered), follows no redirect, asks for no
  compression (so the cap is on the bytes that are parsed), and keeps connections alive in a
  pool per event loop.

A bot's failure is never an exception: ``post`` returns a ``CallResult`` whose ``error`` is one
of ``ERROR_KINDS``. Judging the answer (is the move legal?) is the caller's job.

Use: ``default_transport().post_sync(...)`` from synchronous code (views, Celery tasks; the calls
run on the transport's own loop thread, which a forked worker restarts for itself), or
``await transport.post(...)`` from a long-lived event loop (``await transport.aclose()`` before
the loop ends). A loop per call (``asyncio.run`` each time) works but pools nothing.

The client library was chosen by measurement (issue 10): sequential keep-alive round trips to
a local server ran at about 3,000/s with aiohttp's client, 800/s with requests and 700/s with
httpx's async client; at 16 concurrent calls aiohttp reached 5,000-7,000/s where httpx fell to
300-500/s. ``bench/roundtrip.py`` compares this transport with a bare aiohttp client.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import math
import os
import socket
import threading
import time
import uuid
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from importlib import metadata
from typing import Any

import aiohttp
import orjson
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from bots import guard, signing

logger = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
MAX_BODY = 64 * 1024
DEFAULT_MAX_TIMEOUT = 10.0
ERROR_KINDS = (
    "timeout",
    "connect",
    "reset",
    "status",
    "redirect",
    "not_json",
    "too_large",
    "blocked_address",
    "bad_url",
)
# Connections kept per bot host and in all; a call waiting for a free connection waits within
# its own deadline, so a slow bot that holds its connections only delays its own calls.
_LIMIT_PER_HOST = 32
_LIMIT = 512
_KEEPALIVE_SECONDS = 30.0
_DNS_CACHE_SECONDS = 10  # only checked addresses are ever cached


@dataclass(frozen=True)
class CallResult:
    ok: bool  # 2xx and a JSON body within the cap (an empty 2xx body is ok with body None)
    status: int | None  # HTTP status, None when no response
    body: Any  # parsed JSON when ok, else None
    latency_ms: float
    error: str | None  # None when ok, else one of ERROR_KINDS
    detail: str  # human-readable reason


@lru_cache(maxsize=1)
def user_agent() -> str:
    try:
        version = metadata.version("uno-arena")
    except metadata.PackageNotFoundError:
        version = "0"
    return f"UnoArena/{version} (bot-protocol {PROTOCOL_VERSION})"


# getaddrinfo blocks a thread until the name's DNS answers, whatever the call's deadline: a
# pool of their own keeps slow names (a bot owner's choice) from starving the loop's default
# executor. Names answered recently come from aiohttp's cache and need no thread.
_DNS_THREADS = 16
_dns_pool: concurrent.futures.ThreadPoolExecutor | None = None
_dns_pool_lock = threading.Lock()


def _dns_executor() -> concurrent.futures.ThreadPoolExecutor:
    global _dns_pool
    with _dns_pool_lock:
        if _dns_pool is None:
            _dns_pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=_DNS_THREADS, thread_name_prefix="bot-dns"
            )
        return _dns_pool


def _reset_dns_pool_after_fork() -> None:
    global _dns_pool, _dns_pool_lock
    _dns_pool, _dns_pool_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_reset_dns_pool_after_fork)


class _GuardedResolver(AbstractResolver):
    """aiohttp resolver that only ever hands the connector addresses the guard accepted."""

    def __init__(self, *, allow_private: bool) -> None:
        self._allow_private = allow_private

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_UNSPEC
    ) -> list[ResolveResult]:
        loop = asyncio.get_running_loop()
        addresses = await loop.run_in_executor(
            _dns_executor(), partial(guard.resolve, host, port, allow_private=self._allow_private)
        )
        return [
            {
                "hostname": host,
                "host": address,
                "port": port,
                "family": socket.AF_INET6 if ":" in address else socket.AF_INET,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
            for address in addresses
        ]

    async def close(self) -> None:
        return None


def _setting(name: str, default: Any) -> Any:
    try:
        from django.conf import settings

        return getattr(settings, name, default)
    except Exception:  # Django not installed or not configured: bots.serve, scripts
        return default


def _result(
    started: float, *, error: str | None, detail: str, status: int | None = None, body: Any = None
) -> CallResult:
    return CallResult(
        ok=error is None,
        status=status,
        body=body if error is None else None,
        latency_ms=(time.perf_counter() - started) * 1000.0,
        error=error,
        detail=detail,
    )


def encode(payload: Mapping[str, Any]) -> bytes:
    """A body as every call sends it: compact UTF-8 JSON. orjson, not the standard library:
    a turn's payload is encoded on every turn, in about 1 us against 10-25 us (and a finished
    game's replay, sent to every seat, is thousands of moves)."""
    return orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS)


class _TooLarge(Exception):
    pass


async def _read_capped(response: aiohttp.ClientResponse, cap: int) -> bytes:
    """The body, or ``_TooLarge`` as soon as more than ``cap`` bytes arrive (never buffered)."""
    declared = response.content_length
    if declared is not None and declared > cap:
        raise _TooLarge(f"the bot announced {declared} bytes, over the {cap}-byte cap")
    chunks: list[bytes] = []
    received = 0
    while True:
        chunk = await response.content.read(cap + 1 - received)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        received += len(chunk)
        if received > cap:
            raise _TooLarge(f"the bot sent more than the {cap}-byte cap")


def _parse_json(raw: bytes) -> tuple[bool, Any, str]:
    """A bot's answer parsed (orjson: strict JSON, so NaN or Infinity is not JSON either, and
    nesting deeper than 1,024 levels is refused as such)."""
    if not raw.strip():
        return True, None, "empty body"
    try:
        return True, orjson.loads(raw), ""
    except (ValueError, UnicodeDecodeError) as exc:
        return False, None, f"the body is not JSON: {exc}"


@lru_cache(maxsize=4096)  # only accepted URLs are remembered: a refusal raises
def _checked_url(url: str, allow_private: bool) -> URL:
    """The parsed URL after the syntax check, and the address check for IP literals."""
    guard.check_url(url)
    try:
        target = URL(url)
    except (ValueError, TypeError) as exc:  # what urlsplit accepted but aiohttp's parser not
        raise guard.BadBotUrl(f"the URL is malformed: {exc}") from None
    host = target.raw_host or ""
    # aiohttp connects without asking the resolver to any host that looks like an IP
    # address (a colon, or only digits and dots): every such host is checked here, and one
    # we cannot read as an address is refused rather than handed to the OS to interpret.
    if ":" in host or host.replace(".", "").isdigit() or guard.parse_ip(host) is not None:
        guard.check_ip(host, allow_private=allow_private)
    return target


class BotTransport:
    """Signed, guarded POSTs to bots with pooled keep-alive connections (one pool per loop)."""

    def __init__(
        self,
        *,
        allow_private: bool | None = None,
        max_body: int = MAX_BODY,
        max_timeout: float | None = None,
    ) -> None:
        if allow_private is None:
            allow_private = bool(_setting("BOTS_ALLOW_PRIVATE", False))
        if max_timeout is None:
            max_timeout = float(_setting("BOTS_MAX_TIMEOUT_SECONDS", DEFAULT_MAX_TIMEOUT))
        self.allow_private = allow_private
        self.max_body = max_body
        self.max_timeout = max_timeout
        # aiohttp sessions belong to one event loop: each loop that calls gets its own pool.
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession]
        self._sessions = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._thread_loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()

    # -- sessions -------------------------------------------------------------------------------

    def _forked(self) -> None:
        """After a fork (Celery's prefork pool) the parent's loop thread and pooled sockets
        are not ours: start afresh rather than wait on a thread that does not exist here."""
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._sessions = weakref.WeakKeyDictionary()
            self._thread_loop = self._thread = None

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        with self._lock:
            self._forked()
            session = self._sessions.get(loop)
            if session is None or session.closed:
                session = self._new_session()
                # A caller that ran a loop per call (asyncio.run) left a pool on each: drop
                # those of closed loops so they can be collected. Prefer post_sync or one loop.
                for stale in [other for other in self._sessions if other.is_closed()]:
                    self._sessions.pop(stale, None)
                self._sessions[loop] = session
            return session

    def _new_session(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            resolver=_GuardedResolver(allow_private=self.allow_private),
            limit=_LIMIT,
            limit_per_host=_LIMIT_PER_HOST,
            keepalive_timeout=_KEEPALIVE_SECONDS,
            ttl_dns_cache=_DNS_CACHE_SECONDS,
        )
        return aiohttp.ClientSession(
            connector=connector,
            trust_env=False,  # no proxy from the environment: we connect where we checked
            auto_decompress=False,
            cookie_jar=aiohttp.DummyCookieJar(),  # a bot cannot set state for another
            timeout=aiohttp.ClientTimeout(total=None),  # our own deadline governs
            headers={"User-Agent": user_agent()},
            skip_auto_headers=("Accept-Encoding",),
        )

    # -- calls ----------------------------------------------------------------------------------

    async def post(
        self,
        url: str,
        payload: Mapping[str, Any],
        *,
        secrets: Sequence[str],
        timeout: float,
    ) -> CallResult:
        """POST ``payload`` as signed JSON; every bot failure comes back as a ``CallResult``."""
        return await self.post_body(url, encode(payload), secrets=secrets, timeout=timeout)

    async def post_body(
        self,
        url: str,
        body: bytes,
        *,
        secrets: Sequence[str],
        timeout: float,
    ) -> CallResult:
        """``post`` of a body already encoded (``encode``): a caller that made the bytes
        anyway (or sends the same body to several bots) encodes once."""
        started = time.perf_counter()
        msg_id = f"msg_{uuid.uuid4().hex}"
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Accept-Encoding": "identity",
            **signing.headers_for(secrets, msg_id, int(time.time()), body),
        }
        deadline = self._deadline(timeout)
        try:
            target = self._checked_url(url)
            async with asyncio.timeout(deadline):
                return await self._exchange(started, target, body, headers)
        except guard.BadBotUrl as exc:
            return _result(started, error="bad_url", detail=exc.reason)
        except guard.BlockedAddress as exc:
            return _result(started, error="blocked_address", detail=exc.reason)
        except TimeoutError:
            return _result(started, error="timeout", detail=f"no full answer within {deadline} s")
        except aiohttp.InvalidURL as exc:
            return _result(started, error="bad_url", detail=f"the URL is malformed: {exc}")
        except aiohttp.ClientConnectorError as exc:
            return _result(started, error="connect", detail=f"could not connect: {exc}")
        except (aiohttp.ClientError, OSError) as exc:
            detail = f"the connection failed mid-call: {type(exc).__name__}: {exc}"
            return _result(started, error="reset", detail=detail[:500])
        except Exception as exc:  # a bot must never crash the caller; log what slipped through
            logger.exception("unexpected failure calling a bot at %s", url[:200])
            detail = f"unexpected failure: {type(exc).__name__}: {exc}"
            return _result(started, error="reset", detail=detail[:500])

    def _deadline(self, timeout: float) -> float:
        """The call's deadline in seconds: at most ``max_timeout``, nonsense counts as that."""
        deadline = float(timeout)
        if not math.isfinite(deadline) or deadline > self.max_timeout:
            deadline = self.max_timeout
        return max(deadline, 0.001)

    def _checked_url(self, url: str) -> URL:
        # Parsing and checking cost more than signing; a bot's URL is called every turn.
        return _checked_url(url, self.allow_private)

    async def _exchange(
        self, started: float, target: URL, body: bytes, headers: dict[str, str]
    ) -> CallResult:
        async with self._session().post(
            target, data=body, headers=headers, allow_redirects=False
        ) as response:
            status = response.status
            if 300 <= status < 400:
                location = response.headers.get("Location", "")[:200]
                detail = f"the bot answered {status} redirect to {location!r} (not followed)"
                return _result(started, error="redirect", detail=detail, status=status)
            if not 200 <= status < 300:
                return _result(
                    started, error="status", detail=f"the bot answered {status}", status=status
                )
            try:
                raw = await _read_capped(response, self.max_body)
            except _TooLarge as exc:
                response.close()  # drop the connection rather than drain megabytes
                return _result(started, error="too_large", detail=str(exc), status=status)
        parsed, value, problem = _parse_json(raw)
        if not parsed:
            return _result(started, error="not_json", detail=problem[:500], status=status)
        return _result(started, error=None, detail=problem, status=status, body=value)

    # -- sync callers ---------------------------------------------------------------------------

    def _loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            self._forked()
            if self._thread_loop is None or self._thread_loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="bot-transport", daemon=True
                )
                thread.start()
                self._thread_loop, self._thread = loop, thread
            return self._thread_loop

    def post_sync(
        self,
        url: str,
        payload: Mapping[str, Any],
        *,
        secrets: Sequence[str],
        timeout: float,
    ) -> CallResult:
        """``post`` for synchronous code: runs on the transport's own event-loop thread."""
        return self.result(self.post_future(url, payload, secrets=secrets, timeout=timeout),
                           timeout=timeout)

    def post_future(
        self,
        url: str,
        payload: Mapping[str, Any],
        *,
        secrets: Sequence[str],
        timeout: float,
    ) -> concurrent.futures.Future[CallResult]:
        """``post`` started on the transport's own event-loop thread; the caller goes on
        (``result`` waits for it)."""
        return asyncio.run_coroutine_threadsafe(
            self.post(url, payload, secrets=secrets, timeout=timeout), self._loop()
        )

    def result(self, future: concurrent.futures.Future[CallResult], *, timeout: float
               ) -> CallResult:
        """A ``post_future``'s answer (``timeout``: the call's)."""
        # The call has its own deadline; the margin only guards against a wedged loop.
        try:
            return future.result(timeout=self._deadline(timeout) + 5.0)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise

    # -- shutdown -------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the pool of the running event loop (for async callers about to stop it)."""
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            await session.close()

    def close(self) -> None:
        """Close every pool this transport opened and stop its own loop thread."""
        with self._lock:
            loop, thread = self._thread_loop, self._thread
            self._thread_loop = self._thread = None
        if loop is not None and thread is not None:
            asyncio.run_coroutine_threadsafe(self.aclose(), loop).result(timeout=5)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            loop.close()
        for other, session in list(self._sessions.items()):
            self._sessions.pop(other, None)
            if other.is_closed() or session.closed:
                continue
            if other.is_running():
                asyncio.run_coroutine_threadsafe(session.close(), other)
            else:
                other.run_until_complete(session.close())


_default: BotTransport | None = None
_default_lock = threading.Lock()


def default_transport() -> BotTransport:
    """The process-wide transport, created on first use with the settings' values."""
    global _default
    with _default_lock:
        if _default is None:
            _default = BotTransport()
        return _default
