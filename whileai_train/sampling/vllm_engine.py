"""vLLM for `evaluate`: which engine samples, and a vLLM backend for single-turn completions.

`engine="auto"` picks vLLM where it is installed, a CUDA device is present and the model is given as a path or
hub id (vLLM loads its own copy), without tools or environments (the tool loop is the generate backend's);
everything else samples with transformers' generate. `engine="vllm"` asks for it and says why when it cannot.
Prompts are rendered and completions parsed by the generate backend's functions, so both engines read and write
the same rows; the sampling settings map onto vLLM's SamplingParams as trl 1.16 maps them (top_k 0 -> -1,
min_p None -> 0). Nothing here imports vLLM until it is used.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping, Sequence
from typing import Any

from whileai_train.errors import ConfigError
from whileai_train.sampling.defaults import ENGINES, EVAL_SEED
from whileai_train.sampling.generate import parse_completions, render_prompts
from whileai_train.sampling.samples import GenerationSettings, Sample, Samples, finish_reason

__all__ = ["VLLMSampler", "choose_engine", "vllm_usable"]


def vllm_usable() -> str | None:
    """None when vLLM can sample here; else why not."""
    if importlib.util.find_spec("vllm") is None:
        return "vLLM is not installed (pip install vllm)"
    import torch

    if not torch.cuda.is_available():
        return "no CUDA device is present"
    return None


def choose_engine(engine: str, model: Any, *, tools: bool) -> str:
    """"vllm" or "transformers" for evaluate(engine=...), or a ConfigError saying why the asked one cannot run."""
    if engine not in ENGINES:
        raise ConfigError(f"engine={engine!r} is not an engine. Fix: pass one of {list(ENGINES)}")
    if engine == "transformers":
        return engine
    blocker = vllm_usable()
    if blocker is None and not isinstance(model, (str, os.PathLike)):
        blocker = "the model is a loaded module; vLLM loads its own copy from a path or hub id"
    if blocker is None and tools:
        blocker = "tools and environments run in the generate backend's tool loop"
    if engine == "vllm" and blocker is not None:
        raise ConfigError(f"engine='vllm' cannot run: {blocker}. Fix: pass engine='transformers' (or 'auto')")
    return "vllm" if blocker is None else "transformers"


class VLLMSampler:
    """k completions per row from a vLLM engine on `model` (a path or hub id), single turn.

    Args:
        model: what vLLM loads (a local path or a hub id).
        tokenizer: the model's tokenizer (renders prompts and parses completions as the generate backend does).
        settings: the generation settings.
        seed: the engine's seed; each sample() call also seeds its requests.
        **engine_kwargs: passed to `vllm.LLM` (gpu_memory_utilization, max_model_len, dtype, ...).
    """

    def __init__(self, model: Any, tokenizer: Any, settings: GenerationSettings, *, seed: int = EVAL_SEED,
                 **engine_kwargs: Any) -> None:
        from vllm import LLM

        self.tokenizer = tokenizer
        self.settings = settings
        self.llm = LLM(model=str(model), seed=seed, **engine_kwargs)
        eos = tokenizer.eos_token_id
        self.stop = [eos] if eos is not None else []
        if tokenizer.pad_token_id is not None:
            self.stop.append(tokenizer.pad_token_id)

    def _params(self, k: int, seed: int | None) -> Any:
        from vllm import SamplingParams

        s = self.settings
        kwargs: dict[str, Any] = {"n": k, "temperature": s.temperature, "top_p": s.top_p,
                                  "top_k": -1 if s.top_k == 0 else s.top_k, "min_p": 0.0 if s.min_p is None else s.min_p,
                                  "repetition_penalty": s.repetition_penalty, "max_tokens": s.max_completion_length,
                                  "seed": seed}
        kwargs.update(dict(s.generation_kwargs))
        return SamplingParams(**kwargs)

    def sample(self, rows: Sequence[Mapping[str, Any]], k: int, *, seed: int | None = None) -> Samples:
        own = [dict(row) for row in rows]
        if not own:
            return Samples(own, [])
        prompts = [row["prompt"] for row in own]
        no_tools: list[Any] = []
        prompt_ids = render_prompts(self.tokenizer, prompts, [no_tools] * len(prompts), None,
                                    self.settings.chat_template_kwargs)
        outputs = self.llm.generate([{"prompt_token_ids": ids} for ids in prompt_ids],
                                    sampling_params=self._params(k, seed), use_tqdm=False)
        samples: list[Sample] = []
        for i, output in enumerate(outputs):
            ids = [list(choice.token_ids) for choice in output.outputs]
            parsed = parse_completions(self.tokenizer, ids, [prompt_ids[i]] * len(ids), [no_tools] * len(ids),
                                       not isinstance(prompts[i], str))
            for j, (completion_ids, completion) in enumerate(zip(ids, parsed, strict=True)):
                samples.append(Sample(row_index=i, repeat=j, prompt=prompts[i], completion=completion,
                                      completion_ids=completion_ids, length=len(completion_ids),
                                      finish_reason=finish_reason(completion_ids, self.stop, completion)))
        return Samples(own, samples)
