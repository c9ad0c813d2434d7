"""The holdout eval: choose the asks, sample them from the live policy, score by proxy and gold.

Sampling runs under ``torch.random.fork_rng`` (CPU and the current CUDA device), with the model in eval
mode and no grad, and puts train mode back: the training run draws exactly the random numbers it would
have drawn without the monitor (tests pin the rewards step by step). Generation uses the trainer's own
settings read from the GRPOConfig the callback receives (max_completion_length, temperature, top_p, top_k,
min_p, repetition_penalty, generation_kwargs, chat_template_kwargs). Lengths are in tokens, counted as TRL
counts them (up to and including the first EOS).

Scoring calls each reward function with the keywords TRL passes in training (prompts, completions,
completion_ids, every other column of the holdout rows, trainer_state, log_extra, log_metric) and awaits
async ones.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from whileai_train.callbacks import monitor_defaults as D
from whileai_train.callbacks.alarms import EvalRecord
from whileai_train.callbacks.reward_wrap import is_async, prompt_text
from whileai_train.errors import ConfigError
from whileai_train.markers.registry import marker_values
from whileai_train.rows_content import content_text

__all__ = ["HoldoutSample", "ScoreSink", "ask_of", "choose_holdout", "eval_record", "holdout_from_dataset",
           "holdout_rows", "marker_means", "run_reward", "sample_completions", "score_completions", "score_markers"]

_RESERVED = ("prompt", "completion", "completion_ids")


def holdout_rows(holdout: Any) -> list[dict[str, Any]]:
    """Normalise holdout= to a list of row dicts with a `prompt` (strings become {"prompt": s})."""
    if isinstance(holdout, (str, bytes)):
        raise ConfigError("holdout= got a single string. Fix: pass a list of prompts or rows, e.g. "
                          "holdout=[{'prompt': ...}, ...], or a datasets.Dataset with a 'prompt' column.")
    rows: list[dict[str, Any]] = []
    for i, row in enumerate(holdout):
        if isinstance(row, str):
            rows.append({"prompt": row})
        elif isinstance(row, Mapping) and "prompt" in row:
            rows.append({k: v for k, v in row.items() if k not in ("completion", "completion_ids")})
        else:
            raise ConfigError(f"holdout row {i} has no 'prompt'. Fix: give every holdout row a 'prompt' "
                              "(a string or a list of chat messages), as GRPOTrainer's train_dataset has.")
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
    return prompt_text(row.get("prompt"))


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


@dataclass
class HoldoutSample:
    """The completions sampled for this rank's share of the holdout (k per row)."""

    rows: list[dict[str, Any]]
    prompts: list[Any]
    completions: list[Any]
    completion_ids: list[list[int]]
    row_index: list[int]


def _generation_config(args: Any, tokenizer: Any, model: Any) -> Any:
    from transformers import GenerationConfig

    eos = model.generation_config.eos_token_id
    eos_ids = [] if eos is None else ([eos] if isinstance(eos, int) else list(eos))
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in eos_ids:
        eos_ids = [tokenizer.eos_token_id, *eos_ids]
    kwargs: dict[str, Any] = {
        "max_new_tokens": getattr(args, "max_completion_length", None) or 256,
        "do_sample": True,
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": eos_ids,
        "temperature": getattr(args, "temperature", 1.0),
        "top_p": getattr(args, "top_p", 1.0),
        "top_k": getattr(args, "top_k", 0),
        "min_p": getattr(args, "min_p", None),
        "repetition_penalty": getattr(args, "repetition_penalty", 1.0),
    }
    kwargs.update(getattr(args, "generation_kwargs", None) or {})
    return GenerationConfig(**kwargs), eos_ids


def _prompt_ids(tokenizer: Any, prompts: list[Any], args: Any) -> list[list[int]]:
    if prompts and not isinstance(prompts[0], str):
        template_kwargs = getattr(args, "chat_template_kwargs", None) or {}
        if isinstance(template_kwargs, str):
            import json

            template_kwargs = json.loads(template_kwargs)
        out = tokenizer.apply_chat_template(conversation=prompts, add_generation_prompt=True, tokenize=True,
                                            return_dict=True, **template_kwargs)
        return [list(ids) for ids in out["input_ids"]]
    return [list(ids) for ids in tokenizer(text=prompts)["input_ids"]]


def sample_completions(model: Any, tokenizer: Any, args: Any, rows: Sequence[dict[str, Any]], k: int, *,
                       batch_size: int = 64) -> HoldoutSample:
    """k completions per row from the live policy; the training RNG streams and train mode are untouched."""
    import torch

    prompts = [row["prompt"] for row in rows for _ in range(k)]
    row_index = [i for i in range(len(rows)) for _ in range(k)]
    if not prompts:
        return HoldoutSample(list(rows), [], [], [], [])
    config, eos_ids = _generation_config(args, tokenizer, model)
    device = next(model.parameters()).device
    devices = [device.index if device.index is not None else torch.cuda.current_device()] \
        if device.type == "cuda" else []
    was_training = model.training
    ids_all = _prompt_ids(tokenizer, prompts, args)
    completion_ids: list[list[int]] = []
    with torch.random.fork_rng(devices=devices), torch.no_grad():
        model.eval()
        try:
            for start in range(0, len(ids_all), batch_size):
                chunk = ids_all[start:start + batch_size]
                width = max(len(x) for x in chunk)
                pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos_ids[0]
                input_ids = torch.tensor([[pad] * (width - len(x)) + x for x in chunk], device=device)
                mask = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in chunk], device=device)
                out = model.generate(input_ids=input_ids, attention_mask=mask, generation_config=config)
                for seq in out[:, width:].tolist():
                    cut = next((j for j, t in enumerate(seq) if t in eos_ids), None)
                    completion_ids.append(seq if cut is None else seq[:cut + 1])
        finally:
            model.train(was_training)
    texts = tokenizer.batch_decode(completion_ids, skip_special_tokens=True)
    conversational = not isinstance(prompts[0], str)
    completions = [[{"role": "assistant", "content": t}] for t in texts] if conversational else list(texts)
    return HoldoutSample(list(rows), prompts, completions, completion_ids, row_index)


def _run_coroutine(coro: Any) -> Any:
    """Await a coroutine from sync code, also when this thread already runs a loop (a notebook)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


@dataclass
class ScoreSink:
    """Stands in for TRL's log_extra / log_metric while the holdout is scored (kept off the training logs)."""

    metrics: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    extras: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))

    def log_metric(self, name: str, value: float) -> None:
        self.metrics[name].append(float(value))

    def log_extra(self, column: str, values: list[Any]) -> None:
        self.extras[column].extend(values)


def run_reward(fn: Callable[..., Any], sample: HoldoutSample, trainer_state: Any, sink: ScoreSink) -> list[float]:
    """One reward function over the sample, called with TRL's keywords; None becomes NaN, as in TRL."""
    columns: dict[str, list[Any]] = {}
    keys = [k for k in (sample.rows[0] if sample.rows else {}) if k not in _RESERVED]
    for key in keys:
        columns[key] = [sample.rows[i].get(key) for i in sample.row_index]
    kwargs = dict(prompts=sample.prompts, completions=sample.completions, completion_ids=sample.completion_ids,
                  **columns, trainer_state=trainer_state, log_extra=sink.log_extra, log_metric=sink.log_metric)
    out = _run_coroutine(fn(**kwargs)) if is_async(fn) else fn(**kwargs)
    values = [math.nan if r is None else float(r) for r in out]
    if len(values) != len(sample.prompts):
        raise ValueError(f"reward function returned {len(values)} rewards for {len(sample.prompts)} holdout "
                         "completions; it must return one per completion")
    return values


def score_completions(sample: HoldoutSample, proxy: Sequence[tuple[Callable[..., Any], float]],
                      gold: Callable[..., Any] | None, trainer_state: Any, sink: ScoreSink) -> list[dict[str, Any]]:
    """Per-completion {ask, proxy, gold, length}: proxy is the weighted nansum over the reward functions."""
    n = len(sample.prompts)
    proxy_total: list[float] | None = None
    if proxy:
        matrix = np.array([run_reward(fn, sample, trainer_state, sink) for fn, _ in proxy], dtype=float)
        weights = np.array([w for _, w in proxy], dtype=float)[:, None]
        all_nan = np.isnan(matrix).all(axis=0)
        proxy_total = np.where(all_nan, np.nan, np.nansum(matrix * weights, axis=0)).tolist()
    gold_values = run_reward(gold, sample, trainer_state, sink) if gold is not None else None
    asks = [ask_of(sample.rows[i]) for i in sample.row_index]
    return [{"ask": asks[j],
             "proxy": None if proxy_total is None else proxy_total[j],
             "gold": None if gold_values is None else gold_values[j],
             "length": len(sample.completion_ids[j])} for j in range(n)]


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

    return EvalRecord(step=step, asks=asks, proxy=means("proxy"), gold=means("gold"),
                      length=means("length") or [], n_completions=len(scored))


_NOT_CARRIED = ("prompt", "messages", "steps", "final_text", "completion", "completion_ids", "markers", "trace_flags")


def _completion_text(completion: Any) -> str:
    if isinstance(completion, str):
        return completion
    texts = [m.get("content") for m in completion or () if isinstance(m, Mapping) and m.get("role") == "assistant"]
    return content_text(texts[-1]) if texts else ""


def score_markers(sample: HoldoutSample, markers: Sequence[tuple[str, Any]]) -> list[dict[str, float | None]]:
    """Each holdout completion's markers ({name: value}), read as a row: the holdout row's columns, the prompt, no
    tool call, and the completion as the reply (a conversational prompt becomes messages)."""
    if not markers or not sample.prompts:
        return [{} for _ in sample.prompts]
    rows: list[dict[str, Any]] = []
    for j, prompt in enumerate(sample.prompts):
        row = {k: v for k, v in sample.rows[sample.row_index[j]].items() if k not in _NOT_CARRIED}
        text = _completion_text(sample.completions[j])
        if isinstance(prompt, list):
            row["messages"] = [*prompt, {"role": "assistant", "content": text}]
        else:
            row.update(prompt=prompt_text(prompt), steps=[], final_text=text)
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
