"""A training run: log points, progress and notes from any loop; finish with a status and a summary.

    with wai.run(name="sft-v2", total_steps=200) as run:       # "failed" with the error if the body raises
        for step in range(1, 201):
            run.log(step, loss=loss, lr=lr)                     # enqueue only: microseconds, no I/O; moves the step
    print(run)                                                  # run sft-v2 (c-...): done at step 200/200, ...

Where the run goes is decided once, at open, and said in one printed line: with a key (api_key=, then
WHILEAI_DELEGATED_CREDENTIAL, WHILEAI_API_KEY, then $WHILEAI_HOME/credentials.json) the platform's HTTP API
at WHILEAI_API_URL; without one the local SQLite store at $WHILEAI_HOME/runs.db (~/.whileai by default).
Under a distributed launcher only global rank 0 writes: other ranks get a run that records nothing.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import operator
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from whileai_train.alarm_event import AlarmEvent
from whileai_train.errors import ConfigError, RunError
from whileai_train.runs.config import SenderConfig, api_url, run_mode
from whileai_train.runs.cost import CostMeter
from whileai_train.runs.credentials import Credential, redact, resolve_credential
from whileai_train.runs.defaults import STORE_BUSY_TIMEOUT_S
from whileai_train.runs.open_runs import closed, install_exit_hooks, opened
from whileai_train.runs.run_ids import new_run_id, this_process
from whileai_train.runs.sender import Sender, os_cause
from whileai_train.runs.sinks import HttpSink, LocalSink, MemorySink, Sink
from whileai_train.runs.spool import Spool, SpoolState, read_spool, spool_path
from whileai_train.runs.store import LocalStore

__all__ = ["Run", "run"]

logger = logging.getLogger("whileai_train.runs")

FINISH_STATUSES = ("done", "failed", "stopped")


class Run:
    """One run. `log`, `progress` and `note` only enqueue; `finish` flushes with a bounded wait."""

    nowhere = "not global rank 0"  # why a run without a sender records nothing (or WHILEAI_MODE=disabled)

    def __init__(self, *, name: str, sender: Sender | None, meter: CostMeter, seq_start: int = 0,
                 credential: Credential | None = None, started: float | None = None,
                 memory_only: str | None = None, note_start: int | None = None) -> None:
        self.name = name
        self.status = "running" if sender is not None else "disabled"
        self.summary: dict[str, Any] | None = None
        self.error: str | None = None
        self.meter = meter
        self.started = started if started is not None else time.time()
        self.ended: float | None = None
        self._sender = sender
        self._seq = itertools.count(seq_start)
        self._seq_start = seq_start
        self._note_seq = itertools.count(seq_start if note_start is None else note_start)
        self._credential = credential
        self._warned_closed = False
        self._warned_bad_values = False
        self._finish_lock = threading.Lock()
        self._memory_only = memory_only  # why the run is held in memory only (no usable store), or None
        if sender is not None:
            opened(self)

    # -- identity -------------------------------------------------------------------------------------
    @property
    def id(self) -> str | None:
        """The run id (the platform's once it has answered; before that the client id)."""
        if self._sender is None:
            return None
        return self._sender.run_id or self._sender.client_id

    @property
    def client_id(self) -> str | None:
        return self._sender.client_id if self._sender is not None else None

    @property
    def sink(self) -> str:
        """'platform', 'local', 'memory' or 'disabled' (a non-zero rank, or WHILEAI_MODE=disabled)."""
        return self._sender.sink.kind if self._sender is not None else "disabled"

    @property
    def where(self) -> str:
        return self._sender.sink.where if self._sender is not None else f"nowhere ({self.nowhere})"

    @property
    def logged(self) -> int:
        """How many points this process logged to the run."""
        if self._sender is None:
            return 0
        return self._sender.flushed_points + len(self._sender.points)

    @property
    def seconds(self) -> float:
        return (self.ended or time.time()) - self.started

    @property
    def step(self) -> int | None:
        """The step the run is at: the highest step logged, or the last `progress` (None before either)."""
        progress = self._sender.progress if self._sender is not None else None
        return progress[0] if progress is not None else None

    @property
    def total_steps(self) -> int | None:
        progress = self._sender.progress if self._sender is not None else None
        return progress[1] if progress is not None else None

    def _steps_text(self) -> str:
        step, total = self.step, self.total_steps
        if step is None:
            return "no step yet" if total is None else f"step 0/{total}"
        return f"step {step}/{total}" if total is not None else f"step {step}"

    def __repr__(self) -> str:
        steps = self._steps_text().removeprefix("step ")
        return (f"Run(id={self.id!r}, name={self.name!r}, status={self.status!r}, step={steps!r}, "
                f"sink={self.sink!r})")

    def __str__(self) -> str:
        """'run sft-v2 (c-1f...): done at step 200/200, to the local store /home/me/.whileai/runs.db; no cost
        estimate (cpu, 9 s)'."""
        if self._sender is None:
            return f"run {self.name}: not recorded here ({self.nowhere})"
        return (f"run {self.name} ({self.id}): {self.status} at {self._steps_text()}, to {self._where_text()}; "
                f"{self.meter.line(self.seconds)}")

    def _where_text(self) -> str:
        kind = self.sink
        if kind == "local":
            return f"the local store {self.where}"
        if kind == "platform":
            return f"the platform {self.where}"
        return self.where

    # -- the training thread's calls: enqueue only ----------------------------------------------------
    def log(self, step: int, values: Mapping[str, Any] | None = None, /, **metrics: Any) -> None:
        """Record one point at `step`: `run.log(step, loss=0.4)` or `run.log(step, {"loss": 0.4})`.

        Numeric values are kept (others dropped on the background thread); "ts" and "seq" are reserved (the
        time and the point's sequence number). A mapping is copied (the caller may reuse it); keywords are
        added to it. Passing a mapping is the cheaper form for many metrics: Python's own packing of 40
        keyword arguments costs more than the rest of this call.
        """
        if values is None:
            self.log_owned(step, metrics)
            return
        try:
            point = dict(values)
        except (TypeError, ValueError):  # a log call never raises into training: say so once, drop it
            self._warn_once_bad_values(values)
            return
        if metrics:
            point.update(metrics)
        self.log_owned(step, point)

    def log_owned(self, step: Any, point: dict[str, Any]) -> None:
        """`log` for a dict the caller hands over and never touches again (WhileCallback's copy of the
        trainer's logs): no copy is made. It is enqueued untouched (adding keys to it would grow the dict on
        the training thread); the sender builds the stored point, with "ts" and "seq" reserved."""
        sender = self._sender
        if sender is None:
            return
        if self.status != "running":
            self._closed_warning()
            return
        sender.points.append((step, time.time(), next(self._seq), point))
        # the run is at the highest step logged (the progress bar of any loop, not only a trainer's)
        progress = sender.progress
        if step.__class__ is not int:
            try:
                step = operator.index(step)  # a numpy integer
            except TypeError:
                return
        if progress is None:
            sender.progress = (step, None)
        elif step > progress[0]:
            sender.progress = (step, progress[1])

    def progress(self, step: int, total: int | None = None) -> None:
        """Where training is: `step` of `total` (the progress bar)."""
        if self._sender is not None and self.status == "running":
            self._sender.progress = (int(step), int(total) if total is not None else None)

    def note(self, markdown: str) -> None:
        """Attach a markdown note to the run (what changed, why it was stopped)."""
        if self._sender is None:
            return
        if self.status != "running":
            self._closed_warning()
            return
        self._sender.notes.append((next(self._note_seq), str(markdown), time.time(), None))

    def alarm(self, event: AlarmEvent) -> None:
        """Put an alarm on the run: the point alarm/<name> = 1 at its step (its curve) and the note that shows it,
        which carries the event itself to the sink (the store's alarms, the platform's)."""
        if self._sender is None:
            return
        if self.status != "running":
            self._closed_warning()
            return
        self.log(event.step, {f"alarm/{event.name}": 1.0})
        self._sender.notes.append((next(self._note_seq), event.note_markdown, time.time(), event))

    def _warn_once_bad_values(self, values: object) -> None:
        if not self._warned_bad_values:
            self._warned_bad_values = True
            logger.warning("whileai: run.log(step, values) takes a mapping of metric names to numbers, got %s; "
                           "those points are dropped (pass run.log(step, loss=...) or a dict)", type(values).__name__)

    def _closed_warning(self) -> None:
        if not self._warned_closed:
            self._warned_closed = True
            logger.warning("whileai: run %s is already %s; later log/note calls are dropped", self.id, self.status)

    # -- the end --------------------------------------------------------------------------------------
    def finish(self, status: str = "done", summary: dict[str, Any] | None = None, error: str | None = None,
               *, wait_s: float | None = None) -> None:
        """End the run: "done", "failed" (with `error`) or "stopped". Flushes for at most `wait_s`
        (default 10 s); what could not be sent stays in the spool, said in one line. Never raises for I/O."""
        if status not in FINISH_STATUSES:
            raise ConfigError(f"status {status!r} is not one of done, failed, stopped. Fix: pass one of those.")
        with self._finish_lock:
            if self._sender is None or self.status != "running":
                return
            self.status = status
            self.ended = time.time()
            self.error = redact(error, self._credential) if error else None
            full = dict(self.meter.summary(self.seconds))
            self._sender.flush()
            full["points"] = self.logged
            if summary:
                full.update(summary)
            full.update(self._measured or {})  # run.holdout / run.delta called while running
            self.summary = full
            closed(self)
            try:
                landed = self._sender.finish(status, full, self.error, wait_s)
            except Exception as exc:  # noqa: BLE001  (the finish of a log must not end a training script)
                logger.warning("whileai: finishing run %s failed (%s)", self.id, redact(repr(exc), self._credential))
                return
            if self._sender.outcome is not None:  # not everything landed, or the sink refused some: say so
                print(f"whileai: run {self.id} finished {status}; {self._sender.outcome}", flush=True)
            elif landed and self._memory_only is not None:
                print(f"whileai: run {self.id} finished {status}; its {self.logged} points were held in memory "
                      f"only ({self._memory_only}) and are gone when this process exits", flush=True)

    def finish_at_exit(self, error: str) -> None:
        """The interpreter is exiting with this run open: finish it "failed" with `error`, waiting briefly."""
        self.finish("failed", error=error, wait_s=min(2.0, self._sender.config.finish_wait_s) if self._sender else 0.0)

    def __enter__(self) -> Run:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            self.finish("done")
        else:
            self.finish("failed", error=f"{type(exc).__name__}: {exc}")

    def state(self) -> dict[str, Any]:
        """What a checkpoint needs to continue this run after a resume (no key in it).

        It reserves the next point and note sequence numbers: the points logged after this state carry the
        same numbers whichever attempt logs them, this one or one resumed from the checkpoint, so a step that
        a preempted attempt already delivered is stored once (sinks keep the first point of a sequence number).
        """
        s = self._sender
        if s is None:
            return {}
        return {"run_id": s.run_id, "client_id": s.client_id, "sink": s.sink.kind, "where": s.sink.where,
                "name": self.name, "started": self.started,
                "next_seq": next(self._seq) + 1, "next_note_seq": next(self._note_seq) + 1}

    def flush(self, wait_s: float | None = None) -> int:
        """Send what is logged so far and wait at most `wait_s` (default: the finish wait) for the sink to hold
        it; returns the points it does not hold yet (0: all there). It waits on the network, so call it where
        training pauses anyway (WhileCallback calls it at each checkpoint), never per step."""
        sender = self._sender
        if sender is None or self.status != "running":
            return 0
        return sender.drain(sender.config.finish_wait_s if wait_s is None else wait_s)

    def interrupt(self, reason: str, *, wait_s: float | None = None) -> None:
        """This process is going away but the run is not over: an attempt preempted (SIGTERM, a spot
        reclaim, Modal's SIGINT) that resumes from its last checkpoint. Flushes for at most `wait_s`, notes
        the reason, and leaves the run open ("running") at its sink for the resumed attempt to continue;
        this handle logs nothing more. Never raises for I/O."""
        if not self._finish_lock.acquire(blocking=False):  # a finish is under way (a signal landed in it)
            return
        try:
            sender = self._sender
            if sender is None or self.status != "running":
                return
            # a sequence number of its own (the time, past any counter): the resumed attempt numbers its
            # notes from the checkpoint, and a note this attempt wrote after it must not take their place
            sender.notes.append((int(time.time() * 1e6), f"Attempt interrupted ({reason}); the run goes on when "
                                 "training resumes from its last checkpoint", time.time(), None))
            self.status = "interrupted"
            closed(self)
            try:
                owed = sender.drain(sender.config.finish_wait_s if wait_s is None else wait_s)
                if isinstance(sender.sink, LocalSink) and sender.run_id is not None:
                    sender.sink.store.reopen(sender.run_id, owner=None)  # not an orphan of this process
            except Exception as exc:  # noqa: BLE001  (an interrupted process must still go down)
                owed = -1
                logger.warning("whileai: flushing run %s at the interrupt failed (%s)", self.id,
                               redact(repr(exc), self._credential))
            sender.halt()
            kept = ""
            if sender.spool is not None and owed == 0:  # nothing owed: no spool for `sync` to finish "failed"
                with contextlib.suppress(OSError):
                    sender.spool.path.unlink(missing_ok=True)
            elif sender.spool is not None and owed > 0:
                kept = (f"; {owed} points not yet there wait in {sender.spool.path} for the resumed attempt on "
                        "this machine to send (`whileai-train sync` would send them and finish the run)")
            print(f"whileai: run {self.id} interrupted ({reason}); left open at {self.where} for the attempt that "
                  f"resumes from the checkpoint{kept}", flush=True)
        finally:
            self._finish_lock.release()

    def add_context(self, patch: Mapping[str, Any]) -> None:
        """Merge `patch` (runs/context.py: {"context": {...}, "project", ...}) into the run's context, kept in its
        summary (at once in the local store, with the finish summary on the platform). Never raises for I/O."""
        from whileai_train.runs.context import plain_json
        from whileai_train.runs.verdicts import keep_on_run

        if self._sender is None:
            return
        patch = plain_json(dict(patch))  # a set in a PEFT config, a dtype: plain JSON, or the store refuses it
        merged = {**((self._measured or {}).get("context") or {}), **(patch.get("context") or {})}
        keep_on_run(self, {**patch, "context": merged})

    # -- after training: the held-out measurement kept on the run (runs/verdicts.py) --------------------
    holdout_summary: dict[str, Any] | None = None  # summary["holdout"] once run.holdout / run.delta is called
    _measured: dict[str, Any] | None = None        # what they add to the finish summary

    def holdout(self, before: Any, after: Any, *, metric: str = "pass_rate", **delta_options: Any) -> dict[str, Any]:
        """summary["holdout"] from two pass rates (0 to 1; metric="loss": two held-out losses) or two row lists
        (measured with delta_report). Kept on the run's record and its finish summary; returns the block."""
        from whileai_train.runs.verdicts import holdout_summary, keep_on_run

        block, report = holdout_summary(before, after, metric=metric, **delta_options)  # type: ignore[arg-type]
        patch: dict[str, Any] = {"holdout": block}
        if report is not None:
            patch["delta"] = report.model_dump(mode="json")
        keep_on_run(self, patch)
        return block

    def refresh(self) -> dict[str, Any]:
        """Read this run's record back from where it went and update `summary` and `holdout_summary` from it
        (a hosted run's two bare numbers come back as the holdout block, its interval fields None, with a note).
        Returns the record (status, summary, ...)."""
        from whileai_train.runs.verdicts import refresh_run

        return refresh_run(self)

    def delta(self, report: Any, after: Any = None, **delta_options: Any) -> dict[str, Any]:
        """Keep a delta report on the run: `run.delta(report)` or `run.delta(before_rows, after_rows, ...)`.
        Adds summary["holdout"] and summary["delta"]; returns the holdout block."""
        from whileai_train.runs.verdicts import delta_patch, keep_on_run

        patch = delta_patch(report, after, **delta_options)
        keep_on_run(self, patch)
        return dict(patch["holdout"])


def _rank() -> int:
    for name in ("RANK", "SLURM_PROCID"):
        value = os.environ.get(name)
        if value and value.lstrip("-").isdigit():
            return int(value)
    return 0


def run(
    name: str | None = None,
    dataset_id: str | None = None,
    base_model: str | None = None,
    total_steps: int | None = None,
    api_key: str | None = None,
    url: str | None = None,
    rate: float | None = None,
    *,
    config: SenderConfig | None = None,
    sink: Sink | None = None,
    resume: dict[str, Any] | None = None,
    gpu: str | None = None,
    gpu_count: int | None = None,
    project: str | None = None,
    group: str | None = None,
    tags: list[str] | None = None,
) -> Run:
    """Open a run and say where it goes in one printed line.

    Args:
        name: shown on the run page; defaults to "run-<time>".
        dataset_id, base_model, total_steps: recorded with the run (total_steps drives the progress bar).
        api_key: the platform key (else WHILEAI_DELEGATED_CREDENTIAL, WHILEAI_API_KEY, credentials.json);
            without any key the run goes to the local store.
        url: the platform API (else WHILEAI_API_URL).
        rate: USD per GPU-hour, for a GPU not in GPU_USD_PER_HOUR or a price of your own.
        config: sender timings (SenderConfig); sink: a sink of your own (MemorySink in tests);
        resume: `Run.state()` saved with a checkpoint: continue that run.
        project, group, tags: kept in the run's context (summary["context"]; runs/context.py), and
            `wai.list_runs(tag=)` filters on the tags.

    WHILEAI_MODE=offline sends to the local store even with a key; WHILEAI_MODE=disabled returns a Run that
    records nothing, opens no store and writes no file (runs/config.py).
    """
    if total_steps is not None and int(total_steps) < 0:
        raise ConfigError(f"total_steps={total_steps} is negative. Fix: pass the number of optimizer steps.")
    if rate is not None and not (float(rate) >= 0):
        raise ConfigError(f"rate={rate} must be >= 0 USD per GPU-hour. Fix: pass e.g. rate=1.10.")
    from whileai_train.runs.context import context_patch

    context = context_patch(project, group, tags)  # a mistake in them raises here, with the fix
    config = config or SenderConfig.from_env()
    meter = CostMeter.for_job(rate=rate, gpu=gpu, gpu_count=gpu_count)
    run_name = (resume or {}).get("name") or name or time.strftime("run-%Y%m%d-%H%M%S")
    if _rank() != 0:
        return Run(name=run_name, sender=None, meter=meter)
    mode = run_mode() if sink is None else "online"
    if mode == "disabled":  # no store, no spool, no file: every call on the handle is a no-op
        handle = Run(name=run_name, sender=None, meter=meter)
        handle.nowhere = "WHILEAI_MODE=disabled"
        print(f"whileai: run {run_name!r} is not recorded (WHILEAI_MODE=disabled)", flush=True)
        return handle
    meta = {"name": run_name, "dataset_id": dataset_id, "base_model": base_model,
            "total_steps": int(total_steps) if total_steps is not None else None}
    credential = _credential_or_none(api_key) if sink is None and mode == "online" else None
    started = float((resume or {}).get("started") or time.time())
    # the client's id has a run id's shape, so a store (the local one, or `whileai-train serve`) keeps it as the
    # run's id: the id printed below is the one `show` and the page use, also after a `sync`
    client_id = (resume or {}).get("client_id") or new_run_id()
    run_id: str | None = (resume or {}).get("run_id")
    seq_start, note_start = _numbers_to_start_from(resume)
    to = _destination(sink, credential, url, config, client_id, run_id, meta, resumed=bool(resume))
    sink, run_id = to.sink, to.run_id
    sender = Sender(sink, client_id=client_id, run_id=run_id, meta=meta, config=config, meter=meter,
                    started=started, spool=to.spool, owed=to.owed, credential=credential, reopen=to.reopen,
                    no_spool_reason=to.no_spool)
    handle = Run(name=run_name, sender=sender, meter=meter, seq_start=seq_start, credential=credential,
                 started=started, memory_only=to.memory_only, note_start=note_start)
    if total_steps is not None:
        handle.progress(0, int(total_steps))
    if mode == "offline":
        context["context"]["offline"] = True  # `whileai-train sync` sends it to the platform later (offline_sync.py)
    handle.add_context(context)
    sender.start()
    if not sink.durable and not sender.opened.wait(config.open_timeout_s):
        # the send thread goes on opening it; points logged meanwhile wait in the queue and the spool
        logger.info("whileai: %s has not named the run within %.0f s; it is opened in the background",
                    sink.where, config.open_timeout_s)
    print(_where_line(handle, sink, credential, mode, resumed=bool(resume)), flush=True)
    install_exit_hooks()
    return handle


def _numbers_to_start_from(resume: dict[str, Any] | None) -> tuple[int, int]:
    """The first point and note numbers. A resumed run numbers its points from where the checkpoint's state left
    off (the same numbers the first attempt gave the steps after it, so those are stored once); a state without
    that number starts past anything the first attempt could have sent."""
    seq_start = int(time.time() * 1e6) if resume else 0
    if resume and isinstance(resume.get("next_seq"), int):
        seq_start = int(resume["next_seq"])
    note_start = int(resume["next_note_seq"]) if resume and isinstance(resume.get("next_note_seq"), int) \
        else seq_start
    return seq_start, note_start


@dataclass
class Destination:
    """Where a run's points go: the sink, with the platform's spool (and what it still owes) or why there is
    none, why the run is held in memory only, the run's id once a store gave one, and whether the sender must
    reopen it first."""

    sink: Sink
    run_id: str | None
    spool: Spool | None = None
    owed: SpoolState | None = None
    no_spool: str | None = None
    memory_only: str | None = None
    reopen: bool = False


def _destination(sink: Sink | None, credential: Credential | None, url: str | None, config: SenderConfig,
                 client_id: str, run_id: str | None, meta: dict[str, Any], *, resumed: bool) -> Destination:
    """The platform (with its spool) when there is a key, else the local store, else memory; a durable sink
    opens the run now (a failing one leaves it to the sender)."""
    if sink is None and credential is not None:
        base = api_url(url)
        http = HttpSink(base, credential, connect_timeout_s=config.connect_timeout_s,
                        read_timeout_s=config.read_timeout_s, deadline_s=config.request_deadline_s)
        spool, owed, no_spool = _open_spool(client_id, base, meta)
        run_id = run_id or (owed.remote_id if owed is not None else None)
        to = Destination(http, run_id, spool, owed, no_spool,
                         reopen=resumed and run_id is not None)  # a resumed run may have been finished: reopen it
        if to.reopen and spool is not None:
            _spool_write(spool, {"t": "reopen"})
    elif sink is None:
        try:
            to = Destination(LocalSink(LocalStore(busy_timeout_s=min(STORE_BUSY_TIMEOUT_S, config.finish_wait_s))),
                             run_id)
        except RunError as exc:  # a corrupt runs.db, a read-only home: keep the run in memory, say so once
            logger.warning("whileai: the local store cannot be used: %s. This run is held in memory only and is "
                           "gone when the process exits", exc)
            to = Destination(MemorySink(durable=True), run_id, memory_only=str(exc))
    else:
        to = Destination(sink, run_id)
    if to.sink.durable:
        try:
            if to.run_id is not None and isinstance(to.sink, LocalSink) and to.sink.store.has_run(to.run_id):
                to.sink.store.reopen(to.run_id, owner=this_process())
            else:
                to.run_id = to.sink.open_run(meta, client_id)
        except Exception as exc:  # noqa: BLE001  (a locked or failing store: the sender opens it when it can)
            to.reopen = to.run_id is not None
            logger.warning("whileai: could not open the run in %s (%s: %s); training goes on, the run is opened "
                           "when the store answers", to.sink.where, type(exc).__name__, exc)
    return to


def _where_line(handle: Run, sink: Sink, credential: Credential | None, mode: str, *, resumed: bool) -> str:
    """The one line that says where the run goes (printed: the user asked for a run)."""
    verb = "continues" if resumed else "goes to"
    if sink.kind == "platform" and credential is not None:
        return f"whileai: run {handle.name!r} ({handle.id}) {verb} {sink.where} (key from {credential.source})"
    if sink.kind == "local":
        why = "WHILEAI_MODE=offline" if mode == "offline" else "no platform key"
        return (f"whileai: run {handle.name!r} ({handle.id}) {verb} the local store {sink.where} ({why}; "
                f"`whileai-train show {handle.id}`)")
    return f"whileai: run {handle.name!r} ({handle.id}) {verb} {sink.where}"


def _credential_or_none(api_key: str | None) -> Credential | None:
    """The platform key. A bad `api_key=` argument raises (a mistake in code); a bad key from the environment
    or credentials.json is one warning, and the run goes to the local store."""
    if api_key is not None:
        return resolve_credential(api_key)
    try:
        return resolve_credential(None)
    except RunError as exc:
        logger.warning("whileai: %s This run goes to the local store instead", exc)
        return None


def _spool_write(spool: Spool, record: dict[str, Any]) -> None:
    try:
        spool.write(record)
    except OSError:
        pass  # kept in the spool's backlog and written with its next write; the sender says why if it persists


def _open_spool(client_id: str, base: str, meta: dict[str, Any]) -> tuple[Spool | None, SpoolState | None, str | None]:
    """This run's spool, what an earlier process left in it, and why there is no spool (or None).

    Never raises: a spool that cannot be read or written costs durability across an exit, not the run."""
    path = spool_path(client_id)
    owed: SpoolState | None = None
    try:
        if path.exists():
            owed = read_spool(path)
            if owed.bad_lines:
                logger.warning("whileai: the spool %s has %s; the rest of it is sent", path, owed.bad_lines_text())
    except OSError as exc:
        logger.warning("whileai: cannot read the spool %s (%s); what it holds stays there for `whileai-train sync`",
                       path, os_cause(exc))
        owed = None
    try:
        spool = Spool(path)
    except OSError as exc:
        reason = f"{path} cannot be created: {os_cause(exc)}"
        logger.warning("whileai: %s. The run still goes to %s; points not yet sent are held in memory only, lost "
                       "if the process exits first. Fix: make %s writable or set WHILEAI_HOME to a writable folder",
                       reason, base, path.parent)
        return None, owed, reason
    if owed is None or not owed.client_id:
        _spool_write(spool, Spool.open_record(client_id, base, meta))
    return spool, owed, None
