"""The one way the arena calls a bot: a guarded, signed, time-boxed HTTP POST.

Nothing else in the project opens a connection to a user-supplied address. Every call:

* is checked: the URL's syntax (``guard.check_url``), then the address. Every host, name or
  IP literal, goes through ``guard.resolve`` before a connection is dialled, and the address
  that was checked is the one connected to, while ``Host`` and TLS SNI keep the name.
* is signed the Standard Webhooks way (``bots.signing``), with a fresh id and timestamp
  (verification alone sends a call unsigned or stale, on purpose: ``bots.verify``).
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

The client was chosen by measurement (issue 10): sequential keep-alive round trips to a local
server ran at about 3,000/s with aiohttp's client, 800/s with requests and 700/s with httpx's
async client; at 16 concurrent calls aiohttp reached 5,000-7,000/s where httpx fell to
300-500/s. Then a tournament worker's turns turned out to be bound by the client's CPU (one
process, one core): aiohttp's client cost about 280 us a call, and the exchange of
``bots.http1`` (an asyncio protocol with httptools' parser) about 140 us, so the transport
speaks HTTP/1.1 through that. ``bench/roundtrip.py`` compares this transport with a bare
aiohttp client.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import math
import os
import ssl
import threading
import time
import uuid
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from importlib import metadata
from typing import Any

import orjson
from yarl import URL

from bots import guard, http1, signing
from core.parsers import RepeatedKey, object_without_repeats

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
# A name that failed (no answer, no such name, a refused address) is not looked up again for
# this long: a bot whose DNS never answers held a lookup thread per call until the resolver
# gave up, and 16 such calls left every other bot's new connection without one.
_DNS_FAILURE_SECONDS = 5
# A bot that answered within this long and now refuses connections is taken to be restarting:
# its call is dialled again (every 20 ms, doubling to 250 ms) until the call's own deadline,
# instead of failing at once and costing a strike per decision while nobody listens. A bot
# never reached, or not for longer, fails at once as before (a dead bot stays cheap).
_REDIAL_AFTER_ANSWER_SECONDS = 30.0
_REDIAL_FIRST_SECONDS, _REDIAL_MAX_SECONDS = 0.02, 0.25


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
# executor. Names answered recently come from the transport's cache and need no thread.
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


def _parse_json(raw: bytes) -> tuple[bool, Any, str]:
    """A bot's answer parsed (orjson: strict JSON, so NaN or Infinity is not JSON either, and
    nesting deeper than 1,024 levels is refused as such). A key given twice in an object is
    refused too, as the API refuses it in a request (``core.parsers``): orjson would keep the
    last, a guess at what the bot meant."""
    if not raw.strip():
        return True, None, "empty body"
    try:
        value = orjson.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return False, None, f"the body is not JSON: {exc}"
    # Every key is followed by a colon: more colons than keys parsed may be a repeated key (or
    # colons inside strings), and only then is the body read again, key by key.
    if raw.count(b":") > _key_count(value):
        repeated = _repeated_key(raw)
        if repeated is not None:
            return False, None, f"the body gives the key {repeated!r} twice in an object"
    return True, value, ""


def _key_count(value: Any) -> int:
    """How many keys the objects of a parsed JSON value hold, all levels (no recursion; about
    a microsecond for a usual answer)."""
    count, pending = 0, [value]
    while pending:
        item = pending.pop()
        if type(item) is dict:  # orjson makes plain dicts and lists only
            count += len(item)
            items: Any = item.values()
        elif type(item) is list:
            items = item
        else:
            continue
        for sub in items:
            if type(sub) is dict or type(sub) is list:
                pending.append(sub)
    return count


def _repeated_key(raw: bytes) -> str | None:
    """The first key an object of ``raw`` (JSON orjson accepted) gives twice, or None."""
    try:
        json.loads(raw, object_pairs_hook=object_without_repeats)
    except RepeatedKey as exc:
        return exc.key
    except (ValueError, RecursionError):  # deeper than this parser goes: orjson's verdict
        return None
    return None


def _redial_delay(started: float) -> float:
    """How long to wait before dialling a refusing bot again: 20 ms, doubling with the time
    already spent, at most 250 ms."""
    spent = time.perf_counter() - started
    return min(_REDIAL_MAX_SECONDS, max(_REDIAL_FIRST_SECONDS, spent))


class _ConnectFailed(Exception):
    def __init__(self, message: str, *, refused: bool = False) -> None:
        super().__init__(message)
        self.refused = refused  # every address refused: nobody listening there (yet)


@dataclass(frozen=True)
class _Target:
    """A checked bot URL, as its requests need it."""

    key: tuple[str, str, int]  # the pool's destination: scheme, host, port
    host: str  # what is resolved (through the guard), and TLS's server name
    port: int
    tls: bool
    head: bytes  # the request line and the headers every call to it sends


@lru_cache(maxsize=4096)  # only accepted URLs are remembered: a refusal raises
def _checked_url(url: str, allow_private: bool) -> _Target:
    """The URL after the syntax check, and the address check for IP literals."""
    guard.check_url(url)
    try:
        target = URL(url)
        host = target.raw_host or ""
        port = target.port or (443 if target.scheme == "https" else 80)
        authority = f"[{host}]" if ":" in host else host
        if target.explicit_port is not None and port != {"http": 80, "https": 443}[target.scheme]:
            authority = f"{authority}:{port}"
        head = (f"POST {target.raw_path_qs or '/'} HTTP/1.1\r\nHost: {authority}\r\n"
                f"User-Agent: {user_agent()}\r\nContent-Type: application/json\r\n"
                "Accept: application/json\r\nAccept-Encoding: identity\r\n").encode("ascii")
    except (ValueError, TypeError, KeyError) as exc:  # what urlsplit accepted but yarl not
        raise guard.BadBotUrl(f"the URL is malformed: {exc}") from None
    # A host that looks like an IP address (a colon, or only digits and dots) is checked as
    # one now, and one we cannot read as an address is refused rather than handed to the
    # OS's resolver to interpret.
    if ":" in host or host.replace(".", "").isdigit() or guard.parse_ip(host) is not None:
        guard.check_ip(host, allow_private=allow_private)
    return _Target((target.scheme, host, port), host, port, target.scheme == "https", head)


def _judged(started: float, response: http1.Response) -> CallResult:
    """The call's result from the bot's whole answer."""
    status = response.status
    if 300 <= status < 400:
        location = response.location[:200]
        detail = f"the bot answered {status} redirect to {location!r} (not followed)"
        return _result(started, error="redirect", detail=detail, status=status)
    if not 200 <= status < 300:
        detail = f"the bot answered {status}"
        if status == 401:  # what a bot answers to a signature it cannot verify
            detail += (": it refused the call's signature? Check that it holds the bot's "
                       "current secret (after a rotation, calls carry both for the grace period)")
        return _result(started, error="status", detail=detail, status=status)
    parsed, value, problem = _parse_json(response.body)
    if not parsed:
        return _result(started, error="not_json", detail=problem[:500], status=status)
    return _result(started, error=None, detail=problem, status=status, body=value)


def _request_head(target: _Target, body: bytes, signature: Mapping[str, str]) -> bytes:
    signed = "".join(f"{name}: {value}\r\n" for name, value in signature.items())
    return b"%sContent-Length: %d\r\n%s\r\n" % (target.head, len(body), signed.encode("ascii"))


class BotTransport:
    """Signed, guarded POSTs to bots with pooled keep-alive connections (one pool per loop)."""

    def __init__(
        self,
        *,
        allow_private: bool | None = None,
        max_body: int = MAX_BODY,
        max_timeout: float | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """``tls``: the context https bots are checked with (default: the system's CAs, names
        verified; a test passes one that trusts its own certificate)."""
        if allow_private is None:
            allow_private = bool(_setting("BOTS_ALLOW_PRIVATE", False))
        if max_timeout is None:
            max_timeout = float(_setting("BOTS_MAX_TIMEOUT_SECONDS", DEFAULT_MAX_TIMEOUT))
        self.allow_private = allow_private
        self.max_body = max_body
        self.max_timeout = max_timeout
        # Connections belong to one event loop: each loop that calls gets its own pool.
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, http1.Pool]
        self._pools = weakref.WeakKeyDictionary()
        self._dns: dict[tuple[str, int], tuple[float, list[str]]] = {}  # checked addresses
        self._dns_failed: dict[tuple[str, int], tuple[float, Exception]] = {}
        self._answered: dict[tuple[str, str, int], float] = {}  # target -> monotonic, last answer
        # Lookups in flight, per event loop: a name's concurrent calls share one (one thread).
        self._lookups: dict[tuple[int, str, int], asyncio.Future[list[str]]] = {}
        self._tls = tls
        self._lock = threading.Lock()
        self._thread_loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()

    # -- pools and connections ------------------------------------------------------------------

    def _forked(self) -> None:
        """After a fork (Celery's prefork pool) the parent's loop thread and pooled sockets
        are not ours: start afresh rather than wait on a thread that does not exist here."""
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._pools = weakref.WeakKeyDictionary()
            self._thread_loop = self._thread = None

    def _pool(self) -> http1.Pool:
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is not None and self._pid == os.getpid():
            return pool
        with self._lock:
            self._forked()
            pool = self._pools.get(loop)
            if pool is None:
                pool = http1.Pool(limit=_LIMIT, per_host=_LIMIT_PER_HOST,
                                  keepalive=_KEEPALIVE_SECONDS)
                # A caller that ran a loop per call (asyncio.run) left a pool on each: drop
                # those of closed loops so they can be collected. Prefer post_sync or one loop.
                for stale in [other for other in self._pools if other.is_closed()]:
                    self._pools.pop(stale, None)
                self._pools[loop] = pool
            return pool

    async def _dial(self, target: _Target) -> http1.Http1Connection:
        """A new connection to one of the target's checked addresses, in the order resolved."""
        loop = asyncio.get_running_loop()
        try:
            addresses = await self._addresses(target.host, target.port)
        except OSError as exc:  # the name does not resolve
            raise _ConnectFailed(f"{target.host!r} does not resolve: {exc}") from None
        failure: OSError | None = None
        refused = True
        for address in addresses:
            try:
                _, connection = await loop.create_connection(
                    partial(http1.Http1Connection, max_body=self.max_body), address,
                    target.port, ssl=self._tls_context() if target.tls else None,
                    server_hostname=target.host if target.tls else None)
                return connection
            except OSError as exc:  # refused, unreachable, a certificate refused (ssl.SSLError)
                failure = exc
                refused = refused and isinstance(exc, ConnectionRefusedError)
        raise _ConnectFailed(str(failure), refused=refused and failure is not None)

    async def _addresses(self, host: str, port: int) -> list[str]:
        """``guard.resolve``'s checked addresses, remembered for ``_DNS_CACHE_SECONDS`` (a
        failure for ``_DNS_FAILURE_SECONDS``); concurrent calls to one name share one lookup."""
        now = time.monotonic()
        cached = self._dns.get((host, port))
        if cached is not None and cached[0] > now:
            return cached[1]
        failed = self._dns_failed.get((host, port))
        if failed is not None and failed[0] > now:
            raise failed[1]
        if guard.parse_ip(host) is not None:  # an IP literal: checked, no lookup
            return guard.resolve(host, port, allow_private=self.allow_private)
        loop = asyncio.get_running_loop()
        key = (id(loop), host, port)
        lookup = self._lookups.get(key)
        if lookup is None:
            lookup = self._lookups[key] = loop.create_task(self._look_up(host, port))
            lookup.add_done_callback(partial(self._looked_up, key))
        # Shielded: a caller whose deadline passes leaves the lookup to the others.
        return await asyncio.shield(lookup)

    def _looked_up(self, key: tuple[int, str, int], lookup: asyncio.Future[list[str]]) -> None:
        self._lookups.pop(key, None)
        if not lookup.cancelled():
            lookup.exception()  # retrieved: callers that gave up waiting do not see it

    async def _look_up(self, host: str, port: int) -> list[str]:
        resolve = partial(guard.resolve, host, port, allow_private=self.allow_private)
        try:
            addresses = await asyncio.get_running_loop().run_in_executor(_dns_executor(), resolve)
        except Exception as exc:
            if len(self._dns_failed) > 4096:
                self._dns_failed.clear()
            self._dns_failed[(host, port)] = (time.monotonic() + _DNS_FAILURE_SECONDS, exc)
            raise
        if len(self._dns) > 4096:
            self._dns.clear()
        self._dns[(host, port)] = (time.monotonic() + _DNS_CACHE_SECONDS, addresses)
        return addresses

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = ssl.create_default_context()  # the system's CAs; names verified
        return self._tls

    # -- calls ----------------------------------------------------------------------------------

    async def post(
        self,
        url: str,
        payload: Mapping[str, Any],
        *,
        secrets: Sequence[str],
        timeout: float,
        signed_at: int | None = None,
        unsigned: bool = False,
    ) -> CallResult:
        """POST ``payload`` as signed JSON; every bot failure comes back as a ``CallResult``."""
        return await self.post_body(url, encode(payload), secrets=secrets, timeout=timeout,
                                    signed_at=signed_at, unsigned=unsigned)

    async def post_body(
        self,
        url: str,
        body: bytes,
        *,
        secrets: Sequence[str],
        timeout: float,
        signed_at: int | None = None,
        unsigned: bool = False,
    ) -> CallResult:
        """``post`` of a body already encoded (``encode``): a caller that made the bytes
        anyway (or sends the same body to several bots) encodes once.

        Only verification's refusal checks (``bots.verify``) pass the last two: ``signed_at``
        signs with that ``webhook-timestamp`` instead of now (a stale call), ``unsigned``
        sends none of the three signature headers (``secrets`` unused)."""
        started = time.perf_counter()
        deadline = self._deadline(timeout)
        refused: _ConnectFailed | None = None
        try:
            target = self._checked_url(url)
            signature = {} if unsigned else signing.headers_for(
                secrets, f"msg_{uuid.uuid4().hex}",
                int(time.time()) if signed_at is None else signed_at, body)
            head = _request_head(target, body, signature)
            async with asyncio.timeout(deadline):
                while True:
                    try:
                        response = await self._pool().exchange(
                            target.key, partial(self._dial, target), head, body)
                        break
                    except _ConnectFailed as exc:
                        if not (exc.refused and self._answered_lately(target.key)):
                            raise
                        refused = exc  # restarting, probably: nothing was sent; again
                        await asyncio.sleep(_redial_delay(started))
            if len(self._answered) > 4096:
                self._answered.clear()
            self._answered[target.key] = time.monotonic()
        except guard.BadBotUrl as exc:
            return _result(started, error="bad_url", detail=exc.reason)
        except guard.BlockedAddress as exc:
            return _result(started, error="blocked_address", detail=exc.reason)
        except TimeoutError:  # before OSError, of which it is one
            if refused is not None:
                detail = f"could not connect: {refused} (dialled again until {deadline} s passed)"
                return _result(started, error="connect", detail=detail[:500])
            return _result(started, error="timeout", detail=f"no full answer within {deadline} s")
        except _ConnectFailed as exc:
            return _result(started, error="connect", detail=f"could not connect: {exc}"[:500])
        except http1.ResponseTooLarge as exc:
            # What the status says comes first (0: the head itself was too large, unread).
            if exc.status and not 200 <= exc.status < 300:
                return _judged(started, http1.Response(exc.status, exc.location, b""))
            return _result(started, error="too_large", detail=str(exc), status=exc.status)
        except (http1.ConnectionLost, http1.BadResponse, OSError) as exc:
            detail = f"the connection failed mid-call: {type(exc).__name__}: {exc}"
            return _result(started, error="reset", detail=detail[:500])
        except Exception as exc:  # a bot must never crash the caller; log what slipped through
            logger.exception("unexpected failure calling a bot at %s", url[:200])
            detail = f"unexpected failure: {type(exc).__name__}: {exc}"
            return _result(started, error="reset", detail=detail[:500])
        return _judged(started, response)

    def _answered_lately(self, key: tuple[str, str, int]) -> bool:
        answered = self._answered.get(key)
        return answered is not None and time.monotonic() - answered < _REDIAL_AFTER_ANSWER_SECONDS

    def _deadline(self, timeout: float) -> float:
        """The call's deadline in seconds: at most ``max_timeout``, nonsense counts as that."""
        deadline = float(timeout)
        if not math.isfinite(deadline) or deadline > self.max_timeout:
            deadline = self.max_timeout
        return max(deadline, 0.001)

    def _checked_url(self, url: str) -> _Target:
        # Parsing and checking cost more than signing; a bot's URL is called every turn.
        return _checked_url(url, self.allow_private)

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
        signed_at: int | None = None,
        unsigned: bool = False,
    ) -> CallResult:
        """``post`` for synchronous code: runs on the transport's own event-loop thread."""
        future = self.post_future(url, payload, secrets=secrets, timeout=timeout,
                                  signed_at=signed_at, unsigned=unsigned)
        return self.result(future, timeout=timeout)

    def post_future(
        self,
        url: str,
        payload: Mapping[str, Any],
        *,
        secrets: Sequence[str],
        timeout: float,
        signed_at: int | None = None,
        unsigned: bool = False,
    ) -> concurrent.futures.Future[CallResult]:
        """``post`` started on the transport's own event-loop thread; the caller goes on
        (``result`` waits for it)."""
        return asyncio.run_coroutine_threadsafe(
            self.post(url, payload, secrets=secrets, timeout=timeout, signed_at=signed_at,
                      unsigned=unsigned),
            self._loop(),
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
        pool = self._pools.pop(asyncio.get_running_loop(), None)
        if pool is not None:
            pool.close()

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
        for other, pool in list(self._pools.items()):
            self._pools.pop(other, None)
            if other.is_closed():
                continue
            if other.is_running():
                other.call_soon_threadsafe(pool.close)
            else:
                pool.close()


_default: BotTransport | None = None
_default_lock = threading.Lock()


def default_transport() -> BotTransport:
    """The process-wide transport, created on first use with the settings' values."""
    global _default
    with _default_lock:
        if _default is None:
            _default = BotTransport()
        return _default
