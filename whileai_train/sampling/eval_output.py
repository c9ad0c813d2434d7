"""evaluate(output=...): the JSONL file written as the evaluation goes, and read back to resume it.

Rows are appended a batch at a time and flushed, so a killed evaluation keeps every batch it finished. Run again
with the same output and it reads what is there, cuts a last line the kill left half-written, and samples only
the (task, rollout, run) rows that are missing. A file written by another evaluation (another model, seed, k or
sampling settings) is refused, never mixed in.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from whileai_train.errors import ConfigError, InputError
from whileai_train.exporters.jsonl import dumps
from whileai_train.rows.contract import task_key

__all__ = ["EvalOutput", "row_identity"]

# The lineage keys that make rows one evaluation: a file holding other values is another evaluation.
_SAME_EVALUATION = ("model", "adapter", "seed", "k", "temperature", "top_p", "top_k", "max_completion_length")


def row_identity(row: Mapping[str, Any]) -> tuple[str, int, int]:
    """(task, rollout_index, eval_run): what one evaluation row is, once (a task that appears twice in the
    tasks numbers its second appearance's rollouts on from the first's)."""
    lineage = row.get("lineage") or {}
    return task_key(row), int(row.get("rollout_index", -1)), int(lineage.get("eval_run", -1))


class EvalOutput:
    """The rows already in `path` (by identity) and a handle to append more."""

    def __init__(self, path: str | os.PathLike[str], lineage: Mapping[str, Any]) -> None:
        self.path = Path(path)
        self.rows: dict[tuple[str, int, int], dict[str, Any]] = {}
        if self.path.exists():
            self._read(lineage)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: IO[str] | None = None

    def _read(self, lineage: Mapping[str, Any]) -> None:
        data = self.path.read_bytes()
        keep = len(data)
        if data and not data.endswith(b"\n"):  # a line cut by a kill: dropped, its rows are sampled again
            keep = data.rfind(b"\n") + 1
        lines = data[:keep].decode("utf-8", errors="replace").splitlines()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{self.path}: line {number} is not JSON ({exc.msg}), so the evaluation cannot "
                                 "resume from it. Fix: pass another output path, or delete the file") from exc
            if not isinstance(row, dict) or "eval_run" not in (row.get("lineage") or {}):
                raise InputError(f"{self.path}: line {number} is not an evaluate row (no lineage.eval_run). Fix: "
                                 "pass another output path; evaluate resumes only its own files")
            theirs = row.get("lineage") or {}
            for key in _SAME_EVALUATION:
                if theirs.get(key) != lineage.get(key):
                    raise ConfigError(f"{self.path} holds rows of another evaluation (line {number}: {key}="
                                      f"{theirs.get(key)!r}, this call: {lineage.get(key)!r}). Fix: pass another "
                                      "output path, or delete the file to start over")
            self.rows[row_identity(row)] = row
        if keep != len(data):
            with self.path.open("r+b") as handle:
                handle.truncate(keep)

    def write(self, rows: list[dict[str, Any]]) -> None:
        """Append rows and flush them to the operating system (a kill after this keeps them)."""
        if self._handle is None:
            self._handle = self.path.open("a", encoding="utf-8")
        self._handle.write("".join(dumps(row) + "\n" for row in rows))
        self._handle.flush()
        for row in rows:
            self.rows[row_identity(row)] = row

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
