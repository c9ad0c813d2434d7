"""Reading rows in: JSONL files (streamed, any bytes), TRL's completion logs (parquet), lists and Datasets.

A file may hold anything: a line that is not UTF-8, holds NUL bytes, is cut off or is not a JSON object is a
RowError naming the file and the line; an unreadable parquet file is an InputError naming the file.
:func:`refuse_non_rows` is the one check every function that takes rows makes first: a report, or the
``(rows, report)`` pair a selector returns, is a RowError that says what was passed and what to pass.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from whileai_train.errors import InputError, RowError
from whileai_train.rows.contract import Row, final_reply
from whileai_train.rows.json_text import as_text

__all__ = ["iter_jsonl", "read_rows", "refuse_non_rows"]

_UNPACK = ("unpack it first: `rows, report = wai.decontaminate(...)` (optimize, the selectors and "
           "build_preference_pairs return the same pair), then pass `rows`")


def refuse_non_rows(source: Any, who: str) -> None:
    """Raise a RowError when `source`, passed to `who` where rows belong, is a report or a (rows, report) pair.

    A list, a tuple of rows, a path, an iterator or a Dataset pass (their own readers check each row)."""
    if isinstance(source, tuple) and len(source) == 2 and isinstance(source[1], BaseModel):
        kept, report = source
        size = f"{len(kept)} rows" if isinstance(kept, (list, tuple)) else f"a {type(kept).__name__}"
        raise RowError(None, None, f"{who} got a (rows, report) pair ({type(source).__name__}: {size} and a "
                                   f"{type(report).__name__}), not rows", _UNPACK)
    if isinstance(source, Row):
        raise RowError(None, None, f"{who} got one {type(source).__name__}, not a list of rows",
                       "pass [row] or a list of rows")
    if isinstance(source, BaseModel):  # a report (Report, ExportReport, ...)
        raise RowError(None, None, f"{who} got a {type(source).__name__} (a report), not rows",
                       "pass the rows the call returned with it: " + _UNPACK)


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
            # a conversational prompt stays a list of messages (the ask is its last user turn, rows.prompt_text)
            row["prompt"] = prompt if isinstance(prompt, (str, list)) else as_text(prompt)
            row["final_text"] = completion if isinstance(completion, str) else final_reply(
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
    refuse_non_rows(source, "read_rows")
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
