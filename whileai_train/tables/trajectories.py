"""What the agent did in each row: its own text, its tool calls, its turns, its failed calls, truncation.

Several checks read the same thing from every row (hack_scan's features, length_report, reward_correlations,
optimize's duplicates). A gate that runs several of them reads the rows once with :func:`read_trajectories`
and hands the result on, instead of walking every row's steps once per check (each walk is the bulk of a
check's per-row Python).
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Trajectories", "agent_words_text", "read_sizes", "read_trajectories", "trajectory_parts"]


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return str(value)


def _parts_general(row: Mapping[str, Any]) -> tuple[list[str], list[tuple[str, Any]], int, int]:
    """trajectory_parts for any row shape (OpenAI messages, flat steps, TRL completions)."""
    texts: list[str] = []
    calls: list[tuple[str, Any]] = []
    errors = 0
    messages = row.get("messages")
    if messages is not None:
        turns = 0
        seen_user = False
        for message in messages if isinstance(messages, list) else ():
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
                errors += _is_error(message.get("content"))
            elif role == "assistant":
                content = message.get("content")
                if content:
                    texts.append(_text(content))
                for call in message.get("tool_calls") or ():
                    function = call.get("function", call) if isinstance(call, Mapping) else None
                    if isinstance(function, Mapping) and function.get("name"):
                        calls.append((str(function["name"]), _text(function.get("arguments"))))
        return texts, calls, turns, errors
    steps = row.get("steps")
    turns = 0
    if isinstance(steps, list):
        for step in steps:
            if not isinstance(step, Mapping):
                continue
            turns += 1
            tool = step.get("tool")
            if tool is not None:
                calls.append((str(tool), _text(step.get("arguments"))))
                errors += _is_error(step.get("result"))
            text = step.get("text")
            if text:
                texts.append(_text(text))
    final = row.get("final_text")
    if final is None:
        final = row.get("completion")
    if isinstance(final, str) and final:
        texts.append(final)
        turns += 1
    elif isinstance(final, list):  # conversational completion (TRL): the assistant messages
        sub_texts, sub_calls, sub_turns, sub_errors = _parts_general({"messages": [{"role": "user"}, *final]})
        texts.extend(sub_texts)
        calls.extend(sub_calls)
        turns += sub_turns
        errors += sub_errors
    return texts, calls, turns, errors


def _is_error(result: Any) -> bool:
    """A tool result that reports failure: {"error": ...} / {"ok": false}, or text that starts with "error"."""
    if result.__class__ is dict:
        return bool(result.get("error")) or result.get("ok") is False
    if isinstance(result, str):
        head = result[:200]
        return head[:5].lower() == "error" or '"error":' in head or '"ok": false' in head
    return False


def trajectory_parts(row: Mapping[str, Any]) -> tuple[list[str], list[tuple[str, Any]], int, int]:
    """The agent's own texts, its tool calls (name, arguments), its turns and its failed tool calls.

    Turns count the steps of the trajectory (tool calls, user and agent turns) plus the final reply. The common
    flat row (steps of dicts, a string final_text) is read on a fast path; anything else by the general reader.
    """
    steps = row.get("steps")
    final = row.get("final_text")
    if row.get("messages") is not None or final.__class__ is not str or not (steps is None or steps.__class__ is list):
        return _parts_general(row)
    texts: list[str] = []
    calls: list[tuple[str, Any]] = []
    turns = errors = 0
    if steps:
        try:
            texts, calls, errors = _walk_flat_steps(steps)
        except AttributeError:  # a step that is not a dict: the general reader skips it
            return _parts_general(row)
        turns = len(steps)
    if final:
        texts.append(final)
        turns += 1
    return texts, calls, turns, errors


def _walk_flat_steps(steps: list[Any]) -> tuple[list[str], list[tuple[str, Any]], int]:
    """The agent's texts, its tool calls (name, arguments as a tuple of items when a dict) and its failed calls
    in a flat row's steps. Raises AttributeError at a step that is not a dict (the caller reads the row again
    with the general reader)."""
    texts: list[str] = []
    calls: list[tuple[str, Any]] = []
    errors = 0
    for step in steps:
        tool = step.get("tool")
        if tool is not None:
            arguments = step.get("arguments")
            if arguments.__class__ is dict:
                arguments = tuple(arguments.items())  # hashable when the values are (else str below)
            calls.append((tool if tool.__class__ is str else str(tool), arguments))
            result = step.get("result")
            if result.__class__ is dict:
                if result.get("error") or result.get("ok") is False:
                    errors += 1
            elif result is not None and _is_error(result):
                errors += 1
        text = step.get("text")
        if text:
            texts.append(text if text.__class__ is str else str(text))
    return texts, calls, errors


def agent_words_text(row: Mapping[str, Any]) -> str:
    """All the agent's own words in a row (agent turns and final reply), joined by newlines."""
    return "\n".join(trajectory_parts(row)[0])


@dataclass(frozen=True)
class Trajectories:
    """Per row: the agent text (its texts joined by newlines), tool calls, turns, failed calls, truncation and a
    hash of what the agent did; and every tool call's row and name, in row order.

    The calls themselves are not kept: a list of argument tuples per row costs more to allocate and hold than
    anything here reads from it (counts, names, and the hash rows compare trajectories by).
    """

    texts: list[str]
    n_calls: np.ndarray     # int64
    turns: np.ndarray       # int64
    errors: np.ndarray      # int64
    truncated: np.ndarray   # bool: finish_reason "length" or truncated: true
    hashes: np.ndarray      # int64: hash((text, tuple(calls))); rows with equal hashes took the same trajectory
    tool_rows: np.ndarray   # int64, one per tool call: its row
    tool_names: list[str]   # one per tool call: the tool's name

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def lengths(self) -> np.ndarray:
        """Characters of each row's agent text (float64)."""
        return np.fromiter(map(len, self.texts), dtype=np.float64, count=len(self.texts))

    def take(self, indices: Sequence[int] | np.ndarray) -> Trajectories:
        """The rows at `indices` (ascending), in that order."""
        index = np.asarray(indices, dtype=np.int64)
        position = np.full(len(self.texts), -1, dtype=np.int64)
        position[index] = np.arange(len(index))
        moved = position[self.tool_rows]
        kept = np.flatnonzero(moved >= 0)
        texts, names = self.texts, self.tool_names
        return Trajectories(texts=[texts[i] for i in index.tolist()], n_calls=self.n_calls[index],
                            turns=self.turns[index], errors=self.errors[index], truncated=self.truncated[index],
                            hashes=self.hashes[index], tool_rows=moved[kept], tool_names=[names[i] for i in kept.tolist()])


def read_trajectories(rows: Sequence[Mapping[str, Any]]) -> Trajectories:
    """trajectory_parts of every row, in one loop (the common flat row inlined; any other shape by the reader).

    Rows must be mappings (the callers check that first).
    """
    texts: list[str] = []
    numbers = array("q")  # calls, turns, errors, hash per row
    truncated = array("b")
    tool_rows = array("q")
    tool_names: list[str] = []
    general = trajectory_parts
    for i, row in enumerate(rows):
        get = row.get
        truncated.append(get("finish_reason") == "length" or get("truncated") is True)
        steps = get("steps")
        final = get("final_text")
        if final.__class__ is str and (steps is None or steps.__class__ is list) and get("messages") is None:
            try:
                row_texts, calls, errors = _walk_flat_steps(steps) if steps else ([], [], 0)
            except AttributeError:  # a step that is not a dict: the general reader skips it
                row_texts, calls, turns, errors = _parts_general(row)
                text = "\n".join(row_texts)
            else:
                turns = len(steps) if steps else 0
                if final:
                    turns += 1
                    if row_texts:
                        row_texts.append(final)
                        text = "\n".join(row_texts)
                    else:
                        text = final
                else:
                    text = "\n".join(row_texts)
        else:
            row_texts, calls, turns, errors = general(row)
            text = row_texts[0] if len(row_texts) == 1 else "\n".join(row_texts)
        texts.append(text)
        try:
            trajectory = hash((text, tuple(calls)))
        except TypeError:  # nested arguments: hash their text
            trajectory = hash((text, repr(calls)))
        numbers.extend((len(calls), turns, errors, trajectory))
        for name, _ in calls:
            tool_rows.append(i)
            tool_names.append(name)
    table = np.frombuffer(numbers, dtype=np.int64).reshape(-1, 4) if len(numbers) else np.zeros((0, 4), dtype=np.int64)
    return Trajectories(texts=texts, n_calls=table[:, 0].copy(), turns=table[:, 1].copy(), errors=table[:, 2].copy(),
                        truncated=np.frombuffer(truncated, dtype=np.int8).astype(bool), hashes=table[:, 3].copy(),
                        tool_rows=np.frombuffer(tool_rows, dtype=np.int64).copy(), tool_names=tool_names)


def read_sizes(rows: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: characters of the agent text, tool calls and turns (float64 each), as read_trajectories counts
    them, for checks that need only the sizes: a flat row's steps are asked for their tool and text only."""
    sizes = array("d")  # length, calls, turns per row
    for row in rows:
        get = row.get
        steps = get("steps")
        final = get("final_text")
        if final.__class__ is str and (steps is None or steps.__class__ is list) and get("messages") is None:
            length = n_texts = calls = 0
            try:
                for step in steps or ():
                    if step.get("tool") is not None:
                        calls += 1
                    text = step.get("text")
                    if text:
                        length += len(text) if text.__class__ is str else len(str(text))
                        n_texts += 1
            except AttributeError:  # a step that is not a dict: the general reader skips it
                texts, call_list, turns, _ = _parts_general(row)
                sizes.extend((sum(map(len, texts)) + max(0, len(texts) - 1), len(call_list), turns))
                continue
            turns = len(steps) if steps else 0
            if final:
                length += len(final)
                n_texts += 1
                turns += 1
            sizes.extend((length + max(0, n_texts - 1), calls, turns))
        else:
            texts, call_list, turns, _ = trajectory_parts(row)
            sizes.extend((sum(map(len, texts)) + max(0, len(texts) - 1), len(call_list), turns))
    table = np.frombuffer(sizes, dtype=np.float64).reshape(-1, 3) if len(sizes) else np.zeros((0, 3))
    return table[:, 0].copy(), table[:, 1].copy(), table[:, 2].copy()
