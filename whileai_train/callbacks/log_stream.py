"""The reward monitor's readings in the trainer's own log stream, under one prefix: `monitor/`.

At each holdout eval the monitor hands the trainer these keys, so every `report_to` integration (trackio, wandb,
TensorBoard, MLflow, ...) and `trainer.state.log_history` carry them with the step, with no code of yours:

    monitor/proxy_reward, monitor/proxy_reward_ci_low, monitor/proxy_reward_ci_high    (mean over asks, 95% interval)
    monitor/gold_reward, monitor/gold_reward_ci_low, monitor/gold_reward_ci_high       (with gold=)
    monitor/holdout_length                                                              (mean tokens per ask)
    monitor/tool_call_frequency, monitor/tool_failure_frequency                         (when the holdout calls tools)
    monitor/marker/<name>                                                               (with markers=)
    monitor/alarm/<name>  for every alarm (monitor_defaults.ALARMS): 1.0 while it stands, else 0.0

The interval is the percentile bootstrap over the holdout's asks (stats.bootstrap_mean_ci, seeded); with fewer
than two asks there is none and its keys are left out. The trackers that prefix what they draw keep doing so
(wandb and TensorBoard show `train/monitor/proxy_reward`).

How they reach the trackers (transformers 5.24, read in its source): `Trainer.log` copies `logs` into
`state.log_history` and then calls every callback's on_log in list order, the reporters (report_to) before any
callback of yours. A value a user callback adds in its own on_log reaches neither. So
- at an eval step the monitor sets `control.should_log` (on_step_end runs before the step's log), so the
  trainer logs at that step, and keeps the readings here;
- `LogStream` is a callback put first in the trainer's callback list (found from the attached trainer, else
  from the CallbackHandler calling on_train_begin); its on_log adds the readings to the `logs` dict the reporters
  then receive, and to that step's `state.log_history` entry;
- the baseline eval at train begin has no trainer log (the trainer logs from step 1): it is handed to every
  callback as its own on_log at step 0, and appended to log_history.
When the callback list cannot be found, the readings stay on our run only, said once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
from transformers.trainer_callback import CallbackHandler

from whileai_train.callbacks import monitor_defaults as D
from whileai_train.callbacks.alarms import AlarmBook, EvalRecord
from whileai_train.stats import bootstrap_mean_ci

__all__ = ["PREFIX", "LogStream", "readings_at"]

PREFIX = "monitor/"
_FRAMES_UP = 12  # callers looked through for the CallbackHandler (call_event sits 2-3 frames above on_train_begin)


def _interval(values: Sequence[float | None] | None) -> tuple[float, float] | None:
    finite = [float(v) for v in values or () if v is not None and v == v and abs(v) != float("inf")]
    return bootstrap_mean_ci(finite)


def readings_at(step: int, evals: Sequence[EvalRecord], marker_means: Mapping[int, Mapping[str, float]],
                tools: Mapping[int, tuple[int, int, int, int]], book: AlarmBook) -> dict[str, float]:
    """The `monitor/` keys of the eval at `step` (empty when that eval scored nothing)."""
    record = next((r for r in reversed(evals) if r.step == step), None)
    if record is None:
        return {}
    out: dict[str, float] = {}
    for name in ("proxy", "gold"):
        mean = record.mean(name)
        if mean is None:
            continue
        out[f"{PREFIX}{name}_reward"] = mean
        ci = _interval(getattr(record, name))
        if ci is not None:
            out[f"{PREFIX}{name}_reward_ci_low"], out[f"{PREFIX}{name}_reward_ci_high"] = ci
    length = record.mean("length")
    if length is not None:
        out[f"{PREFIX}holdout_length"] = length
    if step in tools:
        completions, _, calls, failed = tools[step]
        out[f"{PREFIX}tool_call_frequency"] = calls / completions if completions else 0.0
        out[f"{PREFIX}tool_failure_frequency"] = failed / calls if calls else 0.0
    for name, value in (marker_means.get(step) or {}).items():
        out[f"{PREFIX}marker/{name}"] = float(value)
    for name in D.ALARMS:
        out[f"{PREFIX}alarm/{name}"] = 1.0 if name in book.standing else 0.0
    return out


def _handler_above() -> CallbackHandler | None:
    """The CallbackHandler whose call_event is running this callback (a caller's frame), or None."""
    frame = sys._getframe(1)
    for _ in range(_FRAMES_UP):
        frame = frame.f_back  # type: ignore[assignment]
        if frame is None:
            return None
        owner = frame.f_locals.get("self")
        if isinstance(owner, CallbackHandler):
            return owner
    return None


class LogStream(TrainerCallback):
    """Put first in the trainer's callback list: adds the monitor's pending readings to the step's logs."""

    def __init__(self) -> None:
        self.pending: dict[str, float] | None = None
        self.pending_step = -1
        self.injected: frozenset[str] = frozenset()  # the keys added to the log now being handed round
        self.installed = False
        self._handler: CallbackHandler | None = None
        self._own: dict[str, Any] | None = None  # the step-0 log this stream hands round itself

    def install(self, trainer: Any, warn: Callable[[str], None]) -> None:
        """Go first in `trainer`'s callback list (or the calling handler's); call from on_train_begin."""
        handler = getattr(trainer, "callback_handler", None) if trainer is not None else None
        handler = handler if isinstance(handler, CallbackHandler) else _handler_above()
        self.pending, self.injected, self._handler = None, frozenset(), handler
        if handler is None:
            self.installed = False
            warn("the trainer's callback list was not found, so the holdout readings (monitor/...) are on this "
                 "library's run only, not in the trainer's logs. Fix: monitor.attach(trainer) before train()")
            return
        if self not in handler.callbacks:
            # a new list: the handler is iterating the old one right now (an insert would call us twice)
            handler.callbacks = [self, *handler.callbacks]
        self.installed = True

    def put(self, step: int, readings: dict[str, float], control: TrainerControl) -> None:
        """Keep `readings` for the trainer's log at `step` and make the trainer log at that step."""
        if not self.installed or not readings:
            return
        self.pending, self.pending_step = readings, step
        control.should_log = True

    def emit(self, args: TrainingArguments, state: TrainerState, control: TrainerControl) -> None:
        """Hand the pending readings round now as their own log (the baseline eval: the trainer has no log at
        train begin), on every rank as the trainer's logs are; appended to log_history as the trainer would."""
        if self.pending is None or self._handler is None:
            return
        logs, self.pending = dict(self.pending), None
        state.log_history.append({**logs, "step": state.global_step})
        self._own = logs
        try:
            self._handler.on_log(args, state, control, logs)
        finally:
            self._own = None

    def on_log(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
               logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if logs is not None and logs is self._own:
            self.injected = frozenset(logs)
            return
        self.injected = frozenset()
        pending = self.pending
        if pending is None or logs is None or "train_runtime" in logs:
            return
        self.pending = None
        if int(state.global_step) != self.pending_step:
            return  # the trainer did not log at the eval's step: never draw a reading at another step
        logs.update(pending)
        history = state.log_history
        if history and isinstance(history[-1], dict) and history[-1].get("step") == state.global_step:
            history[-1].update(pending)
        self.injected = frozenset(pending)

    def is_own(self, logs: Any) -> bool:
        """Whether `logs` is the step-0 log this stream hands round (the monitor reads nothing from it)."""
        return logs is not None and logs is self._own

    def without_readings(self, logs: dict[str, Any] | None) -> dict[str, Any] | None:
        """`logs` without the keys this stream added (our run holds them under their own names)."""
        injected = self.injected
        if not injected or not logs:
            return logs
        return {k: v for k, v in logs.items() if k not in injected}
