"""The runs API as plain operations over the local store; the ASGI app (server/app.py) and the tests'
standard-library server (tests/helpers/stdlib_router.py) both call these, so both validate and refuse alike.

    POST  /runs                {name, dataset_id, base_model, total_steps, client_run_id?, resume?} -> {"runId"}
    POST  /runs/{id}/log       {points: [{step, loss, lr, ..., seq?, ts?}], progress?}      -> {"accepted", "new"}
    POST  /runs/{id}/notes     {markdown, seq?, ts?, alarm?}                                -> {"new"}
    POST  /runs/{id}/completions {batch, step, rows: [...], cut, dropped} (runs/completions.py) -> {"new"}
    POST  /runs/{id}/finish    {status, summary?, error?, adapter?}                         -> {"status"}
    PATCH /runs/{id}           {summary?, holdout?, delta?, note?} (late results)           -> the run record
    GET   /runs?status=&q=&limit=&offset=                                                   -> {"runs": [...]}
    GET   /runs/{id}                                                                        -> the run record
    GET   /runs/{id}/points?after_seq=&limit=                                               -> a page of points
    GET   /runs/{id}/completions?step=                                            -> the holdout completions
    GET   /runs/{id}/points.csv, /runs/{id}/points.json            -> every point, a download (server/app.py only)

Points are de-duplicated on (run id, seq) when the client sends seq, and numbered in arrival order when
it does not; a run is numbered one way (its first points decide), and points numbered the other way answer
409 {"code": "seq_mixed"} rather than collide with numbers already given. Notes are kept in arrival order
under the store's own seq; a note's seq, when sent, is the sender's number, kept only so that a re-send is
stored once ({"new": false}), so a note without one (PATCH) never takes a client's. Runs are de-duplicated on
client_run_id. A finished run is final: a second finish, or points / notes / progress after it, answer 409
{"code": "run_finished"} and the first outcome stays; PATCH amends it. Each run is capped, whatever the
number of requests: MAX_METRICS_PER_RUN metric names, MAX_NOTES_PER_RUN notes, MAX_SUMMARY_BYTES of stored
summary (409 naming the cap). GET /runs carries a digest of each summary; GET /runs/{id} the whole.
"""

from __future__ import annotations

import hmac
import json
import math
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from whileai_train.errors import RunError, RunFinishedError, RunLimitError
from whileai_train.runs.completions import read_completions, store_batch
from whileai_train.runs.store import RUN_STATUSES, LocalStore
from whileai_train.server.body import ApiError, from_validation_error
from whileai_train.server.defaults import (
    MAX_METRICS_PER_RUN,
    MAX_NOTES_PER_RUN,
    MAX_POINTS_PER_PAGE,
    MAX_RUNS_PER_PAGE,
    MAX_SUMMARY_BYTES,
    MAX_SUMMARY_DIGEST_CHARS,
    MAX_SUMMARY_DIGEST_KEYS,
    POINTS_PER_PAGE,
)
from whileai_train.server.models import (
    CompletionsBody,
    FinishBody,
    LogBody,
    NoteBody,
    OpenRun,
    PatchBody,
    Point,
)

__all__ = ["RunsAPI", "dump_json", "key_is", "summary_digest", "validate"]

M = TypeVar("M", bound=BaseModel)


def dump_json(payload: Any) -> bytes:
    """JSON bytes with NaN / Infinity as null and integers past 64 bits as text: never bare NaN."""
    try:
        return orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(_plain(payload), default=str, allow_nan=False).encode()


def _plain(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        return str(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _encoded(point: Point) -> tuple[int | None, int | None, float | None, str]:
    """(seq, step, ts, JSON) as the store takes it; the values are already checked finite and bounded."""
    data = point.model_dump(exclude_none=False)
    if data["seq"] is None:
        del data["seq"]
    return point.seq, point.step, point.ts, orjson.dumps(data).decode()


def validate(model: type[M], data: Any) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(exc) from None


def key_is(given: str | None, key: str) -> bool:
    """Whether a request's key is `key`, compared in constant time (how long it takes says nothing of the key)."""
    return given is not None and hmac.compare_digest(given.encode(), key.encode())


class RunsAPI:
    """The runs API over `store`. `api_key` None accepts any caller (a loopback server)."""

    def __init__(self, store: LocalStore, api_key: str | None = None) -> None:
        self.store = store
        self._api_key = api_key

    def __repr__(self) -> str:
        return f"RunsAPI({self.store!r}, key={'set' if self._api_key else 'none'})"

    @property
    def api_key(self) -> str | None:
        """The key every request must carry (None: no key)."""
        return self._api_key

    def key_matches(self, given: str | None) -> bool:
        return self._api_key is None or key_is(given, self._api_key)

    # -- writes ---------------------------------------------------------------------------------------
    def _known(self, run_id: str) -> None:
        self.require_run(run_id)

    def require_run(self, run_id: str) -> None:
        """404 (ApiError) when the store holds no run `run_id`."""
        if not self.store.has_run(run_id):
            raise ApiError(404, "no_run", f"no run {run_id}; GET /runs lists them", "id")

    def _finished(self, exc: RunFinishedError) -> ApiError:
        return ApiError(409, "run_finished", str(exc))

    @staticmethod
    def _limited(exc: RunLimitError) -> ApiError:
        return ApiError(409, exc.code, str(exc))

    def open_run(self, body: OpenRun) -> dict[str, Any]:
        run_id = self.store.create_run(body.model_dump(exclude={"resume"}), client_id=body.client_run_id or None)
        if body.resume:
            self.store.reopen(run_id)
        return {"runId": run_id}

    def log(self, run_id: str, body: LogBody) -> dict[str, Any]:
        self._known(run_id)
        points = [_encoded(p) for p in body.points]
        keys = set().union(*(p.__pydantic_extra__ or () for p in body.points))
        progress = (body.progress.step, body.progress.total) if body.progress is not None else None
        try:
            new = self.store.add_points(run_id, points, progress=progress, keys=keys,
                                        max_keys=MAX_METRICS_PER_RUN) if points or progress else 0
        except RunFinishedError as exc:
            raise self._finished(exc) from None
        except RunLimitError as exc:
            raise self._limited(exc) from None
        return {"accepted": len(points), "new": new}

    def note(self, run_id: str, body: NoteBody) -> dict[str, Any]:
        self._known(run_id)
        try:
            return {"new": self.store.add_note(run_id, body.seq, body.markdown, body.ts, max_notes=MAX_NOTES_PER_RUN,
                                               alarm=body.alarm)}
        except RunFinishedError as exc:
            raise self._finished(exc) from None
        except RunLimitError as exc:
            raise self._limited(exc) from None

    def add_completions(self, run_id: str, body: CompletionsBody) -> dict[str, Any]:
        self._known(run_id)
        try:
            return {"new": store_batch(self.store, run_id, body.batch, body.model_dump())}
        except RunFinishedError as exc:
            raise self._finished(exc) from None

    def completions(self, run_id: str, step: int | None = None) -> dict[str, Any]:
        self._known(run_id)
        return read_completions(self.store, run_id, step)

    def finish(self, run_id: str, body: FinishBody) -> dict[str, Any]:
        self._known(run_id)
        summary = dict(body.summary) if body.summary is not None else None
        if body.adapter is not None:
            summary = {**(summary or {}), "adapter": body.adapter}
        _check_summary_size(summary)
        try:
            self.store.finish(run_id, body.status, summary, body.error)
        except RunFinishedError as exc:
            raise self._finished(exc) from None
        return {"status": body.status}

    def patch(self, run_id: str, body: PatchBody) -> dict[str, Any]:
        self._known(run_id)
        merged: dict[str, Any] = dict(body.summary or {})
        if body.holdout is not None:
            merged["holdout"] = body.holdout
        if body.delta is not None:
            merged["delta"] = body.delta
        _check_summary_size(merged)
        try:
            if merged:
                self.store.update_summary(run_id, merged, max_bytes=MAX_SUMMARY_BYTES)
            if body.note is not None:
                self.store.append_note(run_id, body.note, max_notes=MAX_NOTES_PER_RUN)
        except RunLimitError as exc:
            raise self._limited(exc) from None
        except RunError as exc:
            raise ApiError(404, "no_run", str(exc), "id") from None
        return self.get_run(run_id)

    # -- reads ----------------------------------------------------------------------------------------
    def list_runs(self, status: str | None = None, q: str | None = None, limit: int = 200,
                  offset: int = 0) -> dict[str, Any]:
        if status is not None and status not in RUN_STATUSES:
            raise ApiError(400, "invalid", "status must be running, done, failed or stopped", "status")
        limit = max(1, min(int(limit), MAX_RUNS_PER_PAGE))
        runs = self.store.list_runs(limit=limit, status=status, name_contains=q, offset=max(0, offset))
        for run in runs:
            run["summary"] = summary_digest(run["summary"])
        return {"runs": runs}

    def get_run(self, run_id: str, last_points: int = 20) -> dict[str, Any]:
        record = self.store.get_run(run_id, last_points=last_points)
        if record is None:
            raise ApiError(404, "no_run", f"no run {run_id}; GET /runs lists them", "id")
        return record

    def points(self, run_id: str, after_seq: int | None = None, limit: int = POINTS_PER_PAGE) -> dict[str, Any]:
        self._known(run_id)
        limit = max(1, min(int(limit), MAX_POINTS_PER_PAGE))
        points, cursor = self.store.points_page(run_id, after_seq=after_seq, limit=limit)
        return {"points": points, "next_after_seq": cursor, "points_count": self.store.points_count(run_id)}


def summary_digest(summary: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the runs list carries of a summary: its top-level numbers, flags, nulls and texts (cut to
    MAX_SUMMARY_DIGEST_CHARS), at most MAX_SUMMARY_DIGEST_KEYS of them; nested blocks are left to GET /runs/{id}."""
    if summary is None:
        return None
    digest: dict[str, Any] = {}
    for key, value in summary.items():
        if len(digest) >= MAX_SUMMARY_DIGEST_KEYS:
            break
        if isinstance(value, str):
            digest[key] = value if len(value) <= MAX_SUMMARY_DIGEST_CHARS else value[:MAX_SUMMARY_DIGEST_CHARS] + "…"
        elif value is None or isinstance(value, (bool, int, float)):
            digest[key] = value
    return digest


def _check_summary_size(summary: dict[str, Any] | None) -> None:
    if summary is not None and len(dump_json(summary)) > MAX_SUMMARY_BYTES:
        raise ApiError(413, "summary_too_large", f"the summary is over {MAX_SUMMARY_BYTES} bytes of JSON",
                       "summary")
