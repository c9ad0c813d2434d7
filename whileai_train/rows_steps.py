"""A flat rollout's steps: the one walker (read_steps, with its fast path for all-dict steps beside it), their
sizes, and the rule for a tool result that reports failure. Part of the row contract: rows.py imports these and
keeps their names.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from whileai_train.rows_json import as_text as _as_text

__all__ = ["StepSizes", "StepsRead", "dict_step_sizes", "read_dict_steps", "read_steps", "step_sizes", "tool_failed"]

_EXIT_KEYS = frozenset(("exit_code", "returncode", "exitCode", "status_code"))
_VERDICT_KEYS = _EXIT_KEYS | {"status", "error", "ok", "success"}
_FAILED_STATUS = ("error", "failed", "failure")
# How trl 1.16's tool loop writes a failed call's result: str({"error": message}), a Python dict's text.
_TRL_FAILED = "{'error': "


def tool_failed(result: Any) -> bool:
    """The one rule for a tool result that reports failure: an object with a truthy `error`, `ok` or `success`
    false, a non-zero exit code (`status_code` outside 2xx/3xx) or a `status` of error/failed/failure; text that
    starts with error/traceback/exception or quotes a JSON error field, or TRL's text of a failed call
    (``{'error': ...}``); a JSON object in text read as an object."""
    if result.__class__ is str:
        head = result[:200].lstrip()
        if head[:9].lower().startswith(("error", "traceback", "exception")):
            return True
        if head[:1] != "{":  # text: a JSON error field quoted in it
            return '"error":' in head or '"ok": false' in head
        try:
            result = json.loads(result)
        except json.JSONDecodeError:  # cut or malformed, or TRL's failed call (str of {"error": ...})
            return '"error":' in head or '"ok": false' in head or head.startswith(_TRL_FAILED)
    if result.__class__ is dict:
        if _VERDICT_KEYS.isdisjoint(result):  # none of the keys below: nothing to read
            return False
    elif not isinstance(result, Mapping):
        return False
    get = result.get
    if get("error") or get("ok") is False or get("success") is False:
        return True
    for key in _EXIT_KEYS.intersection(result):  # any non-zero exit code; a 2xx/3xx status_code is a success
        code = get(key)
        if code.__class__ is int and code != 0 and not (key == "status_code" and 200 <= code < 400):
            return True
    status = get("status")
    return isinstance(status, str) and status.lower() in _FAILED_STATUS


class StepsRead(NamedTuple):
    """What a flat row's steps hold: the agent's texts (tool-call steps' and agent turns' `text`), its tool calls
    (name, arguments: a dict as the tuple of its items), the steps counted as turns, and the calls whose result
    reports failure (:func:`tool_failed`)."""

    texts: list[str]
    calls: list[tuple[str, Any]]
    turns: int
    errors: int


def _read_any_steps(steps: Iterable[Any]) -> StepsRead:
    """The walker of flat steps, the rule: a step that is not an object is skipped."""
    texts: list[str] = []
    calls: list[tuple[str, Any]] = []
    turns = errors = 0
    for step in steps:
        if not isinstance(step, Mapping):
            continue
        turns += 1
        tool = step.get("tool")
        if tool is not None:
            arguments = step.get("arguments")
            calls.append((str(tool), tuple(arguments.items()) if arguments.__class__ is dict else arguments))
            errors += tool_failed(step.get("result"))
        text = step.get("text")
        if text:
            texts.append(text if isinstance(text, str) else _as_text(text))
    return StepsRead(texts, calls, turns, errors)


def read_dict_steps(steps: list[Any]) -> tuple[list[str], list[tuple[str, Any]], int, int]:
    """The fast path of :func:`read_steps` for steps that are all dicts (the common row), without the per-step
    type checks, as a plain tuple; raises AttributeError at a step that is not an object (read the steps with
    :func:`read_steps` then). For loops over many rows; a test pins it to the rule."""
    texts: list[str] = []
    calls: list[tuple[str, Any]] = []
    errors = 0
    for step in steps:
        get = step.get
        tool = get("tool")
        if tool is not None:
            arguments = get("arguments")
            calls.append((tool if tool.__class__ is str else str(tool),
                          tuple(arguments.items()) if arguments.__class__ is dict else arguments))
            result = get("result")
            if result is not None and tool_failed(result):
                errors += 1
        text = get("text")
        if text:
            texts.append(text if text.__class__ is str else _as_text(text))
    return texts, calls, len(steps), errors


def read_steps(steps: Any) -> StepsRead:
    """The one walker of a flat row's `steps` (anything but a list reads as no steps)."""
    if not steps or not isinstance(steps, list):
        return StepsRead([], [], 0, 0)
    try:
        return StepsRead(*read_dict_steps(steps))
    except AttributeError:  # a step that is not an object
        return _read_any_steps(steps)


class StepSizes(NamedTuple):
    """The sizes of what :func:`read_steps` reads: characters of the agent's texts, how many texts, calls, turns."""

    chars: int
    texts: int
    calls: int
    turns: int


def dict_step_sizes(steps: list[Any]) -> tuple[int, int, int, int]:
    """The fast path of :func:`step_sizes` for steps that are all dicts: each is asked for its tool and text only,
    no call is kept; raises AttributeError at a step that is not an object. A test pins it to the rule."""
    chars = n_texts = calls = 0
    for step in steps:
        if step.get("tool") is not None:
            calls += 1
        text = step.get("text")
        if text:
            chars += len(text) if text.__class__ is str else len(_as_text(text))
            n_texts += 1
    return chars, n_texts, calls, len(steps)


def step_sizes(steps: Any) -> StepSizes:
    """The sizes of what :func:`read_steps` reads, for checks that need only them."""
    if not steps or not isinstance(steps, list):
        return StepSizes(0, 0, 0, 0)
    try:
        return StepSizes(*dict_step_sizes(steps))
    except AttributeError:  # a step that is not an object
        read = _read_any_steps(steps)
        return StepSizes(sum(map(len, read.texts)), len(read.texts), len(read.calls), read.turns)
