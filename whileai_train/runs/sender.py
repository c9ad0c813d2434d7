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

Nothing is dropped by a failure of the place meant to keep it: a batch is held in memory before the spool
write (a full disk costs durability across an exit, said once with its cause, not the points); a batch leaves
memory only on the sink's success answer; what the local store cannot take at finish goes to a spool file
for `whileai-train sync`. A sink's "run already finished" is final, and its count is said at finish. The
message at finish says where every record not delivered is, or how many are lost and why.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import math
import random
import threading
import time
from collections import deque
from typing import Any

import orjson as _orjson

from whileai_train.runs.completions import batch_of_note
from whileai_train.runs.config import SenderConfig
from whileai_train.runs.cost import CostMeter
from whileai_train.runs.credentials import Credential, redact
from whileai_train.runs.sinks import (
    EncodedPoint,
    QueuedNote,
    RunAlreadyFinished,
    SendError,
    Sink,
    nulled_nonfinite,
)
from whileai_train.runs.spool import Spool, SpoolState, spool_path

__all__ = ["Sender", "encode_point", "os_cause"]

logger = logging.getLogger("whileai_train.runs")

# The flush thread gives the GIL back after holding it this long. Each hand-back costs the training thread one
# thread switch (tens of us when the machine is idle, up to a scheduler time slice when it is busy), so the
# thread hands back by time, not by count: a few times a second at thousands of points per second, and never
# holds the GIL long enough to stall a training step (bench/callback_overhead.py measures the step time).
_HOLD_S = 0.0005
_CHECK_EVERY = 16  # points encoded between looks at the clock
_DRAIN_POLL_S = 0.02  # how often `drain` looks whether the send thread has delivered what is owed


QueuedPoint = tuple[Any, float, int, dict[str, Any]]  # (step, ts, seq, metrics) as Run.log enqueued it
_RESERVED = frozenset({"step", "ts", "seq"})  # the run's own keys in a stored point
_PLAIN_TYPES = frozenset({int, float})


def os_cause(exc: BaseException) -> str:
    """An OS error in words a user acts on: the disk is full, the file system is read-only, ..."""
    words = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is used up",
             errno.EFBIG: "the file size limit is reached", errno.EROFS: "the file system is read-only",
             errno.EACCES: "permission denied", errno.EPERM: "permission denied"}
    if isinstance(exc, OSError) and exc.errno in words:
        return f"{words[exc.errno]} ({type(exc).__name__}: {exc.strerror})"
    return f"{type(exc).__name__}: {exc}"


def _nonfinite_keys(point: dict[str, Any]) -> list[str]:
    """The keys of a point whose value is a NaN or an infinity (numpy and torch scalars included)."""
    keys = []
    for key, value in point.items():
        if key in _RESERVED or isinstance(value, (bool, str, bytes)) or value is None:
            continue
        try:
            if not math.isfinite(float(value)):
                keys.append(str(key))
        except (TypeError, ValueError, OverflowError):
            continue
    return keys


def encode_point(queued: QueuedPoint, meter: CostMeter | None = None, started: float | None = None,
                 nonfinite: set[str] | None = None) -> EncodedPoint:
    """Keep the numeric values of a point (numpy/torch scalars become floats; NaN/inf become null).

    The training thread enqueues (step, ts, seq, metrics) untouched: building the point here, on the
    background thread, keeps the log call to one tuple and one append (no dict growth on the hot path).
    A point of plain str -> int/float entries (the common case) is written by orjson in one C call; any
    other point takes the general path. Both give the same values. Keys whose value was nulled are added to
    `nonfinite` when given (the sender names them once in a warning).
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
    if nonfinite is not None and ":null" in body:  # only a NaN or an infinity becomes null in a body
        nonfinite.update(_nonfinite_keys(point))
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
        reopen: bool = False,
        no_spool_reason: str | None = None,
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
        self.notes: deque[QueuedNote] = deque()
        self.progress: tuple[int, int | None] | None = None
        # owned by the background threads
        self._flush_lock = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending: list[EncodedPoint] = []
        self._pending_notes: list[QueuedNote] = []
        self._sent_progress: tuple[int, int | None] | None = None
        self._spooled_progress: tuple[int, int | None] | None = None
        self._finish: dict[str, Any] | None = None
        self._done = threading.Event()
        self._wake = threading.Event()
        self._halt = threading.Event()
        self._failures = 0
        self._not_before = 0.0  # monotonic time before which the send thread does not try (backoff)
        self._retry_after_until = 0.0  # the same, set by a 429's Retry-After: honoured even at finish
        self._try_now = False  # finish asks the send thread for a prompt try; only the send thread clears it
        self._failing_since: float | None = None
        self._gave_up: str | None = None
        self._warned: set[str] = set()
        self._nulled_keys: set[str] = set()
        self._reopen = reopen  # a resumed run: ask the sink to reopen it before anything else is sent
        self._last_failure: str | None = None
        self._spool_failure: str | None = no_spool_reason
        self.delivered = 0  # points the sink acknowledged
        self.refused_points = 0  # points the sink refused because the run was already finished
        self.refused_notes = 0
        self._finished_elsewhere: str | None = None  # the sink's word that the run is finished, once it said so
        self.flushed_points = 0
        self.outcome: str | None = None  # the one line `finish` says when not everything landed
        self.opened = threading.Event()  # set once the sink has named the run (run() waits on it, bounded)
        if run_id is not None and not reopen:
            self.opened.set()
        if owed is not None:  # a resumed run or a restarted process: what the spool still owes goes first
            self._pending.extend((s, None, None, e) for s, e in sorted(owed.points.items()))
            self._pending_notes.extend((s, *note) for s, note in sorted(owed.notes.items()))
        self._threads = [threading.Thread(target=self._flush_loop, name="whileai-flush", daemon=True)]
        if not sink.durable:
            self._threads.append(threading.Thread(target=self._send_loop, name="whileai-send", daemon=True))

    def start(self) -> None:
        for t in self._threads:
            t.start()
        if not self.opened.is_set():
            self._wake.set()  # open the run now, not a flush interval from now

    # -- warnings (never exceptions) --------------------------------------------------------------------
    def _warn_once(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            logger.warning(redact(message, self._credential))

    # -- flush thread -----------------------------------------------------------------------------------
    def _flush_loop(self) -> None:
        while not self._halt.wait(self.config.flush_interval_s):
            self.flush(unless_halted=True)

    def flush(self, timeout: float = -1, *, unless_halted: bool = False) -> None:
        """Drain what the training thread queued; persist it (spool or durable sink). `timeout`: how long to wait
        for a flush under way to end (-1: as long as it takes); past it, nothing is flushed by this call.
        `unless_halted`: the flush thread's own flush, which does nothing once the sender is halted (a finish
        that halted it writes the last records itself; a write begun after that could land after its spill)."""
        if not self._flush_lock.acquire(timeout=timeout):
            return
        try:
            if unless_halted and self._halt.is_set():
                return
            self._flush_locked()
        except Exception as exc:  # noqa: BLE001  (never let the flush thread die silently)
            self._warn_once("flush", f"whileai: could not write run points ({type(exc).__name__}: {exc}); "
                                     "training goes on, points are kept in memory and retried")
        finally:
            self._flush_lock.release()

    def _flush_locked(self) -> None:
        drained: list[QueuedPoint] = []
        pop = self.points.popleft
        while True:
            try:
                drained.append(pop())
            except IndexError:
                break
        notes: list[QueuedNote] = []
        while True:
            try:
                notes.append(self.notes.popleft())
            except IndexError:
                break
        encoded: list[EncodedPoint] = []
        clock = time.perf_counter
        held_since = clock()
        nulled: set[str] = set()
        for i in range(0, len(drained), _CHECK_EVERY):
            if clock() - held_since > _HOLD_S:
                time.sleep(0)  # hand the GIL back: the training thread never waits behind a long flush
                held_since = clock()
            encoded.extend(encode_point(p, self.meter, self.started, nulled) for p in drained[i:i + _CHECK_EVERY])
        if nulled - self._nulled_keys:
            fresh = sorted(nulled - self._nulled_keys)
            self._nulled_keys |= nulled
            logger.warning("whileai: %s was NaN or infinite at least once; stored as null (JSON has no NaN). "
                           "Each key is named once", ", ".join(repr(k) for k in fresh))
        self.flushed_points += len(encoded)
        # the points are kept (in memory) before anything is written: a failed write never drops them
        with self._pending_lock:
            self._pending.extend(encoded)
            self._pending_notes.extend(notes)
        progress = self.progress
        if self.spool is not None:
            lines = [Spool.point_line(e[3]) for e in encoded]
            lines += [Spool.note_line(*note) for note in notes]
            if progress is not None and progress != self._spooled_progress:
                lines.append(Spool.progress_line(*progress))
                self._spooled_progress = progress
            self._spool_lines(lines)
        if self.sink.durable:
            self._deliver()
        elif encoded or notes:
            self._wake.set()

    def _spool_lines(self, lines: list[str]) -> None:
        """Write to the spool; a failure is one warning with its real cause, and the lines are retried."""
        if self.spool is None:
            return
        try:
            self.spool.write_lines(lines)
        except OSError as exc:
            self._spool_failure = os_cause(exc)
            self._warn_once("spool", f"whileai: cannot write the spool {self.spool.path}: {self._spool_failure}. "
                                     "Training goes on; the points are kept in memory and still sent to "
                                     f"{self.sink.where}, but until the spool can be written again they do "
                                     "not survive this process exiting")
            return
        if self._spool_failure is not None and "spool" in self._warned:
            logger.warning("whileai: the spool %s can be written again; it holds every point not yet sent",
                           self.spool.path)
            self._warned.discard("spool")
        self._spool_failure = None

    def _spool_record(self, record: dict[str, Any]) -> None:
        self._spool_lines([json.dumps(record, default=str)])

    # -- delivery (flush thread for durable sinks, send thread otherwise) -------------------------------
    def _deliver(self) -> float | None:
        """Send what is owed, oldest first. Returns the seconds to wait before the next try (None: idle)."""
        if self._gave_up or self._done.is_set():
            return None
        try:
            if self.run_id is None or self._reopen:
                self.run_id = self.sink.open_run(self.meta, self.client_id, resume=self._reopen)
                self._reopen = False
                self._spool_record({"t": "remote", "run_id": self.run_id})
                self.opened.set()
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
                    self._spool_record({"t": "acked", "through": batch[-1][0]})
                while self._pending_notes:
                    seq, md, ts, alarm = self._pending_notes[0]
                    try:
                        self.sink.send_note(self.run_id, seq, md, ts, alarm)
                    except SendError as exc:
                        if exc.retryable or isinstance(exc, RunAlreadyFinished):
                            raise
                        # a server without the notes (or completions) route must not stop the points: drop, say so
                        kept = batch_of_note(md)
                        if kept is None:
                            self._warn_once("notes", f"whileai: {self.sink.where} does not take run notes ({exc}); "
                                                     "notes are dropped, points and finish still go")
                        else:
                            self._warn_once("completions", f"whileai: {self.sink.where} does not take holdout "
                                            f"completions ({exc}); the {len(kept['rows'])} of step {kept.get('step')} "
                                            "and every later batch are dropped, points, notes and finish still go")
                    with self._pending_lock:
                        self._pending_notes.pop(0)
                    self._spool_record({"t": "note_acked", "seq": seq})
                progress = self.progress
                if progress is not None and progress != self._sent_progress:
                    self.sink.set_progress(self.run_id, *progress)
                    self._sent_progress = progress
                if self._finish is not None and not self._done.is_set():
                    with self._pending_lock:
                        owed = bool(self._pending or self._pending_notes)
                    if owed:
                        continue  # a flush landed after the points were sent: send it before the finish
                    summary = self._finish["summary"]
                    if isinstance(summary, dict) and "points" in summary:
                        summary = {**summary, "points": self.delivered}  # what landed, not what was logged
                    self.sink.finish(self.run_id, self._finish["status"], summary, self._finish["error"])
                    self._spool_record({"t": "finished"})
                    self._done.set()
                break
        except RunAlreadyFinished as exc:
            self._already_finished(exc)
            return None
        except SendError as exc:
            return self._failed(exc)
        except Exception as exc:  # noqa: BLE001  (a sink bug or a disk error: warn, keep the points, try again later)
            return self._failed(SendError(f"{type(exc).__name__}: {exc}"))
        if self._failing_since is not None:
            logger.warning("whileai: %s answers again after %.0f s; the points kept meanwhile are sent",
                           self.sink.where, time.time() - self._failing_since)
            self._failing_since = None
            self._warned -= {"unreachable", "redirect", "not-api", "partial"}
        self._failures = 0
        return None

    def _already_finished(self, exc: RunAlreadyFinished) -> None:
        """The sink says the run is finished: final. What is still owed is not stored there, ever; say how much."""
        points, notes = self._drop_owed()
        self._finished_elsewhere = str(exc)
        self._spool_record({"t": "finished"})
        self._done.set()
        if self._finish is None:
            self._warn_once("finished", f"whileai: {self.sink.where} says run {self.run_id} is already finished "
                                        f"({exc}); a finished run is final: the {points} points and {notes} notes "
                                        "owed now, and any logged later, are not stored there")

    def _drop_owed(self) -> tuple[int, int]:
        with self._pending_lock:
            points, notes = len(self._pending), len(self._pending_notes)
            self._pending.clear()
            self._pending_notes.clear()
        self.refused_points += points
        self.refused_notes += notes
        return points, notes

    def _failed(self, exc: SendError) -> float | None:
        where = self.sink.where
        self._last_failure = str(exc)
        if not exc.retryable:
            self._gave_up = str(exc)
            self._warn_once("gave-up", f"whileai: {where} refused the run ({exc}); training goes on, points stay in "
                                       f"{self._kept_where()}; fix the cause, then run `whileai-train sync`")
            return None
        self._failures += 1
        if self._failing_since is None:
            self._failing_since = time.time()
        kept = self._kept_where()
        if exc.kind in ("redirect", "not-api", "partial"):
            self._warn_once(exc.kind, f"whileai: {exc}. Training goes on; points are kept in {kept} and re-sent")
        else:
            self._warn_once("unreachable", f"whileai: could not send to {where} ({exc}); training goes on, points "
                                           f"are kept in {kept} and re-sent when it is back")
        if exc.retry_after is not None:
            wait = min(exc.retry_after, self.config.retry_after_max_s)
            self._retry_after_until = time.monotonic() + wait
            return wait
        delay = min(self.config.backoff_max_s, self.config.backoff_base_s * 2 ** (self._failures - 1))
        return delay * random.uniform(0.5, 1.5)

    def _kept_where(self) -> str:
        if self.sink.durable:
            return "memory (written to the store when it can be)"
        if self.spool is not None and self._spool_failure is None:
            return str(self.spool.path)
        return "memory only (lost if this process exits first)"

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
                if self._try_now:  # read here, after a send in flight has set its backoff, so none overrides it
                    self._try_now = False
                    self._failures = 0  # the end of the run deserves a prompt try (but a 429 is still honoured)
                    self._not_before = self._retry_after_until
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
    def _owed_counts(self) -> tuple[int, int]:
        with self._pending_lock:
            return len(self._pending), len(self._pending_notes)

    def drain(self, wait_s: float) -> int:
        """Persist what is queued and wait at most `wait_s` for the sink to take it (a prompt try, as at finish).
        Returns the points still owed: 0 when the sink holds every point logged so far."""
        deadline = time.monotonic() + max(0.0, wait_s)
        # bounded: a signal handler may call this while its own thread is inside a flush (the lock is not
        # re-entrant); a durable sink is written by the flush itself, under that lock
        self.flush(timeout=max(0.0, wait_s))
        if self.sink.durable:
            return len(self._pending) + len(self.points)
        self._failures = 0
        self._not_before = self._retry_after_until  # a 429's Retry-After still holds
        self._wake.set()
        while True:
            # lengths read without the lock (each read is atomic): a signal handler may run this while its own
            # thread holds the lock in a delivery
            points, notes = len(self._pending), len(self._pending_notes)
            if not (points or notes) or self._gave_up or self._done.is_set() or time.monotonic() >= deadline:
                return points + len(self.points)
            time.sleep(_DRAIN_POLL_S)

    def halt(self) -> None:
        """Stop both threads without a finish: the run stays open at its sink for another process to continue
        (an interrupted attempt). What is not delivered stays in the spool file, which is left as it is (its
        descriptor closes with the process; closing it here could wait on a write the interrupted thread holds)."""
        self._halt.set()
        self._wake.set()

    def finish(self, status: str, summary: dict[str, Any] | None, error: str | None,
               wait_s: float | None = None) -> bool:
        """Flush, send the finish record, wait at most `wait_s`; True when everything landed (or the sink
        said the run was already finished). Otherwise `outcome` says where the rest is, or how much is lost."""
        wait = self.config.finish_wait_s if wait_s is None else wait_s
        self.flush()
        if summary is not None:
            summary, nulled = nulled_nonfinite(summary)
            if nulled:
                logger.warning("whileai: the summary's %s was NaN or infinite; sent as null (JSON has no NaN)",
                               ", ".join(repr(k) for k in nulled))
        self._finish = {"status": status, "summary": summary, "error": error}
        self._spool_record({"t": "finish", **self._finish})
        if self.sink.durable:
            self._halt.set()  # the flush thread starts no write after this: the finish's is the run's last
            if self._flush_lock.acquire(timeout=wait):
                try:
                    self._deliver()
                finally:
                    self._flush_lock.release()
        else:
            self._try_now = True
            self._wake.set()
            self._done.wait(wait)
        self._halt.set()
        self._wake.set()
        done = self._done.is_set()
        if done:
            if self.spool is not None:
                self.spool.remove()
            if self._finished_elsewhere is not None:
                self._drop_owed()  # logged after the sink said the run was finished
                self.outcome = (f"{self.sink.where} already held the run as finished ({self._finished_elsewhere}), "
                                f"so a finished run being final, {self.refused_points} points and "
                                f"{self.refused_notes} notes sent after that were not stored, and this finish "
                                "was not recorded")
            return True
        self.outcome = self._spill() if self.sink.durable else self._left_in_spool()
        return False

    def _left_in_spool(self) -> str:
        """What a platform run leaves behind at finish, said as it is."""
        points, notes = self._owed_counts()
        owed = f"{points} points and {notes} notes" if notes else f"{points} points"
        why = f" ({self._last_failure})" if self._last_failure else ""
        if self.spool is not None:
            unwritten = self.spool.unwritten
            lost_seqs, finish_lost = self.spool.unwritten_records()
            self.spool.close()
            if unwritten == 0:
                return (f"{owed} not yet at {self.sink.where}{why} are kept in {self.spool.path}; "
                        "run `whileai-train sync` to send them")
            with self._pending_lock:
                lost = sum(1 for e in self._pending if e[0] in lost_seqs)
            end = " and the finish record" if finish_lost else ""
            return (f"{owed} not yet at {self.sink.where}{why}; the spool {self.spool.path} could not be written "
                    f"({self._spool_failure}): {lost} of the {points} points{end} are lost when this process "
                    f"exits, the other {points - lost} are kept there; run `whileai-train sync` to send them")
        return (f"{owed} not yet at {self.sink.where}{why} are lost when this process exits: there is no spool "
                f"({self._spool_failure or 'none was opened'})")

    def _spill(self) -> str:
        """A durable sink (the local store) could not take the last records: write them to a spool file that
        `whileai-train sync` writes to the store later; if that fails too, say plainly what is lost."""
        with self._pending_lock:
            points, notes = list(self._pending), list(self._pending_notes)
        owed = f"{len(points)} points and {len(notes)} notes" if notes else f"{len(points)} points"
        why = self._last_failure or "it did not answer within the finish wait"
        path = spool_path(self.client_id)
        lines = [json.dumps(Spool.open_record(self.client_id, "", self.meta, store=self.sink.where))]
        if self.run_id is not None:
            lines.append(json.dumps({"t": "remote", "run_id": self.run_id}))
        lines += [Spool.point_line(e[3]) for e in points]
        lines += [Spool.note_line(*note) for note in notes]
        if self.progress is not None:
            lines.append(Spool.progress_line(*self.progress))
        lines.append(json.dumps({"t": "finish", **(self._finish or {})}, default=str))
        try:
            spool = Spool(path)
            try:
                spool.write_lines(lines)
            finally:
                spool.close()
        except OSError as exc:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)  # a half-written spill would be read as the whole truth
            return (f"{self.sink.where} could not take the last records ({why}) and neither could the spool "
                    f"{path} ({os_cause(exc)}): {owed} and the finish are lost")
        return (f"{self.sink.where} could not take the last records ({why}); {owed} and the finish are kept "
                f"in {path}; run `whileai-train sync` to write them to the store")
