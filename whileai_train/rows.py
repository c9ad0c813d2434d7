"""The row contract: what a rollout row is, which task it belongs to, and how to read rows in.

Two shapes are accepted, both as plain dicts (rows stay dicts on the hot paths; the pydantic
models below validate and document them):

* the flat rollout row of the platform: ``prompt``, ``steps`` (tool calls ``{tool, arguments,
  result, text?}``, user turns ``{user}``, agent turns ``{text}``), ``final_text``, ``scenario_id``,
  ``task_id``, ``rollout_index``, ``reward``, ``markers``, ``calibration``, ... ;
* OpenAI-style ``messages`` with ``tool_calls`` (arguments as JSON strings or dicts) and ``tool`` turns.

:func:`conversation` turns either into one normalised message list (tool arguments as dicts), which
the exporters and the checks share. Unknown keys pass through untouched.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from whileai_train.errors import InputError, RowError, ToolArgumentsError

__all__ = [
    "Calibration",
    "Message",
    "Row",
    "Step",
    "ToolCall",
    "agent_text",
    "calibration_of",
    "conversation",
    "iter_jsonl",
    "prompt_text",
    "read_rows",
    "reward_of",
    "task_key",
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
            raise ValueError("reward must be a number (0..1 for graded rows) or null")
        return value


def task_key(row: Mapping[str, Any]) -> str:
    """The task a row belongs to: `scenario_id`, else `task_id`, else the prompt text.

    Every report groups by this, so repeats and rephrasings of one situation count as one task.
    """
    for key in ("scenario_id", "task_id"):
        value = row.get(key)
        if value is not None and value != "":
            return str(value)
    prompt = row.get("prompt")
    if isinstance(prompt, str):
        return prompt
    if prompt is None:
        for message in row.get("messages") or ():
            if isinstance(message, Mapping) and message.get("role") == "user":
                return str(message.get("content") or "")
        return ""
    return json.dumps(prompt, sort_keys=True, default=str)


def prompt_text(row: Mapping[str, Any]) -> str:
    """The ask as text: `prompt` when it is a string, else the first user message (of a conversational
    `prompt` or of `messages`); "" when the row has none."""
    prompt = row.get("prompt")
    if isinstance(prompt, str):
        return prompt
    messages = prompt if isinstance(prompt, list) else row.get("messages") or ()
    for message in messages:
        if isinstance(message, Mapping) and message.get("role") == "user":
            return _as_text(message.get("content"))
    return ""


def reward_of(row: Mapping[str, Any], index: int | None = None) -> float | None:
    """The row's reward as a float, None when ungraded; a typed error for a wrong type, NaN or infinity."""
    value = row.get("reward")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RowError(index, "reward", f"reward is {type(value).__name__} {value!r}, not a number",
                       "write the grader's score as a number (1.0 pass, 0.0 fail) or null when ungraded")
    if not math.isfinite(value):
        raise RowError(index, "reward", f"reward is {value}", "grade the row again or set reward to null")
    return float(value)


def calibration_of(row: Mapping[str, Any]) -> Calibration | None:
    """The row's calibration stamp, typed (read from `calibration` or `extra.calibration`), or None."""
    stamp = row.get("calibration")
    if stamp is None:
        extra = row.get("extra")
        if isinstance(extra, Mapping):
            stamp = extra.get("calibration")
    if stamp is None:
        return None
    if isinstance(stamp, Calibration):
        return stamp
    return Calibration.model_validate(stamp)


def _arguments_dict(raw: Any, index: int | None, field: str) -> dict[str, Any]:
    if raw is None or raw == "":
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            decoded = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ToolArgumentsError(index, field, f"tool arguments are not valid JSON ({exc.msg})",
                                     "write arguments as a JSON object, e.g. {\"order_id\": \"A1\"}") from None
        if isinstance(decoded, str):  # encoded twice: decode once more, the object is what was meant
            return _arguments_dict(decoded, index, field)
        if isinstance(decoded, Mapping):
            return dict(decoded)
        raw = decoded
    raise ToolArgumentsError(index, field, f"tool arguments are a {type(raw).__name__}, not an object",
                             "write arguments as a JSON object of parameter names to values")


_TEXT_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)  # one encoder: json.dumps(default=) builds one per call
_C_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
_C_TEXT = (str, json.encoder.encode_basestring, None, _TEXT_ENCODER.key_separator, _TEXT_ENCODER.item_separator,
           False, False, True)  # _TEXT_ENCODER's settings, in c_make_encoder's order after `markers`
_FLAT_TEXT: Any = _C_ENCODER(None, *_C_TEXT) if _C_ENCODER is not None else None  # no cycle check: flat objects


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if _C_ENCODER is not None:  # what _TEXT_ENCODER.encode runs, without its two Python frames (~30% of a row)
        if type(value) is dict:
            for item in value.values():
                kind = type(item)
                if not (kind is str or kind is int or kind is float or kind is bool or item is None):
                    break
            else:  # an object of plain values cannot hold itself: one shared encoder, no cycle markers
                return "".join(_FLAT_TEXT(value, 0))
        return "".join(_C_ENCODER({}, *_C_TEXT)(value, 0))
    return _TEXT_ENCODER.encode(value)


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
    for number, step in enumerate(steps):  # hot path (100k-1M rows): exact types first, field names only on error
        if type(step) is not dict and not isinstance(step, Mapping):
            raise RowError(index, f"steps[{number}]", f"step is {type(step).__name__}, not an object",
                           "write each step as {tool, arguments, result}, {user} or {text}")
        get = step.get
        tool = get("tool")
        if tool is not None:
            call_id = str(get("id") or get("call_id") or f"call_{number}")
            raw = get("arguments")
            arguments = dict(raw) if type(raw) is dict else _arguments_dict(raw, index, f"steps[{number}].arguments")
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
    if final:
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
                                 "arguments": _arguments_dict(function.get("arguments"), index,
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
    exporters decide what to cut). Raises :class:`RowError` naming the row and field on bad input.
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


def agent_text(row: Mapping[str, Any]) -> str:
    """The agent's own words in a row: `final_text`, else the last assistant message's content."""
    final = row.get("final_text")
    if isinstance(final, str):
        return final
    for message in reversed(row.get("messages") or ()):
        if isinstance(message, Mapping) and message.get("role") == "assistant" and message.get("content"):
            return _as_text(message.get("content"))
    completion = row.get("completion")
    if isinstance(completion, str):
        return completion
    return ""


def tool_names(row: Mapping[str, Any]) -> list[str]:
    """The names of the tools a row called, in order (both row shapes)."""
    names: list[str] = []
    for step in row.get("steps") or ():
        if isinstance(step, Mapping) and step.get("tool") is not None:
            names.append(str(step["tool"]))
    for message in row.get("messages") or ():
        if isinstance(message, Mapping):
            for call in message.get("tool_calls") or ():
                function = call.get("function", call) if isinstance(call, Mapping) else {}
                if isinstance(function, Mapping) and function.get("name"):
                    names.append(str(function["name"]))
    return names


# ---------------------------------------------------------------------------------------------- readers


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Stream rows from a JSONL file; a bad line raises :class:`RowError` naming its line."""
    file = Path(path)
    if not file.exists():
        raise InputError(f"{file}: no such file. Fix: check the path of the rows file")
    seen = 0
    try:
        handle = file.open("rb")
    except OSError as exc:
        raise InputError(f"{file}: cannot be read ({type(exc).__name__}: {exc.strerror}). Fix: check the path "
                         "and its permissions") from None
    with handle:
        for line_number, raw in enumerate(handle):
            if b"\0" in raw:
                raise RowError(seen, None, f"{file}: line {line_number + 1} holds NUL bytes (a binary file, not "
                                           "JSONL)", "point at a JSONL file with one JSON object per line") from None
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise RowError(seen, None, f"{file}: line {line_number + 1} is not UTF-8 text (byte "
                                           f"{exc.start + 1} of the line)",
                               "re-save the file as UTF-8, or remove the broken line") from None
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                truncated = not line.endswith("\n")
                problem = ("the last line is cut off (the file looks truncated)" if truncated
                           else f"line {line_number + 1} is not valid JSON ({exc.msg})")
                raise RowError(seen, None, f"{file}: {problem}",
                               "re-export the file, or remove the broken line") from None
            if not isinstance(row, dict):
                raise RowError(seen, None, f"{file}: line {line_number + 1} is a {type(row).__name__}",
                               "write one JSON object per line")
            seen += 1
            yield row
    if seen == 0:
        raise InputError(f"{file}: the file holds no rows. Fix: point at a JSONL file with one row per line")


def _read_parquet(path: Path, reward_columns: Iterable[str] | None) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    if not files:
        raise InputError(f"{path}: no .parquet files. Fix: point at TRL's <output_dir>/completions folder")
    rows: list[dict[str, Any]] = []
    for file in files:
        try:
            table = pq.read_table(file).to_pylist()
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError, ArrowIOError an OSError
            raise InputError(f"{file}: not a readable parquet file ({type(exc).__name__}: {exc}). Fix: point at "
                             "the parquet files TRL wrote (<output_dir>/completions), or re-run to rewrite it") from None
        for record in table:
            fixed = {"step", "prompt", "completion", "advantage"}
            names = list(reward_columns) if reward_columns is not None else [
                key for key, value in record.items()
                if key not in fixed and isinstance(value, (int, float)) and not isinstance(value, bool)]
            rewards = {name: record.get(name) for name in names}
            present = [float(v) for v in rewards.values() if v is not None and not math.isnan(float(v))]
            prompt, completion = record.get("prompt"), record.get("completion")
            row: dict[str, Any] = dict(record)
            row["prompt"] = prompt if isinstance(prompt, str) else _as_text(prompt)
            row["final_text"] = completion if isinstance(completion, str) else agent_text(
                {"messages": completion} if isinstance(completion, list) else {})
            row["rewards"] = rewards
            row["reward"] = sum(present) if present else None
            rows.append(row)
    return rows


def read_rows(source: Any, *, reward_columns: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Read rows from a list of dicts, a JSONL path, a `datasets.Dataset`, or TRL completion logs.

    TRL logs are ``<output_dir>/completions/*.parquet`` (``log_completions=True``): pass the folder
    or one file; `reward` becomes the sum of the reward-function columns (or of `reward_columns`).
    """
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir() or path.suffix == ".parquet":
            rows = _read_parquet(path, reward_columns)
        else:
            rows = list(iter_jsonl(path))
    elif hasattr(source, "to_list") and hasattr(source, "features"):  # datasets.Dataset
        rows = source.to_list()
    elif isinstance(source, Mapping):
        raise InputError("got one row (a dict), not a list of rows. Fix: pass [row] or a list of rows")
    elif isinstance(source, Iterable):
        rows = list(source)
    else:
        raise InputError(f"cannot read rows from a {type(source).__name__}. "
                         "Fix: pass a list of dicts, a JSONL path, a datasets.Dataset or a completions folder")
    for index, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise RowError(index, None, f"row is {type(row).__name__}, not an object",
                           "pass rows as dicts")
    return rows
