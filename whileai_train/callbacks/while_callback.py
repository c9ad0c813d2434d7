"""WhileCallback: stream a transformers/TRL training run's loss, progress and GPU cost into a Run.

    trainer = SFTTrainer(..., callbacks=[wai.WhileCallback(name="sft-v2")])
    with wai.track(trainer):          # a crash inside train() finishes the run "failed" with the error
        trainer.train()

What it does, event by event (transformers 5.24 calls callbacks with args, state, control, **kwargs):
- on_train_begin: opens the run on global rank 0 only (total_steps = state.max_steps), or continues the
  run saved in the checkpoint when training resumes (`state()` below rides in trainer_state.json);
- on_step_end: progress (step of max_steps);
- on_log: every numeric key transformers and TRL log, under their own names (loss, grad_norm, reward,
  reward_std, rewards/<fn>/mean, kl, entropy, completions/mean_length, clip_ratio/..., frac_reward_zero_std,
  eval_*), with learning_rate shortened to lr; the end-of-training totals (train_runtime, train_loss, ...)
  go to the summary instead; where CUDA is, the latest GPU reading rides along (system/gpu_*, gpu_metrics.py);
- on_save: sends what was logged up to the checkpoint (bounded wait), so a preempted machine loses none of it;
- on_train_end: finishes "stopped" with the reason when training ended before max_steps (whichever
  callback set control.should_training_stop, in whatever order callbacks were added), else "done".
  A crash inside train() reaches no callback: `track(trainer)` catches it and finishes "failed"; without
  it, a run left open when the interpreter exits is finished "failed" by an exit hook.

Contract for subclasses (RewardMonitor subclasses this to stream into the same run):
- `self.run` is the open Run on global rank 0 and None on every other rank (and before train begin);
- `self.stop(reason, control)` sets control.should_training_stop and records the reason, so the run
  finishes "stopped" with it (summary["stop_reason"]); every rank should call it on the same step;
- override on_train_begin / on_step_end / on_log / on_evaluate / on_save / on_train_end and call super()
  first in on_train_begin (it opens the run) and last in on_train_end (it finishes the run);
- `_export_args()` returns the JSON-safe constructor arguments transformers uses to rebuild the callback
  when restore_callback_states_from_checkpoint=True; a subclass with other arguments overrides it.
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
from transformers.trainer_callback import ExportableState

from whileai_train.callbacks.alerts import AlertWebhook, alert_webhook_url
from whileai_train.callbacks.gpu_metrics import GpuMetrics
from whileai_train.errors import ConfigError, RunError
from whileai_train.runs.defaults import CHECKPOINT_FLUSH_WAIT_S
from whileai_train.runs.run import Run
from whileai_train.runs.run import run as open_run
from whileai_train.sampling.trainer_path import trainer_path_missing

__all__ = ["WhileCallback", "track"]

logger = logging.getLogger("whileai_train.callbacks")

# the end-of-training log of transformers: run totals, kept in the summary rather than as a point
_TOTALS = ("train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos", "train_loss")
_RENAMES = {"learning_rate": "lr"}
_JSON_SAFE = (str, int, float, bool, type(None))


class WhileCallback(TrainerCallback, ExportableState):
    """Streams a Trainer's logs into a Run (platform with a key, else the local store).

    Args:
        run: an open Run to stream into; by default one is opened at train begin.
        alert_webhook: a Slack / Discord incoming-webhook URL (else $WHILEAI_ALERT_WEBHOOK) that gets each stop
            and each reward-monitor alarm as a JSON POST, from a background thread (alerts.py).
        **open_kwargs: passed to `wai.run` (name, dataset_id, base_model, total_steps, api_key, url, rate, ...).
    """

    def __init__(self, run: Run | None = None, *, alert_webhook: str | None = None, **open_kwargs: Any) -> None:
        self.run: Run | None = run
        url = alert_webhook_url(alert_webhook)
        self.alerts: AlertWebhook | None = AlertWebhook(url) if url else None
        self._rank0 = True
        self.open_kwargs = open_kwargs
        self.stop_reason: str | None = None
        self._saved_run: dict[str, Any] | None = None
        self._totals: dict[str, Any] = {}
        self._warned_checkpoint = False
        self._gpu = GpuMetrics()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(run={self.run!r})"

    # -- the subclass contract ------------------------------------------------------------------------
    def stop(self, reason: str, control: TrainerControl) -> None:
        """Stop training at the end of this step and finish the run "stopped" with `reason`."""
        control.should_training_stop = True
        if self.stop_reason is None:
            self.stop_reason = str(reason)
            if self.run is not None:
                self.run.note(f"Training stopped: {reason}")
            self.alert(f"training stopped: {reason}")

    def alert(self, text: str) -> None:
        """Post `text` to the alert webhook (global rank 0 only; enqueue only, never raises)."""
        if self.alerts is None or not self._rank0:
            return
        run = self.run
        self.alerts.send(f"whileai: run {run.name} ({run.id}): {text}" if run is not None and run.id else
                         f"whileai: {text}")

    def _export_args(self) -> dict[str, Any]:
        return {k: v for k, v in self.open_kwargs.items() if k != "api_key" and isinstance(v, _JSON_SAFE)}

    def state(self) -> dict[str, Any]:
        """Saved with each checkpoint (no key in it): which run to continue on resume."""
        saved = self.run.state() if self.run is not None else self._saved_run
        return {"args": self._export_args(), "attributes": {"_saved_run": saved}}

    # -- events ---------------------------------------------------------------------------------------
    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                       **kwargs: Any) -> None:
        self.stop_reason = None
        self._totals = {}
        self._rank0 = bool(state.is_world_process_zero)
        if not state.is_world_process_zero:
            self.run = None
            return
        if self.run is not None and self.run.status == "running":
            self._gpu.start()
            self._count_alert_failures()
            self._keep_context(args, kwargs.get("model"))
            return
        resume = self._resume_state(state)
        kwargs_open = dict(self.open_kwargs)
        kwargs_open.setdefault("name", getattr(args, "run_name", None) or _default_name(args))
        if isinstance(getattr(args, "project", None), str) and args.project:
            kwargs_open.setdefault("project", args.project)
        if state.max_steps and state.max_steps > 0:
            kwargs_open.setdefault("total_steps", int(state.max_steps))
        model = kwargs.get("model")
        base = getattr(getattr(model, "config", None), "_name_or_path", None)
        if base and "base_model" not in kwargs_open:
            kwargs_open["base_model"] = str(base)
        try:
            self.run = open_run(resume=resume, **kwargs_open)
        except Exception as exc:
            if isinstance(exc, (ConfigError, RunError)):
                raise  # a configuration mistake: say it now, with the fix
            logger.warning("whileai: could not open the run (%s: %s); training goes on without it",
                           type(exc).__name__, exc)
            self.run = None
        if self.run is not None:
            self._gpu.start()  # where CUDA is: GPU memory and utilisation on each point
        self._count_alert_failures()
        self._keep_context(args, kwargs.get("model"))

    def _keep_context(self, args: TrainingArguments, model: Any) -> None:
        """The trainer's arguments, model config, PEFT config and versions, in the run's context."""
        if self.run is None:
            return
        try:
            from whileai_train.runs.context import trainer_context

            self.run.add_context({"context": trainer_context(args, model)})
        except Exception as exc:  # noqa: BLE001  (the context is a record; it never costs training)
            logger.warning("whileai: could not keep the trainer's arguments and configs on the run (%s: %s)",
                           type(exc).__name__, exc)

    def _count_alert_failures(self) -> None:
        """Each webhook failure lands on the run as alerts/webhook_failures (the count so far, at the run's step)."""
        run, alerts = self.run, self.alerts
        if run is not None and alerts is not None:
            alerts.on_failure = lambda n: run.log(run.step or 0, {"alerts/webhook_failures": float(n)})

    def _resume_state(self, state: TrainerState) -> dict[str, Any] | None:
        return self._saved_attribute(state, "_saved_run")

    def _saved_attribute(self, state: TrainerState, name: str) -> dict[str, Any] | None:
        """The attribute `name` this callback saved with the checkpoint training resumes from, or None (a
        fresh start)."""
        if state.global_step <= 0:
            return None
        restored = getattr(self, name, None)
        if restored:  # set by transformers (restore_callback_states_from_checkpoint=True)
            return dict(restored)
        stored: Any = state.stateful_callbacks or {}
        saved = stored.get(type(self).__name__) if isinstance(stored, dict) else None
        for entry in saved if isinstance(saved, list) else [saved]:
            found = ((entry or {}).get("attributes") or {}).get(name)
            if found:
                return dict(found)
        return None

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                    **kwargs: Any) -> None:
        run = self.run
        if run is not None:
            run.progress(state.global_step, state.max_steps)

    def on_log(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
               logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        run = self.run
        if run is None or not logs:
            return
        if "train_runtime" in logs:
            self._totals.update({k: logs[k] for k in _TOTALS if k in logs})
            return
        metrics = dict(logs)
        for old, new in _RENAMES.items():
            if old in metrics:
                metrics[new] = metrics.pop(old)
        metrics.pop("step", None)
        for key, value in self._gpu.latest().items():
            metrics.setdefault(key, value)
        run.log_owned(state.global_step, metrics)  # the copy above is ours: no second copy

    def on_evaluate(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                    **kwargs: Any) -> None:
        """Eval metrics reach the run through on_log (transformers logs them first); nothing to do here."""

    def on_save(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                **kwargs: Any) -> None:
        """The run's identity and sequence were saved with the checkpoint through `state()`; here everything
        logged up to it is sent, with a bounded wait. A preempted machine's disk (and the spool on it) may be
        gone by the time training resumes, and the resumed attempt does not log these steps again."""
        run = self.run
        if run is None or run.status != "running":
            return
        owed = run.flush(CHECKPOINT_FLUSH_WAIT_S)
        if owed and not self._warned_checkpoint:
            self._warned_checkpoint = True
            logger.warning("whileai: %d points logged before checkpoint %d are not at %s yet; they wait in this "
                           "machine's spool and are sent when it answers, but are lost with this machine's disk "
                           "if it is preempted first (said once)", owed, state.global_step, run.where)

    def on_train_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                     **kwargs: Any) -> None:
        self._gpu.stop()
        run = self.run
        if run is None or run.status != "running":
            return
        summary: dict[str, Any] = {"steps": state.global_step, "max_steps": state.max_steps}
        summary.update({k: v for k, v in self._totals.items() if isinstance(v, (int, float))})
        if self.alerts is not None:
            summary.update({f"alert_webhook_{k}": v for k, v in self.alerts.state().items()})
        reason = self.stop_reason
        if reason is None and state.max_steps and state.global_step < state.max_steps:
            reason = (f"training stopped at step {state.global_step} of {state.max_steps} by a callback "
                      "(control.should_training_stop)")
        if reason is not None:
            summary["stop_reason"] = reason
            run.finish("stopped", summary=summary)
        else:
            run.finish("done", summary=summary)
        self._saved_run = run.state()

    def fail(self, exc: BaseException) -> None:
        """Finish the run "failed" with the error text (what `track` calls when train() raises)."""
        self._gpu.stop()
        run = self.run
        if run is not None and run.status == "running":
            run.finish("failed", error=f"{type(exc).__name__}: {exc}")

    def interrupt(self, exc: BaseException) -> None:
        """Leave the run open for the attempt that resumes from the checkpoint (what `track` calls when
        train() raises one of its `preempted_by` exceptions)."""
        self._gpu.stop()
        run = self.run
        if run is not None:
            run.interrupt(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)


def _sigint_ignored() -> bool:
    """True when SIGINT is ignored here (SIG_IGN, inherited by a process started from a background job or with
    nohup): Python then installs no KeyboardInterrupt handler, and a SIGINT does nothing."""
    import signal

    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def _default_name(args: TrainingArguments) -> str:
    from pathlib import Path

    out = getattr(args, "output_dir", None)
    return Path(out).name if out else "train"


class track:
    """Finish the trainer's run "failed" with the error when `trainer.train()` raises.

    transformers calls no callback on an exception, so without this a crashed run would stay "running"
    until the interpreter exits. Adds a WhileCallback(**open_kwargs) when the trainer has none, and attaches the
    trainer's reward monitors to a GRPOTrainer, so their holdout samples through its own generation path.

        with wai.track(trainer):
            trainer.train()
        # or: wai.track(trainer).train(resume_from_checkpoint=True)

    `preempted_by`: exception types that mean this attempt was preempted and will resume from its last
    checkpoint (Modal preempts with SIGINT, which Python raises as KeyboardInterrupt): the run is flushed and
    left open for the resumed attempt (`Run.interrupt`), not finished "failed". A SIGTERM needs nothing here:
    while a run is open, SIGTERM interrupts it the same way (runs/preemption.py).
    """

    def __init__(self, trainer: Any, *, preempted_by: tuple[type[BaseException], ...] = (),
                 **open_kwargs: Any) -> None:
        self.trainer = trainer
        self.preempted_by = tuple(preempted_by)
        if any(issubclass(KeyboardInterrupt, kind) for kind in self.preempted_by) and _sigint_ignored():
            logger.warning("whileai: SIGINT is ignored in this process (started from a background job or nohup), "
                           "so a preemption by SIGINT raises no KeyboardInterrupt: training would go on to its "
                           "end. Fix: signal.signal(signal.SIGINT, signal.default_int_handler) before training")
        if self.callback is None:
            trainer.add_callback(WhileCallback(**open_kwargs))
        if not trainer_path_missing(trainer):  # a GRPOTrainer: reward monitors sample through its own path
            for cb in trainer.callback_handler.callbacks:
                attach = getattr(cb, "attach", None)
                if isinstance(cb, WhileCallback) and callable(attach):
                    attach(trainer)

    @property
    def callback(self) -> WhileCallback | None:
        """The trainer's WhileCallback (looked up each time: a checkpoint restore may replace it)."""
        for cb in self.trainer.callback_handler.callbacks:
            if isinstance(cb, WhileCallback):
                return cb
        return None

    @property
    def run(self) -> Run | None:
        cb = self.callback
        return cb.run if cb is not None else None

    def __enter__(self) -> track:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        cb = self.callback
        if exc is None or cb is None:
            return
        if isinstance(exc, self.preempted_by):
            cb.interrupt(exc)
        else:
            cb.fail(exc)

    def train(self, *args: Any, **kwargs: Any) -> Any:
        """`trainer.train(*args, **kwargs)` inside this guard."""
        with self:
            return self.trainer.train(*args, **kwargs)
