"""`monitor.wrap(reward_fn)`: a reward function TRL accepts as it accepts the original, that also records.

TRL 1.16 calls a reward function as ``f(prompts=, completions=, completion_ids=, **columns, trainer_state=,
log_extra=, log_metric=)``, names its metrics after ``__name__``, and awaits it on its own event loop when
it is async (docs/trl_facts.md). The wrapper keeps all three: it passes every argument through untouched,
copies the name (``functools.wraps``, or the class name for a callable instance, as TRL does), and is ``async def``
exactly when the original is. After the call it appends one record per completion to a bounded buffer:
references and numbers only (no decoding, no I/O), so the training step pays microseconds.

Each process's wrapper sees only its own share of the completions (docs/trl_facts.md); the monitor drains
the new records every step and gathers them to rank 0.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from whileai_train.callbacks import monitor_defaults as D
from whileai_train.rows.contract import ask_of_prompt
from whileai_train.sampling.rewards import callable_name, is_async
from whileai_train.sampling.samples import trajectory_row

logger = logging.getLogger("whileai_train.callbacks")

__all__ = ["CompletionRecord", "RewardRecorder", "rows_of_records", "wrap_reward"]


@dataclass(frozen=True)
class CompletionRecord:
    """One scored training completion, picklable (it crosses ranks): the row hack_scan reads. `prompt` and
    `completion` are as TRL passed them (conversational: messages, with the tool calls and their results)."""

    fn: str
    batch: int
    index: int
    ask: str
    prompt: Any
    completion: Any
    reward: float
    length: int


class RewardRecorder:
    """A bounded buffer of raw records per process; `drain()` turns the new ones into CompletionRecords."""

    def __init__(self, maxlen: int = D.BUFFER) -> None:
        self._pending: deque[tuple[Any, ...]] = deque(maxlen=maxlen * 8)
        self._lock = threading.Lock()  # async reward functions run on TRL's event-loop thread
        self._warned = False
        self.names: list[str] = []

    def add_name(self, name: str) -> None:
        if name not in self.names:
            self.names.append(name)

    def record(self, name: str, kwargs: Mapping[str, Any], rewards: Any) -> None:
        """Keep references to this call's inputs and outputs; never raises into the training step."""
        try:
            completions = kwargs.get("completions")
            if completions is None or rewards is None:
                return
            state = kwargs.get("trainer_state")
            batch = (int(getattr(state, "global_step", 0) or 0) << 32) ^ (id(completions) & 0xFFFFFFFF)
            with self._lock:
                self._pending.append((name, batch, kwargs.get("prompts"), completions,
                                      kwargs.get("completion_ids"), list(rewards), _ask_column(kwargs)))
        except Exception as exc:  # noqa: BLE001  (a recording failure costs the scan a batch, never the step)
            if not self._warned:
                self._warned = True
                logger.warning("reward monitor: could not record a reward batch (%r); the feature scan misses it, "
                               "training goes on (said once)", exc)

    def drain(self) -> list[CompletionRecord]:
        """The records added since the last drain, converted to plain picklable records."""
        with self._lock:
            raw = list(self._pending)
            self._pending.clear()
        out: list[CompletionRecord] = []
        for name, batch, prompts, completions, ids, rewards, asks in raw:
            for i, completion in enumerate(completions):
                reward = rewards[i] if i < len(rewards) else None
                if reward is None:
                    continue
                reward = float(reward)
                if not math.isfinite(reward):
                    continue
                prompt = prompts[i] if prompts is not None and i < len(prompts) else ""
                ask = str(asks[i]) if asks is not None and i < len(asks) and asks[i] not in (None, "") \
                    else ask_of_prompt(prompt)
                length = len(ids[i]) if ids is not None and i < len(ids) else 0
                out.append(CompletionRecord(name, batch, i, ask, prompt, completion, reward, length))
        return out


def _ask_column(kwargs: Mapping[str, Any]) -> Any:
    for key in D.ASK_KEYS:
        values = kwargs.get(key)
        if values is not None:
            return values
    return None


def wrap_reward(fn: Callable[..., Any], recorder: RewardRecorder) -> Callable[..., Any]:
    """`fn` with recording: same name, same sync/async nature, every argument passed through."""
    if not callable(fn):
        from whileai_train.errors import ConfigError

        raise ConfigError(f"wrap() got {type(fn).__name__}, not a reward function. Fix: pass the function "
                          "itself, e.g. monitor.wrap(my_reward).")
    name = callable_name(fn)
    recorder.add_name(name)

    if is_async(fn):
        async def wrapped_async(*args: Any, **kwargs: Any) -> Any:
            rewards = await fn(*args, **kwargs)
            recorder.record(name, kwargs, rewards)
            return rewards

        wrapped: Callable[..., Any] = wrapped_async
    else:
        def wrapped_sync(*args: Any, **kwargs: Any) -> Any:
            rewards = fn(*args, **kwargs)
            recorder.record(name, kwargs, rewards)
            return rewards

        wrapped = wrapped_sync
    try:
        functools.update_wrapper(wrapped, fn)
    except (AttributeError, TypeError):  # a callable instance or partial: copy what it has
        pass
    wrapped.__name__ = name
    wrapped.__qualname__ = name
    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    wrapped.__whileai_monitor__ = recorder  # type: ignore[attr-defined]
    return wrapped


def rows_of_records(records: Sequence[CompletionRecord], weights: Mapping[str, float] | None = None) -> list[dict[str, Any]]:
    """hack_scan rows from records: one trajectory row per completion (sampling.trajectory_row: its tool calls
    and their results included, so tool features and trace flags fire), its reward the weighted sum over reward
    functions (as TRL sums them; a missing function counts 0, as TRL's nansum does)."""
    rows: dict[tuple[int, int], dict[str, Any]] = {}
    for r in records:
        key = (r.batch, r.index)
        row = rows.get(key)
        if row is None:
            row = rows[key] = {**trajectory_row(r.prompt, r.completion), "reward": 0.0, "scenario_id": r.ask}
        row["reward"] += (1.0 if weights is None else float(weights.get(r.fn, 1.0))) * r.reward
    return list(rows.values())
