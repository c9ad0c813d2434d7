"""The runs API (whileai_train.server.api.RunsAPI) behind the standard library's http.server, for the tests'
fault-injecting server (http_server.py): the same operations, checks and refusals as the ASGI app, with a request
cycle the tests can break at will. The product serves the ASGI app (server/app.py).
"""

from __future__ import annotations

from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote

from whileai_train.server.api import RunsAPI, dump_json, validate
from whileai_train.server.body import ApiError, parse_json_body
from whileai_train.server.defaults import MAX_BODY_BYTES, POINTS_PER_PAGE
from whileai_train.server.models import CompletionsBody, FinishBody, LogBody, NoteBody, OpenRun, PatchBody

__all__ = ["handle", "make_handler"]

Response = tuple[int, dict[str, Any]]  # (status, JSON body)


def handle(api: RunsAPI, method: str, path: str, headers: dict[str, str], body: bytes) -> Response:
    """(method, path, lower-case headers, body) -> (status, JSON); the same checks as the ASGI app."""
    try:
        if not api.key_matches(headers.get("x-api-key")):
            raise ApiError(401, "unauthorized", "missing or wrong X-Api-Key")
        return 200, _route(api, method, path, body)
    except ApiError as exc:
        return exc.status, exc.body()


def _route(api: RunsAPI, method: str, target: str, body: bytes) -> dict[str, Any]:
    path, _, query = target.partition("?")
    parts = [unquote(p) for p in path.split("/") if p]
    params = {k: v[-1] for k, v in parse_qs(query).items()}
    routes: dict[tuple[str, str], Callable[..., dict[str, Any]]] = {
        ("POST", "log"): lambda rid: api.log(rid, validate(LogBody, data())),
        ("POST", "notes"): lambda rid: api.note(rid, validate(NoteBody, data())),
        ("POST", "finish"): lambda rid: api.finish(rid, validate(FinishBody, data())),
        ("GET", "points"): lambda rid: api.points(rid, _int_param(params, "after_seq"),
                                                   _int_param(params, "limit") or POINTS_PER_PAGE),
        ("POST", "completions"): lambda rid: api.add_completions(rid, validate(CompletionsBody, data())),
        ("GET", "completions"): lambda rid: api.completions(rid, _int_param(params, "step")),
    }

    def data() -> Any:
        return parse_json_body(body)[0]

    if parts == ["runs"] and method == "POST":
        return api.open_run(validate(OpenRun, data()))
    if parts == ["runs"] and method == "GET":
        return api.list_runs(params.get("status"), params.get("q"), _int_param(params, "limit") or 200,
                              _int_param(params, "offset") or 0)
    if len(parts) == 2 and parts[0] == "runs":
        if method == "GET":
            return api.get_run(parts[1])
        if method == "PATCH":
            return api.patch(parts[1], validate(PatchBody, data()))
    if len(parts) == 3 and parts[0] == "runs" and (method, parts[2]) in routes:
        return routes[(method, parts[2])](parts[1])
    raise ApiError(404, "no_route", f"no route {method} {path}")


def _int_param(params: dict[str, str], name: str) -> int | None:
    value = params.get(name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise ApiError(400, "invalid", f"{name} must be an integer", name) from None
    if not -(2**63) <= number < 2**63:
        raise ApiError(400, "int_too_large", f"{name} is past 64 bits", name)
    return number


def make_handler(api: RunsAPI) -> type[BaseHTTPRequestHandler]:
    """A standard-library request handler over `api` (the tests' fault-injecting server builds on it; the
    product serves the ASGI app)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _respond(self, status: int, payload: dict[str, Any]) -> None:
            body = dump_json(payload)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if status == 413:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(body)

        def _dispatch(self, method: str) -> None:
            text = self.headers.get("Content-Length") or "0"
            if not text.isdigit():
                self._respond(400, ApiError(400, "bad_content_length", "Content-Length is not a number",
                                            "Content-Length").body())
                self.close_connection = True
                return
            if int(text) > MAX_BODY_BYTES:
                self._respond(413, ApiError(413, "body_too_large", f"the body is over {MAX_BODY_BYTES} bytes",
                                            "body").body())
                return
            body = self.rfile.read(int(text)) if int(text) else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, payload = handle(api, method, self.path, headers, body)
            self._respond(status, payload)

        def do_GET(self) -> None:
            self._dispatch("GET")

        def do_POST(self) -> None:
            self._dispatch("POST")

        def do_PATCH(self) -> None:
            self._dispatch("PATCH")

    return Handler
