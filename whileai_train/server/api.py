"""The runs HTTP API over the local SQLite store, on the standard library's threaded HTTP server.

    POST /runs                {name, dataset_id, base_model, total_steps, client_run_id?} -> {"runId"}
    POST /runs/{id}/log       {points: [{seq, step, ts, ...}], progress?: {step, total}}  -> {"accepted", "new"}
    POST /runs/{id}/notes     {seq, markdown, ts}                                        -> {"new"}
    POST /runs/{id}/finish    {status, summary?, error?}                                  -> {"status"}
    GET  /runs                                                                            -> {"runs": [...]}
    GET  /runs/{id}                                                                       -> the run record
    GET  /runs/{id}/points                                                                -> {"points": [...]}
    GET  /                    the dashboard page (server/dashboard.py), when the server was made with one

Every request carries ``X-Api-Key`` when the server was given a key. Points are de-duplicated on
(run id, seq) and runs on client_run_id, so a client may re-send freely. `RunsAPI.handle` is plain
(method, path, headers, body) -> (status, json) so `whileai-train serve` and the tests reuse it as is.
"""

from __future__ import annotations

import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from whileai_train.runs.defaults import MAX_POINTS_PER_CALL
from whileai_train.runs.store import RUN_STATUSES, LocalStore

__all__ = ["RunsAPI", "make_handler", "serve_in_thread"]

Response = tuple[int, dict[str, Any]]
MAX_BODY_BYTES = 16 * 1024 * 1024  # 500 points of 40 metrics is ~0.5 MB; anything near this is a mistake


class RunsAPI:
    """The runs API as a function of the request. `api_key` None accepts any caller (a local server)."""

    def __init__(self, store: LocalStore, api_key: str | None = None) -> None:
        self.store = store
        self._api_key = api_key

    def __repr__(self) -> str:
        return f"RunsAPI({self.store!r}, key={'set' if self._api_key else 'none'})"

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Response:
        if self._api_key is not None:
            given = headers.get("x-api-key", "")
            if not hmac.compare_digest(given.encode(), self._api_key.encode()):
                return 401, {"error": "missing or wrong X-Api-Key"}
        parts = [p for p in path.split("?", 1)[0].split("/") if p]
        try:
            data = json.loads(body) if body else {}
        except ValueError:
            return 400, {"error": "the body is not JSON"}
        if not isinstance(data, dict):
            return 400, {"error": "the body must be a JSON object"}
        if parts == ["runs"]:
            if method == "POST":
                return self._open(data)
            if method == "GET":
                return 200, {"runs": self.store.list_runs()}
        if len(parts) >= 2 and parts[0] == "runs":
            run_id = parts[1]
            if not self.store.has_run(run_id):
                return 404, {"error": f"no run {run_id}"}
            if len(parts) == 2 and method == "GET":
                return 200, self.store.get_run(run_id, last_points=20) or {}
            if parts[2:] == ["points"] and method == "GET":
                return 200, {"points": self.store.points(run_id)}
            if len(parts) == 3 and method == "POST":
                action = parts[2]
                if action == "log":
                    return self._log(run_id, data)
                if action == "notes":
                    return self._note(run_id, data)
                if action == "finish":
                    return self._finish(run_id, data)
        return 404, {"error": f"no route {method} {path}"}

    def _open(self, data: dict[str, Any]) -> Response:
        name = data.get("name")
        if not name or not isinstance(name, str):
            return 400, {"error": "name is required"}
        total = data.get("total_steps")
        if total is not None and not isinstance(total, int):
            return 400, {"error": "total_steps must be an integer"}
        client_id = data.get("client_run_id")
        run_id = self.store.create_run(data, client_id=str(client_id) if client_id else None)
        return 200, {"runId": run_id}

    def _log(self, run_id: str, data: dict[str, Any]) -> Response:
        points = data.get("points", [])
        if not isinstance(points, list) or len(points) > MAX_POINTS_PER_CALL:
            return 400, {"error": f"points must be a list of at most {MAX_POINTS_PER_CALL}"}
        rows = []
        for i, p in enumerate(points):
            if not isinstance(p, dict) or not isinstance(p.get("seq"), int):
                return 400, {"error": f"point {i} needs an integer seq (the client's sequence number)"}
            rows.append((p["seq"], p.get("step"), p.get("ts"), json.dumps(p)))
        new = self.store.add_points(run_id, rows) if rows else 0
        progress = data.get("progress")
        if isinstance(progress, dict) and isinstance(progress.get("step"), int):
            total = progress.get("total")
            self.store.set_progress(run_id, progress["step"], total if isinstance(total, int) else None)
        return 200, {"accepted": len(rows), "new": new}

    def _note(self, run_id: str, data: dict[str, Any]) -> Response:
        if not isinstance(data.get("seq"), int) or not isinstance(data.get("markdown"), str):
            return 400, {"error": "a note needs an integer seq and markdown text"}
        return 200, {"new": self.store.add_note(run_id, data["seq"], data["markdown"], data.get("ts"))}

    def _finish(self, run_id: str, data: dict[str, Any]) -> Response:
        status = data.get("status")
        if status not in RUN_STATUSES[1:]:
            return 400, {"error": "status must be done, failed or stopped"}
        summary = data.get("summary")
        self.store.finish(run_id, status, summary if isinstance(summary, dict) else None, data.get("error"))
        return 200, {"status": status}


def make_handler(api: RunsAPI, page: str | None = None) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to `api` (for ThreadingHTTPServer); `page` is served at GET /."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _respond(self, status: int, payload: dict[str, Any]) -> None:
            body = json.dumps(payload, default=str).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _dispatch(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._respond(413, {"error": "body too large"})
                return
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, payload = api.handle(method, self.path, headers, body)
            self._respond(status, payload)

        def do_GET(self) -> None:
            if page is not None and self.path.split("?", 1)[0] in ("/", "/index.html"):
                body = page.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self._dispatch("GET")

        def do_POST(self) -> None:
            self._dispatch("POST")

    return Handler


def serve_in_thread(api: RunsAPI, host: str = "127.0.0.1", port: int = 0,
                    page: str | None = None) -> ThreadingHTTPServer:
    """Start the API on a daemon thread; returns the server (`.server_address`, `.shutdown()`)."""
    server = ThreadingHTTPServer((host, port), make_handler(api, page))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="whileai-api", daemon=True).start()
    return server
