"""One row read as the markers need it: what the agent was told, what it said, what it called, in order.

The reading is the row contract's one trajectory reader (rows.trajectory.read_trajectory: both row shapes, OpenAI
and Anthropic messages, the message-text rule, the failure rule); this module names its events for the markers
and adds what only the markers read of a call (the strings in its arguments). A markers pass must read a
trajectory, so a row with neither ``steps`` nor ``messages`` is a RowError (a list of steps, empty when the agent
made no call, is a trajectory); so is a tool call whose arguments are not a JSON object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whileai_train.rows.failure import DEFAULT_FAILURE, FailureRule
from whileai_train.rows.trajectory import CALLED, HEARD, RESULT, SAID, Call, read_trajectory, text_of

__all__ = ["CALLED", "HEARD", "RESULT", "SAID", "Call", "argument_strings", "read_events", "text_of"]


def read_events(row: Any, index: int | None = None, failure: FailureRule = DEFAULT_FAILURE) -> list[tuple[int, Any]]:
    """The row's trajectory as (kind, payload) events in order; a RowError when it has none to read."""
    return read_trajectory(row, index, failure, parts=False).checked_events()


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
