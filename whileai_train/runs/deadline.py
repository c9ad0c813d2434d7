"""An httpx transport whose every request ends by a deadline: connecting, sending and reading the answer,
all of it, not each read. httpx's own timeouts are per operation, so a server that answers one byte a
second holds a request for as long as it likes; here each read and write waits at most what is left of
the request's deadline, and none starts once it has passed.

    client = deadline_client(url, headers, connect_timeout_s=2.0, read_timeout_s=5.0)
    with request_deadline(10.0):      # on the thread that sends
        client.post(...)              # raises httpx.TimeoutException at 10 s at the latest

The deadline is per thread (the run's send thread and `sync` each keep their own). Proxies named by
HTTP_PROXY / HTTPS_PROXY / ALL_PROXY / NO_PROXY are honoured as httpx honours them (http and https
proxies). Name resolution is the one step no deadline reaches (the system resolver has its own); the
training thread never waits on it (runs/run.py opens a run on the send thread).
"""

from __future__ import annotations

import contextlib
import threading
import time
import urllib.request
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import unquote, urlsplit

import httpcore
import httpx

__all__ = ["DeadlineTransport", "deadline_client", "request_deadline"]


class _Deadline(threading.local):
    at: float | None = None  # time.monotonic() by which the current request must be over


_DEADLINE = _Deadline()


@contextlib.contextmanager
def request_deadline(seconds: float, *, not_after: float | None = None) -> Iterator[None]:
    """Requests made on this thread inside the block end within `seconds` (and by the monotonic time
    `not_after`, when given: a deadline over several requests, such as a whole `sync`)."""
    at = time.monotonic() + seconds
    if not_after is not None:
        at = min(at, not_after)
    before, _DEADLINE.at = _DEADLINE.at, at
    try:
        yield
    finally:
        _DEADLINE.at = before


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """The wait for one operation: its own timeout, cut to what is left of the deadline."""
    at = _DEADLINE.at
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise error("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname,
                                                      _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._backend.connect_tcp(host, port, _left(timeout, httpcore.ConnectTimeout),
                                                         local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._backend.connect_unix_socket(path, _left(timeout, httpcore.ConnectTimeout),
                                                                 socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class _Body(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx_errors():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    """httpcore's errors as the httpx errors callers catch (the same mapping httpx's own transport makes)."""
    mapping: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
        (httpcore.ConnectTimeout, httpx.ConnectTimeout), (httpcore.ReadTimeout, httpx.ReadTimeout),
        (httpcore.WriteTimeout, httpx.WriteTimeout), (httpcore.PoolTimeout, httpx.PoolTimeout),
        (httpcore.ConnectError, httpx.ConnectError), (httpcore.ReadError, httpx.ReadError),
        (httpcore.WriteError, httpx.WriteError), (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
        (httpcore.LocalProtocolError, httpx.LocalProtocolError), (httpcore.ProxyError, httpx.ProxyError),
        (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol))
    try:
        yield
    except Exception as exc:
        for theirs, ours in mapping:
            if isinstance(exc, theirs):
                raise ours(str(exc)) from exc
        raise


def _proxy_for(url: str) -> str | None:
    """The proxy the environment names for `url` (None: connect directly): <scheme>_proxy, else all_proxy,
    unless no_proxy names the host ("*", the host, or a domain it is in; a port is ignored)."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    host = (parts.hostname or "").lower()
    for entry in proxies.get("no", "").split(","):
        name = entry.strip().lower().rsplit(":", 1)[0] if "]" not in entry else entry.strip().lower()
        if name == "*" or (name and (host == name.lstrip(".") or host.endswith("." + name.lstrip(".")))):
            return None
    return proxies.get(parts.scheme) or proxies.get("all")


class DeadlineTransport(httpx.BaseTransport):
    """httpx's HTTP/1.1 transport over httpcore, with `request_deadline` honoured on every read and write."""

    def __init__(self, url: str, *, verify: bool = True) -> None:
        context = httpx.create_ssl_context(verify=verify)
        backend = _DeadlineBackend()
        proxy = _proxy_for(url)
        self.proxy = proxy
        self._pool: httpcore.ConnectionPool
        if proxy is not None and urlsplit(proxy).scheme in ("http", "https"):
            parts = urlsplit(proxy)
            auth = (unquote(parts.username or ""), unquote(parts.password or "")) if parts.username else None
            port = parts.port or (443 if parts.scheme == "https" else 80)
            self._pool = httpcore.HTTPProxy(proxy_url=f"{parts.scheme}://{parts.hostname}:{port}", proxy_auth=auth,
                                            ssl_context=context, network_backend=backend)
        else:
            self._pool = httpcore.ConnectionPool(ssl_context=context, network_backend=backend)

    def __repr__(self) -> str:
        return f"DeadlineTransport(proxy={self.proxy!r})"

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        core = httpcore.Request(method=request.method,
                                url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host,
                                                 port=request.url.port, target=request.url.raw_path),
                                headers=request.headers.raw, content=request.stream, extensions=request.extensions)
        with _as_httpx_errors():
            answer = self._pool.handle_request(core)
        assert isinstance(answer.stream, Iterable)
        return httpx.Response(status_code=answer.status, headers=answer.headers, stream=_Body(answer.stream),
                              extensions=answer.extensions)

    def close(self) -> None:
        self._pool.close()


def deadline_client(url: str, headers: dict[str, str], *, connect_timeout_s: float,
                    read_timeout_s: float) -> httpx.Client:
    """The client every call to the platform makes its requests with (the run's sends, `sync`, reading a run
    back): `url` as its base, over DeadlineTransport, redirects never followed (a 3xx names a URL to fix)."""
    timeout = httpx.Timeout(read_timeout_s, connect=connect_timeout_s)
    return httpx.Client(base_url=url, headers=headers, timeout=timeout, follow_redirects=False,
                        transport=DeadlineTransport(url))
