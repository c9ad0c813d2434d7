"""Where a run's records go, behind one small interface (the idea of httpx's transports).

    Sink                  open_run / send_points / send_note / set_progress / finish
    ├── HttpSink          the platform's plain HTTP API (POST /runs, /runs/{id}/log, /runs/{id}/finish)
    ├── LocalSink         the embedded SQLite store (runs/store.py)
    └── MemorySink        in memory, for unit tests

A sink is called only from the sender's background threads (and at open/finish), never per log call.
`durable` sinks keep what they accept (the local store); the others are fronted by the on-disk spool.
Points arrive pre-encoded as (seq, step, ts, json) so a batch is never re-serialised in one long call
that would hold the GIL against the training thread.

HttpSink counts a call as delivered only on the API's success answer: a 2xx JSON object holding the route's
key (POST /runs "runId", /log an integer "accepted", /notes "new", /finish "status"). A 3xx is never
followed (it names the URL to fix); a 2xx page or JSON of another shape is a failure that keeps the points;
a 409 with code "run_finished" is `RunAlreadyFinished`, final.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from typing import Any, Protocol

from whileai_train.errors import RunFinishedError
from whileai_train.runs.credentials import Credential, redact
from whileai_train.runs.store import LocalStore, new_run_id, this_process

__all__ = ["EncodedPoint", "HttpSink", "LocalSink", "MemorySink", "RunAlreadyFinished", "SendError", "Sink",
           "nulled_nonfinite"]

EncodedPoint = tuple[int, Any, Any, str]  # (seq, step, ts, point as JSON)


class SendError(Exception):
    """A send that did not land. `retryable` False means retrying cannot help (bad key, unknown run).

    `kind` groups failures for the one warning each kind gets: "unreachable" (no answer, 5xx, 429),
    "redirect" (a 3xx: the URL is wrong), "not-api" (a 2xx whose body is not the API's answer), "refused".
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
    def send_note(self, run_id: str, seq: int, markdown: str, ts: float) -> None: ...
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

    def send_note(self, run_id: str, seq: int, markdown: str, ts: float) -> None:
        self.store.add_note(run_id, seq, markdown, ts)

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
        self.points[rid], self.notes[rid] = {}, {}
        return rid

    def send_points(self, run_id: str, points: Sequence[EncodedPoint],
                    progress: tuple[int, int | None] | None = None) -> int:
        self._maybe_fail()
        for seq, _step, _ts, enc in points:
            self.points[run_id].setdefault(seq, json.loads(enc))
        if progress is not None:
            self.set_progress(run_id, *progress)
        return len(points)

    def send_note(self, run_id: str, seq: int, markdown: str, ts: float) -> None:
        self._maybe_fail()
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
    """The platform's plain HTTP API with `X-Api-Key`. Short timeouts; errors become `SendError`."""

    kind = "platform"
    durable = False

    def __init__(self, url: str, credential: Credential, *, connect_timeout_s: float = 2.0,
                 read_timeout_s: float = 5.0) -> None:
        import httpx

        self.where = url
        self._credential = credential
        self._httpx = httpx
        self._client = httpx.Client(
            base_url=url,
            headers={"X-Api-Key": credential.key, "Content-Type": "application/json"},
            timeout=httpx.Timeout(read_timeout_s, connect=connect_timeout_s),
            follow_redirects=False,
        )

    def __repr__(self) -> str:
        return f"HttpSink({self.where!r}, key from {self._credential.source})"

    def _post(self, path: str, body: bytes, expect: str, timeout: float | None = None) -> dict[str, Any]:
        """POST `body`; return the answer only when it is the API's success answer: a 2xx JSON object holding
        `expect`. Anything else raises `SendError` saying what came back (the caller keeps the points)."""
        httpx = self._httpx
        try:
            kwargs: dict[str, Any] = {"content": body}
            if timeout is not None:
                kwargs["timeout"] = httpx.Timeout(timeout)
            response = self._client.post(path, **kwargs)
        except httpx.HTTPError as exc:  # connect refused, timeout, dropped connection, protocol error
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
        if status < 200 or data is None or not _answers(data, expect):
            raise SendError(redact(f"HTTP {status} from {self.where}{path} is not the API's answer (expected a JSON "
                                   f"object with {expect!r}, got {_describe(response)}): a proxy, a login page or a "
                                   "wrong URL? Fix: check WHILEAI_API_URL (or url=)", self._credential),
                            kind="not-api")
        return data

    def open_run(self, meta: dict[str, Any], client_id: str, timeout: float | None = None,
                 resume: bool = False) -> str:
        """POST /runs; the platform de-duplicates on `client_run_id`. `resume` asks it to reopen that run
        when it was finished (a checkpoint resume continues the same run)."""
        body: dict[str, Any] = {k: meta.get(k) for k in ("name", "dataset_id", "base_model", "total_steps")}
        body["client_run_id"] = client_id
        if resume:
            body["resume"] = True
        data = self._post("/runs", json.dumps(body).encode(), "runId", timeout=timeout)
        return str(data["runId"])

    def send_points(self, run_id: str, points: Sequence[EncodedPoint],
                    progress: tuple[int, int | None] | None = None) -> int:
        """Send one batch; returns how many points the platform accepted (its `accepted`)."""
        parts = [b'{"points":[', ",".join(p[3] for p in points).encode(), b"]"]
        if progress is not None:
            parts.append(b',"progress":' + json.dumps({"step": progress[0], "total": progress[1]}).encode())
        parts.append(b"}")
        data = self._post(f"/runs/{run_id}/log", b"".join(parts), "accepted")
        return int(data["accepted"])

    def send_note(self, run_id: str, seq: int, markdown: str, ts: float) -> None:
        self._post(f"/runs/{run_id}/notes", json.dumps({"seq": seq, "markdown": markdown, "ts": ts}).encode(), "new")

    def set_progress(self, run_id: str, step: int, total: int | None) -> None:
        self.send_points(run_id, [], progress=(step, total))

    def finish(self, run_id: str, status: str, summary: dict[str, Any] | None, error: str | None) -> None:
        body = {"status": status, "summary": nulled_nonfinite(summary)[0], "error": error}
        self._post(f"/runs/{run_id}/finish", json.dumps(body, default=str, allow_nan=False).encode(), "status")

    def close(self) -> None:
        self._client.close()


# the key each route's success answer holds, and what its value must be
_EXPECTED: dict[str, tuple[type, ...]] = {"runId": (str,), "accepted": (int,), "new": (bool, int), "status": (str,)}


def _answers(data: dict[str, Any], expect: str) -> bool:
    value = data.get(expect)
    if value is None or not isinstance(value, _EXPECTED[expect]):
        return False
    if expect == "accepted":
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value != ""


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
