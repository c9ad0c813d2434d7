"""The row contract: what a rollout row is, which task it belongs to, and the rules every room reads it by.

Two shapes are accepted, both as plain dicts (rows stay dicts on the hot paths; the pydantic
models below validate and document them):

* the flat rollout row of the platform: ``prompt``, ``steps`` (tool calls ``{tool, arguments,
  result, text?}``, user turns ``{user}``, agent turns ``{text}``), ``final_text``, ``scenario_id``,
  ``task_id``, ``rollout_index``, ``reward``, ``markers``, ``calibration``, ... ;
* OpenAI-style ``messages`` with ``tool_calls`` (arguments as JSON strings or dicts) and ``tool`` turns.

:func:`conversation` turns either into one normalised message list (tool arguments as dicts), which
the exporters and the checks share. Unknown keys pass through untouched. Reading rows from files is
row_files.py's; the walk over flat steps and the failed-result rule are rows_steps.py's, and the JSON rules
rows_json.py's (this module imports them and keeps their names).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator

from whileai_train.errors import RowError
from whileai_train.rows_json import as_text as _as_text
from whileai_train.rows_json import tool_arguments
from whileai_train.rows_steps import (
    StepSizes,
    StepsRead,
    dict_step_sizes,
    read_dict_steps,
    read_steps,
    step_sizes,
    tool_failed,
)

__all__ = [
    "FINAL_TEXT_DIFFERS",
    "FINAL_TEXT_REPEATED",
    "AgentParts",
    "Calibration",
    "Message",
    "Row",
    "Step",
    "StepSizes",
    "StepsRead",
    "ToolCall",
    "agent_parts",
    "agent_turns",
    "ask_of_prompt",
    "calibration_of",
    "carried_stamp",
    "conversation",
    "dict_step_sizes",
    "final_reply",
    "final_is_own_turn",
    "final_text_turn",
    "prompt_text",
    "read_dict_steps",
    "read_steps",
    "reward_error",
    "reward_of",
    "reward_range_error",
    "step_sizes",
    "steps_end_with_reply",
    "task_key",
    "tool_arguments",
    "tool_failed",
    "tool_names",
]

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    """One tool call of an assistant turn; `arguments` is always the decoded JSON object."""

    model_config = ConfigDict(extra="allow")
    id: str | None = None
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Message(BaseModel):
    """One chat message in the normalised (OpenAI-like) shape."""

    model_config = ConfigDict(extra="allow")
    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class Step(BaseModel):
    """One step of a flat rollout: a tool call (`tool`), a user turn (`user`) or an agent turn (`text`)."""

    model_config = ConfigDict(extra="allow")
    tool: str | None = None
    arguments: dict[str, Any] | str | None = None
    result: Any = None
    text: str | None = None
    user: str | None = None


class Calibration(BaseModel):
    """A task's measured difficulty stamped on its rows: pass rate over `n` graded repeats."""

    model_config = ConfigDict(extra="allow")
    task_id: str
    student: str | None = None
    n: int = Field(ge=1)
    pass_rate: float = Field(ge=0.0, le=1.0)
    pass_rate_ci95: tuple[float, float] | None = None
    mean_kl: float | None = None


class Row(BaseModel):
    """A rollout row. Either `messages`, or `prompt` (+ `steps`, `final_text`); extra keys pass through."""

    model_config = ConfigDict(extra="allow")
    prompt: str | None = None
    messages: list[Message] | None = None
    steps: list[Step] | None = None
    final_text: str | None = None
    scenario_id: str | None = None
    task_id: str | None = None
    rollout_index: int | None = None
    reward: float | None = None
    markers: dict[str, float | None] | None = None
    calibration: Calibration | None = None
    privileged: Any = None
    lineage: dict[str, Any] | None = None
    finish_reason: str | None = None
    model_version: str | None = None
    policy_version: str | None = None
    tools: list[dict[str, Any]] | None = None

    @field_validator("reward", mode="before")
    @classmethod
    def _reward_is_a_number(cls, value: Any) -> Any:
        if isinstance(value, bool) or (value is not None and not isinstance(value, (int, float))):
            raise ValueError(f"reward is {type(value).__name__} {value!r}, not a number. Fix: {_REWARD_FIX}")
        return value


# ---------------------------------------------------------------------------------------------- the ask


def ask_of_prompt(prompt: Any) -> str:
    """The ask of a prompt: a string as it is; in a conversational prompt (a list of messages) its last user turn,
    since the prompt ends where the agent's reply begins (earlier user turns are context, e.g. few-shot examples);
    "" when there is none."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        return _last_user_turn(prompt, stop_at_agent=False)
    return ""


def _last_user_turn(messages: Iterable[Any], *, stop_at_agent: bool) -> str:
    ask = ""
    for message in messages:
        if isinstance(message, Mapping):
            role = message.get("role")
            if role == "user":
                ask = _as_text(message.get("content"))
            elif stop_at_agent and role == "assistant":
                break
    return ask


def prompt_text(row: Mapping[str, Any]) -> str:
    """The ask of a row, the one every gate, selector and callback reads: `prompt` by :func:`ask_of_prompt`; a row
    without `prompt` asks the last user turn of `messages` before the agent's first turn; "" when it has none."""
    prompt = row.get("prompt")
    if prompt.__class__ is str:
        return prompt  # type: ignore[no-any-return]
    if prompt is not None:
        return ask_of_prompt(prompt)
    return _last_user_turn(row.get("messages") or (), stop_at_agent=True)


def task_key(row: Mapping[str, Any]) -> str:
    """The task a row belongs to: `scenario_id`, else `task_id`, else its ask (:func:`prompt_text`).

    Every report groups by this, so repeats and rephrasings of one situation count as one task.
    """
    scenario = row.get("scenario_id")
    if scenario.__class__ is str and scenario:
        return scenario  # type: ignore[no-any-return]
    for key in ("scenario_id", "task_id"):
        value = row.get(key)
        if value is not None and value != "":
            return str(value)
    return prompt_text(row)


# ---------------------------------------------------------------------------------------------- rewards

_REWARD_FIX = "write the grader's score as a number (1.0 pass, 0.0 fail, partial credit in between), or null when ungraded"
_REWARD_RANGE_FIX = ("rescale rewards to 0..1 (1.0 pass, 0.0 fail, partial credit in between, e.g. divide by the "
                     "maximum score), or set reward to null when ungraded")


def reward_error(index: int | None, value: Any, others: str = "") -> RowError:
    """The error for a reward that is not a number, or is NaN or infinite; `others` names further such rows."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        problem = f"reward is {type(value).__name__} {value!r}, not a number"
    else:
        problem = "reward is NaN" if math.isnan(value) else f"reward is {value}, not a finite number"
    return RowError(index, "reward", f"{problem}{f' ({others})' if others else ''}", _REWARD_FIX)


def reward_range_error(index: int | None, value: Any, others: str = "") -> RowError:
    """The error for a reward outside [0, 1] where pass rates and the pass split need 0..1."""
    return RowError(index, "reward", f"reward {value!r} is outside [0, 1]{f' ({others})' if others else ''}; pass "
                    "rates and the pass split need 0..1", _REWARD_RANGE_FIX)


def reward_of(row: Mapping[str, Any], index: int | None = None) -> float | None:
    """The row's reward as a float, None when ungraded; :func:`reward_error` for a wrong type, NaN or infinity."""
    value = row.get("reward")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise reward_error(index, value)
    return float(value)


# ---------------------------------------------------------------------------------------------- the stamp


def carried_stamp(row: Mapping[str, Any]) -> Any:
    """The calibration stamp a row carries, as given (`calibration`, else `extra.calibration`), or None."""
    stamp = row.get("calibration")
    if stamp is None:
        extra = row.get("extra")
        if extra is not None and isinstance(extra, Mapping):
            stamp = extra.get("calibration")
    return stamp


def calibration_of(row: Mapping[str, Any]) -> Calibration | None:
    """The row's calibration stamp (:func:`carried_stamp`) typed, or None."""
    stamp = carried_stamp(row)
    if stamp is None:
        return None
    if isinstance(stamp, Calibration):
        return stamp
    return Calibration.model_validate(stamp)


def _from_steps(row: Mapping[str, Any], index: int | None) -> list[dict[str, Any]]:
    prompt = row.get("prompt")
    if not isinstance(prompt, str):
        raise RowError(index, "prompt", f"prompt is {type(prompt).__name__}, not text",
                       "give each flat rollout row the user's ask as a string `prompt`, or pass `messages`")
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    steps = row.get("steps") or []
    if not isinstance(steps, list):
        raise RowError(index, "steps", f"steps is {type(steps).__name__}, not a list",
                       "write steps as a list of {tool, arguments, result} / {user} / {text} objects")
    append = messages.append
    for number, step in enumerate(steps):  # hot path: exact types first, field names only on error
        if type(step) is not dict and not isinstance(step, Mapping):
            raise RowError(index, f"steps[{number}]", f"step is {type(step).__name__}, not an object",
                           "write each step as {tool, arguments, result}, {user} or {text}")
        get = step.get
        tool = get("tool")
        if tool is not None:
            call_id = str(get("id") or get("call_id") or f"call_{number}")
            raw = get("arguments")
            arguments = dict(raw) if type(raw) is dict else tool_arguments(raw, index, f"steps[{number}].arguments")
            text = get("text")
            name = str(tool)
            append({
                "role": "assistant", "content": text if type(text) is str else _as_text(text),
                "tool_calls": [{"id": call_id, "type": "function",
                                "function": {"name": name, "arguments": arguments}}],
            })
            if "result" in step:
                result = get("result")
                append({"role": "tool", "tool_call_id": call_id, "name": name,
                        "content": result if type(result) is str else _as_text(result)})
        elif get("user") is not None:
            append({"role": "user", "content": _as_text(step["user"])})
        elif get("text") is not None:
            append({"role": "assistant", "content": _as_text(step["text"])})
        else:
            raise RowError(index, f"steps[{number}]", "step has none of `tool`, `user` or `text`",
                           "a step is a tool call {tool, arguments, result}, a user turn {user}, or {text}")
    final = row.get("final_text")
    if final is not None and not isinstance(final, str):
        raise RowError(index, "final_text", f"final_text is {type(final).__name__}, not text",
                       "write the agent's last reply as a string (or null when it ended on a tool call)")
    if final and final_is_own_turn(steps, final):
        append({"role": "assistant", "content": final})
    return messages


def _from_messages(raw: Any, index: int | None) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise RowError(index, "messages", f"messages is {type(raw).__name__}, not a list",
                       "write messages as a list of {role, content} objects")
    messages: list[dict[str, Any]] = []
    for number, message in enumerate(raw):
        field = f"messages[{number}]"
        if not isinstance(message, Mapping):
            raise RowError(index, field, "message is not an object", "write each message as {role, content}")
        role = message.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            raise RowError(index, f"{field}.role", f"role is {role!r}",
                           "use one of system, user, assistant, tool")
        out: dict[str, Any] = {"role": role, "content": _as_text(message.get("content"))}
        calls = message.get("tool_calls")
        if calls:
            normalised = []
            for call_number, call in enumerate(calls):
                call_field = f"{field}.tool_calls[{call_number}]"
                function = call.get("function", call) if isinstance(call, Mapping) else None
                if not isinstance(function, Mapping) or not function.get("name"):
                    raise RowError(index, call_field, "tool call has no function name",
                                   "write tool calls as {id, type: function, function: {name, arguments}}")
                normalised.append({
                    "id": str(call.get("id") or f"call_{number}_{call_number}"), "type": "function",
                    "function": {"name": str(function["name"]),
                                 "arguments": tool_arguments(function.get("arguments"), index,
                                                              f"{call_field}.function.arguments")},
                })
            out["tool_calls"] = normalised
        if role == "tool":
            if message.get("tool_call_id") is not None:
                out["tool_call_id"] = str(message["tool_call_id"])
            if message.get("name") is not None:
                out["name"] = str(message["name"])
        messages.append(out)
    return messages


def conversation(row: Mapping[str, Any], index: int | None = None) -> list[dict[str, Any]]:
    """The row as one normalised message list: tool arguments decoded to dicts, content as text.

    A system message, if the row has one, stays first; nothing is added or dropped here (the
    exporters decide what to cut), except that a flat rollout's `final_text` repeating the reply its steps end
    on is that turn, not a second one (:func:`final_text_turn`). Raises :class:`RowError` naming the row and field on bad input.
    """
    if type(row) is not dict and not isinstance(row, Mapping):
        raise RowError(index, None, f"row is {type(row).__name__}, not an object",
                       "pass rows as dicts (one JSON object per line in a JSONL file)")
    if row.get("messages") is not None:
        return _from_messages(row["messages"], index)
    if "prompt" not in row:
        raise RowError(index, "prompt", "row has neither `messages` nor `prompt`",
                       "give each row the conversation as `messages`, or the ask as `prompt` with `steps`")
    return _from_steps(row, index)


# A flat rollout's `final_text` against the turn its steps end on: the same reply again, or a different one.
FINAL_TEXT_REPEATED, FINAL_TEXT_DIFFERS = "final_text_repeated", "final_text_differs"


def steps_end_with_reply(steps: Any) -> str | None:
    """The text of the plain agent turn (a ``{text}`` step: no tool, no user) a flat rollout's steps end on, else
    None (no steps, or they end on a tool call, its result or a user turn)."""
    if steps.__class__ is not list or not steps:
        return None
    last = steps[-1]
    if last.__class__ is not dict and not isinstance(last, Mapping):  # (the exact type first: the ABC check is slow)
        return None
    if last.get("tool") is not None or last.get("user") is not None:
        return None
    text = last.get("text")
    if text is None:
        return None
    return text if text.__class__ is str else _as_text(text)


def final_text_turn(last_reply: str | None, final: str) -> str | None:
    """The rule for a flat rollout's non-empty `final_text`, given the agent reply its steps end on
    (:func:`steps_end_with_reply`; an exporter passes the reply its cleaned messages end on).

    None: the steps do not end with an agent reply, so `final_text` is the reply, a turn of its own.
    FINAL_TEXT_REPEATED: they end with the same text, so it is that turn, not a second one (a simulator that
    records the last reply both as a step and as the final text). FINAL_TEXT_DIFFERS: they end with another
    reply; both are turns, and a reader that can say so counts the row (never a silent pick).
    """
    if last_reply is None:
        return None
    return FINAL_TEXT_REPEATED if last_reply == final else FINAL_TEXT_DIFFERS


def final_is_own_turn(steps: Any, final: str) -> bool:
    """Whether a flat rollout's `final_text` is an agent turn of its own: not empty, and not the reply its steps
    already end on (:func:`final_text_turn` short of its FINAL_TEXT_DIFFERS count)."""
    return bool(final) and final_text_turn(steps_end_with_reply(steps), final) != FINAL_TEXT_REPEATED


# ---------------------------------------------------------------------------------------------- what the agent did


def final_reply(row: Mapping[str, Any]) -> str:
    """The agent's final reply: `final_text`, else the last assistant message with content in `messages`, else a
    `completion` (a string, or the last assistant message of a conversational one); "" when there is none.

    Only the last reply: :func:`agent_turns` is every text the agent wrote along the way."""
    final = row.get("final_text")
    if isinstance(final, str):
        return final
    completion = row.get("completion")
    for messages in (row.get("messages"), completion if isinstance(completion, list) else None):
        listed: list[Any] = messages if isinstance(messages, list) else []
        for message in reversed(listed):
            if isinstance(message, Mapping) and message.get("role") == "assistant" and message.get("content"):
                return _as_text(message.get("content"))
    if isinstance(completion, str):
        return completion
    return ""


class AgentParts(NamedTuple):
    """What the agent did in a row: its texts in order (its turns, then the final reply), its tool calls, the
    turns of the trajectory and the calls whose result reports failure."""

    texts: list[str]
    calls: list[tuple[str, Any]]
    turns: int
    errors: int


def agent_parts(row: Mapping[str, Any]) -> AgentParts:
    """What the agent did, in any row shape: flat `steps` (:func:`read_steps`) and `final_text` (else
    `completion`), OpenAI `messages` (every turn after the first user message, system messages aside), or a TRL
    conversational `completion`."""
    messages = row.get("messages")
    if messages is not None:
        return _messages_parts(messages if isinstance(messages, list) else [], skip_first_user=True)
    steps = row.get("steps")
    texts, calls, turns, errors = read_steps(steps)
    final = row.get("final_text")
    if final is None:
        final = row.get("completion")
    if isinstance(final, str) and final_is_own_turn(steps, final):
        texts.append(final)
        turns += 1
    elif isinstance(final, list):  # a conversational completion (TRL): every message in it is the agent's side
        more = _messages_parts(final, skip_first_user=False)
        texts.extend(more.texts)
        calls.extend(more.calls)
        turns += more.turns
        errors += more.errors
    return AgentParts(texts, calls, turns, errors)


def _messages_parts(messages: list[Any], *, skip_first_user: bool) -> AgentParts:
    texts: list[str] = []
    calls: list[tuple[str, Any]] = []
    turns = errors = 0
    seen_user = not skip_first_user
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role == "system":
            continue
        if role == "user" and not seen_user:
            seen_user = True
            continue
        turns += 1
        if role == "tool":
            errors += tool_failed(message.get("content"))
        elif role == "assistant":
            content = message.get("content")
            if content:
                texts.append(content if isinstance(content, str) else _as_text(content))
            for call in message.get("tool_calls") or ():
                function = call.get("function", call) if isinstance(call, Mapping) else None
                if isinstance(function, Mapping) and function.get("name"):
                    calls.append((str(function["name"]), _as_text(function.get("arguments"))))
    return AgentParts(texts, calls, turns, errors)


def agent_turns(row: Mapping[str, Any]) -> list[str]:
    """Every text the agent wrote in a row, in order: its turns along the way, then its final reply (the words
    hack_scan counts). :func:`final_reply` is the last reply only."""
    return agent_parts(row).texts


def tool_names(row: Mapping[str, Any]) -> list[str]:
    """The names of the tools a row called, in order (every row shape)."""
    return [name for name, _ in agent_parts(row).calls]

