"""One row read as the markers need it: what the agent was told, what it said, what it called, in order.

Both row shapes read the same way: a flat row's ``prompt`` and ``steps`` (tool calls with their results, user
turns, agent turns) and ``final_text``; or OpenAI ``messages`` (normalised by rows.conversation). Each event is
a tuple whose first item says what it is:

    (HEARD, text)   the prompt, a system or user turn: what the agent was told
    (SAID, text)    the agent's own words (an agent turn, the text beside a tool call, the final reply)
    (CALLED, call)  a tool call (a :class:`Call`), before its result
    (RESULT, call)  the same call's result, once it came back

A markers pass must read a trajectory, so a row with neither ``steps`` nor ``messages`` is a RowError (a list
of steps, empty when the agent made no call, is a trajectory); so is a tool call whose arguments are not a
JSON object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whileai_train.errors import RowError
from whileai_train.rows import (
    conversation,
    final_is_own_turn,
    tool_arguments,
    tool_failed,
)
from whileai_train.rows_json import as_text

__all__ = ["CALLED", "HEARD", "RESULT", "SAID", "Call", "argument_strings", "read_events", "text_of"]

HEARD, SAID, CALLED, RESULT = 0, 1, 2, 3



class Call:
    """One tool call: its name, decoded arguments, its result as given (None when none came back), and where it
    sits in the row. What the marker needs of it is made on first use: `result` (the result as text), `failed`
    (the result reports a failure, :func:`rows.tool_failed`), `field` ("steps[2]", "messages[3].tool_calls[0]")."""

    __slots__ = ("_failed", "_text", "arguments", "name", "raw_result", "where")

    def __init__(self, name: str, arguments: dict[str, Any], raw_result: Any, where: int | str) -> None:
        self.name = name
        self.arguments = arguments
        self.raw_result = raw_result
        self.where = where  # a flat row's step number, or the field of a call in messages
        self._failed: bool | None = None
        self._text: str | None = None

    @property
    def result(self) -> str | None:
        """The result as text (JSON for a structured result); None when no result came back."""
        if self._text is None and self.raw_result is not None:
            self._text = text_of(self.raw_result)
        return self._text

    @property
    def failed(self) -> bool:
        """Whether the result reports a failure (False while no result came back)."""
        if self._failed is None:
            raw = self.raw_result
            self._failed = raw is not None and tool_failed(raw)
        return self._failed

    @property
    def field(self) -> str:
        """Where the call sits in the row, as an error or a report names it."""
        where = self.where
        return f"steps[{where}]" if where.__class__ is int else str(where)


def text_of(value: Any) -> str:
    """A value as text: strings as they are, anything else as JSON."""
    try:
        return as_text(value)
    except (TypeError, ValueError):  # a value the JSON rule cannot write (a circular object): its str()
        return str(value)


def _no_trajectory(index: int | None) -> RowError:
    return RowError(index, "steps", "row has neither `steps` nor `messages`, so there is no trajectory to read",
                    "keep the trajectory on the row: `steps` (an empty list when the agent made no tool call) "
                    "or OpenAI `messages`")


def _flat_events(row: Mapping[str, Any], steps: list[Any], index: int | None) -> list[tuple[int, Any]]:
    prompt = row.get("prompt")
    events: list[tuple[int, Any]] = []
    if prompt.__class__ is str:
        events.append((HEARD, prompt))
    elif isinstance(prompt, list):  # a conversational prompt (TRL): its system and user turns
        for message in prompt:
            if isinstance(message, Mapping) and message.get("role") in ("system", "user"):
                events.append((HEARD, text_of(message.get("content"))))
    elif prompt is not None:
        events.append((HEARD, text_of(prompt)))
    system = row.get("system_prompt") or row.get("system")
    if system.__class__ is str:
        events.append((HEARD, system))
    append = events.append
    for number, step in enumerate(steps):
        if step.__class__ is not dict and not isinstance(step, Mapping):
            raise RowError(index, f"steps[{number}]", f"step is {type(step).__name__}, not an object",
                           "write each step as {tool, arguments, result}, {user} or {text}")
        get = step.get
        tool = get("tool")
        text = get("text")
        if tool is not None:
            if text:
                append((SAID, text if text.__class__ is str else text_of(text)))
            raw = get("arguments")
            arguments = raw if raw.__class__ is dict else tool_arguments(raw, index, f"steps[{number}].arguments")
            name = tool if tool.__class__ is str else str(tool)
            if "result" in step:
                result = get("result")
                call = Call(name, arguments, "" if result is None else result, number)
                append((CALLED, call))
                append((RESULT, call))
            else:
                append((CALLED, Call(name, arguments, None, number)))
        elif get("user") is not None:
            append((HEARD, text_of(get("user"))))
        elif text is not None:
            append((SAID, text if text.__class__ is str else text_of(text)))
    final = row.get("final_text")
    if final is None:
        final = row.get("completion")
    if final.__class__ is str:
        if final_is_own_turn(steps, final):
            append((SAID, final))
    elif isinstance(final, list):  # a conversational completion: its assistant turns
        for message in final:
            if isinstance(message, Mapping) and message.get("role") == "assistant" and message.get("content"):
                append((SAID, text_of(message.get("content"))))
    elif final is not None:
        raise RowError(index, "final_text", f"final_text is {type(final).__name__}, not text",
                       "write the agent's last reply as a string (or null when it ended on a tool call)")
    return events


def _message_events(row: Mapping[str, Any], index: int | None) -> list[tuple[int, Any]]:
    messages = conversation(row, index)
    events: list[tuple[int, Any]] = []
    pending: dict[str, Call] = {}
    order: list[Call] = []
    for number, message in enumerate(messages):
        role = message["role"]
        content = message.get("content") or ""
        if role in ("system", "user"):
            events.append((HEARD, content))
        elif role == "assistant":
            if content:
                events.append((SAID, content))
            for call_number, raw in enumerate(message.get("tool_calls") or ()):
                function = raw["function"]
                call = Call(function["name"], function["arguments"], None,
                            f"messages[{number}].tool_calls[{call_number}]")
                pending[raw["id"]] = call
                order.append(call)
                events.append((CALLED, call))
        else:  # a tool turn: the result of the call it names, else of the oldest call still waiting
            call_id = message.get("tool_call_id")
            found: Call | None = pending.pop(call_id, None) if call_id is not None else None
            if found is None:
                found = next((c for c in order if c.raw_result is None), None)
            if found is None:
                events.append((HEARD, content))  # a result of no call: still something the agent was told
                continue
            found.raw_result = content
            events.append((RESULT, found))
    return events


def read_events(row: Any, index: int | None = None) -> list[tuple[int, Any]]:
    """The row's trajectory as (kind, payload) events in order (see the module docstring)."""
    if row.__class__ is not dict and not isinstance(row, Mapping):
        raise RowError(index, None, f"row is {type(row).__name__}, not an object", "pass rows as dicts")
    if row.get("messages") is not None:
        return _message_events(row, index)
    steps = row.get("steps")
    if steps is None:
        raise _no_trajectory(index)
    if steps.__class__ is not list:
        raise RowError(index, "steps", f"steps is {type(steps).__name__}, not a list",
                       "write steps as a list of {tool, arguments, result} / {user} / {text} objects")
    return _flat_events(row, steps, index)


def argument_strings(arguments: Any, ignore_keys: frozenset[str], key: str = "") -> list[tuple[str, str]]:
    """Every string in a call's arguments as (key path, value), nested objects and lists included; keys named in
    `ignore_keys` (at any depth) are skipped."""
    found: list[tuple[str, str]] = []
    if arguments.__class__ is dict or isinstance(arguments, Mapping):
        for name, value in arguments.items():
            if name in ignore_keys:
                continue
            path = f"{key}.{name}" if key else str(name)
            if value.__class__ is str:
                found.append((path, value))
            elif value is not None and not isinstance(value, (int, float, bool)):
                found.extend(argument_strings(value, ignore_keys, path))
    elif isinstance(arguments, (list, tuple)):
        for number, value in enumerate(arguments):
            path = f"{key}[{number}]"
            if value.__class__ is str:
                found.append((path, value))
            elif value is not None and not isinstance(value, (int, float, bool)):
                found.extend(argument_strings(value, ignore_keys, path))
    return found
