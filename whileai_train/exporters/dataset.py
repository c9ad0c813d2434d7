"""Exported rows as a `datasets.Dataset` with explicit features, so every value comes back as written.

``Dataset.from_list`` infers one struct per column and merges dict keys across rows, filling the gaps
with null: tool arguments ``{"order_id": "A1"}`` come back as ``{"order_id": "A1", "amount": None}`` and TRL
trains the nulls (docs/trl_facts.md). Message lists are stored as ``List(Json())`` and other nested values as
``Json()``, which keep each object as written (datasets >= 4.x ``Json`` feature). datasets' own Json feature
writes and reads through pandas' ujson, which cuts a float to 10 significant digits on the way in
(0.123456789012345 -> 0.123456789) and misreads some on the way out (0.69 -> 0.6900000000000001); the
columns here use an exact Json feature (_exact_json_class), the same feature reading and writing with the standard json module. Carried
stamps keep their types: text as string, whole numbers as int64, numbers as float64, objects
(``calibration``, ``markers``) as exact Json.
"""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any

from whileai_train.errors import InputError
from whileai_train.exporters.report import ExportReport
from whileai_train.exporters.shape import iter_input
from whileai_train.rows.files import refuse_non_rows

__all__ = ["export_features", "to_dataset"]

_MESSAGE_COLUMNS = ("messages", "prompt", "completion", "chosen", "rejected", "preferred_output",
                    "non_preferred_output")


@cache
def _exact_json_class() -> Any:
    from dataclasses import dataclass

    from datasets import Json

    @dataclass
    class ExactJson(Json):  # type: ignore[misc]
        """datasets' Json feature (same storage, same name when saved), written and read by the json module."""

        def encode_example(self, example_data: Any) -> Any:
            if example_data is None or isinstance(example_data, str):
                return super().encode_example(example_data)
            return json.dumps(example_data, ensure_ascii=False)

        def decode_example(self, example_data: Any, token_per_repo_id: Any = None) -> Any:
            return None if example_data is None else json.loads(example_data)

    return ExactJson


def export_features(rows: list[dict[str, Any]]) -> Any:
    """The `datasets.Features` for exported rows: messages as List(Json()), nested values as Json()."""
    from datasets import Features, List, Value

    exact = _exact_json_class()

    kinds: dict[str, set[type]] = {}
    for row in rows:
        for key, value in row.items():
            seen = kinds.setdefault(key, set())
            if value is not None:
                seen.add(type(value))
    features: dict[str, Any] = {}
    for key, types in kinds.items():
        if key in _MESSAGE_COLUMNS and types == {list}:
            features[key] = List(exact())
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
            features[key] = exact()
    return Features(features)


def to_dataset(rows: Any) -> Any:
    """A `datasets.Dataset` of exported rows: a list of them, an export's JSONL path, or its ExportReport."""
    from datasets import Dataset

    if isinstance(rows, ExportReport):
        if rows.path is None:
            raise InputError("this report comes from a call that wrote no file. Fix: pass the rows themselves")
        rows = rows.path
    elif isinstance(rows, tuple) and len(rows) == 2 and isinstance(rows[1], ExportReport):
        rows = rows[0]  # (rows, report) from training_rows / preference_rows / prompt_rows
    else:  # an export's report or pair is read above; any other report or pair is refused
        refuse_non_rows(rows, "to_dataset")
    if isinstance(rows, (str, os.PathLike)) or not isinstance(rows, list):
        rows = list(iter_input(rows))
    if not rows:
        raise InputError("no rows to put in a dataset. Fix: pass the exported rows")
    features = export_features(rows)  # every row's keys, in first-seen order (from_list reads only the first's)
    return Dataset.from_dict({key: [row.get(key) for row in rows] for key in features}, features=features)
