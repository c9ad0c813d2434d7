"""The row contract: what a rollout row is, which task it belongs to, and the rules every room reads it by.

Two shapes are accepted, both as plain dicts (rows stay dicts on the hot paths; the pydantic
models below validate and document them):

* the flat rollout row of the platform: ``prompt``, ``steps`` (tool calls ``{tool, arguments,
  result, text?}``, user turns ``{user}``, agent turns ``{text}``), ``final_text``, ``scenario_id``,
  ``task_id``, ``rollout_index``, ``reward``, ``markers``, ``calibration``, ... ; the platform schema's rows may
  carry ``messages`` beside ``steps`` (``messages`` is then the conversation read), ``lineage``, ``seeded``,
  ``faults`` and keys of their own;
* ``messages`` as OpenAI writes them (``tool_calls`` with arguments as JSON strings or dicts, ``tool`` turns)
  or as Anthropic does (content blocks: ``tool_use``, ``tool_result`` in a user turn, a top-level ``system``).

Content is read by one rule, rows/content.py (a string, text parts, call and result blocks; a non-text part is
skipped by readers and refused by exports). :func:`conversation` turns any row into one normalised message list
(tool arguments as dicts, content as text), the exporters' view; rows/trajectory.py reads a row's trajectory once
for every check. Unknown keys pass through untouched. Reading rows from files is rows/files.py's; the one step
walker is rows/steps.py's, the failed-result rule rows/failure.py's, the arguments rule rows/json_text.py's (this
module imports them and keeps their names).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from whileai_train.errors import RowError
from whileai_train.rows.content import content_text, non_text_error, plain_text, read_content
from whileai_train.rows.failure import tool_failed
from whileai_train.rows.json_text import tool_arguments
from whileai_train.rows.steps import (
    FINAL_TEXT_DIFFERS,
    FINAL_TEXT_REPEATED,
    NO_RESULT,
    STEP_CALL,
    STEP_NOT_OBJECT,
    STEP_TEXT,
    STEP_USER,
    final_is_own_turn,
    final_text_turn,
    steps_end_with_reply,
    walk_steps,
)
from whileai_train.rows.trajectory import AgentParts, read_trajectory

__all__ = [
    "FINAL_TEXT_DIFFERS",
    "FINAL_TEXT_REPEATED",
    "AgentParts",
    "Calibration",
    "Message",
    "Policy",
    "Row",
    "Step",
    "ToolCall",
    "agent_parts",
    "agent_turns",
    "ask_of_prompt",
    "calibration_of",
    "carried_stamp",
    "content_text",
    "conversation",
    "final_is_own_turn",
    "final_reply",
    "final_text_turn",
    "prompt_text",
    "reward_error",
    "reward_of",
    "reward_range_error",
    "steps_end_with_reply",
    "task_key",
    "tool_arguments",
    "tool_failed",
    "tool_names",
]

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    """One tool call of an assistant turn: OpenAI's wire form ``{id, type, function: {name, arguments}}`` (the
    arguments a JSON text or an object), or the flat ``{id, name, arguments}``; rows.conversation reads either."""

    model_config = ConfigDict(extra="allow")
    id: str | None = None
    name: str | None = None
    arguments: dict[str, Any] | str | None = None
    function: dict[str, Any] | None = None


class Message(BaseModel):
    """One chat message in the normalised (OpenAI-like) shape."""

    model_config = ConfigDict(extra="allow")
    role: Role
    content: str | list[dict[str, Any]] | None = None  # text, or parts / blocks (rows/content.py)
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


class Policy(BaseModel):
    """The policy that produced a row, as the platform's select and optimize stamp it in a Calibration."""

    model_config = ConfigDict(extra="allow")
    name: str | None = None
    model: str | None = None
    prompt_hash: str | None = None
    version: str | None = None


class Calibration(BaseModel):
    """A task's measured difficulty stamped on its rows: pass rate over `n` graded repeats, and the policy that
    produced them (`student`: the policy object, or its name as a string)."""

    model_config = ConfigDict(extra="allow")
    task_id: str
    student: str | Policy | None = None
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
    tools: list[dict[str, Any]] | str | None = None  # JSON schemas, or their JSON text (as TRL reads them)

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
                ask = content_text(message.get("content"))
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


def calibration_of(row: Mapping[str, Any], index: int | None = None) -> Calibration | None:
    """The row's calibration stamp (:func:`carried_stamp`) typed, or None; a stamp that is not a Calibration is a
    RowError naming the row (`index`) and the field at fault."""
    stamp = carried_stamp(row)
    if stamp is None:
        return None
    if isinstance(stamp, Calibration):
        return stamp
    try:
        return Calibration.model_validate(stamp)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = "calibration" + (f".{error['loc'][0]}" if error["loc"] else "")
        got = f", got {error['input']!r}" if error["loc"] else ""
        raise RowError(index, field, f"the calibration stamp is not a Calibration ({error['msg']}{got})",
                       "write calibration as {task_id, n >= 1, pass_rate in [0, 1], pass_rate_ci95: [low, high], "
                       "student: the policy's name or {name, model, prompt_hash, version}}, or drop it") from None


def _from_steps(row: Mapping[str, Any], index: int | None) -> list[dict[str, Any]]:
    prompt = row.get("prompt")
    if isinstance(prompt, list):  # a conversational prompt (TRL): the turns before the agent's
        messages = _from_messages(prompt, index)
    elif isinstance(prompt, str):
        messages = [{"role": "user", "content": prompt}]
    else:
        raise RowError(index, "prompt", f"prompt is {type(prompt).__name__}, not text",
                       "give each flat rollout row the user's ask as a string `prompt` (or a list of messages), "
                       "or pass `messages`")
    steps = row.get("steps") or []
    if not isinstance(steps, list):
        raise RowError(index, "steps", f"steps is {type(steps).__name__}, not a list",
                       "write steps as a list of {tool, arguments, result} / {user} / {text} objects")
    append = messages.append
    for number, kind, step, head, raw, text, result in walk_steps(steps):
        if kind == STEP_CALL:
            call_id = str(step.get("id") or step.get("call_id") or f"call_{number}")
            arguments = dict(raw) if raw.__class__ is dict else tool_arguments(raw, index, f"steps[{number}].arguments")
            name = str(head)
            append({
                "role": "assistant", "content": text if text.__class__ is str else plain_text(
                    text, index, f"steps[{number}].text"),
                "tool_calls": [{"id": call_id, "type": "function",
                                "function": {"name": name, "arguments": arguments}}],
            })
            if result is not NO_RESULT:
                append({"role": "tool", "tool_call_id": call_id, "name": name,
                        "content": result if result.__class__ is str else plain_text(
                            result, index, f"steps[{number}].result")})
        elif kind == STEP_USER:
            append({"role": "user", "content": plain_text(head, index, f"steps[{number}].user")})
        elif kind == STEP_TEXT:
            append({"role": "assistant", "content": plain_text(text, index, f"steps[{number}].text")})
        elif kind == STEP_NOT_OBJECT:
            raise RowError(index, f"steps[{number}]", f"step is {type(step).__name__}, not an object",
                           "write each step as {tool, arguments, result}, {user} or {text}")
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


def _tool_call(call_id: Any, name: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """One tool call as the normalised messages hold it (OpenAI's form, the arguments an object)."""
    return {"id": str(call_id), "type": "function", "function": {"name": str(name), "arguments": arguments}}


def _from_messages(raw: Any, index: int | None, system: Any = None) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise RowError(index, "messages", f"messages is {type(raw).__name__}, not a list",
                       "write messages as a list of {role, content} objects")
    messages: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # call id -> tool name, for the tool turns that name only the call
    if system is not None and not any(isinstance(m, Mapping) and m.get("role") == "system" for m in raw):
        messages.append({"role": "system", "content": plain_text(system, index, "system")})
    for number, message in enumerate(raw):
        field = f"messages[{number}]"
        if not isinstance(message, Mapping):
            raise RowError(index, field, "message is not an object", "write each message as {role, content}")
        role = message.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            raise RowError(index, f"{field}.role", f"role is {role!r}",
                           "use one of system, user, assistant, tool")
        content = message.get("content")
        if content.__class__ is str or content is None:
            text, blocks = content or "", None
        else:
            blocks = read_content(content)
            if blocks.other:
                raise non_text_error(index, f"{field}.content", *blocks.other[0])
            text = blocks.text
        misplaced = None if blocks is None else blocks.results if role != "user" else blocks.calls
        if misplaced:
            position, block = misplaced[0]
            raise RowError(index, f"{field}.content[{position}]", f"a {block.get('type')} block in a {role} message",
                           "tool_use blocks belong in assistant messages, tool_result blocks in the user message "
                           "after them")
        if blocks is not None and blocks.results:  # Anthropic: the results ride in a user turn; each is a tool turn
            for position, block in blocks.results:
                call_id = str(block.get("tool_use_id"))
                result: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": plain_text(
                    block.get("content"), index, f"{field}.content[{position}].content")}
                if call_id in names:
                    result["name"] = names[call_id]
                messages.append(result)
            if text:
                messages.append({"role": "user", "content": text})
            continue
        out: dict[str, Any] = {"role": role, "content": text}
        calls = list(message.get("tool_calls") or ())
        normalised: list[dict[str, Any]] = []
        for call_number, call in enumerate(calls):
            call_field = f"{field}.tool_calls[{call_number}]"
            function = call.get("function", call) if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping) or not function.get("name"):
                raise RowError(index, call_field, "tool call has no function name",
                               "write tool calls as {id, type: function, function: {name, arguments}}")
            normalised.append(_tool_call(call.get("id") or f"call_{number}_{call_number}", function["name"],
                                         tool_arguments(function.get("arguments"), index,
                                                        f"{call_field}.function.arguments")))
        for position, block in blocks.calls if blocks is not None else ():  # Anthropic: `input`, the arguments
            if not block.get("name"):
                raise RowError(index, f"{field}.content[{position}]", "tool_use block has no name",
                               "write tool_use blocks as {type: tool_use, id, name, input}")
            normalised.append(_tool_call(block.get("id") or f"call_{number}_{len(normalised)}", block["name"],
                                         tool_arguments(block.get("input"), index, f"{field}.content[{position}].input")))
        if normalised:
            out["tool_calls"] = normalised
            names.update((call["id"], call["function"]["name"]) for call in normalised)
        if role == "tool":
            if message.get("tool_call_id") is not None:
                out["tool_call_id"] = str(message["tool_call_id"])
            if message.get("name") is not None:
                out["name"] = str(message["name"])
        messages.append(out)
    return messages


def conversation(row: Mapping[str, Any], index: int | None = None) -> list[dict[str, Any]]:
    """The row as one normalised message list: tool arguments decoded to dicts, content as text (the message-text
    rule; a non-text part is a RowError naming the row, the message and the part), Anthropic blocks as OpenAI
    tool calls and tool turns, a top-level `system` as the first turn when the messages hold none.

    A system message, if the row has one, stays first; nothing is added or dropped here (the
    exporters decide what to cut), except that a flat rollout's `final_text` repeating the reply its steps end
    on is that turn, not a second one (:func:`final_text_turn`). Raises :class:`RowError` naming the row and field on bad input.
    """
    if type(row) is not dict and not isinstance(row, Mapping):
        raise RowError(index, None, f"row is {type(row).__name__}, not an object",
                       "pass rows as dicts (one JSON object per line in a JSONL file)")
    if row.get("messages") is not None:
        return _from_messages(row["messages"], index, row.get("system"))
    if "prompt" not in row:
        raise RowError(index, "prompt", "row has neither `messages` nor `prompt`",
                       "give each row the conversation as `messages`, or the ask as `prompt` with `steps`")
    return _from_steps(row, index)


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
            if isinstance(message, Mapping) and message.get("role") == "assistant":
                text = content_text(message.get("content"))
                if text:
                    return text
    if isinstance(completion, str):
        return completion
    return ""


def agent_parts(row: Mapping[str, Any]) -> AgentParts:
    """What the agent did, in any row shape (the trajectory reader's parts, rows/trajectory.py): flat `steps` and
    `final_text` (else `completion`), `messages` (every turn after the first user message, system turns aside),
    or a TRL conversational `completion`."""
    return read_trajectory(row, events=False).parts


def agent_turns(row: Mapping[str, Any]) -> list[str]:
    """Every text the agent wrote in a row, in order: its turns along the way, then its final reply (the words
    hack_scan counts). :func:`final_reply` is the last reply only."""
    return agent_parts(row).texts


def tool_names(row: Mapping[str, Any]) -> list[str]:
    """The names of the tools a row called, in order (every row shape)."""
    return [name for name, _ in agent_parts(row).calls]

