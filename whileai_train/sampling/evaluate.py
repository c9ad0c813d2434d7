"""`wai.evaluate`: a model (or a checkpoint) and tasks in, graded rows out, ready for pass_at, compare_runs,
delta_report and the marker families.

    before = wai.evaluate("Qwen/Qwen2.5-0.5B-Instruct", "tasks.jsonl", [exact_answer], k=4, runs=3, output="before.jsonl")
    after = wai.evaluate("out/checkpoint-500", "tasks.jsonl", [exact_answer], k=4, runs=3, output="after.jsonl")
    print(wai.delta_report(before, after, must_not_regress=["argument_grounding"]))

Sampling is the sampler's (sampling/): the generate backend batches prompts x k with the tokenizer's chat
template (and the tools' schemas and TRL's tool loop with tools= / environment_factory=), or vLLM with
engine="auto" where it can run (vllm_engine.py). Each batch of tasks is sampled on its own seeded stream (seed,
eval run, batch), so the same call gives the same rows, and a resumed one gives the rows an uninterrupted one
would have. Reward functions are called exactly as GRPOTrainer calls them (sampling/rewards.py).

Each row: the task's own columns (its stamps carried; `task_id` added when the task has neither scenario_id nor
task_id), `prompt`, `completion` (as TRL passes it), the trajectory (`messages` for a conversational prompt, else
`steps` and `final_text`), one column per reward function, `reward` (their weighted sum, as TRL sums them),
`rollout_index`, `finish_reason`, `completion_tokens` (model tokens as TRL counts them), tool calls made and
failed where there are tools, and `lineage`: source ("eval", which the selectors count as eval_sourced), eval_run,
model, adapter, seed, k, engine and the sampling settings.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from whileai_train.errors import ConfigError, RewardFunctionError, RowError
from whileai_train.progress import progress_counter
from whileai_train.rows.contract import task_key
from whileai_train.rows.intake import take_tasks
from whileai_train.sampling import defaults as D
from whileai_train.sampling.eval_output import EvalOutput, row_identity
from whileai_train.sampling.rewards import (
    ScoreSink,
    WrongRewardCount,
    call_reward,
    callable_name,
    is_async,
    weighted_total,
)
from whileai_train.sampling.samples import (
    GenerationSettings,
    Sampler,
    Samples,
    settings_from_config,
    trajectory_row,
)
from whileai_train.sampling.tools import factories_of

__all__ = ["evaluate"]

# Keys of a task that describe an earlier rollout, not the task: never carried onto a new row.
_NOT_CARRIED = frozenset({"completion", "completion_ids", "messages", "steps", "final_text", "reward", "rewards",
                          "rollout_index", "finish_reason", "markers", "trace_flags", "completion_tokens",
                          "tool_calls_made", "tool_calls_failed"})
# Row keys evaluate writes, which a reward function's name must not take.
_WRITTEN = _NOT_CARRIED | {"prompt", "lineage", "task_id"}


def _tasks(tasks: Any, environments: bool) -> list[dict[str, Any]]:
    rows = take_tasks(tasks, "evaluate(tasks=)", prompt_required=not environments)
    if not rows:
        raise ConfigError("tasks is empty. Fix: pass rows with a 'prompt' (a list, a JSONL path or a Dataset)")
    for index, row in enumerate(rows):
        prompt = row.get("prompt")
        if prompt is None and environments:
            continue  # an environment's reset supplies it, as TRL allows
        if not isinstance(prompt, str) and not (isinstance(prompt, list) and prompt
                                                and all(isinstance(m, Mapping) and "role" in m for m in prompt)):
            raise RowError(index, "prompt", f"the task's prompt is {type(prompt).__name__} {str(prompt)[:60]!r}",
                           "give every task a 'prompt': a string, or a list of {role, content} chat messages")
    shapes = {isinstance(row.get("prompt"), str) for row in rows if row.get("prompt") is not None}
    if len(shapes) > 1:
        first_text = next(i for i, row in enumerate(rows) if isinstance(row.get("prompt"), str))
        raise RowError(first_text, "prompt", "tasks mix text prompts and chat-message prompts",
                       "give every task the same prompt shape, as a GRPOTrainer dataset has")
    return rows


def _reward_functions(reward_funcs: Any, weights: Sequence[float] | None, environment_factory: Any,
                      columns: Iterable[str]) -> list[tuple[str, Callable[..., Any], float]]:
    funcs = [reward_funcs] if callable(reward_funcs) else list(reward_funcs or ())
    for fn in funcs:
        if not callable(fn):
            raise ConfigError(f"reward_funcs has {fn!r}, which is not callable. Fix: pass reward functions with "
                              "GRPOTrainer's contract: f(prompts, completions, **kwargs) -> list[float]")
    named = [(callable_name(fn), fn) for fn in funcs]
    for factory in (factories_of(environment_factory) or {}).values():  # an environment that owns its reward
        named.extend(_environment_reward(factory, [n for n, _ in named]))
    if not named:
        raise ConfigError("no reward function. Fix: pass reward_funcs=[...], or an environment_factory whose "
                          "environment defines get_reward")
    names = [n for n, _ in named]
    weight_list = [1.0] * len(named) if weights is None else [float(w) for w in weights]
    if len(weight_list) != len(named):
        raise ConfigError(f"reward_weights has {len(weight_list)} weights for {len(named)} reward functions "
                          f"({names}). Fix: one weight per function, in that order")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"reward function names {repeated} repeat; each reward function becomes a column named "
                          "after it. Fix: rename one of them (its __name__)")
    # One function named `reward` (TRL scripts' most common name) at weight 1: its column is the sum column.
    alone = names == ["reward"] and weight_list == [1.0]
    written = sorted(set(names) & (_WRITTEN - ({"reward"} if alone else set())))
    if written:
        why = ("`reward` is the weighted sum of several functions (or of one weighted function)"
               if written == ["reward"] else "evaluate writes these columns on every row")
        raise ConfigError(f"reward function names {written} are taken: {why}; each reward function becomes a "
                          "column named after it. Fix: rename the function (its __name__)")
    carried = sorted(set(names) & (set(columns) - _NOT_CARRIED))
    if carried:
        raise ConfigError(f"reward function names {carried} are taken by a column of the tasks, which each row "
                          "carries; each reward function becomes a column named after it. Fix: rename the function "
                          "(its __name__) or the tasks' column")
    return [(n, fn, w) for (n, fn), w in zip(named, weight_list, strict=True)]


def _environment_reward(factory: Callable[[], Any], taken: list[str]) -> list[tuple[str, Callable[..., Any]]]:
    """GRPOTrainer's reward column for an environment class with get_reward, named after the class."""
    try:
        kind = type(factory())
    except Exception:  # noqa: BLE001  (a factory that cannot build is said per completion, not here)
        return []
    if not callable(getattr(kind, "get_reward", None)) or kind.__name__ in taken:
        return []
    if is_async(kind.get_reward):
        async def from_environment_async(environments: list[Any], **kwargs: Any) -> list[Any]:
            return [await e.get_reward() if type(e) is kind else None for e in environments]

        return [(kind.__name__, from_environment_async)]

    def from_environment(environments: list[Any], **kwargs: Any) -> list[Any]:
        return [e.get_reward() if type(e) is kind else None for e in environments]

    return [(kind.__name__, from_environment)]


def _settings(config: Any, overrides: Mapping[str, Any]) -> GenerationSettings:
    from types import SimpleNamespace

    fields = {name: getattr(config, name) for name in ("max_completion_length", "temperature", "top_p", "top_k",
                                                       "min_p", "repetition_penalty", "generation_kwargs",
                                                       "chat_template_kwargs", "max_tool_calling_iterations")
              if config is not None and hasattr(config, name)}
    fields.update({k: v for k, v in overrides.items() if v is not None})
    return settings_from_config(SimpleNamespace(**fields))


def _batch_seed(seed: int, run: int, batch: int) -> int:
    """The seed of one batch of one eval run: its own stream, the same whichever batches ran before."""
    return int(np.random.SeedSequence([seed, run, batch]).generate_state(1)[0])


def _nan_to_none(value: float) -> float | None:
    return None if math.isnan(value) else value


def evaluate(model: Any, tasks: Any, reward_funcs: Callable[..., Any] | Sequence[Callable[..., Any]], *,
             tokenizer: Any = None, k: int = D.EVAL_K, runs: int = D.EVAL_RUNS, seed: int = D.EVAL_SEED,
             reward_weights: Sequence[float] | None = None, config: Any = None,
             max_completion_length: int | None = None, temperature: float | None = None, top_p: float | None = None,
             top_k: int | None = None, tools: Sequence[Callable[..., Any]] | None = None,
             environment_factory: Any = None, engine: str = "auto", batch_size: int = D.BATCH_SEQUENCES,
             output: str | os.PathLike[str] | None = None, progress: bool | None = None,
             model_name: str | None = None) -> list[dict[str, Any]]:
    """Sample `k` completions per task from `model`, `runs` times, grade them with `reward_funcs`; the rows.

    Args:
        model: a loaded transformers model (with tokenizer=), or a folder / hub id (a PEFT adapter folder loads on
            its base).
        tasks: rows with a `prompt` (text or chat messages) and any columns your reward functions read: a list, a
            JSONL path or a datasets.Dataset.
        reward_funcs: one or several functions with GRPOTrainer's reward contract (same keywords, same columns);
            each becomes a column named after it, `reward` is their weighted sum (reward_weights, default 1).
        k: completions per task; runs: independent evaluations (lineage.eval_run 0..runs-1) for the re-run spread.
        seed: the evaluation's seed: the same call gives the same rows on the same machine.
        config: a GRPOConfig (or any object with its fields) whose sampling settings to use, so the eval samples
            as training did; max_completion_length / temperature / top_p / top_k override it.
        tools, environment_factory: as GRPOTrainer takes them (the tool loop runs with the generate backend).
        engine: "auto" (vLLM where installed, a GPU present and the model a path; else transformers), "vllm" or
            "transformers".
        batch_size: completions per generate call (tasks per batch = batch_size // k).
        output: a JSONL path written as the evaluation goes; run again with the same path to finish what is missing.
        progress: a progress bar over prompts (None: where a person watches, a terminal or a notebook).
        model_name: the name rows record (default: the path, or the model's config name).

    Raises ConfigError (arguments, a model that does not load), RowError (a task without a usable prompt) and
    RewardFunctionError (a reward function that raises or returns the wrong number of rewards); rows already
    written to `output` stay.
    """
    for name, value in (("k", k), ("runs", runs), ("batch_size", batch_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name}={value!r} must be a positive integer. Fix: e.g. {name}=4")
    rows_in = _tasks(tasks, environment_factory is not None)
    columns = {key for row in rows_in for key in row}
    scorers = _reward_functions(reward_funcs, reward_weights, environment_factory, columns)
    settings = _settings(config, {"max_completion_length": max_completion_length, "temperature": temperature,
                                  "top_p": top_p, "top_k": top_k})
    from whileai_train.sampling.policy import load_policy
    from whileai_train.sampling.vllm_engine import choose_engine

    chosen = choose_engine(engine, model, tools=bool(tools) or environment_factory is not None)
    policy = load_policy(model, tokenizer, name=model_name) if chosen == "transformers" else None
    # source "eval": the selectors' eval_sourced reads it (every selector report counts the rows or pairs whose
    # reward came from evaluate())
    lineage = {"source": "eval", "model": model_name or (policy.name if policy is not None else str(model)),
               "adapter": policy.adapter if policy is not None else None, "seed": seed, "k": k, "engine": chosen,
               **settings.lineage()}
    sampler = _sampler(chosen, policy, model, tokenizer, settings, tools, environment_factory, batch_size, seed)
    keys = [task_key(row) or f"task-{i}" for i, row in enumerate(rows_in)]
    occurrence: dict[str, int] = {}
    firsts = []  # a task that appears again numbers its rollouts on from its earlier appearances
    for key in keys:
        firsts.append(occurrence.get(key, 0) * k)
        occurrence[key] = occurrence.get(key, 0) + 1
    out = EvalOutput(output, lineage) if output is not None else None
    per_batch = max(1, batch_size // k)
    bar = progress_counter(len(rows_in) * runs, desc="evaluate", progress=progress, unit="prompts")
    written: dict[tuple[str, int, int], dict[str, Any]] = dict(out.rows) if out is not None else {}
    try:
        for run in range(runs):
            for batch, start in enumerate(range(0, len(rows_in), per_batch)):
                indices = list(range(start, min(start + per_batch, len(rows_in))))
                wanted = [(keys[i], firsts[i] + j, run) for i in indices for j in range(k)]
                if all(w in written for w in wanted):
                    bar.update(len(indices))
                    continue
                samples = sampler.sample([rows_in[i] for i in indices], k, seed=_batch_seed(seed, run, batch))
                graded = _grade(samples, scorers, indices, rows_in, keys, firsts, run, lineage,
                                tooled=bool(tools) or environment_factory is not None)
                missing = [row for row in graded if row_identity(row) not in written]
                if out is not None:
                    out.write(missing)
                written.update((row_identity(row), row) for row in missing)
                bar.update(len(indices))
    finally:
        bar.close()
        if out is not None:
            out.close()
    return [written[(keys[i], firsts[i] + j, run)] for run in range(runs) for i in range(len(rows_in))
            for j in range(k)]


def _sampler(chosen: str, policy: Any, model: Any, tokenizer: Any, settings: GenerationSettings,
             tools: Sequence[Callable[..., Any]] | None, environment_factory: Any, batch_size: int, seed: int) -> Sampler:
    if chosen == "vllm":
        from transformers import AutoTokenizer

        from whileai_train.sampling.vllm_engine import VLLMSampler

        return VLLMSampler(model, tokenizer or AutoTokenizer.from_pretrained(str(model)), settings, seed=seed)
    from whileai_train.sampling.generate import GenerateSampler

    return GenerateSampler(policy.model, policy.tokenizer, settings, tools=list(tools or ()),
                           environment_factory=environment_factory, batch_sequences=batch_size)


def _grade(samples: Samples, scorers: list[tuple[str, Callable[..., Any], float]], indices: list[int],
           rows_in: list[dict[str, Any]], keys: list[str], firsts: list[int], run: int, lineage: Mapping[str, Any],
           *, tooled: bool) -> list[dict[str, Any]]:
    """The batch's rows: each reward function over the batch as TRL calls it, then one row per completion."""
    from transformers import TrainerState

    state, sink = TrainerState(), ScoreSink()
    columns: dict[str, list[float]] = {}
    for name, fn, _ in scorers:
        try:
            columns[name] = call_reward(fn, samples, state, sink)
        except Exception as exc:
            wrong_length = isinstance(exc, WrongRewardCount)
            raise RewardFunctionError(
                name, indices, str(exc) if wrong_length else f"raised {type(exc).__name__}: {exc}",
                "return one float (or None) per completion, in order" if wrong_length else
                "make it accept GRPOTrainer's keywords (prompts=, completions=, completion_ids=, the task columns, "
                "**kwargs) and handle these rows") from exc
    totals = weighted_total([columns[name] for name, _, _ in scorers], [w for _, _, w in scorers])
    out: list[dict[str, Any]] = []
    for j, s in enumerate(samples.samples):
        task_index = indices[s.row_index]
        task = rows_in[task_index]
        row = {key: value for key, value in task.items() if key not in _NOT_CARRIED and key != "lineage"}
        if task.get("scenario_id") in (None, "") and task.get("task_id") in (None, ""):
            row["task_id"] = keys[task_index]
        row["prompt"] = task.get("prompt", s.prompt)
        row["completion"] = s.completion
        row.update({key: value for key, value in trajectory_row(s.prompt, s.completion).items() if key != "prompt"})
        for name, _, _ in scorers:
            row[name] = _nan_to_none(columns[name][j])
        row["reward"] = _nan_to_none(totals[j])
        row["rollout_index"] = firsts[task_index] + s.repeat
        row["finish_reason"] = s.finish_reason
        row["completion_tokens"] = s.length
        if tooled:
            row["tool_calls_made"], row["tool_calls_failed"] = s.tool_calls, s.tool_failures
        row["lineage"] = {**(task.get("lineage") or {}), "eval_run": run, **lineage}
        out.append(row)
    return out
