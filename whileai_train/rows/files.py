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
from whileai_train.rows.content import as_text
from whileai_train.rows.contract import Row, final_reply

__all__ = ["from_dataset", "iter_jsonl", "read_rows", "refuse_non_rows"]

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


def _drop_filled(value: Any) -> Any:
    """A value read back from Arrow with the keys Arrow filled (None in a struct) dropped, at every depth."""
    if value.__class__ is dict:
        return {key: _drop_filled(item) for key, item in value.items() if item is not None}
    if value.__class__ is list:
        return [_drop_filled(item) for item in value]
    return value


def from_dataset(dataset: Any) -> list[dict[str, Any]]:
    """A `datasets.Dataset` as rows: Arrow merges the keys of every row's dicts and fills the gaps with None
    (tool arguments ``{"order_id": "A1"}`` come back as ``{"order_id": "A1", "amount": None}``); those keys are
    dropped, so a row reads as it was written. (A None the row wrote itself inside a dict cannot be told apart
    from a filled one, and is dropped too: absent and null read the same everywhere in this library.)"""
    rows = dataset.to_list()
    out: list[dict[str, Any]] = []
    for row in rows:
        out.append({key: _drop_filled(value) for key, value in row.items() if value is not None})
    return out


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


def _weighted(rewards: dict[str, Any], weights: Mapping[str, float] | None, file: Path,
              number: int) -> float | None:
    """TRL's reward of a logged completion: the weighted sum of its reward functions' values, NaN (None) skipped
    (trl 1.16 GRPOTrainer: (rewards_per_func * reward_weights).nansum); None when every function gave None."""
    total, seen = 0.0, False
    for name, value in rewards.items():
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        total += float(value) * (1.0 if weights is None else weights[name])
        seen = True
    if seen and weights is None and len(rewards) > 1 and not 0.0 <= total <= 1.0:
        raise RowError(number, "reward", f"{file}: {len(rewards)} reward columns ({', '.join(rewards)}) sum to "
                                         f"{total:g}, outside [0, 1]; TRL weights them with reward_weights",
                       "pass the weights of your GRPOConfig: `wai.read_rows(path, reward_weights={...})` "
                       "(a weight per column), or `reward_columns=[one]`")
    return total if seen else None


def _read_parquet(path: Path, reward_columns: Iterable[str] | None,
                  reward_weights: Mapping[str, float] | Iterable[float] | None = None) -> list[dict[str, Any]]:
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
            weights = _weights_of(reward_weights, names, file)
            prompt, completion = record.get("prompt"), record.get("completion")
            row: dict[str, Any] = dict(record)
            # a conversational prompt stays a list of messages (the ask is its last user turn, rows.prompt_text);
            # a conversational completion stays one too (the intake reads the pair as one conversation)
            row["prompt"] = prompt if isinstance(prompt, (str, list)) else as_text(prompt)
            row["final_text"] = completion if isinstance(completion, str) else final_reply(
                {"messages": completion} if isinstance(completion, list) else {})
            row["rewards"] = rewards
            row["reward"] = _weighted(rewards, weights, file, len(rows))
            rows.append(row)
    return rows


def _weights_of(weights: Mapping[str, float] | Iterable[float] | None, names: list[str],
                file: Path) -> dict[str, float] | None:
    if weights is None:
        return None
    if isinstance(weights, Mapping):
        missing = [name for name in names if name not in weights]
        if missing:
            raise InputError(f"{file}: reward_weights names no weight for {', '.join(missing)}. Fix: give every "
                             f"reward column a weight ({', '.join(names)}), as reward_weights in your GRPOConfig")
        return {name: float(weights[name]) for name in names}
    listed = [float(weight) for weight in weights]
    if len(listed) != len(names):
        raise InputError(f"{file}: {len(listed)} reward_weights for {len(names)} reward columns "
                         f"({', '.join(names)}). Fix: one weight per column, in the order of reward_columns (or a "
                         "dict {column: weight})")
    return dict(zip(names, listed, strict=True))


def _read_json_array(path: Path) -> list[Any]:
    """A file holding one JSON array of rows (a .json export)."""
    try:
        rows = json.loads(path.read_bytes())
    except (UnicodeDecodeError, ValueError) as exc:
        raise RowError(None, None, f"{path}: not a JSON array of rows ({type(exc).__name__})",
                       "write one JSON array of objects, or JSONL (one object per line)") from None
    if not isinstance(rows, list):
        raise RowError(None, None, f"{path}: holds a JSON {type(rows).__name__}, not an array of rows",
                       "write one JSON array of objects, or JSONL (one object per line)")
    if not rows:
        raise InputError(f"{path}: the file holds no rows. Fix: point at a file with rows in it")
    return rows


def _starts_with_bracket(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(64).lstrip()
    except OSError:
        return False
    return head.startswith(b"[")


def read_rows(source: Any, *, reward_columns: Iterable[str] | None = None,
              reward_weights: Mapping[str, float] | Iterable[float] | None = None,
              reward_key: str | None = None) -> list[dict[str, Any]]:
    """Read rows from a list of dicts, a JSONL or JSON-array path, a `datasets.Dataset`, or TRL completion logs.

    TRL logs are ``<output_dir>/completions/*.parquet`` (``log_completions=True``): pass the folder
    or one file; `reward` becomes TRL's reward: the sum of the reward-function columns (or of `reward_columns`)
    weighted by `reward_weights` (your GRPOConfig's: a list in column order, or a dict {column: weight}).
    `reward_key`: the column your rows grade under (`score`, `rating`, ...), read as `reward`.
    """
    refuse_non_rows(source, "read_rows")
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir() or path.suffix == ".parquet":
            rows = _read_parquet(path, reward_columns, reward_weights)
        elif path.is_file() and _starts_with_bracket(path):
            rows = _read_json_array(path)
        else:
            rows = list(iter_jsonl(path))
    elif hasattr(source, "to_list") and hasattr(source, "features"):  # datasets.Dataset
        rows = from_dataset(source)
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
    if reward_key is not None:
        rows = [_regraded(row, reward_key, index) for index, row in enumerate(rows)]
    return rows


def _regraded(row: Mapping[str, Any], key: str, index: int) -> dict[str, Any]:
    if key not in row:
        raise RowError(index, key, f"row has no `{key}` (reward_key={key!r})",
                       "name the column the rows grade under, or give every row one (null when ungraded)")
    value = row[key]
    return {**row, "reward": float(value) if isinstance(value, bool) else value}
