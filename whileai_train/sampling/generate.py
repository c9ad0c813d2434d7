"""The generate backend: batched `model.generate` over prompts x k, with TRL 1.16's chat template, tool loop and
response parsing, on its own random stream.

What it does as GRPOTrainer does (docs/trl_facts.md; tests pin the two equal on a tiny model that calls tools):
- prompts are rendered with the tokenizer's chat template and the tool schemas (standalone tools plus the
  environment's methods), TRL's training template where the tokenizer's is not prefix-preserving;
- sequences are left-padded and sampled with TRL's GenerationConfig (do_sample, temperature, top_p, top_k, min_p,
  repetition_penalty, every eos id the model declares, generation_kwargs on top); a completion ends at its first
  end token;
- a conversational completion is parsed into structured `tool_calls` with TRL's `parse_response` where the
  tokenizer has a response template, else decoded as plain text;
- tool calls are run (tools.py), their results appended with the template's own tool-result tokens, and the model
  continues from there, up to `max_tool_calling_iterations`; a result that would push the completion past
  `max_completion_length` (or the model's context) is dropped and the completion ends on its call.

Sampling runs under ``torch.random.fork_rng`` (CPU and the model's CUDA device) with the model in eval mode and no
grad, and puts train mode back: the caller's random streams are untouched. With `seed` the stream inside is seeded,
so the same call on the same machine gives the same completions.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from whileai_train.errors import ChatTemplateError
from whileai_train.sampling.defaults import BATCH_SEQUENCES
from whileai_train.sampling.samples import GenerationSettings, Sample, Samples, finish_reason
from whileai_train.sampling.tools import (
    EnvironmentPool,
    Slot,
    ToolBox,
    environment_methods,
    factories_of,
    reset_environments,
    run_tool_calls,
)

__all__ = ["GenerateSampler", "own_random_stream", "parse_completions", "render_prompts", "stop_ids", "tool_ready"]


@contextmanager
def own_random_stream(model: Any, seed: int | None) -> Iterator[None]:
    """Sample on a forked random stream (CPU and the model's CUDA device), seeded when `seed` is given, with the
    model in eval mode and no grad; the caller's streams and train mode come back as they were."""
    import torch

    device = _device(model)
    devices = [device.index if device.index is not None else torch.cuda.current_device()] \
        if device.type == "cuda" else []
    was_training = bool(getattr(model, "training", False))
    with torch.random.fork_rng(devices=devices), torch.no_grad():
        if seed is not None:
            torch.default_generator.manual_seed(seed)
            if devices:
                with torch.cuda.device(devices[0]):
                    torch.cuda.manual_seed(seed)
        model.eval()
        try:
            yield
        finally:
            model.train(was_training)


def _device(model: Any) -> Any:
    return next(model.parameters()).device


def stop_ids(model: Any, tokenizer: Any) -> list[int]:
    """The ids that end a completion, as TRL collects them: the tokenizer's eos first, then every eos id the
    model's generation config declares."""
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids = [] if eos is None else ([eos] if isinstance(eos, int) else list(eos))
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids = [tokenizer.eos_token_id, *ids]
    return ids


class GenerateSampler:
    """k completions per row from `model` with `model.generate`, batched over prompts x repeats.

    Args:
        model: a transformers causal LM (or a PEFT model around one).
        tokenizer: its tokenizer (a copy gets TRL's response template when tools are given; yours is untouched).
        settings: the generation settings (GRPOConfig's fields: `settings_from_config(config)`).
        tools: functions the policy may call (schemas from their signatures and docstrings, as TRL reads them).
        environment_factory: a callable returning an environment (reset + tool methods), or {name: factory} with
            rows naming theirs in an `environment` column, as GRPOTrainer takes it.
        batch_sequences: sequences per `model.generate` call.
    """

    def __init__(self, model: Any, tokenizer: Any, settings: GenerationSettings, *,
                 tools: Sequence[Callable[..., Any]] = (), environment_factory: Any = None,
                 batch_sequences: int = BATCH_SEQUENCES) -> None:
        self.model = model
        self.settings = settings
        self.tools = list(tools)
        factories = factories_of(environment_factory)
        self.pool = EnvironmentPool(factories) if factories else None
        self.batch_sequences = max(1, int(batch_sequences))
        self.tokenizer = tokenizer
        self.chat_template: str | None = None
        self._schema_tools: dict[Any, list[Callable[..., Any]]] = {}
        if self.tools or self.pool is not None:
            self.tokenizer, self.chat_template = tool_ready(tokenizer)
        self.stop = stop_ids(model, tokenizer)
        pad = tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else self.stop[0]

    # -- the public call ----------------------------------------------------------------------------------
    def sample(self, rows: Sequence[Mapping[str, Any]], k: int, *, seed: int | None = None) -> Samples:
        """k completions per row, in row order (repeat 0..k-1 of row 0, then row 1, ...)."""
        own = [dict(row) for row in rows]
        expanded = [row for row in own for _ in range(k)]
        if not expanded:
            return Samples(own, [])
        warnings: list[str] = []
        slots, prompts = reset_environments(self.pool, expanded, warnings)
        tool_lists = [self._tools_for(row, slot) for row, slot in zip(expanded, slots, strict=True)]
        with own_random_stream(self.model, seed):
            prompt_ids = render_prompts(self.tokenizer, prompts, tool_lists, self.chat_template,
                                        self.settings.chat_template_kwargs)
            completion_ids = self._generate(prompt_ids, self.settings.max_completion_length)
            conversational = not isinstance(prompts[0], str)
            completions = parse_completions(self.tokenizer, completion_ids, prompt_ids, tool_lists, conversational)
            masks = [[1] * len(ids) for ids in completion_ids]
            calls = [0] * len(expanded)
            failures = [0] * len(expanded)
            if tool_lists and any(tool_lists):
                boxes = [ToolBox.of(self._callable_tools(slot)) for slot in slots]
                self._tool_loop(prompt_ids, completion_ids, completions, masks, boxes, tool_lists, calls, failures)
        stops = [*self.stop, self.pad_id]
        samples = [
            Sample(row_index=i // k, repeat=i % k, prompt=prompts[i], completion=completions[i],
                   completion_ids=completion_ids[i], length=sum(masks[i]),
                   finish_reason=finish_reason(completion_ids[i], stops, completions[i]), tool_calls=calls[i],
                   tool_failures=failures[i], environment=slots[i].environment, environment_error=slots[i].error)
            for i in range(len(expanded))]
        return Samples(own, samples, list(dict.fromkeys(warnings)))

    # -- environments and tools ---------------------------------------------------------------------------
    def _tools_for(self, row: Mapping[str, Any], slot: Slot) -> list[Callable[..., Any]]:
        """The tools whose schemas a prompt is rendered with: the standalone tools and its environment's methods
        (read once per environment name from the first instance that could be built, as TRL probes one)."""
        if self.pool is None:
            return self.tools
        name = self.pool.name_of(row)
        if name not in self._schema_tools and slot.environment is not None:
            self._schema_tools[name] = environment_methods(slot.environment)
        return self.tools + self._schema_tools.get(name, [])

    def _callable_tools(self, slot: Slot) -> list[Callable[..., Any]]:
        """The tools a completion may call: the standalone tools and its own environment's methods."""
        return self.tools + (environment_methods(slot.environment) if slot.environment is not None else [])

    # -- tokens -------------------------------------------------------------------------------------------
    def _generation_config(self, max_new_tokens: int) -> Any:
        from transformers import GenerationConfig

        s = self.settings
        kwargs: dict[str, Any] = {
            "max_new_tokens": max_new_tokens, "do_sample": True, "pad_token_id": self.pad_id,
            "bos_token_id": self.tokenizer.bos_token_id, "eos_token_id": self.stop, "temperature": s.temperature,
            "top_p": s.top_p, "top_k": s.top_k, "min_p": s.min_p, "repetition_penalty": s.repetition_penalty,
        }
        kwargs.update(dict(s.generation_kwargs))
        return GenerationConfig(**kwargs, disable_compile=True)

    def _generate(self, sequences: list[list[int]], max_new_tokens: int) -> list[list[int]]:
        """Completion ids for each sequence, cut after its first end token, batch_sequences at a time."""
        import torch

        device = _device(self.model)
        config = self._generation_config(max_new_tokens)
        out: list[list[int]] = []
        for start in range(0, len(sequences), self.batch_sequences):
            chunk = sequences[start:start + self.batch_sequences]
            width = max(len(x) for x in chunk)
            input_ids = torch.tensor([[self.pad_id] * (width - len(x)) + x for x in chunk], device=device)
            mask = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in chunk], device=device)
            generated = self.model.generate(input_ids=input_ids, attention_mask=mask, generation_config=config)
            for seq in generated[:, width:].tolist():
                cut = next((j for j, t in enumerate(seq) if t in self.stop), None)
                out.append(seq if cut is None else seq[:cut + 1])
        return out

    # -- the tool loop ------------------------------------------------------------------------------------
    def _tool_loop(self, prompt_ids: list[list[int]], completion_ids: list[list[int]], completions: list[Any],
                   masks: list[list[int]], boxes: list[ToolBox], tool_lists: list[list[Callable[..., Any]]],
                   calls: list[int], failures: list[int]) -> None:
        """Run the tools the completions call, append the results and let the model go on, in place."""
        from trl.chat_template_utils import parse_response

        budget = self.settings.max_completion_length
        context = int(getattr(self.model.config, "max_position_embeddings", 1 << 62))
        iterations = self.settings.max_tool_calling_iterations
        active = [i for i, c in enumerate(completions) if c[-1].get("tool_calls")]
        done = 0
        while active and (iterations is None or done < iterations):
            going: list[tuple[int, list[int]]] = []
            for i in active:
                results, failed = run_tool_calls(completions[i][-1]["tool_calls"], boxes[i])
                sequence = prompt_ids[i] + completion_ids[i] + self._result_ids(results)
                if len(sequence) - len(prompt_ids[i]) > budget or len(sequence) >= context:
                    continue  # the results do not fit: the completion ends on its call, as in TRL
                completions[i].extend(results)
                calls[i] += len(results)
                failures[i] += failed
                going.append((i, sequence))
            if not going:
                break
            room = max(budget - (len(seq) - len(prompt_ids[i])) for i, seq in going)
            continued = self._generate([seq for _, seq in going], max(1, room))
            active = []
            for (i, sequence), more in zip(going, continued, strict=True):
                used = len(sequence) - len(prompt_ids[i])
                more = more[:max(0, budget - used)]
                masks[i] += [0] * (used - len(completion_ids[i])) + [1] * len(more)
                completion_ids[i] = sequence[len(prompt_ids[i]):] + more
                if not more:
                    continue
                parsed = parse_response(self.tokenizer, more, prefix=sequence, tools=list[Any](tool_lists[i]))
                completions[i].append(parsed)
                if parsed.get("tool_calls"):
                    active.append(i)
            done += 1

    def _result_ids(self, results: list[dict[str, Any]]) -> list[int]:
        """The tokens the chat template puts between an assistant turn that called tools and the model's next
        turn: the rendering of a short conversation with the results, less its rendering without them (cut after
        its last end-of-turn token)."""
        call = {"type": "function", "function": {"name": results[0]["name"], "arguments": {}}}
        head = [{"role": "user", "content": "x"}, {"role": "assistant", "content": "", "tool_calls": [call]}]
        kwargs = dict(tokenize=True, chat_template=self.chat_template, return_dict=False,
                      **dict(self.settings.chat_template_kwargs))
        before = list(self.tokenizer.apply_chat_template(head, add_generation_prompt=False, **kwargs))
        after = list(self.tokenizer.apply_chat_template(head + results, add_generation_prompt=True, **kwargs))
        ends = [j for j, t in enumerate(before) if t == self.tokenizer.eos_token_id]
        if ends:
            before = before[:ends[-1] + 1]
        if after[:len(before)] != before:
            raise ChatTemplateError("the chat template renders an assistant turn differently once tool results "
                                    "follow it, so the results cannot be appended to the sampled tokens. Fix: use "
                                    "a prefix-preserving chat template (TRL's training templates are)")
        return after[len(before):]


def render_prompts(tokenizer: Any, prompts: list[Any], tool_lists: list[list[Callable[..., Any]]],
                   chat_template: str | None, template_kwargs: Mapping[str, Any]) -> list[list[int]]:
    """Prompt token ids as TRL renders them: a conversational prompt through the chat template with its tools
    (`tools=None` for none, as TRL passes it) and the generation prompt; a text prompt tokenized as is."""
    if isinstance(prompts[0], str):
        return [list(ids) for ids in tokenizer(text=prompts)["input_ids"]]
    out: list[list[int]] = []
    cache: dict[tuple[str, int], list[int]] = {}
    for prompt, tools in zip(prompts, tool_lists, strict=True):
        key = (repr(prompt), id(tools))
        if key not in cache:
            rendered = tokenizer.apply_chat_template(
                conversation=[prompt], tools=tools or None, chat_template=chat_template, add_generation_prompt=True,
                tokenize=True, return_dict=True, **dict(template_kwargs))
            cache[key] = list(rendered["input_ids"][0])
        out.append(cache[key])
    return out


def parse_completions(tokenizer: Any, completion_ids: list[list[int]], prefixes: list[list[int]],
                      tool_lists: list[list[Callable[..., Any]]], conversational: bool) -> list[Any]:
    """Completions as TRL hands them to reward functions: text decoded without special tokens; a conversational
    one parsed into an assistant message with structured tool_calls (TRL's parse_response) where the tokenizer
    has a response template, else one assistant message with the decoded text."""
    if not conversational:
        return list(tokenizer.batch_decode(completion_ids, skip_special_tokens=True))
    if not _parses_responses(tokenizer):
        texts = tokenizer.batch_decode(completion_ids, skip_special_tokens=True)
        return [[{"role": "assistant", "content": t}] for t in texts]
    from trl.chat_template_utils import parse_response

    return [[parse_response(tokenizer, ids, prefix=prefix, tools=list[Any](tools))]
            for ids, prefix, tools in zip(completion_ids, prefixes, tool_lists, strict=True)]


def _parses_responses(tokenizer: Any) -> bool:
    return getattr(tokenizer, "response_template", None) is not None \
        or getattr(tokenizer, "response_schema", None) is not None


def tool_ready(tokenizer: Any) -> tuple[Any, str | None]:
    """A copy of the tokenizer that parses tool calls (TRL's response template for known chat templates, set on
    the copy only) and the chat template to render with: TRL's training template where the tokenizer's is not
    prefix-preserving, as GRPOTrainer does with tools."""
    from trl.chat_template_utils import (
        add_response_schema,
        get_training_chat_template,
        is_chat_template_prefix_preserving,
    )

    own = copy.copy(tokenizer)
    if not _parses_responses(own):
        try:
            add_response_schema(own)
        except ValueError as exc:
            raise ChatTemplateError(f"the tokenizer's chat template is not one TRL can parse tool calls from ({exc}). "
                                    "Fix: set tokenizer.response_template for your template (transformers' response "
                                    "parsing docs)") from exc
    template = None if is_chat_template_prefix_preserving(own) else get_training_chat_template(own)
    return own, template
