"""What the agent did in each row: its own text, its tool calls, its turns, its failed calls, truncation.

Several checks read the same thing from every row (hack_scan's features, length_report, reward_correlations,
optimize's duplicates). A gate that runs several of them reads the rows once with :func:`read_trajectories`
and hands the result on, instead of walking every row's steps once per check (each walk is the bulk of a
check's per-row Python).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from whileai_train.progress import rows_progress
from whileai_train.rows.contract import agent_parts
from whileai_train.rows.steps import STEP_CALL, STEP_NOT_OBJECT, final_is_own_turn, walk_steps
from whileai_train.rows.trajectory import read_trajectory, text_of

__all__ = ["Parts", "RowReader", "Trajectories", "flat_row_sizes", "read_sizes", "read_trajectories", "trajectory_key",
           "trajectory_parts"]

trajectory_parts = agent_parts  # what the agent did in one row: the rows module's reader, under the tables' name


def trajectory_key(row: Mapping[str, Any]) -> Any:
    """What the agent did, as one comparable value: its own texts and its tool calls with their arguments.

    Tool results are the environment's, not the policy's: two rollouts that said and called the same things are
    one trajectory even if a tool answered differently (dedupe_groups and optimize's duplicates compare this).
    """
    read = read_trajectory(row, events=False, errors=False)
    key = (tuple(read.texts), tuple(read.calls))
    try:
        hash(key)
    except TypeError:  # arguments holding lists or dicts
        return repr(key)
    return key


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
    flags: list[tuple[str, ...]] | None = None  # per row, the trace flags a RowReader read beside the parts

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
        texts, names, flags = self.texts, self.tool_names, self.flags
        picked = index.tolist()
        return Trajectories(texts=[texts[i] for i in picked], n_calls=self.n_calls[index],
                            turns=self.turns[index], errors=self.errors[index], truncated=self.truncated[index],
                            hashes=self.hashes[index], tool_rows=moved[kept], tool_names=[names[i] for i in kept.tolist()],
                            flags=None if flags is None else [flags[i] for i in picked])


Parts = tuple[list[str], list[tuple[str, Any]], int, int]  # AgentParts' fields, as a plain tuple


RowReader = Callable[[int, Mapping[str, Any]], tuple[Parts, tuple[str, ...]]]
"""A reader of one row (its number, the row) into its parts and the trace flags read beside them, in one reading
of its trajectory (gates.features.scan_reader)."""


def read_trajectories(rows: Sequence[Mapping[str, Any]], read: RowReader | None = None) -> Trajectories:
    """trajectory_parts of every row, in one loop (the trajectory reader's parts only); with `read`, each row's
    parts and trace flags by that reader instead (`flags` is then filled).

    Rows must be mappings (the callers check that first).
    """
    texts: list[str] = []
    numbers = array("q")  # calls, turns, errors, hash per row
    truncated = array("b")
    tool_rows = array("q")
    tool_names: list[str] = []
    flags: list[tuple[str, ...]] | None = None if read is None else []
    for i, row in enumerate(rows_progress(rows, "trajectories")):
        get = row.get
        truncated.append(get("finish_reason") == "length" or get("truncated") is True)
        if read is None:
            parts = read_trajectory(row, events=False)
            row_texts, calls, turns, errors = parts.texts, parts.calls, parts.turns, parts.errors
        else:
            (row_texts, calls, turns, errors), row_flags = read(i, row)
            flags.append(row_flags)  # type: ignore[union-attr]
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
                        tool_rows=np.frombuffer(tool_rows, dtype=np.int64).copy(), tool_names=tool_names, flags=flags)


def flat_row_sizes(row: Any) -> tuple[int, int, int] | None:
    """read_sizes' count of a flat row whose steps are all objects and whose final_text is text or absent, in one
    pass of the step walk (walk_steps) and nothing kept: the counts the trajectory reader's parts give (each step
    an agent turn, its text counted whatever its kind, final_text a turn of its own unless the steps end on it).
    None for any other row, which the reader counts. tests/rows/test_row_rules.py pins the two equal."""
    if row.__class__ is not dict or "messages" in row:
        return None
    steps = row.get("steps")
    final = row.get("final_text")
    if final is None:
        final = row.get("completion")
    if steps.__class__ is not list or (final is not None and final.__class__ is not str):
        return None
    chars = n_texts = calls = 0
    for _, kind, _, _, _, text, _ in walk_steps(steps):
        if kind == STEP_NOT_OBJECT:
            return None
        if kind == STEP_CALL:
            calls += 1
        if text:
            chars += len(text) if text.__class__ is str else len(text_of(text))
            n_texts += 1
    turns = len(steps)
    if final and final_is_own_turn(steps, final):
        chars += len(final)
        n_texts += 1
        turns += 1
    return (chars + n_texts - 1 if n_texts else 0), calls, turns


def read_sizes(rows: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: characters of the agent text, tool calls and turns (float64 each), as read_trajectories counts
    them, for checks that need only the sizes: the trajectory reader's parts with no result judged."""
    sizes = array("d")  # length, calls, turns per row
    for row in rows:
        counted = flat_row_sizes(row)
        if counted is None:
            parts = read_trajectory(row, events=False, errors=False)
            texts = parts.texts
            counted = (sum(map(len, texts)) + len(texts) - 1 if texts else 0, len(parts.calls), parts.turns)
        sizes.extend(counted)
    table = np.frombuffer(sizes, dtype=np.float64).reshape(-1, 3) if len(sizes) else np.zeros((0, 3))
    return table[:, 0].copy(), table[:, 1].copy(), table[:, 2].copy()
