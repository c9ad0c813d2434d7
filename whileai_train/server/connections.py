"""Every connection `whileai-train serve` holds: a deadline for its headers, a cap on how many, no Nagle wait.

uvicorn closes a kept-alive connection KEEP_ALIVE_S after its last answer, and h11 refuses a request line
and headers past MAX_HEADER_BYTES; neither bounds a connection that sends nothing, or half its headers, or
headers and then nothing. This module adds what they lack, around uvicorn's own HTTP protocol:

- a header deadline: a connection that has not completed a request's headers HEADERS_TIMEOUT_S after it
  opened, or after its last answer, is closed (the Guard bounds the body that follows: BODY_TIMEOUT_S);
- a cap: at most MAX_CONNECTIONS open at once. A new one past the cap closes the connection idle longest
  (between requests, or still sending headers); when every connection is mid-request it is refused;
- TCP_NODELAY on every accepted socket, so an answer is never held back waiting for the client's ACK.

The Guard says when a request's headers are in and when its answer is out (`request_started`,
`request_ended`), naming the connection by its peer address, which is what uvicorn puts in scope["client"]
(serve turns uvicorn's proxy-header rewriting off, so the two always agree).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Callable
from typing import Any, cast

from whileai_train.server.defaults import HEADERS_TIMEOUT_S, MAX_CONNECTIONS

__all__ = ["ConnectionWatch", "Peer"]

logger = logging.getLogger("whileai_train.server")

Peer = tuple[str, int]
_SAY_EVERY_S = 60.0  # a refused or closed connection is said at most once a minute (with a count)


def _peer_of(transport: asyncio.BaseTransport) -> Peer | None:
    info = transport.get_extra_info("peername")
    if isinstance(info, (tuple, list)) and len(info) >= 2:
        return str(info[0]), int(info[1])
    return None


def _no_delay(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass  # a socket already closing by the peer: nothing to speed up


class _Watched:
    """One open connection as the watch sees it."""

    __slots__ = ("busy", "idle_since", "peer", "timer", "transport")

    def __init__(self, transport: asyncio.Transport, peer: Peer, now: float) -> None:
        self.transport = transport
        self.peer = peer
        self.busy = 0  # requests whose headers are in and whose answer is not yet out
        self.idle_since = now
        self.timer: asyncio.TimerHandle | None = None


class ConnectionWatch:
    """The open connections of one server, their header deadline and their cap."""

    def __init__(self, *, max_connections: int = MAX_CONNECTIONS,
                 headers_timeout_s: float = HEADERS_TIMEOUT_S) -> None:
        self.max_connections = max_connections
        self.headers_timeout_s = headers_timeout_s
        self._open: dict[Peer, _Watched] = {}
        self._closed_for_room = 0
        self._refused = 0
        self._timed_out = 0
        self._said_at = -_SAY_EVERY_S

    def __repr__(self) -> str:
        return (f"ConnectionWatch({len(self._open)} open, at most {self.max_connections}, headers within "
                f"{self.headers_timeout_s:g} s)")

    def protocol_class(self, inner: type[asyncio.Protocol] | None = None) -> type[asyncio.Protocol]:
        """A uvicorn HTTP protocol class (uvicorn.Config(http=...)) that wraps `inner` (uvicorn's h11 protocol
        by default) with this watch."""
        if inner is None:
            from uvicorn.protocols.http.h11_impl import H11Protocol

            inner = H11Protocol
        watch, wrapped = self, inner

        class WatchedProtocol(_WatchedProtocol):
            _watch = watch
            _inner_class = wrapped

        return WatchedProtocol

    # -- what the Guard says ------------------------------------------------------------------------------
    def request_started(self, client: Any) -> None:
        peer = _as_peer(client)
        conn = self._open.get(peer) if peer is not None else None
        if conn is not None:
            conn.busy += 1
            if conn.timer is not None:
                conn.timer.cancel()
                conn.timer = None

    def request_ended(self, client: Any) -> None:
        peer = _as_peer(client)
        conn = self._open.get(peer) if peer is not None else None
        if conn is not None and conn.busy > 0:
            conn.busy -= 1
            if conn.busy == 0:
                self._arm(conn)

    # -- the protocol's calls -------------------------------------------------------------------------------
    def admit(self, transport: asyncio.Transport) -> bool:
        """Take a new connection (closing the longest-idle one when at the cap); False: refuse it."""
        peer = _peer_of(transport)
        if peer is None:
            return True  # not a TCP peer (a Unix socket): nothing to key it by, nothing to cap
        if len(self._open) >= self.max_connections:
            idle = [c for c in self._open.values() if c.busy == 0]
            if not idle:
                self._refused += 1
                self._say()
                return False
            oldest = min(idle, key=lambda c: c.idle_since)
            self._drop(oldest)
            self._closed_for_room += 1
            self._say()
        conn = _Watched(transport, peer, asyncio.get_running_loop().time())
        self._open[peer] = conn
        self._arm(conn)
        return True

    def forget(self, transport: asyncio.BaseTransport) -> None:
        peer = _peer_of(transport)
        conn = self._open.get(peer) if peer is not None else None
        if conn is not None and conn.transport is transport:
            if conn.timer is not None:
                conn.timer.cancel()
            del self._open[conn.peer]

    # -- deadlines -----------------------------------------------------------------------------------------
    def _arm(self, conn: _Watched) -> None:
        loop = asyncio.get_running_loop()
        conn.idle_since = loop.time()
        if conn.timer is not None:
            conn.timer.cancel()
        conn.timer = loop.call_at(conn.idle_since + self.headers_timeout_s, self._expire, conn)

    def _expire(self, conn: _Watched) -> None:
        conn.timer = None
        if conn.busy == 0 and self._open.get(conn.peer) is conn:
            self._timed_out += 1
            self._drop(conn)

    def _drop(self, conn: _Watched) -> None:
        """Close now: abort, not close, so a peer that reads nothing cannot hold the socket by its buffer."""
        if conn.timer is not None:
            conn.timer.cancel()
            conn.timer = None
        self._open.pop(conn.peer, None)
        conn.transport.abort()

    def _say(self) -> None:
        now = time.monotonic()
        if now - self._said_at < _SAY_EVERY_S:
            return
        self._said_at = now
        logger.warning("whileai-train serve: at its cap of %d connections; %d idle connection(s) closed to make "
                       "room and %d refused so far (every connection was mid-request)", self.max_connections,
                       self._closed_for_room, self._refused)


def _as_peer(client: Any) -> Peer | None:
    if isinstance(client, (tuple, list)) and len(client) >= 2:
        try:
            return str(client[0]), int(client[1])
        except (TypeError, ValueError):
            return None
    return None


class _WatchedProtocol(asyncio.Protocol):
    """uvicorn's HTTP protocol for one connection, with the watch's deadline and cap around it."""

    _watch: ConnectionWatch
    _inner_class: Callable[..., asyncio.Protocol]

    def __init__(self, **kwargs: Any) -> None:
        self._inner = self._inner_class(**kwargs)
        self._transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport = cast(asyncio.Transport, transport)  # uvloop's transports are not asyncio's classes
        _no_delay(transport)
        if not self._watch.admit(transport):
            transport.abort()
            return
        self._transport = transport
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._transport is not None:
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._transport is not None else None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._transport is not None:
            self._watch.forget(self._transport)
            self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self._transport is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._transport is not None:
            self._inner.resume_writing()
