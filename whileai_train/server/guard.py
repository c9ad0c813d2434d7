"""What every request passes before a route sees it (an ASGI middleware):

- Host: the Host header must name this server (its bound address, the address the request arrived on,
  loopback names, this machine's names, or `allowed_hosts`), so a page on another domain that rebinds its DNS to this address is refused (403).
- Cross-origin writes: a write whose Origin (or Sec-Fetch-Site) says it comes from another site's page is
  refused (403): a browser page elsewhere cannot post to a server on localhost (CSRF).
- Key: with a key, every route answers 401 without ``X-Api-Key`` or a live session cookie (a random token the
  page gets after the key is typed once, server/sessions.py). The key is never logged or put in a page.
- Body: a declared or streamed body over the cap answers 413 and the connection is closed, so what followed
  it is never read as the next request. The cap is MAX_BODY_BYTES, and SESSION_MAX_BODY_BYTES on the one
  route open without a key (the key form). A body must arrive whole within BODY_TIMEOUT_S of its headers
  (else 408, connection closed). It is then read as JSON by `parse_json_body` (malformed values answer 4xx
  naming the field), on a worker thread when it is past PARSE_INLINE_BYTES, so a large body never holds the
  event loop, and handed on as clean JSON.
- Connections: the ConnectionWatch is told when a request's headers are in and when its answer is out, so
  its header deadline never cuts a request short (server/connections.py).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

import anyio.to_thread
import orjson

from whileai_train.server.api import dump_json, key_is
from whileai_train.server.body import ApiError, parse_json_body
from whileai_train.server.connections import ConnectionWatch
from whileai_train.server.defaults import (
    BODY_TIMEOUT_S,
    MAX_BODY_BYTES,
    PARSE_INLINE_BYTES,
    PARSE_WORKERS,
    SESSION_COOKIE,
    SESSION_MAX_BODY_BYTES,
)
from whileai_train.server.sessions import Sessions

__all__ = ["PARSED_BODY", "SESSION_PATH", "Guard", "allowed_host_names", "is_loopback"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_WILDCARD = frozenset({"0.0.0.0", "::", ""})
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Where the parsed body waits in the ASGI scope for the route (so it is read once).
PARSED_BODY = "whileai.body"
# The page's login form posts here; it is the one route open without a key (it checks the key itself).
SESSION_PATH = "/session"


# Answers after which the connection is closed: the unread rest of the body must never be read as a request.
_CLOSING = frozenset({"body_too_large", "bad_content_length", "disconnected", "body_timeout"})


def allowed_host_names(bound_host: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The names a Host header may carry for a server bound to `bound_host`."""
    names = set(_LOOPBACK) | {h.strip().lower() for h in extra if h.strip()}
    if bound_host not in _LOOPBACK:
        if bound_host not in _WILDCARD:
            names.add(bound_host.lower())
        for name in {socket.gethostname(), socket.getfqdn()}:
            names.add(name.lower())
            try:
                names.update(str(info[4][0]) for info in socket.getaddrinfo(name, None))
            except OSError:
                pass
    return frozenset(names)


def _host_name(host_header: str) -> str:
    """'example.com:8765' -> 'example.com', '[::1]:80' -> '::1'."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    if host.count(":") == 1:
        return host.split(":", 1)[0]
    return host


class Guard:
    """The checks above, around `app`."""

    def __init__(self, app: ASGIApp, *, allowed_hosts: frozenset[str], api_key: str | None,
                 sessions: Sessions | None = None, watch: ConnectionWatch | None = None,
                 max_body_bytes: int = MAX_BODY_BYTES, body_timeout_s: float = BODY_TIMEOUT_S) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts
        self.api_key = api_key
        self.sessions = sessions if sessions is not None else Sessions()
        self.watch = watch
        self.max_body_bytes = max_body_bytes
        self.body_timeout_s = body_timeout_s
        self._parsers: anyio.CapacityLimiter | None = None

    def __repr__(self) -> str:
        return f"Guard(key={'set' if self.api_key else 'none'}, hosts={sorted(self.allowed_hosts)!r})"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.watch is None:
            await self._guarded(scope, receive, send)
            return
        self.watch.request_started(scope.get("client"))
        try:
            await self._guarded(scope, receive, send)
        finally:
            self.watch.request_ended(scope.get("client"))

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            headers = _headers(scope)
            self._check_host(headers, scope)
            method = scope["method"]
            if method not in _SAFE_METHODS:
                self._check_origin(headers)
            if self.api_key is not None and not (method == "POST" and scope["path"] == SESSION_PATH):
                self._check_key(headers, scope)
            if method in _SAFE_METHODS:
                await self.app(scope, receive, send)
                return
            cap = SESSION_MAX_BODY_BYTES if scope["path"] == SESSION_PATH else self.max_body_bytes
            raw = await self._read_within_deadline(headers, receive, cap)
            value, body = await self._parse(raw)
        except ApiError as exc:
            if exc.code == "unauthorized" and scope["method"] == "GET" and scope["path"] == "/":
                await _send_login_page(send)
                return
            await _send_error(send, exc, scope)
            return
        await self.app(_json_scope(scope, body, value), _replay(body, receive), send)

    def _check_host(self, headers: dict[str, str], scope: Scope) -> None:
        host = headers.get("host")
        if host is None:
            raise ApiError(400, "bad_host", "the request has no Host header", "Host")
        name = _host_name(host)
        local = scope.get("server") or (None,)
        if name not in self.allowed_hosts and name != str(local[0]).lower():  # the address it arrived on
            raise ApiError(403, "bad_host", f"Host {host[:100]!r} is not a name of this server (a page on another "
                           "domain pointing its DNS here is refused). Fix: use the address `serve` printed, "
                           "or start it with --allow-host NAME", "Host")

    def _check_origin(self, headers: dict[str, str]) -> None:
        site = headers.get("sec-fetch-site")
        origin = headers.get("origin")
        foreign = site in ("cross-site", "same-site")
        if origin is not None and not foreign:
            parts = urlsplit(origin)
            foreign = origin == "null" or parts.netloc.lower() != headers.get("host", "").lower()
        if foreign:
            raise ApiError(403, "cross_origin", "a write from a page of another origin is refused (CSRF); "
                           "send it from a script or from this server's own page", "Origin")

    def _check_key(self, headers: dict[str, str], scope: Scope) -> None:
        assert self.api_key is not None
        if key_is(headers.get("x-api-key"), self.api_key):
            return
        if self.sessions.valid(_cookie(headers.get("cookie", ""), SESSION_COOKIE)):
            return
        raise ApiError(401, "unauthorized", "missing or wrong X-Api-Key", "X-Api-Key")

    async def _read_within_deadline(self, headers: dict[str, str], receive: Receive, cap: int) -> bytes:
        declared = headers.get("content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                raise ApiError(400, "bad_content_length", "Content-Length is not a whole number",
                               "Content-Length")
            if int(declared) > cap:
                raise ApiError(413, "body_too_large", f"the body is {int(declared)} bytes; at most {cap}", "body")
        try:
            return await asyncio.wait_for(_read_body(receive, cap), self.body_timeout_s)
        except asyncio.TimeoutError:
            raise ApiError(408, "body_timeout", f"the body did not arrive within {self.body_timeout_s:g} s of "
                           "its headers", "body") from None

    async def _parse(self, raw: bytes) -> tuple[Any, bytes]:
        """(the JSON value, clean JSON bytes to hand on). A body past PARSE_INLINE_BYTES is parsed on a worker
        thread: a large body never holds the event loop, so other clients are answered meanwhile."""
        if len(raw) <= PARSE_INLINE_BYTES:
            value, had_constants = parse_json_body(raw)
        else:
            if self._parsers is None:
                self._parsers = anyio.CapacityLimiter(PARSE_WORKERS)
            value, had_constants = await anyio.to_thread.run_sync(parse_json_body, raw, limiter=self._parsers)
        return value, (orjson.dumps(value) if had_constants or not raw.strip() else raw)


async def _read_body(receive: Receive, cap: int) -> bytes:
    """The body as it streams in, refused (413) the moment it passes `cap`."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ApiError(400, "disconnected", "the client went away mid-body", "body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            raise ApiError(413, "body_too_large", f"the body is over {cap} bytes", "body")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        if key == "content-length" and key in out and out[key] != text:
            raise ApiError(400, "bad_content_length", "two different Content-Length headers", "Content-Length")
        out[key] = text
    return out


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def _json_scope(scope: Scope, body: bytes, value: Any) -> Scope:
    headers = [(k, v) for k, v in scope.get("headers", ())
               if k.lower() not in (b"content-type", b"content-length", b"transfer-encoding")]
    headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    return {**scope, "headers": headers, PARSED_BODY: value}


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _send_error(send: Send, exc: ApiError, scope: Scope) -> None:
    body = dump_json(exc.body())
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if exc.code in _CLOSING:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": body if scope["method"] != "HEAD" else b""})


async def _send_login_page(send: Send) -> None:
    from whileai_train.server.dashboard import login_page

    body = login_page().encode()
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"text/html; charset=utf-8"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def is_loopback(host: str) -> bool:
    """True when `host` (as given to serve) is this machine only."""
    if host in _LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
