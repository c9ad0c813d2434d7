"""The ASGI app `whileai-train serve` runs under uvicorn: the runs API (server/api.py) with typed bodies,
so /openapi.json describes it, behind the Guard (host, origin, key, body checks), plus the dashboard page
and its vendored assets from server/static/ (no CDN, no build step)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from fastapi import FastAPI, Query, Request, Security
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.security import APIKeyHeader
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel

from whileai_train.server.api import RunsAPI, dump_json, validate
from whileai_train.server.body import ApiError, field_path
from whileai_train.server.connections import ConnectionWatch
from whileai_train.server.dashboard import STATIC_DIR, run_page
from whileai_train.server.defaults import (
    MAX_BODY_BYTES,
    MAX_NAME_CHARS,
    MAX_POINTS_PER_PAGE,
    MAX_RUNS_PER_PAGE,
    POINTS_PER_PAGE,
    SESSION_COOKIE,
)
from whileai_train.server.downloads import download_name, points_csv, points_json
from whileai_train.server.guard import PARSED_BODY, SESSION_PATH, Guard, allowed_host_names
from whileai_train.server.models import (
    CompletionsAdded,
    CompletionsBody,
    CompletionsPage,
    ErrorBody,
    FinishBody,
    Finished,
    LogBody,
    Logged,
    NoteAdded,
    NoteBody,
    OpenedRun,
    OpenRun,
    PatchBody,
    PointsPage,
    RunRecord,
    RunsList,
)
from whileai_train.server.sessions import LoginLimit, Sessions

__all__ = ["make_app"]

M = TypeVar("M", bound=BaseModel)

RunId = Annotated[str, PathParam(min_length=1, max_length=MAX_NAME_CHARS)]
Int64 = Annotated[int, Query(ge=-(2**63), le=2**63 - 1)]
_REFUSALS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text} for code, text in (
        (400, "malformed body or invalid field (the field is named)"), (401, "missing or wrong key"), (403, "foreign Host or cross-origin write"),
        (404, "no such run"), (408, "the body did not arrive in time"),
        (409, "the run is finished, a per-run cap is reached, or numbered and unnumbered points are mixed"),
        (413, "body too large"))
}


class SafeJSON(JSONResponse):
    """JSON with NaN / Infinity as null: no route ever emits bare NaN."""

    def render(self, content: Any) -> bytes:
        return dump_json(content)


_BODIES: tuple[type[BaseModel], ...] = (OpenRun, LogBody, NoteBody, CompletionsBody, FinishBody, PatchBody)


def _body(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI request body of a route that reads its body from the Guard (parsed once, there)."""
    return {"requestBody": {"required": True, "content": {"application/json": {
        "schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}}}


def _parsed(request: Request, model: type[M]) -> M:
    if PARSED_BODY not in request.scope:
        raise ApiError(400, "not_json", "the body was not read as JSON", "body")
    return validate(model, request.scope[PARSED_BODY])


def _document_bodies(app: FastAPI) -> None:
    """Put the body models in the schema's components, where the routes' $refs point."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            for model in _BODIES:
                described = model.model_json_schema(ref_template="#/components/schemas/{model}")
                components.update(described.pop("$defs", {}))
                components[model.__name__] = described
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


class SessionBody(BaseModel):
    key: str


def make_app(api: RunsAPI, *, bound_host: str = "127.0.0.1", allowed_hosts: tuple[str, ...] = (),
             watch: ConnectionWatch | None = None, secure_cookie: bool = False) -> Guard:
    """The app over `api`; the key `api` was made with guards every route. `watch` (serve's) is told when
    each request starts and ends; `secure_cookie` marks the session cookie Secure (a server on TLS)."""
    key = api.api_key
    sessions, logins = Sessions(), LoginLimit()
    app = FastAPI(title="whileai_train runs API", version="1", docs_url=None, redoc_url=None,
                  default_response_class=SafeJSON, responses=_REFUSALS,
                  dependencies=[Security(APIKeyHeader(name="X-Api-Key", auto_error=False))])

    @app.exception_handler(ApiError)
    async def _refused(request: Request, exc: ApiError) -> Response:
        return SafeJSON(exc.body(), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        errors = list(exc.errors())
        if not errors:
            return SafeJSON({"error": "invalid request", "code": "invalid"}, status_code=400)
        first = errors[0]
        loc = [p for p in first.get("loc", ()) if p not in ("body", "query", "path", "header")]
        field = field_path(loc)
        message = f"{field}: {first.get('msg', 'invalid')}"
        if len(errors) > 1:
            message += f" (and {len(errors) - 1} more)"
        return SafeJSON({"error": message, "code": "invalid", "field": field}, status_code=400)

    @app.post("/runs", response_model=OpenedRun, summary="open a run (same client_run_id: same run)",
              openapi_extra=_body(OpenRun))
    def open_run(request: Request) -> Any:
        return SafeJSON(api.open_run(_parsed(request, OpenRun)))

    @app.post("/runs/{run_id}/log", response_model=Logged, summary="log up to 500 points",
              openapi_extra=_body(LogBody))
    def log(run_id: RunId, request: Request) -> Any:
        return SafeJSON(api.log(run_id, _parsed(request, LogBody)))

    @app.post("/runs/{run_id}/notes", response_model=NoteAdded, summary="add a note (markdown)",
              openapi_extra=_body(NoteBody))
    def note(run_id: RunId, request: Request) -> Any:
        return SafeJSON(api.note(run_id, _parsed(request, NoteBody)))

    @app.post("/runs/{run_id}/finish", response_model=Finished, summary="finish a run (once)",
              openapi_extra=_body(FinishBody))
    def finish(run_id: RunId, request: Request) -> Any:
        return SafeJSON(api.finish(run_id, _parsed(request, FinishBody)))

    @app.patch("/runs/{run_id}", response_model=RunRecord, summary="late results: summary, holdout, delta, note",
               openapi_extra=_body(PatchBody))
    def patch(run_id: RunId, request: Request) -> Any:
        return SafeJSON(api.patch(run_id, _parsed(request, PatchBody)))

    @app.get("/runs", response_model=RunsList, summary="runs, newest first")
    def list_runs(status: Literal["running", "done", "failed", "stopped"] | None = None,
                  q: Annotated[str | None, Query(max_length=MAX_NAME_CHARS)] = None,
                  limit: Annotated[int, Query(ge=1, le=MAX_RUNS_PER_PAGE)] = 200,
                  offset: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0) -> Any:
        return SafeJSON(api.list_runs(status, q, limit, offset))

    @app.get("/runs/{run_id}", response_model=RunRecord, summary="one run: status, summary, notes, alarms")
    def get_run(run_id: RunId) -> Any:
        return SafeJSON(api.get_run(run_id))

    @app.get("/runs/{run_id}/points", response_model=PointsPage, summary="points after a seq, a page at a time")
    def points(run_id: RunId, after_seq: Int64 | None = None,
               limit: Annotated[int, Query(ge=1, le=MAX_POINTS_PER_PAGE)] = POINTS_PER_PAGE) -> Any:
        return SafeJSON(api.points(run_id, after_seq, limit))

    @app.post("/runs/{run_id}/completions", response_model=CompletionsAdded,
              summary="keep one holdout eval's completions (runs/completions.py)", openapi_extra=_body(CompletionsBody))
    def add_completions(run_id: RunId, request: Request) -> Any:
        return SafeJSON(api.add_completions(run_id, _parsed(request, CompletionsBody)))

    @app.get("/runs/{run_id}/completions", response_model=CompletionsPage,
             summary="the holdout completions (one eval step's with step=)")
    def completions(run_id: RunId, step: Int64 | None = None) -> Any:
        return SafeJSON(api.completions(run_id, step))

    @app.get("/runs/{run_id}/points.csv", summary="every point as CSV (a download)")
    def download_csv(run_id: RunId) -> Response:
        api.require_run(run_id)
        return Response(points_csv(api.store, run_id), media_type="text/csv; charset=utf-8", headers={
            "Content-Disposition": f'attachment; filename="{download_name(run_id, "csv")}"'})

    @app.get("/runs/{run_id}/points.json", summary="the run record and every point as JSON (a download)")
    def download_json(run_id: RunId) -> Response:
        api.require_run(run_id)
        return SafeJSON(points_json(api.store, run_id), headers={
            "Content-Disposition": f'attachment; filename="{download_name(run_id, "json")}"'})

    @app.post(SESSION_PATH, include_in_schema=False)
    async def session(body: SessionBody, request: Request) -> Response:
        # async: runs on the event loop, the one thread that touches the sessions and the login limit
        if key is None:
            return Response(status_code=204)
        address = request.client.host if request.client else "unknown"
        wait = logins.wait_s(address)
        if wait > 0:
            return SafeJSON({"error": f"too many wrong keys from {address}; try again in {wait:.0f} s",
                             "code": "too_many_attempts"}, status_code=429,
                            headers={"Retry-After": str(max(1, round(wait)))})
        if not api.key_matches(body.key):
            logins.failed(address)
            raise ApiError(401, "unauthorized", "wrong key", "key")
        response = Response(status_code=204)
        response.set_cookie(SESSION_COOKIE, sessions.create(), max_age=int(sessions.ttl_s), httponly=True,
                            samesite="strict", path="/", secure=secure_cookie)
        return response

    page = run_page()

    @app.get("/", include_in_schema=False)
    def dashboard() -> HTMLResponse:
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    _document_bodies(app)
    hosts = allowed_host_names(bound_host, allowed_hosts)
    return Guard(app, allowed_hosts=hosts, api_key=key, sessions=sessions, watch=watch,
                 max_body_bytes=MAX_BODY_BYTES)
