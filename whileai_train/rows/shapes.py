"""Rows in other tools' shapes, read as their authors mean them, into the shape every room reads.

The rooms read two shapes: the platform's flat rows (``prompt``, ``steps``, ``final_text``) and OpenAI chat
``messages`` whose every tool call has an id its result names. :func:`read_shapes` passes those as they are and
rewrites the others into ``messages``, once, at the intake:

* OpenAI chat with what the rooms would misread: legacy ``function_call`` with ``function``-role replies, tool
  calls without ``id`` (GRPOTrainer's tool loop), tool turns without ``tool_call_id`` (matched by ``name``, then by
  order: TRL's loop answers synchronous tools before asynchronous ones), Anthropic ``thinking`` /
  ``redacted_thinking`` blocks (kept out of the reply: they are not what the agent said);
* the Responses API's item list (``input`` and ``output``, or ``messages``): ``message`` items with
  ``input_text`` / ``output_text`` parts, ``function_call`` items with ``call_id``, ``function_call_output``;
  ``reasoning`` items are dropped like thinking blocks;
* ShareGPT ``conversations`` (``from`` / ``value``: system, human, gpt, and the tool turns as Glaive writes them,
  ``function_call`` / ``observation``, or as Hermes does, ``<tool_call>`` / ``<tool_response>`` in gpt / tool turns);
* TRL's conversational ``prompt`` / ``completion`` rows (the completion a list of messages, or a string reply).

A row that resembles one of these but cannot be read as it is a RowError naming the row, the field, the shape
and the fix: never an empty ask, a dropped call, or a result read as text.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from whileai_train.errors import RowError

__all__ = ["FOREIGN_ITEMS", "HERMES_TOOL_CALL", "read_shape", "read_shapes"]

_THINKING = ("thinking", "redacted_thinking", "reasoning")
_RESPONSES_ITEMS = ("message", "function_call", "function_call_output", "reasoning")
FOREIGN_ITEMS = _RESPONSES_ITEMS  # items of the Responses API sitting in `messages`: the trajectory reader asks
_SHAREGPT_ROLES = {"system": "system", "human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant",
                   "function_call": "call", "tool_call": "call", "observation": "tool", "tool": "tool",
                   "function_response": "tool", "tool_response": "tool", "function": "tool"}
# A tool call written as Hermes and Qwen2.5 write it in text: JSON between the tags.
HERMES_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_TOOL_RESPONSE = re.compile(r"<tool_response>\s*(.*?)\s*</tool_response>", re.DOTALL)


def read_shapes(rows: list[Any], *, deep: bool = True) -> list[Any]:
    """The rows in the rooms' shapes: the same list when every row already is, else a new list (rows rewritten
    as new dicts, the others as they were). `deep=False` leaves `messages` rows as they are (for a gate that
    reads them only through the trajectory reader, which reads another tool's chat shape through read_shape
    itself, at no cost to rows already in the rooms' shape)."""
    out: list[Any] | None = None
    index = -1
    for row in rows:  # hot path: the rooms' own shapes pass on a key test
        index += 1
        if "steps" in row or not deep and "messages" in row:
            continue
        read = read_shape(row, index, deep=deep)
        if read is not row:
            if out is None:
                out = list(rows)
            out[index] = read
    return rows if out is None else out


def read_shape(row: Mapping[str, Any], index: int | None = None, *, deep: bool = True) -> Mapping[str, Any]:
    """One row in the rooms' shapes (the row itself when it already is)."""
    if "steps" in row:
        return row
    messages = row.get("messages")
    if messages is not None:
        if not deep:
            return row
        if messages.__class__ is list and _chat_is_read(messages):
            return row
        if messages.__class__ is not list:
            return row  # the readers name a messages field that is not a list
        return _with(row, ("messages",), _chat(messages, index, "messages"))
    conversations = row.get("conversations")
    if conversations is not None:
        return _with(row, ("conversations", "system"), _sharegpt(row, conversations, index))
    items = row.get("input")
    if items.__class__ is list and items and _looks_like_items(items):
        output = row.get("output")
        if output is not None and output.__class__ is not list:
            raise RowError(index, "output", f"output is {type(output).__name__}, not a list of items (the Responses "
                                            "API's shape)", "write `output` as the response's output items")
        return _with(row, ("input", "output", "instructions"), _responses(row, items + (output or []), index))
    prompt = row.get("prompt")
    if prompt.__class__ is list and "completion" in row:
        return _with(row, ("prompt", "completion", "final_text"), _prompt_completion(row, prompt, index))
    return row


def _with(row: Mapping[str, Any], drop: tuple[str, ...], messages: list[dict[str, Any]]) -> dict[str, Any]:
    out = {key: value for key, value in row.items() if key not in drop}
    out["messages"] = messages
    return out


# ------------------------------------------------------------------------------------- OpenAI chat (and kin)


def _chat_is_read(messages: list[Any]) -> bool:
    """Whether the rooms read these messages as they are (the common case, checked without copying)."""
    for message in messages:
        if message.__class__ is not dict:
            return not isinstance(message, Mapping)  # not an object: the readers name it
        role = message.get("role")
        if role == "assistant":
            if "function_call" in message and message["function_call"] is not None:
                return False
            calls = message.get("tool_calls")
            if calls:
                for call in calls:
                    if call.__class__ is dict and not call.get("id"):
                        return False
            content = message.get("content")
            if content.__class__ is list:
                for block in content:
                    if block.__class__ is dict and block.get("type") in _THINKING:
                        return False
        elif role == "tool":
            if not message.get("tool_call_id"):
                return False
        elif role is None:
            if message.get("type") in _RESPONSES_ITEMS:
                return False
        elif role == "function":
            return False
    return True


def _arguments(raw: Any) -> Any:
    """Arguments as written (a JSON text stays text, an object stays an object)."""
    return {} if raw is None else raw


class _Calls:
    """The calls still waiting for their result: matched by id, else by name, else the oldest."""

    def __init__(self) -> None:
        self.waiting: list[tuple[str, str]] = []  # (id, name)
        self.count = 0

    def new_id(self, given: Any) -> str:
        self.count += 1
        return given if isinstance(given, str) and given else f"call_{self.count}"

    def add(self, call_id: str, name: str) -> None:
        self.waiting.append((call_id, name))

    def match(self, call_id: Any, name: Any) -> str | None:
        if isinstance(call_id, str) and call_id:
            for number, (waiting_id, _) in enumerate(self.waiting):
                if waiting_id == call_id:
                    del self.waiting[number]
                    return call_id
            return call_id
        if name:
            for number, (waiting_id, waiting_name) in enumerate(self.waiting):
                if waiting_name == name:
                    del self.waiting[number]
                    return waiting_id
        if self.waiting:
            return self.waiting.pop(0)[0]
        return None


def _chat(messages: list[Any], index: int | None, field: str, calls: _Calls | None = None) -> list[dict[str, Any]]:
    """OpenAI-like messages with ids on every call and result, legacy function calls as tool calls, thinking out."""
    calls = calls or _Calls()
    out: list[dict[str, Any]] = []
    for number, message in enumerate(messages):
        if not isinstance(message, Mapping):
            out.append(message)  # the readers name it
            continue
        role = message.get("role")
        if role is None and message.get("type") in _RESPONSES_ITEMS:
            return _responses({}, messages, index, field)
        message = dict(message)
        if role == "assistant":
            content = message.get("content")
            if isinstance(content, list):
                message["content"] = [block for block in content
                                      if not (isinstance(block, Mapping) and block.get("type") in _THINKING)]
                for block in message["content"]:
                    if isinstance(block, Mapping) and block.get("type") == "tool_use" and block.get("id"):
                        calls.add(str(block["id"]), str(block.get("name")))
            written = []
            legacy = message.pop("function_call", None)
            if legacy is not None:
                if not isinstance(legacy, Mapping) or not legacy.get("name"):
                    raise RowError(index, f"{field}[{number}].function_call", "function_call has no name (OpenAI's "
                                   "legacy function calling)", "write it as {name, arguments}")
                written.append({"type": "function", "function": {"name": legacy["name"],
                                                                 "arguments": _arguments(legacy.get("arguments"))}})
            for call in message.get("tool_calls") or ():
                written.append(dict(call) if isinstance(call, Mapping) else call)
            if written:
                for call in written:
                    if isinstance(call, dict):
                        function = call.get("function", call)
                        name = function.get("name") if isinstance(function, Mapping) else None
                        call["id"] = calls.new_id(call.get("id"))
                        call.setdefault("type", "function")
                        calls.add(call["id"], str(name))
                message["tool_calls"] = written
        elif role in ("tool", "function"):
            call_id = calls.match(message.get("tool_call_id"), message.get("name"))
            if call_id is None:
                raise RowError(index, f"{field}[{number}]", f"a {role} turn answers no call (no call is waiting for "
                               "a result before it)", "put the tool result after the assistant turn that called it, "
                               "or name its call in tool_call_id")
            message["role"] = "tool"
            message["tool_call_id"] = call_id
        elif role == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, Mapping) and block.get("type") == "tool_result":
                    calls.match(block.get("tool_use_id"), None)
        out.append(message)
    return out


# ------------------------------------------------------------------------------------- the Responses API


def _looks_like_items(items: list[Any]) -> bool:
    return any(isinstance(item, Mapping) and (item.get("type") in _RESPONSES_ITEMS or "role" in item)
               for item in items)


def _responses(row: Mapping[str, Any], items: list[Any], index: int | None,
               field: str = "input") -> list[dict[str, Any]]:
    """The Responses API's items as chat messages: consecutive function_call items are one assistant turn."""
    out: list[dict[str, Any]] = []
    instructions = row.get("instructions")
    if isinstance(instructions, str) and instructions:
        out.append({"role": "system", "content": instructions})
    calls = _Calls()
    for number, item in enumerate(items):
        where = f"{field}[{number}]"
        if not isinstance(item, Mapping):
            raise RowError(index, where, f"item is {type(item).__name__}, not an object (the Responses API's "
                                         "item list)", "write each item as {type, ...}")
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "message":
            role = item.get("role")
            role = "system" if role == "developer" else role
            if role not in ("system", "user", "assistant"):
                raise RowError(index, f"{where}.role", f"role is {role!r} (a Responses API message item)",
                               "use one of system, developer, user, assistant")
            out.append({"role": role, "content": item.get("content")})
        elif kind == "function_call":
            name = item.get("name")
            if not name:
                raise RowError(index, f"{where}.name", "function_call item has no name (the Responses API's "
                                                       "shape)", "write it as {type: function_call, call_id, name, "
                                                                 "arguments}")
            call_id = calls.new_id(item.get("call_id") or item.get("id"))
            calls.add(call_id, str(name))
            call = {"id": call_id, "type": "function",
                    "function": {"name": name, "arguments": _arguments(item.get("arguments"))}}
            last = out[-1] if out else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            answered = calls.match(item.get("call_id"), None)
            if answered is None:
                raise RowError(index, f"{where}.call_id", "function_call_output names no call (the Responses "
                                                          "API's shape)", "give it the call_id of its function_call")
            output = item.get("output")
            out.append({"role": "tool", "tool_call_id": answered,
                        "content": output if isinstance(output, (str, list)) or output is None
                        else json.dumps(output)})
        elif kind == "reasoning":
            continue  # the model's reasoning is not what it said
        else:
            raise RowError(index, f"{where}.type", f"item type {kind!r} is not read (the Responses API's item "
                                                   "list)", "keep message, function_call and function_call_output "
                                                            "items (reasoning items are skipped)")
    return out


# ------------------------------------------------------------------------------------- ShareGPT


def _decode(text: str, index: int | None, field: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        try:
            return ast.literal_eval(text)  # Glaive writes some calls with single quotes
        except (ValueError, SyntaxError):
            raise RowError(index, field, f"{what} is not JSON ({text[:60]!r})",
                           "write the call as JSON: {\"name\": ..., \"arguments\": {...}}") from None


def _call_of(value: Any, index: int | None, field: str, calls: _Calls) -> dict[str, Any]:
    if isinstance(value, str):
        value = _decode(value, index, field, "the tool call")
    if not isinstance(value, Mapping) or not value.get("name"):
        raise RowError(index, field, "the tool call has no name (ShareGPT's function_call turn, as Glaive and "
                                     "Hermes write it)", "write the call as {\"name\": ..., \"arguments\": {...}}")
    call_id = calls.new_id(value.get("id"))
    calls.add(call_id, str(value["name"]))
    arguments = value.get("arguments", value.get("parameters"))
    return {"id": call_id, "type": "function", "function": {"name": value["name"], "arguments": _arguments(arguments)}}


def _sharegpt(row: Mapping[str, Any], conversations: Any, index: int | None) -> list[dict[str, Any]]:
    if conversations.__class__ is not list:
        raise RowError(index, "conversations", f"conversations is {type(conversations).__name__}, not a list "
                                               "(ShareGPT's shape)", "write conversations as [{from, value}, ...]")
    out: list[dict[str, Any]] = []
    system = row.get("system")
    if isinstance(system, str) and system:
        out.append({"role": "system", "content": system})
    calls = _Calls()
    for number, turn in enumerate(conversations):
        where = f"conversations[{number}]"
        if not isinstance(turn, Mapping) or "from" not in turn:
            raise RowError(index, where, "turn has no `from` (ShareGPT's shape is {from, value})",
                           "write each turn as {from: human|gpt|system|function_call|observation, value}")
        speaker = turn.get("from")
        role = _SHAREGPT_ROLES.get(speaker) if isinstance(speaker, str) else None
        if role is None:
            raise RowError(index, f"{where}.from", f"from is {speaker!r} (ShareGPT)",
                           "use one of system, human, gpt, function_call, observation, tool")
        value = turn.get("value")
        if not isinstance(value, str):
            raise RowError(index, f"{where}.value", f"value is {type(value).__name__}, not text (ShareGPT)",
                           "write each turn's value as a string")
        if role == "call":
            call = _call_of(value, index, f"{where}.value", calls)
            last = out[-1] if out else None
            if last is not None and last["role"] == "assistant" and last.get("tool_calls") is not None:
                last["tool_calls"].append(call)  # consecutive calls are one turn's parallel calls
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif role == "assistant":
            found = HERMES_TOOL_CALL.findall(value)
            if found:
                text = HERMES_TOOL_CALL.sub("", value).strip()
                out.append({"role": "assistant", "content": text or None,
                            "tool_calls": [_call_of(body, index, f"{where}.value", calls) for body in found]})
            else:
                out.append({"role": "assistant", "content": value})
        elif role == "tool":
            bodies = _TOOL_RESPONSE.findall(value) or [value]
            for body in bodies:
                name, content = _response_of(body, bool(_TOOL_RESPONSE.search(value)))
                call_id = calls.match(None, name)
                if call_id is None:
                    raise RowError(index, where, f"a {speaker} turn answers no call (no function_call before it)",
                                   "put the observation after the function_call it answers")
                out.append({"role": "tool", "tool_call_id": call_id, "content": content})
        else:
            out.append({"role": role, "content": value})
    return out


def _response_of(body: str, wrapped: bool) -> tuple[str | None, str]:
    """A tool response's name (Hermes writes {"name", "content"} inside <tool_response>) and its content as text."""
    if not wrapped:
        return None, body
    try:
        decoded = json.loads(body)
    except ValueError:
        return None, body
    if isinstance(decoded, Mapping) and "content" in decoded and set(decoded) <= {"name", "content", "tool_call_id"}:
        content = decoded["content"]
        return decoded.get("name"), content if isinstance(content, str) else json.dumps(content)
    return None, body


# ------------------------------------------------------------------------------------- TRL prompt/completion


def _prompt_completion(row: Mapping[str, Any], prompt: list[Any], index: int | None) -> list[dict[str, Any]]:
    completion = row.get("completion")
    if isinstance(completion, str):
        tail: list[Any] = [{"role": "assistant", "content": completion}]
    elif completion.__class__ is list:
        tail = completion
    elif completion is None:
        tail = []
    else:
        raise RowError(index, "completion", f"completion is {type(completion).__name__} (TRL's conversational "
                                            "prompt/completion shape)",
                       "write the completion as a list of messages, or the reply as a string")
    calls = _Calls()
    return _chat(list(prompt) + list(tail), index, "prompt+completion", calls)
