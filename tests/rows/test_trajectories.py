"""The shared trajectory readers agree with trajectory_parts on every row shape; the fast paths beside them agree
with the slow forms they replace (bullet lines, within-ask sums of squares)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import scipy.sparse as sp

from whileai_train.gates.features import _BULLET_BYTES, _bullet_starts
from whileai_train.gates.scan_stats import binary_ss
from whileai_train.tables.trajectories import read_sizes, read_trajectories, trajectory_parts


def _rows() -> list[dict[str, Any]]:
    rng = random.Random(7)
    rows: list[dict[str, Any]] = []
    for i in range(400):
        steps: list[Any] = []
        for _ in range(rng.randint(0, 3)):
            kind = rng.random()
            if kind < 0.4:
                steps.append({"tool": rng.choice(["lookup", "refund", 7]), "arguments": {"id": i},
                              "result": rng.choice([{"ok": False}, {"error": "x"}, {"ok": True}, "Error: no", None])})
            elif kind < 0.7:
                steps.append({"text": rng.choice(["- a\n- b", "", "thinking", 12])})
            else:
                steps.append({"tool": "nested", "arguments": {"ids": [1, 2]}, "result": "fine"})
        row: dict[str, Any] = {"prompt": "p", "steps": steps, "final_text": rng.choice(["done", "", "ok!"])}
        shape = rng.random()
        if shape < 0.05:
            row["steps"] = [*steps, "not a step"]
        elif shape < 0.1:
            row = {"messages": [{"role": "user", "content": "p"}, {"role": "assistant", "content": "hi",
                                 "tool_calls": [{"function": {"name": "t", "arguments": "{}"}}]},
                                {"role": "tool", "content": "error: x"}]}
        elif shape < 0.15:
            row = {"prompt": "p", "completion": [{"role": "assistant", "content": "c"}]}
        elif shape < 0.2:
            del row["steps"]
        if rng.random() < 0.1:
            row["finish_reason"] = "length"
        rows.append(row)
    return rows


def test_read_trajectories_matches_trajectory_parts() -> None:
    rows = _rows()
    read = read_trajectories(rows)
    lengths, calls, turns = read_sizes(rows)
    for i, row in enumerate(rows):
        texts, row_calls, row_turns, errors = trajectory_parts(row)
        text = "\n".join(texts)
        assert read.texts[i] == text
        assert (read.n_calls[i], read.turns[i], read.errors[i]) == (len(row_calls), row_turns, errors)
        assert (lengths[i], calls[i], turns[i]) == (len(text), len(row_calls), row_turns)
        assert read.truncated[i] == (row.get("finish_reason") == "length")
        try:
            expected = hash((text, tuple(row_calls)))
        except TypeError:
            expected = hash((text, repr(row_calls)))
        assert read.hashes[i] == expected
        assert [name for r, name in zip(read.tool_rows, read.tool_names) if r == i] == [c[0] for c in row_calls]


def test_take_keeps_the_rows_and_their_calls() -> None:
    rows = _rows()
    picked = [1, 5, 6, 40, 399]
    part = read_trajectories(rows).take(picked)
    whole = read_trajectories([rows[i] for i in picked])
    assert part.texts == whole.texts and part.tool_names == whole.tool_names
    for name in ("n_calls", "turns", "errors", "truncated", "hashes", "tool_rows"):
        assert np.array_equal(getattr(part, name), getattr(whole, name)), name


def test_bullet_starts_match_the_line_regex() -> None:
    rng = random.Random(3)
    pieces = ["-", "*", "\u2022", "1", "12", ".", ")", " ", "\t", "\n", "a", "\x01", "3)", "\n\n"]
    for _ in range(3000):
        raw = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))).encode()
        assert _bullet_starts(raw) == [m.start() for m in _BULLET_BYTES.finditer(raw)], raw


def test_binary_ss_matches_the_sparse_product() -> None:
    rng = np.random.default_rng(0)
    n, groups = 500, 37
    inv = rng.integers(0, groups, n)
    sizes = np.bincount(inv, minlength=groups).astype(np.float64)
    binary = sp.csc_matrix((rng.random((n, 9)) < 0.3).astype(np.float64))
    membership = sp.csr_matrix((np.ones(n), (np.arange(n), inv)), shape=(n, groups))
    per_ask = (membership.T @ binary).tocsr()
    per_ask.data **= 2
    expected = np.asarray(binary.sum(axis=0)).ravel() - np.asarray(per_ask.T @ (1.0 / sizes)).ravel()
    assert np.array_equal(binary_ss(binary, inv, sizes), expected)  # bit for bit: same order of additions


def test_the_parts_only_reading_is_the_full_readings_parts() -> None:
    from pathlib import Path

    from tests.helpers.one_reading_sample import sample
    from whileai_train.rows.files import read_rows
    from whileai_train.rows.trajectory import read_trajectory

    rows: list[Any] = _rows() + sample("messages/markers")[:300]
    for path in sorted((Path(__file__).parents[1] / "formats").glob("*.jsonl")):
        rows += read_rows(path)
    for row in rows:
        full = read_trajectory(row)
        assert read_trajectory(row, events=False).parts == full.parts
        assert trajectory_parts(row) == full.parts


def test_the_events_only_reading_is_the_full_readings_events() -> None:
    from pathlib import Path

    from tests.helpers.one_reading_sample import sample
    from whileai_train.rows.files import read_rows
    from whileai_train.rows.trajectory import read_trajectory

    def seen(events: list[Any]) -> list[Any]:
        return [(kind, payload) if isinstance(payload, str) else
                (kind, payload.name, payload.arguments, payload.result, payload.failed, payload.field)
                for kind, payload in events]

    rows: list[Any] = _rows() + sample("messages/markers")[:300] + sample("flat/markers")[:300]
    for path in sorted((Path(__file__).parents[1] / "formats").glob("*.jsonl")):
        rows += read_rows(path)
    for row in rows:
        full, events_only = read_trajectory(row), read_trajectory(row, parts=False)
        assert seen(events_only.events) == seen(full.events)
        assert repr(events_only.problem) == repr(full.problem)
