"""Score samples with reward functions called exactly as TRL 1.16's GRPOTrainer calls them.

TRL calls ``f(prompts=, completions=, completion_ids=, **every other column of the rows, trainer_state=,
log_extra=, log_metric=)``, adds ``environments=`` when the run has environments, merges the per-completion
fields a rollout_func returned into the columns, turns None into NaN and awaits async functions
(docs/trl_facts.md). The monitor's holdout and `evaluate` both score through `call_reward`, so a reward
function that trains is a reward function that scores.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from whileai_train.sampling.samples import Samples

__all__ = ["RESERVED_COLUMNS", "ScoreSink", "WrongRewardCount", "call_reward", "callable_name", "is_async",
           "reward_columns", "run_coroutine", "weighted_total"]

# The row keys TRL never passes to a reward function as a column.
RESERVED_COLUMNS = ("prompt", "completion", "completion_ids")


def callable_name(fn: Callable[..., Any]) -> str:
    """The name TRL gives a reward function: partials unwrapped, a callable instance by its class name."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return str(getattr(fn, "__name__", type(fn).__name__))


def is_async(fn: Callable[..., Any]) -> bool:
    """True when calling `fn` returns a coroutine (functions, partials, instances with an async __call__)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


def run_coroutine(coro: Any) -> Any:
    """Await a coroutine from sync code, also when this thread already runs a loop (a notebook)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


class WrongRewardCount(ValueError):
    """A reward function returned another number of rewards than there are completions."""


@dataclass
class ScoreSink:
    """Stands in for TRL's log_extra / log_metric while samples are scored (kept off the training logs)."""

    metrics: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    extras: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))

    def log_metric(self, name: str, value: float) -> None:
        self.metrics[name].append(float(value))

    def log_extra(self, column: str, values: list[Any]) -> None:
        self.extras[column].extend(values)


def reward_columns(samples: Samples) -> dict[str, list[Any]]:
    """Every column of the rows, one value per completion (TRL repeats a row's columns over its completions),
    then the fields a rollout_func returned, which TRL merges into the rows."""
    keys: dict[str, None] = {}
    for row in samples.rows[:1]:
        keys.update((k, None) for k in row if k not in RESERVED_COLUMNS)
    columns = {key: [samples.rows[s.row_index].get(key) for s in samples.samples] for key in keys}
    extra_keys: dict[str, None] = {}
    for s in samples.samples:
        extra_keys.update((k, None) for k in s.extra)
    for key in extra_keys:
        columns[key] = [s.extra.get(key) for s in samples.samples]
    return columns


def call_reward(fn: Callable[..., Any], samples: Samples, trainer_state: Any, sink: ScoreSink) -> list[float]:
    """One reward function over the samples, called with TRL's keywords; None becomes NaN, as in TRL. A wrong
    number of rewards is a ValueError naming the function."""
    kwargs: dict[str, Any] = dict(prompts=samples.prompts, completions=samples.completions,
                                  completion_ids=samples.completion_ids, **reward_columns(samples),
                                  trainer_state=trainer_state, log_extra=sink.log_extra, log_metric=sink.log_metric)
    environments = samples.environments
    if environments is not None:
        kwargs["environments"] = environments
    out = run_coroutine(fn(**kwargs)) if is_async(fn) else fn(**kwargs)
    values = [math.nan if r is None else float(r) for r in out]
    if len(values) != len(samples):
        raise WrongRewardCount(f"reward function {callable_name(fn)!r} returned {len(values)} rewards for {len(samples)} "
                         "completions; it must return one per completion")
    return values


def weighted_total(columns: Sequence[Sequence[float]], weights: Sequence[float]) -> list[float]:
    """Each completion's reward as TRL sums its reward functions' columns: the weighted nansum, NaN where every
    function gave None (NaN)."""
    matrix = np.array(columns, dtype=float)
    totals = np.nansum(matrix * np.array(weights, dtype=float)[:, None], axis=0)
    return np.where(np.isnan(matrix).all(axis=0), np.nan, totals).tolist()  # type: ignore[no-any-return]
