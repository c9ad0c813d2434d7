"""The holdout eval: choose the asks, score the sampled completions by proxy and gold, read their markers.

Sampling is the sampler's (whileai_train/sampling): through the trainer's own generation path when the monitor
is attached to the trainer, else batched generate with the GRPOConfig's settings; either way on a forked random
stream with the model in eval mode, so the training run draws exactly the random numbers it would have drawn
without the monitor (tests pin the rewards step by step). Lengths are in model tokens as TRL counts them.

Scoring calls each reward function with the keywords TRL passes in training (prompts, completions,
completion_ids, every other column of the holdout rows, environments where the run has them, trainer_state,
log_extra, log_metric) and awaits async ones (sampling/rewards.py).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from whileai_train.callbacks import monitor_defaults as D
from whileai_train.callbacks.alarms import EvalRecord
from whileai_train.errors import ConfigError
from whileai_train.markers.registry import marker_values
from whileai_train.rows.contract import ask_of_prompt
from whileai_train.rows.intake import take_tasks
from whileai_train.sampling.rewards import ScoreSink, call_reward, callable_name, weighted_total
from whileai_train.sampling.samples import Sampler, Samples, trajectory_row

__all__ = ["ask_of", "choose_holdout", "eval_record", "holdout_from_dataset", "holdout_rows", "marker_means",
           "sample_share", "score_completions", "score_markers", "tool_counts"]

# The file names a holdout= string is read as rows from, even before the file exists (then: no such file).
_ROW_FILES = (".jsonl", ".json")


def holdout_rows(holdout: Any) -> list[dict[str, Any]]:
    """holdout= as a list of row dicts with a `prompt`, read as every function that takes rows reads them
    (rows.take_tasks: a list, a JSONL / JSON-array path, a datasets.Dataset; a bad row is a RowError naming it and
    the fix); a list may also hold plain prompt strings (each becomes {"prompt": s}). A single string that names
    no file is refused: it is one prompt, not a holdout."""
    if isinstance(holdout, bytes) or isinstance(holdout, str) and not os.path.exists(holdout) \
            and not holdout.endswith(_ROW_FILES):
        raise ConfigError("holdout= got a single string. Fix: pass a list of prompts or rows, e.g. "
                          "holdout=[{'prompt': ...}, ...], a JSONL path, or a datasets.Dataset with a 'prompt' "
                          "column.")
    if isinstance(holdout, Iterator):
        holdout = list(holdout)
    if isinstance(holdout, (list, tuple)):
        holdout = [{"prompt": row} if isinstance(row, str) else row for row in holdout]
    rows = [{k: v for k, v in row.items() if k not in ("completion", "completion_ids")}
            for row in take_tasks(holdout, "monitor(holdout=)")]
    if not rows:
        raise ConfigError("holdout= is empty. Fix: pass some prompts, or holdout=None to draw them from the "
                          "train dataset.")
    return rows


def ask_of(row: Mapping[str, Any]) -> str:
    """The ask a row belongs to: scenario_id, else task_id, else the prompt (as rows.task_key)."""
    for key in D.ASK_KEYS:
        value = row.get(key)
        if value is not None and value != "":
            return str(value)
    return ask_of_prompt(row.get("prompt"))


def choose_holdout(rows: Sequence[Mapping[str, Any]], n_prompts: int, seed: int = D.HOLDOUT_SEED
                   ) -> list[dict[str, Any]]:
    """Up to n_prompts rows, one per distinct ask, drawn with their own Generator (never the global RNG)."""
    first_of_ask: dict[str, int] = {}
    for i, row in enumerate(rows):
        first_of_ask.setdefault(ask_of(row), i)
    picks = list(first_of_ask.values())
    if len(picks) > n_prompts:
        rng = np.random.default_rng(seed)
        picks = sorted(rng.choice(np.asarray(picks), size=n_prompts, replace=False).tolist())
    return [dict(rows[i]) for i in picks]


def holdout_from_dataset(dataset: Any, n_prompts: int, seed: int = D.HOLDOUT_SEED, *,
                         max_reads: int | None = None) -> list[dict[str, Any]]:
    """Up to n_prompts rows of distinct asks from a sized dataset, read in a seeded random order (its own
    Generator, never the global RNG) and only as many as needed: a million-row train set is not read whole."""
    size = len(dataset)
    if size == 0:
        raise ConfigError("the train dataset is empty. Fix: pass holdout=[...].")
    order = np.random.default_rng(seed).permutation(size)
    budget = max_reads if max_reads is not None else 50 * n_prompts
    picked: dict[str, dict[str, Any]] = {}
    for read, index in enumerate(order.tolist()):
        if len(picked) >= n_prompts or read >= budget:
            break
        (row,) = holdout_rows([dataset[int(index)]])
        picked.setdefault(ask_of(row), row)
    return list(picked.values())


def sample_share(sampler: Sampler, rows: Sequence[dict[str, Any]], rank: int, world: int, k: int, *,
                 equal: bool) -> Samples:
    """This rank's share of the holdout rows (every world-th), k completions each. With `equal` (the trainer's
    path gathers across ranks inside) every rank samples the same number of rows: a short share is padded with
    the first row, whose completions are then dropped."""
    share = list(rows[rank::world])
    if not equal or world == 1:
        return sampler.sample(share, k)
    size = -(-len(rows) // world)
    samples = sampler.sample(share + [dict(rows[0])] * (size - len(share)), k)
    return Samples(share, [s for s in samples.samples if s.row_index < len(share)], samples.warnings)


def tool_counts(scored: Sequence[Mapping[str, Any]]) -> tuple[int, int, int, int]:
    """(completions, completions that called a tool, tool calls, failed calls) over scored completions."""
    calls = [int(s.get("tool_calls") or 0) for s in scored]
    failed = sum(int(s.get("tool_failures") or 0) for s in scored)
    return len(scored), sum(1 for c in calls if c), sum(calls), failed


def score_completions(samples: Samples, proxy: Sequence[tuple[Callable[..., Any], float]],
                      gold: Callable[..., Any] | None, trainer_state: Any, sink: ScoreSink) -> list[dict[str, Any]]:
    """Per-completion {ask, proxy, gold, fns, length, tool_calls, tool_failures}: proxy is the weighted nansum over
    the reward functions, each called as TRL calls it (sampling/rewards.py); fns is each function's own score when
    there are several."""
    proxy_total: list[float] | None = None
    values = [call_reward(fn, samples, trainer_state, sink) for fn, _ in proxy]
    columns = dict(zip([callable_name(fn) for fn, _ in proxy], values, strict=True))
    if proxy:
        proxy_total = weighted_total(values, [w for _, w in proxy])
    gold_values = call_reward(gold, samples, trainer_state, sink) if gold is not None else None
    return [{"ask": ask_of(samples.rows[s.row_index]),
             "proxy": None if proxy_total is None else proxy_total[j],
             "gold": None if gold_values is None else gold_values[j],
             "fns": {name: column[j] for name, column in columns.items()} if len(columns) > 1 else {},
             "length": s.length, "tool_calls": s.tool_calls, "tool_failures": s.tool_failures}
            for j, s in enumerate(samples.samples)]


def eval_record(step: int, scored: Sequence[Mapping[str, Any]]) -> EvalRecord:
    """Per-ask means of the gathered scores (NaN scores left out of their ask's mean)."""
    by_ask: dict[str, dict[str, list[float]]] = {}
    for s in scored:
        slot = by_ask.setdefault(s["ask"], {"proxy": [], "gold": [], "length": []})
        for name in ("proxy", "gold", "length"):
            value = s.get(name)
            if value is not None and math.isfinite(float(value)):
                slot[name].append(float(value))
    asks = sorted(by_ask)

    def means(name: str) -> list[float] | None:
        if not any(by_ask[a][name] for a in asks):
            return None
        return [float(np.mean(by_ask[a][name])) if by_ask[a][name] else math.nan for a in asks]

    fns: dict[str, list[float]] = {}
    for name in dict.fromkeys(n for s in scored for n in s.get("fns") or {}):
        per_ask: dict[str, list[float]] = {}
        for s in scored:
            value = (s.get("fns") or {}).get(name)
            if value is not None and math.isfinite(float(value)):
                per_ask.setdefault(s["ask"], []).append(float(value))
        fns[name] = [float(np.mean(per_ask[a])) if per_ask.get(a) else math.nan for a in asks]
    return EvalRecord(step=step, asks=asks, proxy=means("proxy"), gold=means("gold"),
                      length=means("length") or [], n_completions=len(scored), fns=fns or None)


_NOT_CARRIED = ("prompt", "messages", "steps", "final_text", "completion", "completion_ids", "markers", "trace_flags")


def score_markers(samples: Samples, markers: Sequence[tuple[str, Any]]) -> list[dict[str, float | None]]:
    """Each holdout completion's markers ({name: value}), read as a row: the holdout row's columns and the
    completion's trajectory (sampling.trajectory_row: its tool calls and their results included)."""
    if not markers or not len(samples):
        return [{} for _ in samples.samples]
    rows: list[dict[str, Any]] = []
    for s in samples.samples:
        row = {k: v for k, v in samples.rows[s.row_index].items() if k not in _NOT_CARRIED}
        row.update(trajectory_row(s.prompt, s.completion))
        rows.append(row)
    values = marker_values(rows, markers)
    return [{name: column[j] for name, column in values.items()} for j in range(len(rows))]


def marker_means(scored: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Each marker's mean over asks (per-ask means first, as proxy and gold), missing values left out."""
    by_ask: dict[str, dict[str, list[float]]] = {}
    for s in scored:
        for name, value in (s.get("markers") or {}).items():
            if value is not None and math.isfinite(float(value)):
                by_ask.setdefault(name, {}).setdefault(s["ask"], []).append(float(value))
    return {name: float(np.mean([np.mean(v) for v in asks.values()])) for name, asks in by_ask.items()}
