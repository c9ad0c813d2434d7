"""Where a run's records go, behind one small interface (the idea of httpx's transports).

    Sink                  open_run / send_points / send_note / set_progress / finish
    ├── HttpSink          the platform's plain HTTP API (POST /runs, /runs/{id}/log, /runs/{id}/finish)
    ├── LocalSink         the embedded SQLite store (runs/store.py)
    └── MemorySink        in memory, for unit tests

A sink is called only from the sender's background threads (and at open/finish), never per log call.
`durable` sinks keep what they accept (the local store); the others are fronted by the on-disk spool.
Points arrive pre-encoded as (seq, step, ts, json) so a batch is never re-serialised in one long call
that would hold the GIL against the training thread.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any, Protocol

from whileai_train.runs.credentials import Credential, redact
from whileai_train.runs.store import LocalStore, new_run_id, this_process

__all__ = ["EncodedPoint", "HttpSink", "LocalSink", "MemorySink", "SendError", "Sink"]

EncodedPoint = tuple[int, Any, Any, str]  # (seq, step, ts, point as JSON)


class SendError(Exception):
    """A send that did not land. `retryable` False means retrying cannot help (bad key, unknown run)."""

    def __init__(self, message: str, *, retryable: bool = True, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


class Sink(Protocol):
    kind: str  # "platform", "local" or "memory"
    durable: bool
    where: str  # for the one printed line: the URL or the database path

    def open_run(self, meta: dict[str, Any], client_id: str, timeout: float | None = None) -> str: ...
    def send_points(self, run_id: str, points: Sequence[EncodedPoint],
                    progress: tuple[int, int | None] | None = None) -> None: ...
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

    def open_run(self, meta: dict[str, Any], client_id: str, timeout: float | None = None) -> str:
        return self.store.create_run(meta, client_id=client_id, owner=this_process())

    def send_points(self, run_id: str, points: Sequence[EncodedPoint],
                    progress: tuple[int, int | None] | None = None) -> None:
        self.store.add_points(run_id, points)
        if progress is not None:
            self.store.set_progress(run_id, *progress)

    def send_note(self, run_id: str, seq: int, markdown: str, ts: float) -> None:
        self.store.add_note(run_id, seq, markdown, ts)

    def set_progress(self, run_id: str, step: int, total: int | None) -> None:
        self.store.set_progress(run_id, step, total)

    def finish(self, run_id: str, status: str, summary: dict[str, Any] | None, error: str | None) -> None:
        self.store.finish(run_id, status, summary, error)

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

    def open_run(self, meta: dict[str, Any], client_id: str, timeout: float | None = None) -> str:
        self._maybe_fail()
        for rid, run in self.runs.items():
            if run["client_id"] == client_id:
                return rid
        rid = new_run_id()
        self.runs[rid] = {**meta, "client_id": client_id, "status": "running", "step": 0}
        self.points[rid], self.notes[rid] = {}, {}
        return rid

    def send_points(self, run_id: str, points: Sequence[EncodedPoint],
                    progress: tuple[int, int | None] | None = None) -> None:
        self._maybe_fail()
        for seq, _step, _ts, enc in points:
            self.points[run_id].setdefault(seq, json.loads(enc))
        if progress is not None:
            self.set_progress(run_id, *progress)

    def send_note(self, run_id: str, seq: int, markdown: str, ts: float) -> None:
        self._maybe_fail()
        self.notes[run_id].setdefault(seq, markdown)

    def set_progress(self, run_id: str, step: int, total: int | None) -> None:
        self.runs[run_id]["step"] = max(self.runs[run_id]["step"], step)
        if total is not None:
            self.runs[run_id]["total_steps"] = total

    def finish(self, run_id: str, status: str, summary: dict[str, Any] | None, error: str | None) -> None:
        self._maybe_fail()
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

    def _post(self, path: str, body: bytes, timeout: float | None = None) -> dict[str, Any]:
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
        if status == 429:
            raise SendError("HTTP 429 Too Many Requests", retry_after=_retry_after(response.headers.get("Retry-After")))
        if status >= 500 or status == 408:
            raise SendError(f"HTTP {status} from {path}")
        if status >= 400:
            what = "the key was refused" if status in (401, 403) else f"{path} was refused"
            raise SendError(f"HTTP {status}: {what}", retryable=False)
        try:
            data = response.json() if response.content else {}
        except ValueError:
            data = {}
        return data if isinstance(data, dict) else {}

    def open_run(self, meta: dict[str, Any], client_id: str, timeout: float | None = None) -> str:
        body = {k: meta.get(k) for k in ("name", "dataset_id", "base_model", "total_steps")}
        body["client_run_id"] = client_id
        data = self._post("/runs", json.dumps(body).encode(), timeout=timeout)
        run_id = data.get("runId") or data.get("run_id") or data.get("id")
        if not run_id:
            raise SendError("POST /runs answered without a runId", retryable=False)
        return str(run_id)

    def send_points(self, run_id: str, points: Sequence[EncodedPoint],
                    progress: tuple[int, int | None] | None = None) -> None:
        parts = [b'{"points":[', ",".join(p[3] for p in points).encode(), b"]"]
        if progress is not None:
            parts.append(b',"progress":' + json.dumps({"step": progress[0], "total": progress[1]}).encode())
        parts.append(b"}")
        self._post(f"/runs/{run_id}/log", b"".join(parts))

    def send_note(self, run_id: str, seq: int, markdown: str, ts: float) -> None:
        self._post(f"/runs/{run_id}/notes", json.dumps({"seq": seq, "markdown": markdown, "ts": ts}).encode())

    def set_progress(self, run_id: str, step: int, total: int | None) -> None:
        self.send_points(run_id, [], progress=(step, total))

    def finish(self, run_id: str, status: str, summary: dict[str, Any] | None, error: str | None) -> None:
        body = {"status": status, "summary": summary, "error": error}
        self._post(f"/runs/{run_id}/finish", json.dumps(body, default=str).encode())

    def get_run(self, run_id: str) -> dict[str, Any]:
        try:
            response = self._client.get(f"/runs/{run_id}")
            response.raise_for_status()
            return dict(response.json())
        except self._httpx.HTTPError as exc:
            raise SendError(redact(f"{type(exc).__name__}: {exc}", self._credential)) from None

    def close(self) -> None:
        self._client.close()


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
