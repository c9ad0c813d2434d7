"""A real runs-API server on 127.0.0.1 for the tests, which can be told to fail.

It serves whileai_train.server.api.RunsAPI over its own SQLite store (so it de-duplicates on (run id, seq)
exactly as a real server must) and, per request, applies the current fault:

    ok        serve normally                   error500  answer 500 Internal Server Error
    r429      answer 429 with Retry-After      hang      hold the request `hang_s` seconds, then close it
    hold      hold the request until `release` is set (at most `hang_s` seconds), then close it
    drop      close the connection without a response
    redirect  answer 302 to another URL (a proxy or a moved API; never to be followed)
    html      answer 200 with an HTML page (a captive portal, a login page, a misrouted URL)
    wrongjson answer 200 {"ok": true} and store nothing (a page that happens to be JSON; it names no run)
    otherjson serve the request, but answer 200 {"ok": true} (a platform whose answers have other keys; its
              open names the run as {"id": ..., "ok": true})
    took0     a log call stores nothing and answers {"accepted": 0, "new": 0}; other routes serve normally
    drip      serve the request, then send the answer one byte every `drip_s` seconds
    finished  answer 409 {"error", "code": "run_finished"} (the platform holds the run as finished)
    (down)    `FaultyServer.down()` closes the listening socket; `.up()` listens again on the same port

`fail_for(n, mode)` applies `mode` to the next n requests only, then goes back to ok; `script(modes)` applies
the given modes to the next len(modes) requests, one each, then ok.

A finished run is final, as the platform's API promises: a second finish is answered 409 with
{"error", "code": "run_finished"}; POST /runs with {"client_run_id", "resume": true} reopens that run.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.helpers.stdlib_router import handle, make_handler

from whileai_train.errors import RunFinishedError
from whileai_train.runs.store import LocalStore
from whileai_train.server.api import RunsAPI

__all__ = ["FaultyServer"]


class FaultyServer:
    def __init__(self, db_path: Path, api_key: str = "test-key-0123456789", port: int = 0) -> None:
        self.store = LocalStore(db_path)
        self.api = RunsAPI(self.store, api_key=api_key)
        self.api_key = api_key
        self.mode = "ok"
        self.retry_after = "1"
        self.hang_s = 2.0
        self.release = threading.Event()
        self.drip_s = 1.0
        self._remaining: int | None = None
        self._script: list[str] = []
        self._lock = threading.Lock()
        self.requests: list[tuple[str, str, str, float]] = []  # (method, path, outcome, time)
        self.bodies: list[bytes] = []
        self.headers_seen: list[dict[str, str]] = []
        self._server: ThreadingHTTPServer | None = None
        self.port = port or _free_port()
        self.up()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- faults -------------------------------------------------------------------------------------
    def set(self, mode: str) -> None:
        with self._lock:
            self.mode, self._remaining = mode, None

    def fail_for(self, n: int, mode: str) -> None:
        with self._lock:
            self.mode, self._remaining = mode, n

    def script(self, modes: list[str]) -> None:
        with self._lock:
            self.mode, self._remaining, self._script = "ok", None, list(modes)

    def _take_mode(self) -> str:
        with self._lock:
            if self._script:
                return self._script.pop(0)
            mode = self.mode
            if self._remaining is not None:
                self._remaining -= 1
                if self._remaining <= 0:
                    self.mode, self._remaining = "ok", None
            return mode

    # -- lifecycle ----------------------------------------------------------------------------------
    def up(self) -> None:
        if self._server is not None:
            return
        handler = _faulty_handler(self)
        server = ThreadingHTTPServer(("127.0.0.1", self.port), handler, bind_and_activate=False)
        server.allow_reuse_address = True
        server.daemon_threads = True
        server.server_bind()
        server.server_activate()
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def down(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def close(self) -> None:
        self.down()
        self.store.close()

    # -- what arrived -------------------------------------------------------------------------------
    def runs(self) -> list[dict[str, Any]]:
        return self.store.list_runs(limit=1000)

    def points(self, run_id: str) -> list[dict[str, Any]]:
        return self.store.points(run_id)

    def run(self, run_id: str) -> dict[str, Any]:
        record = self.store.get_run(run_id)
        assert record is not None, f"no run {run_id} on the test server"
        return record


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _faulty_handler(owner: FaultyServer) -> type:
    base = make_handler(owner.api)

    class Handler(base):  # type: ignore[misc, valid-type]
        def _dispatch(self, method: str) -> None:
            mode = owner._take_mode()
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            owner.headers_seen.append({k.lower(): v for k, v in self.headers.items()})
            owner.bodies.append(body)
            owner.requests.append((method, self.path, mode, time.monotonic()))
            if mode == "error500":
                self._respond(500, {"error": "told to fail"})
            elif mode == "r429":
                body_out = b'{"error": "slow down"}'
                self.send_response(429)
                self.send_header("Retry-After", owner.retry_after)
                self.send_header("Content-Length", str(len(body_out)))
                self.end_headers()
                self.wfile.write(body_out)
            elif mode == "hang":
                time.sleep(owner.hang_s)
                self.close_connection = True
            elif mode == "hold":
                owner.release.wait(owner.hang_s)
                self.close_connection = True
            elif mode == "drop":
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            elif mode == "redirect":
                self._raw(302, b"", "text/plain", {"Location": f"https://moved.invalid{self.path}"})
            elif mode == "html":
                self._raw(200, b"<!doctype html><html><body>Sign in to the network</body></html>", "text/html")
            elif mode == "wrongjson":
                self._respond(200, {"ok": True})
            elif mode == "otherjson":
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, payload = _handle(owner, method, self.path, headers, body)
                if status == 200:
                    payload = {"id": payload["runId"], "ok": True} if "runId" in payload else {"ok": True}
                self._respond(status, payload)
            elif mode == "took0" and self.path.endswith("/log"):
                self._respond(200, {"accepted": 0, "new": 0})
            elif mode == "drip":
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, payload = _handle(owner, method, self.path, headers, body)
                self._drip(status, json.dumps(payload).encode())
            elif mode == "finished":
                self._respond(409, {"error": "the run is already finished", "code": "run_finished"})
            else:
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, payload = _handle(owner, method, self.path, headers, body)
                self._respond(status, payload)

        def _drip(self, status: int, payload: bytes) -> None:
            answer = (f"HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}"
                      "\r\n\r\n").encode() + payload
            self.close_connection = True
            try:
                for i in range(len(answer)):
                    if owner._server is None:
                        break  # the test is over: stop dripping
                    self.wfile.write(answer[i:i + 1])
                    self.wfile.flush()
                    time.sleep(owner.drip_s)
            except OSError:
                pass  # the client gave up: its deadline passed

        def _raw(self, status: int, payload: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

    return Handler


def _handle(owner: FaultyServer, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
    """The API's answer, with a finished run final (409 run_finished) and a resume reopening it."""
    if method == "POST" and path == "/runs" and headers.get("x-api-key") == owner.api_key:
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("resume") is True and data.get("client_run_id"):
            status, payload = handle(owner.api, method, path, headers, body)
            if status == 200:
                owner.store.reopen(payload["runId"])
            return status, payload
    try:
        return handle(owner.api, method, path, headers, body)
    except RunFinishedError as exc:
        return 409, {"error": str(exc), "code": "run_finished"}
