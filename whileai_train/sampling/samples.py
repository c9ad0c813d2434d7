"""What a sampler gives back, and the one interface every backend fills.

A `Sampler` takes rows (each with a `prompt`, plus any columns), k and a seed, and returns `Samples`: per
completion the row it came from, the prompt and the completion exactly as TRL passes them to reward functions
(conversational: a list of messages with structured `tool_calls` and `tool` results; text: a string), the token
ids, the completion length in model tokens as TRL counts it (tool results left out), why it ended, the tool calls
made and failed, and the environment instance where the run has one.

Three backends fill it: generate.py (batched `model.generate` with TRL's tool loop, for `evaluate` and the monitor
without a trainer), trainer_path.py (the GRPOTrainer's own generation path: vLLM, ZeRO-3 / FSDP, tools,
environments and rollout_func exactly as in training) and vllm_engine.py (vLLM for `evaluate`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from whileai_train.rows.content import as_text
from whileai_train.rows.contract import final_reply

__all__ = ["FINISH_LENGTH", "FINISH_STOP", "FINISH_TOOL_CALLS", "GenerationSettings", "Sample", "Sampler", "Samples",
           "finish_reason", "settings_from_config", "tool_messages", "trajectory_row"]

# Why a completion ended: an end-of-turn token; the token budget; an assistant turn whose tool calls the loop did
# not run (the iteration cap, or a result that would not fit the budget). The words are OpenAI's finish_reason.
FINISH_STOP, FINISH_LENGTH, FINISH_TOOL_CALLS = "stop", "length", "tool_calls"


@dataclass(frozen=True)
class GenerationSettings:
    """How to sample: GRPOConfig's generation fields (trl 1.16 names and defaults, sampling/defaults.py)."""

    max_completion_length: int
    temperature: float
    top_p: float
    top_k: int
    min_p: float | None
    repetition_penalty: float
    generation_kwargs: Mapping[str, Any] = field(default_factory=dict)
    chat_template_kwargs: Mapping[str, Any] = field(default_factory=dict)
    max_tool_calling_iterations: int | None = None

    def lineage(self) -> dict[str, Any]:
        """The settings a row records (rows produced with different ones are not one evaluation)."""
        out: dict[str, Any] = {"temperature": self.temperature, "top_p": self.top_p, "top_k": self.top_k,
                               "max_completion_length": self.max_completion_length}
        if self.min_p is not None:
            out["min_p"] = self.min_p
        if self.repetition_penalty != 1.0:
            out["repetition_penalty"] = self.repetition_penalty
        if self.generation_kwargs:
            out["generation_kwargs"] = dict(self.generation_kwargs)
        return out


def settings_from_config(config: Any) -> GenerationSettings:
    """The generation settings of a GRPOConfig (or any object with its field names; missing ones take TRL's
    defaults). A chat_template_kwargs given as JSON text is read as GRPOConfig reads it."""
    from whileai_train.sampling import defaults as D

    template_kwargs = getattr(config, "chat_template_kwargs", None) or {}
    if isinstance(template_kwargs, str):
        import json

        template_kwargs = json.loads(template_kwargs)
    top_k = getattr(config, "top_k", D.TOP_K)
    return GenerationSettings(
        max_completion_length=int(getattr(config, "max_completion_length", None) or D.MAX_COMPLETION_LENGTH),
        temperature=float(getattr(config, "temperature", D.TEMPERATURE)),
        top_p=float(getattr(config, "top_p", D.TOP_P)),
        top_k=int(top_k) if top_k is not None else D.TOP_K,
        min_p=getattr(config, "min_p", D.MIN_P),
        repetition_penalty=float(getattr(config, "repetition_penalty", D.REPETITION_PENALTY)),
        generation_kwargs=dict(getattr(config, "generation_kwargs", None) or {}),
        chat_template_kwargs=dict(template_kwargs),
        max_tool_calling_iterations=getattr(config, "max_tool_calling_iterations", None),
    )


@dataclass
class Sample:
    """One completion: where it came from, what TRL's reward functions receive, and how it ended."""

    row_index: int                 # the row of the `rows` passed to sample()
    repeat: int                    # 0..k-1: which of the row's k completions
    prompt: Any                    # the prompt as reward functions receive it (an environment's reset text appended)
    completion: Any                # a list of messages (conversational prompt) or a string
    completion_ids: list[int]      # the model's tokens and, after a tool call, the tool result's tokens
    length: int                    # model tokens as TRL counts them (tool result tokens left out)
    finish_reason: str             # FINISH_STOP, FINISH_LENGTH or FINISH_TOOL_CALLS
    tool_calls: int = 0            # tool calls whose results are in the completion
    tool_failures: int = 0         # ... of which failed (raised, unknown tool, unsupported call)
    environment: Any = None        # the environment instance of this completion, where the run has one
    environment_error: str | None = None  # why this completion's environment could not be built or reset
    extra: dict[str, Any] = field(default_factory=dict)  # per-completion fields a rollout_func returned


@dataclass
class Samples:
    """The completions of one sample() call, in row order, k per row (repeat 0..k-1)."""

    rows: list[dict[str, Any]]
    samples: list[Sample]
    warnings: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.samples)

    @property
    def prompts(self) -> list[Any]:
        return [s.prompt for s in self.samples]

    @property
    def completions(self) -> list[Any]:
        return [s.completion for s in self.samples]

    @property
    def completion_ids(self) -> list[list[int]]:
        return [s.completion_ids for s in self.samples]

    @property
    def environments(self) -> list[Any] | None:
        """One environment per completion where the run has environments (None entries where one failed)."""
        if not any(s.environment is not None or s.environment_error is not None for s in self.samples):
            return None
        return [s.environment for s in self.samples]

    def select(self, keep: Sequence[int]) -> Samples:
        """The samples at `keep` (positions), with the same rows."""
        return Samples(self.rows, [self.samples[i] for i in keep], list(self.warnings))


class Sampler(Protocol):
    """Anything that samples k completions per row."""

    def sample(self, rows: Sequence[Mapping[str, Any]], k: int, *, seed: int | None = None) -> Samples: ...


def finish_reason(completion_ids: Sequence[int], stop_ids: Sequence[int], completion: Any) -> str:
    """Why a completion ended: its last token is not an end token (TRL's truncation test: last id not in EOS or
    pad) -> FINISH_LENGTH; its last turn holds tool calls the loop did not run -> FINISH_TOOL_CALLS; else stop."""
    if not completion_ids or completion_ids[-1] not in stop_ids:
        return FINISH_LENGTH
    if isinstance(completion, list) and completion:
        last = completion[-1]
        if isinstance(last, Mapping) and last.get("role") == "assistant" and last.get("tool_calls"):
            return FINISH_TOOL_CALLS
    return FINISH_STOP


def tool_messages(completion: Any) -> list[Mapping[str, Any]]:
    """The tool results in a conversational completion (one per call the loop ran)."""
    if not isinstance(completion, list):
        return []
    return [m for m in completion if isinstance(m, Mapping) and m.get("role") == "tool"]


def trajectory_row(prompt: Any, completion: Any) -> dict[str, Any]:
    """A prompt and its completion as a row every reader of the row contract reads as a trajectory: a
    conversational one as OpenAI `messages` (the prompt's turns, then the completion's assistant turns with their
    tool calls and the tool results), a text one as a flat rollout (`prompt`, no steps, `final_text`)."""
    if isinstance(prompt, list) and isinstance(completion, list):
        return {"messages": [*prompt, *completion], "final_text": final_reply({"completion": completion})}
    text = completion if isinstance(completion, str) else as_text(completion)
    return {"prompt": prompt if isinstance(prompt, str) else as_text(prompt), "steps": [], "final_text": text}
