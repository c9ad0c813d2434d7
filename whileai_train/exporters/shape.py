"""Shape one row's conversation for training: one system turn, capped tool output, agent turns found.

Shared by the SFT, preference and prompt exporters. Works on plain dicts (hot path: 100k-1M rows).

A flat rollout's ``final_text`` against the turn its steps end on (rows/steps.py final_reply_turn: one rule for
both walks and every reader of a row): when the steps already end with the agent's reply and ``final_text`` is
that same text, it is one turn (written once, counted as ``final_text_repeated``); when the steps end with a
different reply, both are kept and the row is counted as ``final_text_differs`` (a warning: never a silent pick).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from whileai_train.errors import InputError, RowError, ToolArgumentsError
from whileai_train.exporters.defaults import TOOL_OUTPUT_MARKER
from whileai_train.exporters.jsonl import plain_float
from whileai_train.exporters.leaks import agent_words
from whileai_train.rows.content import plain_text
from whileai_train.rows.contract import FINAL_TEXT_REPEATED, conversation, tool_arguments
from whileai_train.rows.files import iter_jsonl
from whileai_train.rows.steps import NO_RESULT, STEP_CALL, STEP_EMPTY, STEP_USER, final_reply_turn, walk_steps

__all__ = ["CONSUMED", "Shaped", "carried_plain", "check_arguments", "encode_messages", "flat_walk", "iter_input",
           "shape_row", "strip_ids"]

# Row keys the export turns into the conversation (or scrubs: `privileged`); every other key is a stamp.
CONSUMED = frozenset({"messages", "steps", "final_text", "prompt", "privileged", "tools"})


class Shaped:
    """One row, ready to be written: normalised messages (arguments as dicts) and what was done to it.

    Built in one call by each walk (flat_walk, _shape_general); only _shape_general's loop and check_arguments
    (`plain`) change it afterwards.
    """

    __slots__ = ("agent", "ask", "capped", "index", "messages", "notes", "plain", "row", "said", "tools", "verdict")

    def __init__(self, row: Mapping[str, Any], index: int, messages: list[dict[str, Any]], tools: list[Any] | None,
                 agent: list[int], ask: str, capped: dict[int, int], notes: dict[str, int],
                 verdict: tuple[int, int] | None, plain: bool, said: list[str] | None) -> None:
        self.row = row
        self.index = index
        self.messages = messages
        self.tools = tools
        self.agent = agent  # indices of the agent's turns in `messages`
        self.ask = ask
        self.capped = capped  # message index -> chars cut from that tool message
        self.notes = notes  # what was done to the row (the report's warnings count them)
        self.verdict = verdict  # (checked, invalid), when the flat pass already walked the tool arguments
        self.plain = plain  # every value in messages is one dumps_plain writes as dumps (check_arguments sets it)
        self.said = said  # the agent's words, in leaks.agent_said order (from flat_walk)

    @property
    def chars_cut(self) -> int:
        """Chars cut from tool output, over the whole conversation."""
        return sum(self.capped.values())

    @property
    def outputs_capped(self) -> int:
        """Tool messages capped, over the whole conversation."""
        return len(self.capped)

    def note(self, key: str) -> None:
        self.notes[key] = self.notes.get(key, 0) + 1


_NO_ROWS = "no rows to export. Fix: pass at least one row"


def _input_rows(source: Any) -> Iterable[Any]:
    """What iter_input iterates: a JSONL path's rows (streamed) or `source` itself; a typed error for one row
    (a dict) or something that holds no rows. Items may still be wai.Row objects (iter_input reads their dict)."""
    import os

    if isinstance(source, (str, os.PathLike)):
        return iter_jsonl(source)
    if isinstance(source, Mapping):
        raise InputError("got one row (a dict), not rows. Fix: pass [row] or a list of rows")
    if not isinstance(source, Iterable):
        raise InputError(f"cannot read rows from a {type(source).__name__}. "
                         "Fix: pass a list of dicts, a JSONL path, an iterator of dicts or a datasets.Dataset")
    return source


def iter_input(source: Any) -> Iterator[dict[str, Any]]:
    """Rows from a list, an iterator, a JSONL path or a datasets.Dataset, streamed; typed error when empty."""
    seen = False
    for row in _input_rows(source):
        seen = True
        if type(row) is not dict and hasattr(row, "model_dump"):  # a wai.Row (pydantic) is read as its dict
            row = row.model_dump(exclude_none=True)
        yield row
    if not seen:
        raise InputError(_NO_ROWS)


def _tools_of(row: Mapping[str, Any], tools: list[Any] | None, index: int) -> list[Any] | None:
    if tools is not None:
        return tools
    own = row.get("tools")
    if own is None or own == []:
        return None
    if isinstance(own, str):
        try:
            own = json.loads(own)
        except json.JSONDecodeError:
            raise RowError(index, "tools", "tools is a string that is not JSON",
                           "write tools as a list of JSON schemas (or a JSON string holding that list)") from None
    if not isinstance(own, list):
        raise RowError(index, "tools", f"tools is a {type(own).__name__}, not a list",
                       "write tools as a list of JSON schemas, one per tool")
    return own


def shape_row(row: Any, index: int, *, system_prompt: str | None, max_tool_output_chars: int | None,
              tools: list[Any] | None) -> Shaped:
    """Normalise a row: at most one system turn (first), empty agent turns removed, tool output capped."""
    if type(row) is dict and row.get("messages") is None:
        shaped = flat_walk(row, index, system_prompt, max_tool_output_chars, tools)
        if shaped is not None:
            return shaped
    return _shape_general(row, index, system_prompt=system_prompt, max_tool_output_chars=max_tool_output_chars,
                         tools=tools)


def _shape_general(row: Any, index: int, *, system_prompt: str | None, max_tool_output_chars: int | None,
                  tools: list[Any] | None) -> Shaped:
    """shape_row for any row shape: conversation(), then one pass over its messages."""
    final = row.get("final_text") if row.get("messages") is None else None
    if final.__class__ is not str:
        final = None
    # the final reply is decided below, on the cleaned turns (conversation() would decide on the raw steps)
    messages = conversation({**row, "final_text": None} if final else row, index)
    shaped = Shaped(row, index, messages, _tools_of(row, tools, index), [], "", {}, {}, None, False, None)
    systems = [m for m in messages if m["role"] == "system"]
    if system_prompt is not None or len(systems) > 1 or (systems and messages[0]["role"] != "system"):
        if system_prompt is not None and systems:
            shaped.note("system_replaced")
        elif len(systems) > 1:
            shaped.note("extra_system_dropped")
        keep = system_prompt if system_prompt is not None else (systems[0]["content"] if systems else None)
        messages = [m for m in messages if m["role"] != "system"]
        if keep is not None:
            messages.insert(0, {"role": "system", "content": keep})
    cap = max_tool_output_chars
    out: list[dict[str, Any]] = []
    append, agent, ask = out.append, shaped.agent, ""
    for message in messages:  # hot path: locals, no attribute sets per message
        role = message["role"]
        if role == "assistant":
            if not message.get("content") and not message.get("tool_calls"):
                shaped.note("empty_agent_turn_removed")
                continue
            agent.append(len(out))
        elif role == "tool":
            if cap is not None:
                content = message["content"]
                if len(content) > cap:
                    cut = len(content) - cap
                    message = dict(message)
                    message["content"] = content[:cap] + "\n" + TOOL_OUTPUT_MARKER.format(n=cut)
                    shaped.capped[len(out)] = cut
        elif role == "user" and not ask:
            ask = message["content"]
        append(message)
    if final:
        verdict = final_reply_turn(out, final)
        if verdict is not None:
            shaped.note(verdict)
        if verdict != FINAL_TEXT_REPEATED:
            agent.append(len(out))
            append({"role": "assistant", "content": final})
    shaped.ask = ask
    shaped.messages = out
    prompt = row.get("prompt")
    if isinstance(prompt, str):
        shaped.ask = prompt
    return shaped


_KNOWN_CALL_IDS = 64
_CALL_IDS = tuple(f"call_{number}" for number in range(_KNOWN_CALL_IDS))  # a step's default call id, made once


def flat_walk(row: dict[str, Any], index: int, system_prompt: str | None, cap: int | None,
              tools: list[Any] | None) -> Shaped | None:
    """shape_row + check_arguments + the agent's words for the leak guard, in one walk of a flat rollout.

    Gives the Shaped that conversation() followed by _shape_general and check_arguments gives, for a plain
    flat rollout (exact dicts, text fields as text); the ask is `row["prompt"]`. Any other shape, and any row
    the general path would refuse, returns None before anything is counted: the general path then reads it
    and raises its own error. The hot path of every export (tests/exporters/test_exporters_flatpath.py pins it to the
    general path).
    """
    prompt = row.get("prompt")
    steps = row.get("steps") or []
    final = row.get("final_text")
    if type(prompt) is not str or type(steps) is not list or (final is not None and type(final) is not str):
        return None
    said: list[str] = []
    say = said.append
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    if system_prompt is not None:
        messages.insert(0, {"role": "system", "content": system_prompt})
    append = messages.append
    agent: list[int] = []
    capped: dict[int, int] = {}
    checked = invalid = flags = removed = 0
    for number, kind, step, head, raw, content, result in walk_steps(steps):
        if step.__class__ is not dict or kind == STEP_EMPTY:
            return None  # the general path reads it (and refuses a step with none of tool, user, text)
        if kind == STEP_CALL:
            call_id = step.get("id") or step.get("call_id")
            if not call_id:
                call_id = _CALL_IDS[number] if number < _KNOWN_CALL_IDS else f"call_{number}"
            elif type(call_id) is not str:
                call_id = str(call_id)
            arguments = raw.copy() if type(raw) is dict else tool_arguments(raw, index, f"steps[{number}].arguments")
            if type(content) is not str:
                content = "" if content is None else plain_text(content, index, f"steps[{number}].text")
            name = head if type(head) is str else str(head)
            checked += 1
            if content:
                say(content)
            call_flags = 0
            for key, value in arguments.items():  # _walk and leaks.agent_said, inlined for a flat object
                value_type = type(value)
                if value_type is str:
                    say(value)
                elif value_type is int or value_type is bool:
                    say(str(value))
                elif value is not None:
                    inner = _walk(value)
                    if inner is None:
                        return None  # the general path raises ToolArgumentsError naming the call
                    call_flags |= inner
                    agent_words(value, said)
                if type(key) is not str:
                    if not isinstance(key, (int, float, bool)) and key is not None:
                        return None
                    call_flags |= _CHANGED
            if call_flags:
                invalid += call_flags & _CHANGED
                flags |= call_flags
            agent.append(len(messages))
            append({"role": "assistant", "content": content,
                    "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name,
                                                                                    "arguments": arguments}}]})
            if result is not NO_RESULT:
                if type(result) is not str:
                    result = plain_text(result, index, f"steps[{number}].result")
                if cap is not None and len(result) > cap:
                    cut = len(result) - cap
                    result = result[:cap] + "\n" + TOOL_OUTPUT_MARKER.format(n=cut)
                    capped[len(messages)] = cut
                append({"role": "tool", "tool_call_id": call_id, "name": name, "content": result})
        elif kind == STEP_USER:
            append({"role": "user", "content": head if type(head) is str else plain_text(
                head, index, f"steps[{number}].user")})
        else:  # an agent turn
            content = content if type(content) is str else plain_text(content, index, f"steps[{number}].text")
            if not content:
                removed += 1
                continue
            say(content)
            agent.append(len(messages))
            append({"role": "assistant", "content": content})
    notes: dict[str, int] = {}
    if removed:
        notes["empty_agent_turn_removed"] = removed
    if final:
        verdict = final_reply_turn(messages, final)
        if verdict is not None:
            notes[verdict] = 1
        if verdict != FINAL_TEXT_REPEATED:
            say(final)
            agent.append(len(messages))
            append({"role": "assistant", "content": final})
    own = tools if tools is not None else row.get("tools")
    return Shaped(row, index, messages, None if own is None else _tools_of(row, tools, index), agent, prompt, capped,
                  notes, (checked, invalid), not flags, said)


_SCALARS = (str, int, bool, type(None))
_CHANGED, _NOT_PLAIN = 1, 2  # _walk flags: JSON holds a changed copy; a float orjson writes unlike json


def _walk(value: Any) -> int | None:
    """None: JSON cannot hold `value`; else flags (_CHANGED, _NOT_PLAIN), 0 when exact and plain."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return 0
    if kind is float:
        if not math.isfinite(value):
            return None
        return 0 if plain_float(value) else _NOT_PLAIN
    if kind is dict:
        flags = 0
        for key, item in value.items():
            kind = type(item)
            if not (kind is str or kind is int or kind is bool or item is None):
                inner = _walk(item)
                if inner is None:
                    return None
                flags |= inner
            if type(key) is not str:
                if not isinstance(key, (int, float, bool)) and key is not None:
                    return None
                flags |= _CHANGED
        return flags
    if kind is list or kind is tuple:
        flags = 0 if kind is list else _CHANGED
        for item in value:
            inner = _walk(item)
            if inner is None:
                return None
            flags |= inner
        return flags
    if isinstance(value, (str, int, float, dict, list)):  # subclasses: written, maybe not read back the same
        return _CHANGED | _NOT_PLAIN
    return None


def _json_exact(value: Any) -> bool | None:
    """True: JSON holds `value` exactly; False: it holds a changed copy (tuple, int key); None: it cannot."""
    flags = _walk(value)
    return None if flags is None else not flags & _CHANGED


def carried_plain(stamps: dict[str, Any], index: int) -> bool:
    """Whether jsonl.dumps_plain writes a row's carried stamps as dumps does; a typed error naming the key
    when JSON cannot hold one (NaN, infinity, a set, an object)."""
    plain = True
    for value in stamps.values():
        kind = type(value)
        if kind is str or value is None or kind is int or kind is bool:
            continue
        if kind is float and (value == 0.0 or 1e-4 <= abs(value) < 1e16):  # plain_float, without the call
            continue
        flags = _walk(value)
        if flags is None:
            key = next(key for key, item in stamps.items() if item is value)
            raise RowError(index, key, f"{key} holds a value JSON cannot write (NaN, infinity, or a non-JSON type)",
                           f"keep {key} to JSON values (text, finite numbers, booleans, null, lists, objects), or "
                           "drop the key before exporting")
        if flags:
            plain = False
    return plain


def check_arguments(shaped: Shaped) -> tuple[int, int]:
    """(checked, invalid): would each tool call's arguments come back from JSON exactly? Once per source row.

    Arguments JSON cannot hold at all (NaN, infinity, a set, an object) raise a typed error naming the call.
    Walks the values instead of dumping and re-parsing them (same verdict, cheaper on the hot path), and
    sets `shaped.plain` (the messages can be written with jsonl.dumps_plain).
    """
    if shaped.verdict is not None:  # the flat pass walked them (same verdict, same errors left to this walk)
        return shaped.verdict
    checked = invalid = 0
    plain = True
    for number, message in enumerate(shaped.messages):
        calls = message.get("tool_calls")
        if not calls:
            continue
        for call_number, call in enumerate(calls):
            checked += 1
            flags = _walk(call["function"]["arguments"])
            if flags is None:
                raise ToolArgumentsError(
                    shaped.index, f"messages[{number}].tool_calls[{call_number}].function.arguments",
                    "tool arguments hold a value JSON cannot write (NaN, infinity, or a non-JSON type)",
                    "keep arguments to JSON values: text, finite numbers, booleans, null, lists, objects")
            if flags:
                invalid += flags & _CHANGED
                plain = False
    shaped.plain = plain
    return checked, invalid


def encode_messages(messages: list[dict[str, Any]], encoding: str) -> list[dict[str, Any]]:
    """Messages with each tool call's arguments as a dict or a JSON string (copies only what it changes)."""
    if encoding == "dict":
        return messages
    result = []
    for message in messages:
        calls = message.get("tool_calls")
        if calls:
            message = dict(message)
            message["tool_calls"] = [
                {"id": call["id"], "type": "function",
                 "function": {"name": call["function"]["name"],
                              "arguments": json.dumps(call["function"]["arguments"], ensure_ascii=False)}}
                for call in calls]
        result.append(message)
    return result


def strip_ids(message: Mapping[str, Any]) -> tuple[Any, ...]:
    """A message's comparable content: role, text and calls (name + arguments), without tool-call ids."""
    calls = tuple((call["function"]["name"], _comparable(call["function"]["arguments"]))
                  for call in message.get("tool_calls") or ())
    return (message["role"], message.get("content") or "", calls)


def _comparable(arguments: Any) -> str:
    """Arguments as sorted JSON text; keys of mixed types (1 and "b") are compared as the text JSON writes."""
    try:
        return json.dumps(arguments, sort_keys=True, default=str)
    except TypeError:
        return json.dumps(_text_keys(arguments), sort_keys=True, default=str)


def _text_keys(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(key): _text_keys(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_text_keys(item) for item in value]
    return value
