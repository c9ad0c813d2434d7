"""Exported rows as a `datasets.Dataset` with explicit features, so every value comes back as written.

``Dataset.from_list`` infers one struct per column and merges dict keys across rows, filling the gaps
with null: tool arguments ``{"order_id": "A1"}`` come back as ``{"order_id": "A1", "amount": None}`` and TRL
trains the nulls (FACTS.md). Message lists are stored as ``List(Json())`` and other nested values as
``Json()``, which keep each object exactly as written (datasets >= 4.x ``Json`` feature). Carried stamps keep
their types: text as string, whole numbers as int64, numbers as float64, objects (``calibration``,
``markers``) as Json.
"""

from __future__ import annotations

import os
from typing import Any

from whileai_train.errors import InputError
from whileai_train.exporters.report import ExportReport
from whileai_train.exporters.shape import iter_input

__all__ = ["export_features", "to_dataset"]

_MESSAGE_COLUMNS = ("messages", "prompt", "completion", "chosen", "rejected", "preferred_output",
                    "non_preferred_output")


def export_features(rows: list[dict[str, Any]]) -> Any:
    """The `datasets.Features` for exported rows: messages as List(Json()), nested values as Json()."""
    from datasets import Features, Json, List, Value

    kinds: dict[str, set[type]] = {}
    for row in rows:
        for key, value in row.items():
            seen = kinds.setdefault(key, set())
            if value is not None:
                seen.add(type(value))
    features: dict[str, Any] = {}
    for key, types in kinds.items():
        if key in _MESSAGE_COLUMNS and types == {list}:
            features[key] = List(Json())
        elif key == "loss_mask" and types == {list}:
            features[key] = List(Value("int8"))
        elif types == {str}:
            features[key] = Value("string")
        elif types == {bool}:
            features[key] = Value("bool")
        elif types == {int}:
            features[key] = Value("int64")
        elif types and types <= {int, float}:
            features[key] = Value("float64")
        elif not types:
            features[key] = Value("null")
        else:
            features[key] = Json()
    return Features(features)


def to_dataset(rows: Any) -> Any:
    """A `datasets.Dataset` of exported rows: a list of them, an export's JSONL path, or its ExportReport."""
    from datasets import Dataset

    if isinstance(rows, ExportReport):
        if rows.path is None:
            raise InputError("this report comes from a call that wrote no file. Fix: pass the rows themselves")
        rows = rows.path
    if isinstance(rows, tuple) and len(rows) == 2 and isinstance(rows[1], ExportReport):
        rows = rows[0]  # (rows, report) from training_rows / preference_rows / prompt_rows
    if isinstance(rows, (str, os.PathLike)) or not isinstance(rows, list):
        rows = list(iter_input(rows))
    if not rows:
        raise InputError("no rows to put in a dataset. Fix: pass the exported rows")
    columns = dict.fromkeys(key for row in rows for key in row)  # every row's keys (from_list reads the first's)
    return Dataset.from_dict({key: [row.get(key) for row in rows] for key in columns},
                             features=export_features(rows))
