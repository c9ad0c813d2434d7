"""The background sender: the training thread only enqueues; two daemon threads do the rest.

    training thread ──append──► deque ──flush thread (every flush interval)──► durable sink (local store)
                                                              └──► spool file ──send thread──► HttpSink
                                                                  (batches <= 500, backoff + jitter,
                                                                   429 Retry-After, acks in the spool)

No lock is taken on the training thread: `deque.append` and attribute assignment are atomic. The flush
thread persists at least once per flush interval (<= 1 s), so a killed process loses at most that
interval. A failed send is retried by the send thread on its own schedule, never per log call, and a
failure is a logged warning, never an exception in training. Each point is JSON-encoded once, on its own,
so no single call holds the GIL long enough to stall the training thread.
"""

from __future__ import annotations

import json
import logging
import math
import random
import threading
import time
from collections import deque
from typing import Any

import orjson as _orjson

from whileai_train.runs.config import SenderConfig
from whileai_train.runs.cost import CostMeter
from whileai_train.runs.credentials import Credential, redact
from whileai_train.runs.sinks import EncodedPoint, SendError, Sink
from whileai_train.runs.spool import Spool, SpoolState

__all__ = ["Sender", "encode_point"]

logger = logging.getLogger("whileai_train.runs")

# The flush thread gives the GIL back after holding it this long. Each hand-back costs the training thread one
# thread switch (tens of us when the machine is idle, up to a scheduler time slice when it is busy), so the
# thread hands back by time, not by count: a few times a second at thousands of points per second, and never
# holds the GIL near the 5 ms no-stall target of issue 3.
_HOLD_S = 0.0005
_CHECK_EVERY = 16  # points encoded between looks at the clock (~50 us at 40 metrics)


QueuedPoint = tuple[Any, float, int, dict[str, Any]]  # (step, ts, seq, metrics) as Run.log enqueued it
_RESERVED = frozenset({"step", "ts", "seq"})  # the run's own keys in a stored point
_PLAIN_TYPES = frozenset({int, float})


def encode_point(queued: QueuedPoint, meter: CostMeter | None = None, started: float | None = None) -> EncodedPoint:
    """Keep the numeric values of a point (numpy/torch scalars become floats; NaN/inf become null).

    The training thread enqueues (step, ts, seq, metrics) untouched: building the point here, on the
    background thread, keeps the log call to one tuple and one append (no dict growth on the hot path).
    A point of plain str -> int/float entries (the common case) is written by orjson in one C call; any
    other point takes the general path. Both give the same values.
    """
    step, ts, seq, point = queued
    if type(step) is not int:
        try:
            step = int(step)
        except (TypeError, ValueError):
            step = None
    cost = meter.cost_usd(max(0.0, ts - started)) if meter is not None and meter.rate is not None \
        and started is not None else None
    body = _plain_body(point)
    if body is None:
        body = _general_body(point)
    tail = f'"step":{"null" if step is None else step},"ts":{ts!r},"seq":{seq}'
    if cost is not None:
        tail += f',"cost_usd":{cost!r}'
    text = f"{body[:-1]},{tail}}}" if len(body) > 2 else f"{{{tail}}}"
    return (seq, step, ts, text)


def _plain_body(point: dict[str, Any]) -> str | None:
    """The point as compact JSON when every value is a plain int or float and no key is reserved; else None.
    orjson writes NaN and infinity as null, as the general path does."""
    if not set(map(type, point.values())) <= _PLAIN_TYPES or not _RESERVED.isdisjoint(point):
        return None
    try:
        return _orjson.dumps(point).decode()  # non-str keys or ints over 64 bits raise: general path
    except TypeError:
        return None


def _general_body(point: dict[str, Any]) -> str:
    out: dict[str, Any] = {}
    for key, value in point.items():
        if key in _RESERVED:
            continue
        if type(value) not in _PLAIN_TYPES:
            if isinstance(value, (bool, str, bytes, dict, list, tuple)) or value is None:
                continue
            try:
                value = float(value)  # numpy scalars, 0-d tensors
            except (TypeError, ValueError):
                continue
        if type(value) is float and not math.isfinite(value):
            value = None
        out[str(key)] = value
    return json.dumps(out, separators=(",", ":"))


class Sender:
    """Moves one run's points, notes, progress and finish from the training thread to its sink."""

    def __init__(
        self,
        sink: Sink,
        *,
        client_id: str,
        run_id: str | None,
        meta: dict[str, Any],
        config: SenderConfig,
        meter: CostMeter | None = None,
        started: float | None = None,
        spool: Spool | None = None,
        owed: SpoolState | None = None,
        credential: Credential | None = None,
    ) -> None:
        self.sink = sink
        self.client_id = client_id
        self.run_id = run_id
        self.meta = meta
        self.config = config
        self.meter = meter
        self.started = started if started is not None else time.time()
        self.spool = spool
        self._credential = credential
        # written by the training thread, without locks
        self.points: deque[QueuedPoint] = deque()
        self.notes: deque[tuple[int, str, float]] = deque()
        self.progress: tuple[int, int | None] | None = None
        # owned by the background threads
        self._flush_lock = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending: list[EncodedPoint] = []
        self._pending_notes: list[tuple[int, str, float]] = []
        self._sent_progress: tuple[int, int | None] | None = None
        self._spooled_progress: tuple[int, int | None] | None = None
        self._finish: dict[str, Any] | None = None
        self._done = threading.Event()
        self._wake = threading.Event()
        self._halt = threading.Event()
        self._failures = 0
        self._not_before = 0.0  # monotonic time before which the send thread does not try (backoff)
        self._retry_after_until = 0.0  # the same, set by a 429's Retry-After: honoured even at finish
        self._failing_since: float | None = None
        self._gave_up: str | None = None
        self._warned: set[str] = set()
        self.delivered = 0
        self.flushed_points = 0
        if owed is not None:  # a resumed run or a restarted process: what the spool still owes goes first
            self._pending.extend((s, None, None, e) for s, e in sorted(owed.points.items()))
            self._pending_notes.extend((s, md, ts) for s, (md, ts) in sorted(owed.notes.items()))
        self._threads = [threading.Thread(target=self._flush_loop, name="whileai-flush", daemon=True)]
        if not sink.durable:
            self._threads.append(threading.Thread(target=self._send_loop, name="whileai-send", daemon=True))

    def start(self) -> None:
        for t in self._threads:
            t.start()

    # -- warnings (never exceptions) --------------------------------------------------------------------
    def _warn_once(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            logger.warning(redact(message, self._credential))

    # -- flush thread -----------------------------------------------------------------------------------
    def _flush_loop(self) -> None:
        while not self._halt.wait(self.config.flush_interval_s):
            self.flush()

    def flush(self) -> None:
        """Drain what the training thread queued; persist it (spool or durable sink)."""
        with self._flush_lock:
            try:
                self._flush_locked()
            except Exception as exc:  # noqa: BLE001  (never let the flush thread die silently)
                self._warn_once("flush", f"whileai: could not write run points ({type(exc).__name__}: {exc}); "
                                         "training goes on, points are kept in memory and retried")

    def _flush_locked(self) -> None:
        drained: list[QueuedPoint] = []
        pop = self.points.popleft
        while True:
            try:
                drained.append(pop())
            except IndexError:
                break
        notes: list[tuple[int, str, float]] = []
        while True:
            try:
                notes.append(self.notes.popleft())
            except IndexError:
                break
        encoded: list[EncodedPoint] = []
        clock = time.perf_counter
        held_since = clock()
        for i in range(0, len(drained), _CHECK_EVERY):
            if clock() - held_since > _HOLD_S:
                time.sleep(0)  # hand the GIL back: the training thread never waits behind a long flush
                held_since = clock()
            encoded.extend(encode_point(p, self.meter, self.started) for p in drained[i:i + _CHECK_EVERY])
        self.flushed_points += len(encoded)
        progress = self.progress
        if self.spool is not None:
            lines = [Spool.point_line(e[3]) for e in encoded]
            lines += [json.dumps({"t": "note", "seq": s, "markdown": md, "ts": ts}) for s, md, ts in notes]
            if progress is not None and progress != self._spooled_progress:
                lines.append(json.dumps({"t": "progress", "step": progress[0], "total": progress[1]}))
                self._spooled_progress = progress
            self.spool.write_lines(lines)
        with self._pending_lock:
            self._pending.extend(encoded)
            self._pending_notes.extend(notes)
        if self.sink.durable:
            self._deliver()
        elif encoded or notes:
            self._wake.set()

    # -- delivery (flush thread for durable sinks, send thread otherwise) -------------------------------
    def _deliver(self) -> float | None:
        """Send what is owed, oldest first. Returns the seconds to wait before the next try (None: idle)."""
        if self._gave_up:
            return None
        try:
            if self.run_id is None:
                self.run_id = self.sink.open_run(self.meta, self.client_id)
                if self.spool is not None:
                    self.spool.write({"t": "remote", "run_id": self.run_id})
            while True:  # until nothing is owed (a flush may land while this runs)
                while True:
                    with self._pending_lock:
                        batch = self._pending[: self.config.max_points_per_call]
                    progress = self.progress if self.progress != self._sent_progress else None
                    if not batch:
                        break
                    self.sink.send_points(self.run_id, batch, progress)
                    self._sent_progress = progress or self._sent_progress
                    with self._pending_lock:
                        del self._pending[: len(batch)]
                    self.delivered += len(batch)
                    if self.spool is not None:
                        self.spool.write({"t": "acked", "through": batch[-1][0]})
                while self._pending_notes:
                    seq, md, ts = self._pending_notes[0]
                    try:
                        self.sink.send_note(self.run_id, seq, md, ts)
                    except SendError as exc:
                        if exc.retryable:
                            raise
                        # a server without the notes route must not stop the points: drop notes, say so once
                        self._warn_once("notes", f"whileai: {self.sink.where} does not take run notes ({exc}); "
                                                 "notes are dropped, points and finish still go")
                    with self._pending_lock:
                        self._pending_notes.pop(0)
                    if self.spool is not None:
                        self.spool.write({"t": "note_acked", "seq": seq})
                progress = self.progress
                if progress is not None and progress != self._sent_progress:
                    self.sink.set_progress(self.run_id, *progress)
                    self._sent_progress = progress
                if self._finish is not None and not self._done.is_set():
                    with self._pending_lock:
                        owed = bool(self._pending or self._pending_notes)
                    if owed:
                        continue  # a flush landed after the points were sent: send it before the finish
                    self.sink.finish(self.run_id, **self._finish)
                    if self.spool is not None:
                        self.spool.write({"t": "finished"})
                    self._done.set()
                break
        except SendError as exc:
            return self._failed(exc)
        except Exception as exc:  # noqa: BLE001  (a sink bug or a disk error: warn, keep the points, try again later)
            return self._failed(SendError(f"{type(exc).__name__}: {exc}"))
        if self._failing_since is not None:
            logger.warning("whileai: %s is reachable again after %.0f s; the points kept meanwhile are sent",
                           self.sink.where, time.time() - self._failing_since)
            self._failing_since = None
            self._warned.discard("unreachable")
        self._failures = 0
        return None

    def _failed(self, exc: SendError) -> float | None:
        where = self.sink.where
        if not exc.retryable:
            self._gave_up = str(exc)
            self._warn_once("gave-up", f"whileai: {where} refused the run ({exc}); training goes on, points stay in "
                                       f"{self._kept_where()}; fix the cause, then run `whileai-train sync`")
            return None
        self._failures += 1
        if self._failing_since is None:
            self._failing_since = time.time()
        kept = self._kept_where()
        self._warn_once("unreachable", f"whileai: could not send to {where} ({exc}); training goes on, points are "
                                       f"kept in {kept} and re-sent when it is back")
        if exc.retry_after is not None:
            wait = min(exc.retry_after, self.config.retry_after_max_s)
            self._retry_after_until = time.monotonic() + wait
            return wait
        delay = min(self.config.backoff_max_s, self.config.backoff_base_s * 2 ** (self._failures - 1))
        return delay * random.uniform(0.5, 1.5)

    def _kept_where(self) -> str:
        return str(self.spool.path) if self.spool is not None else "memory"

    # -- send thread ------------------------------------------------------------------------------------
    def _send_loop(self) -> None:
        try:
            while not self._halt.is_set():
                now = time.monotonic()
                wait = self._not_before - now if self._not_before > now else self.config.flush_interval_s
                self._wake.wait(wait)
                self._wake.clear()
                if self._halt.is_set():
                    break
                if time.monotonic() < self._not_before:
                    continue  # new points do not cut a backoff or a Retry-After short
                delay = self._deliver()
                self._not_before = time.monotonic() + delay if delay else 0.0
        finally:
            self._close_sink()

    def _close_sink(self) -> None:
        """The run is over for this thread, the only one sending: its connections close with it."""
        try:
            self.sink.close()
        except Exception as exc:  # noqa: BLE001  (closing a finished run's connection never raises into training)
            logger.warning("whileai: closing the connection to %s failed (%s)", self.sink.where,
                           redact(repr(exc), self._credential))

    # -- finish -----------------------------------------------------------------------------------------
    @property
    def owed(self) -> int:
        with self._pending_lock:
            return len(self._pending) + len(self._pending_notes)

    def finish(self, status: str, summary: dict[str, Any] | None, error: str | None,
               wait_s: float | None = None) -> bool:
        """Flush, send the finish record, wait at most `wait_s`; True when everything landed."""
        wait = self.config.finish_wait_s if wait_s is None else wait_s
        self.flush()
        self._finish = {"status": status, "summary": summary, "error": error}
        if self.spool is not None:
            self.spool.write({"t": "finish", **self._finish})
        if self.sink.durable:
            with self._flush_lock:
                self._deliver()
        else:
            self._failures = 0  # the end of the run deserves a prompt try (but a 429 is still honoured)
            self._not_before = self._retry_after_until
            self._wake.set()
            self._done.wait(wait)
        self._halt.set()
        self._wake.set()
        done = self._done.is_set()
        if self.spool is not None:
            if done:
                self.spool.remove()
            else:
                self.spool.close()
        return done
