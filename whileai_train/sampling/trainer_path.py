"""The trainer backend: k completions per row through the GRPOTrainer's own generation path.

`GRPOTrainer._generate(prompts)` is where trl 1.16 samples: vLLM (colocate or server, weights synced when the step
moved), DeepSpeed ZeRO-3 and FSDP (the model unwrapped, its parameters gathered once per generate call), the
tool-calling loop with its parsing, and `rollout_func`. Sampling through it is the only way a holdout sees what
training sees on those set-ups. TRL keeps it private, so tests/sampling/test_sampling_trainer.py pins every part used here
and fails when TRL changes it:

- `_generate(prompts)` returns (prompt_ids, completion_ids, tool_mask, completions, logprobs, extra_fields,
  images, tool_images) and samples "eval" when `model.training` is False (num_generations_eval per prompt group
  for vLLM; its metrics go to `_metrics["eval"]`; `state.num_input_tokens_seen` is not moved);
- the tool loop reads `_sync_tool_dicts` / `_async_tool_dicts` (one {name: tool} per completion) and
  `environments` / `_batch_environments`, which `_generate_and_score_completions` sets per batch;
- `eos_token_ids`, `tools`, `environment_factories` ({name: factory}) are attributes of the trainer.

What the call touches is put back: those attributes, `_metrics["eval"]`, train mode, and the random streams
(forked; seeded when asked). Every rank must call `sample` together with the same number of rows: the path
gathers lengths across ranks (the monitor pads each rank's share to one size).
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai_train.errors import ConfigError
from whileai_train.sampling.generate import own_random_stream
from whileai_train.sampling.samples import Sample, Samples, finish_reason, tool_messages
from whileai_train.sampling.tools import EnvironmentPool, environment_methods, reset_environments

__all__ = ["TRAINER_PARTS", "TrainerSampler", "trainer_path_missing"]

# What the trainer must have for its path to be used (pinned by the tests against the installed TRL).
TRAINER_PARTS = ("_generate", "_metrics", "eos_token_ids", "tools", "model", "accelerator", "num_generations_eval")
_TOUCHED = ("environments", "_batch_environments", "_sync_tool_dicts", "_async_tool_dicts", "num_generations_eval")
_ABSENT = object()


def trainer_path_missing(trainer: Any) -> list[str]:
    """The parts of TRL's generation path this trainer lacks ([] for trl 1.16's GRPOTrainer)."""
    return [name for name in TRAINER_PARTS if not hasattr(trainer, name)]


class _Successes:
    """Counts the tool calls that returned, per completion (a call that raises is TRL's failed call)."""

    def __init__(self, n: int) -> None:
        self.counts = [0] * n

    def wrap(self, index: int, tool: Callable[..., Any]) -> Callable[..., Any]:
        counts = self.counts
        if inspect.iscoroutinefunction(tool):
            async def counted_async(*args: Any, **kwargs: Any) -> Any:
                result = await tool(*args, **kwargs)
                counts[index] += 1
                return result

            return functools.wraps(tool)(counted_async)

        def counted(*args: Any, **kwargs: Any) -> Any:
            result = tool(*args, **kwargs)
            counts[index] += 1
            return result

        return functools.wraps(tool)(counted)


class TrainerSampler:
    """k completions per row from a GRPOTrainer's own generation path (see the module docstring).

    Environments for the sampled rows are this sampler's own (built from the trainer's factories once, reset per
    prompt), never the trainer's training pool.
    """

    def __init__(self, trainer: Any) -> None:
        missing = trainer_path_missing(trainer)
        if missing:
            raise ConfigError(f"{type(trainer).__name__} has no {missing}: it is not trl 1.16's GRPOTrainer, whose "
                              "generation path this samples through. Fix: attach a GRPOTrainer, or sample with "
                              "the model (the monitor does when no trainer is attached)")
        self.trainer = trainer
        factories = getattr(trainer, "environment_factories", None)
        self.pool = EnvironmentPool(dict(factories)) if factories else None

    def sample(self, rows: Sequence[Mapping[str, Any]], k: int, *, seed: int | None = None) -> Samples:
        """k completions per row, in row order; every rank calls this together (see the module docstring)."""
        trainer = self.trainer
        own = [dict(row) for row in rows]
        expanded = [row for row in own for _ in range(k)]
        if not expanded:
            return Samples(own, [])
        warnings: list[str] = []
        slots, prompts = reset_environments(self.pool, expanded, warnings)
        successes = _Successes(len(expanded))
        saved = {name: getattr(trainer, name, _ABSENT) for name in _TOUCHED}
        metrics = copy.deepcopy(trainer._metrics["eval"])
        with own_random_stream(trainer.model, seed):
            try:
                if self.pool is not None:
                    trainer.environments = [slot.environment for slot in slots]
                    trainer._batch_environments = [self.pool.name_of(row) for row in expanded]
                if trainer.tools:
                    self._tool_dicts(slots, successes)
                trainer.num_generations_eval = k
                out = trainer._generate(copy.deepcopy(prompts))
            finally:
                for name, value in saved.items():
                    if value is _ABSENT:
                        if hasattr(trainer, name):
                            delattr(trainer, name)
                    else:
                        setattr(trainer, name, value)
                trainer._metrics["eval"] = metrics
        _, completion_ids, tool_mask, completions, _, extra_fields, _, _ = out
        tokenizer = getattr(trainer, "_tokenizer", None) or trainer.processing_class
        stops = [*trainer.eos_token_ids, getattr(tokenizer, "pad_token_id", None)]
        samples: list[Sample] = []
        for i, ids in enumerate(completion_ids):
            ids = list(ids)
            completion = completions[i]
            calls = len(tool_messages(completion))
            samples.append(Sample(
                row_index=i // k, repeat=i % k, prompt=prompts[i], completion=completion, completion_ids=ids,
                length=sum(tool_mask[i]) if tool_mask is not None else len(ids),
                finish_reason=finish_reason(ids, [t for t in stops if t is not None], completion),
                tool_calls=calls, tool_failures=max(0, calls - successes.counts[i]),
                environment=slots[i].environment, environment_error=slots[i].error,
                extra={key: (values[i] if isinstance(values, list) else values)
                       for key, values in (extra_fields or {}).items()}))
        return Samples(own, samples, list(dict.fromkeys(warnings)))

    def _tool_dicts(self, slots: list[Any], successes: _Successes) -> None:
        """One {name: tool} pair of dicts per completion, as `_generate_and_score_completions` builds them, each
        tool counting the calls that returned."""
        trainer = self.trainer
        standalone = list(getattr(trainer, "_standalone_tools", None) or trainer.tools)
        sync_dicts: list[dict[str, Callable[..., Any]]] = []
        async_dicts: list[dict[str, Callable[..., Any]]] = []
        for i, slot in enumerate(slots):
            methods = environment_methods(slot.environment) if slot.environment is not None else []
            sync: dict[str, Callable[..., Any]] = {}
            asynchronous: dict[str, Callable[..., Any]] = {}
            for tool in standalone + methods:
                (asynchronous if inspect.iscoroutinefunction(tool) else sync)[tool.__name__] = successes.wrap(i, tool)
            sync_dicts.append(sync)
            async_dicts.append(asynchronous)
        trainer._sync_tool_dicts = sync_dicts
        trainer._async_tool_dicts = async_dicts
