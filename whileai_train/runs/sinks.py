"""Where a run's records go, behind one small interface (the idea of httpx's transports).

    Sink                  open_run / send_points / send_note / set_progress / finish
    ├── HttpSink          the platform's plain HTTP API (POST /runs, /runs/{id}/log, /runs/{id}/finish)
    ├── LocalSink         the embedded SQLite store (runs/store.py; holdout completions: runs/completions.py)
    └── MemorySink        in memory, for unit tests

A sink is called only from the sender's background threads (and at open/finish), never per log call.
`durable` sinks keep what they accept (the local store); the others are fronted by the on-disk spool.
Points arrive pre-encoded as (seq, step, ts, json) so a batch is never re-serialised in one long call
that would hold the GIL against the training thread.

HttpSink counts a call as delivered on a 2xx JSON object, whatever its keys (a platform we did not write may
answer a finish with {"ok": true}), with two exceptions: POST /runs must name the run ("runId", or "run_id"
/ "id"), and a /log answer that says it took fewer points than were sent ({"accepted": 0}) is a failure
that names how many and keeps them all (re-sent points are de-duplicated on seq). A 3xx is never followed
(it names the URL to fix); a 2xx page, a non-object or an empty body is a failure that keeps the points; a
409 with code "run_finished" is `RunAlreadyFinished`, final. Every request, connect to last byte, ends
within its deadline (runs/deadline.py), not per read: a server that answers a byte a second cannot hold it.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from typing import Any, Protocol

from whileai_train.alarm_event import AlarmEvent
from whileai_train.errors import RunFinishedError
from whileai_train.runs.completions import batch_of_note, store_batch
from whileai_train.runs.credentials import Credential, redact
from whileai_train.runs.defaults import CONNECT_TIMEOUT_S, READ_TIMEOUT_S, REQUEST_DEADLINE_S
from whileai_train.runs.run_ids import new_run_id, this_process
from whileai_train.runs.store import LocalStore

__all__ = ["EncodedPoint", "HttpSink", "LocalSink", "MemorySink", "QueuedNote", "RunAlreadyFinished", "SendError",
           "Sink", "nulled_nonfinite"]

EncodedPoint = tuple[int, Any, Any, str]  # (seq, step, ts, point as JSON)
QueuedNote = tuple[int, str, float, AlarmEvent | None]  # (seq, markdown, ts, the alarm it shows, if any)


class SendError(Exception):
    """A send that did not land. `retryable` False means retrying cannot help (bad key, unknown run).

    `kind` groups failures for the one warning each kind gets: "unreachable" (no answer, 5xx, 429, a
    deadline passed), "redirect" (a 3xx: the URL is wrong), "not-api" (a 2xx whose body is not a JSON
    object, or an open that names no run), "partial" (the platform said it took fewer points than were
    sent), "refused".
    """

    def __init__(self, message: str, *, retryable: bool = True, retry_after: float | None = None,
                 kind: str = "unreachable") -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.kind = kind


class RunAlreadyFinished(SendError):
    """The sink says the run is already finished (HTTP 409 with code run_finished, or the local store's
    `RunFinishedError`). Final, not a failure to retry: what was sent is not stored, and never will be."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False, kind="finished")


def nulled_nonfinite(value: Any, key: str = "") -> tuple[Any, list[str]]:
    """`value` with every NaN and infinity (floats, at any depth of dicts and lists) replaced by None, and the
    dotted keys where that happened: JSON has no NaN, and one bare NaN makes a whole answer unreadable."""
    if isinstance(value, float):
        return (value, []) if math.isfinite(value) else (None, [key or "(value)"])
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        bad: list[str] = []
        for k, v in value.items():
            out[k], found = nulled_nonfinite(v, f"{key}.{k}" if key else str(k))
            bad += found
        return out, bad
    if isinstance(value, (list, tuple)):
        items: list[Any] = []
        bad = []
        for i, v in enumerate(value):
            clean, found = nulled_nonfinite(v, f"{key}[{i}]")
            items.append(clean)
            bad += found
        return items, bad
    return value, []


class Sink(Protocol):
    kind: str  # "platform", "local" or "memory"
    durable: bool
    where: str  # for the one printed line: the URL or the database path

    def open_run(self, meta: dict[str, Any], client_id: str, timeout: float | None = None,
                 resume: bool = False) -> str: ...
    def send_points(self, run_id: str, points: Sequence[EncodedPoint],
                    progress: tuple[int, int | None] | None = None) -> int: ...
    def send_note(self, run_id: str, seq: int, markdown: str, ts: float, alarm: AlarmEvent | None = None) -> None: ...
    def set_progress(self, run_id: str, step: int, total: int | None) -> None: ...
    def finish(self, run_id: str, status: str, summary: dict[str, Any] | None, error: str | None) -> None: ...
    def close(self) -> None: ...


class LocalSink:
    """The embedded local store. Durable: what it accepts is on disk when the call returns."""

    kind = "local"
    durable = True

    def __init__(self, store: LocalStore | None = None) -> None:
        self.store = store or LocalStore()
        self.where = str(self.store.path)

    def __repr__(self) -> str:
        return f"LocalSink({self.where!r})"

    def open_run(self, meta: dict[str, Any], client_id: str, timeout: float | None = None,
                 resume: bool = False) -> str:
        run_id = self.store.create_run(meta, client_id=client_id, owner=this_process())
        if resume:
            self.store.reopen(run_id, owner=this_process())
        return run_id

    def send_points(self, run_id: str, points: Sequence[EncodedPoint],
                    progress: tuple[int, int | None] | None = None) -> int:
        self.store.add_points(run_id, points)
        if progress is not None:
            self.store.set_progress(run_id, *progress)
        return len(points)

    def send_note(self, run_id: str, seq: int, markdown: str, ts: float, alarm: AlarmEvent | None = None) -> None:
        batch = batch_of_note(markdown)
        if batch is None:
            self.store.add_note(run_id, seq, markdown, ts, alarm=alarm)
            return
        try:  # holdout completions travel as a note and are kept apart (runs/completions.py)
            store_batch(self.store, run_id, seq, batch)
        except RunFinishedError as exc:
            raise RunAlreadyFinished(str(exc)) from None

    def set_progress(self, run_id: str, step: int, total: int | None) -> None:
        self.store.set_progress(run_id, step, total)

    def finish(self, run_id: str, status: str, summary: dict[str, Any] | None, error: str | None) -> None:
        try:
            self.store.finish(run_id, status, summary, error)
        except RunFinishedError as exc:
            raise RunAlreadyFinished(str(exc)) from None

    def close(self) -> None:
        self.store.close()


class MemorySink:
    """Everything in dicts; `fail_next` makes the next N sends raise (for sender unit tests)."""

    kind = "memory"

    def __init__(self, durable: bool = True) -> None:
        self.durable = durable
        self.where = "memory"
        self.runs: dict[str, dict[str, Any]] = {}
        self.points: dict[str, dict[int, dict[str, Any]]] = {}
        self.notes: dict[str, dict[int, str]] = {}
        self.alarms: dict[str, list[AlarmEvent]] = {}
        self.fail_next = 0
        self.calls = 0

    def _maybe_fail(self) -> None:
        self.calls += 1
        if self.fail_next > 0:
            self.fail_next -= 1
            raise SendError("memory sink told to fail")

    def open_run(self, meta: dict[str, Any], client_id: str, timeout: float | None = None,
                 resume: bool = False) -> str:
        self._maybe_fail()
        for rid, run in self.runs.items():
            if run["client_id"] == client_id:
                if resume:
                    run["status"] = "running"
                return rid
        rid = new_run_id()
        self.runs[rid] = {**meta, "client_id": client_id, "status": "running", "step": 0}
        self.points[rid], self.notes[rid], self.alarms[rid] = {}, {}, []
        return rid

    def send_points(self, run_id: str, points: Sequence[EncodedPoint],
                    progress: tuple[int, int | None] | None = None) -> int:
        self._maybe_fail()
        for seq, _step, _ts, enc in points:
            self.points[run_id].setdefault(seq, json.loads(enc))
        if progress is not None:
            self.set_progress(run_id, *progress)
        return len(points)

    def send_note(self, run_id: str, seq: int, markdown: str, ts: float, alarm: AlarmEvent | None = None) -> None:
        self._maybe_fail()
        if seq not in self.notes[run_id] and alarm is not None:
            self.alarms[run_id].append(alarm)
        self.notes[run_id].setdefault(seq, markdown)

    def set_progress(self, run_id: str, step: int, total: int | None) -> None:
        self.runs[run_id]["step"] = max(self.runs[run_id]["step"], step)
        if total is not None:
            self.runs[run_id]["total_steps"] = total

    def finish(self, run_id: str, status: str, summary: dict[str, Any] | None, error: str | None) -> None:
        self._maybe_fail()
        if self.runs[run_id]["status"] != "running":
            raise RunAlreadyFinished(f"run {run_id} is already finished ({self.runs[run_id]['status']})")
        self.runs[run_id].update(status=status, summary=summary, error=error)

    def close(self) -> None:
        pass


class HttpSink:
    """The platform's plain HTTP API with `X-Api-Key`; errors become `SendError`. Every request ends within
    `deadline_s` (connect, send and answer together), and by the monotonic time `until` when set (a whole
    `sync` has one deadline)."""

    kind = "platform"
    durable = False

    def __init__(self, url: str, credential: Credential, *, connect_timeout_s: float = CONNECT_TIMEOUT_S,
                 read_timeout_s: float = READ_TIMEOUT_S, deadline_s: float = REQUEST_DEADLINE_S) -> None:
        import httpx

        from whileai_train.runs.deadline import deadline_client

        self.where = url
        self.deadline_s = deadline_s
        self.until: float | None = None
        self._credential = credential
        self._httpx = httpx
        self._client = deadline_client(url, {"X-Api-Key": credential.key, "Content-Type": "application/json"},
                                       connect_timeout_s=connect_timeout_s, read_timeout_s=read_timeout_s)

    def __repr__(self) -> str:
        return f"HttpSink({self.where!r}, key from {self._credential.source})"

    def _post(self, path: str, body: bytes, deadline_s: float | None = None) -> dict[str, Any]:
        """POST `body` within the deadline; return the answer when it is a 2xx JSON object. Anything else
        raises `SendError` saying what came back (the caller keeps the points)."""
        from whileai_train.runs.deadline import request_deadline

        httpx = self._httpx
        try:
            with request_deadline(deadline_s or self.deadline_s, not_after=self.until):
                response = self._client.post(path, content=body)
        except httpx.TimeoutException as exc:
            raise SendError(redact(f"no whole answer from {path} within its deadline ({exc})", self._credential)) \
                from None
        except httpx.HTTPError as exc:  # connect refused, dropped connection, protocol error
            raise SendError(redact(f"{type(exc).__name__}: {exc}", self._credential)) from None
        except Exception as exc:  # noqa: BLE001  (anything else from the transport is a failed send, not a crash)
            raise SendError(redact(f"{type(exc).__name__}: {exc}", self._credential)) from None
        status = response.status_code
        if 300 <= status < 400:
            raise SendError(redact(_redirect_message(self.where, path, status, response.headers.get("Location")),
                                   self._credential), kind="redirect")
        if status == 429:
            raise SendError("HTTP 429 Too Many Requests", retry_after=_retry_after(response.headers.get("Retry-After")))
        if status >= 500 or status == 408:
            raise SendError(f"HTTP {status} from {path}")
        data = _json_object(response)
        if status == 409 and data is not None and data.get("code") == "run_finished":
            raise RunAlreadyFinished(redact(f"HTTP 409 from {path}: {data.get('error') or 'the run is finished'}",
                                            self._credential))
        if status >= 400:
            what = "the key was refused" if status in (401, 403) else f"{path} was refused"
            detail = f" ({data.get('error')})" if data is not None and data.get("error") else ""
            raise SendError(redact(f"HTTP {status}: {what}{detail}", self._credential), retryable=False,
                            kind="refused")
        if status < 200 or data is None:
            raise SendError(redact(f"HTTP {status} from {self.where}{path} is not the API's answer (expected a JSON "
                                   f"object, got {_describe(response)}): a proxy, a login page or a wrong URL? Fix: "
                                   "check WHILEAI_API_URL (or url=)", self._credential), kind="not-api")
        return data

    def open_run(self, meta: dict[str, Any], client_id: str, timeout: float | None = None,
                 resume: bool = False) -> str:
        """POST /runs within `timeout` (else the sink's deadline); the platform de-duplicates on
        `client_run_id`. `resume` asks it to reopen that run when it was finished (a checkpoint resume
        continues the same run)."""
        body: dict[str, Any] = {k: meta.get(k) for k in ("name", "dataset_id", "base_model", "total_steps")}
        body["client_run_id"] = client_id
        if resume:
            body["resume"] = True
        data = self._post("/runs", json.dumps(body).encode(), timeout)
        for key in _RUN_ID_KEYS:
            value = data.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "":
                return str(value)
        raise SendError(redact(f"HTTP 200 from {self.where}/runs is not the API's answer (expected a JSON object "
                               f"with 'runId', got {str(data)[:80]!r}): a proxy, a login page or a wrong URL? "
                               "Fix: check WHILEAI_API_URL (or url=)", self._credential), kind="not-api")

    def send_points(self, run_id: str, points: Sequence[EncodedPoint],
                    progress: tuple[int, int | None] | None = None) -> int:
        """Send one batch; returns how many points the platform took. An answer saying it took fewer than
        were sent raises SendError (kind "partial", naming both counts): all of them stay owed."""
        parts = [b'{"points":[', ",".join(p[3] for p in points).encode(), b"]"]
        if progress is not None:
            parts.append(b',"progress":' + json.dumps({"step": progress[0], "total": progress[1]}).encode())
        parts.append(b"}")
        data = self._post(f"/runs/{run_id}/log", b"".join(parts))
        took = _took(data.get("accepted"), len(points))
        if took < len(points):
            raise SendError(f"{self.where} took {took} of the {len(points)} points sent (its answer: "
                            f"{str(data)[:80]}); all {len(points)} stay in the spool and are sent again "
                            "(the platform keeps each seq once)", kind="partial")
        return took

    def send_note(self, run_id: str, seq: int, markdown: str, ts: float, alarm: AlarmEvent | None = None) -> None:
        batch = batch_of_note(markdown)
        if batch is not None:  # holdout completions: their own route, never a note (runs/completions.py)
            self._post(f"/runs/{run_id}/completions", json.dumps({"batch": seq, **batch}).encode())
            return
        body: dict[str, Any] = {"seq": seq, "markdown": markdown, "ts": ts}
        if alarm is not None:
            body["alarm"] = alarm.model_dump(mode="json")
        self._post(f"/runs/{run_id}/notes", json.dumps(body, allow_nan=False).encode())

    def set_progress(self, run_id: str, step: int, total: int | None) -> None:
        self.send_points(run_id, [], progress=(step, total))

    def finish(self, run_id: str, status: str, summary: dict[str, Any] | None, error: str | None) -> None:
        body = {"status": status, "summary": nulled_nonfinite(summary)[0], "error": error}
        self._post(f"/runs/{run_id}/finish", json.dumps(body, default=str, allow_nan=False).encode())

    def close(self) -> None:
        self._client.close()


# where an open's answer may name the run: the API's key first, then the spellings other platforms use
_RUN_ID_KEYS = ("runId", "run_id", "id")


def _took(accepted: Any, sent: int) -> int:
    """How many points an answer says the platform took: its "accepted" when that is a count (False: none),
    else all of them (an answer of another shape says nothing of fewer)."""
    if accepted is False:
        return 0
    if isinstance(accepted, int) and not isinstance(accepted, bool):
        return max(0, accepted)
    return sent


def _json_object(response: Any) -> dict[str, Any] | None:
    """The body as a JSON object, or None (empty, not JSON, not an object)."""
    if not response.content:
        return None
    try:
        data = json.loads(response.content)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _describe(response: Any) -> str:
    """A short, printable account of an unexpected answer: its content type and the start of its body."""
    kind = response.headers.get("Content-Type") or "no content type"
    head = response.content[:80].decode("utf-8", "replace")
    return f"{kind}, {len(response.content)} bytes: {head!r}" if response.content else f"{kind}, an empty body"


def _redirect_message(base: str, path: str, status: int, location: str | None) -> str:
    """A 3xx is a wrong URL, never followed: say where it pointed and which URL to set."""
    if not location:
        return f"HTTP {status} redirect from {base}{path} without a Location; redirects are not followed. " \
               "Fix: set WHILEAI_API_URL (or url=) to the API's real address"
    suggestion = location[: -len(path)] if location.endswith(path) and "://" in location else None
    fix = f"set WHILEAI_API_URL (or url=) to {suggestion}" if suggestion else \
        "set WHILEAI_API_URL (or url=) to the API's real address"
    return f"HTTP {status} redirect from {base}{path} to {location}; redirects are not followed. Fix: {fix}"


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date), None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None
