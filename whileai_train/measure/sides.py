"""One side of a comparison read once: the graded table, every marker as a column, the eval run and group of
each row, and which rows count. Per-task means of a column are tables.marker_column.task_means.

`read_side` is the one pass over a side's rows that delta_report, eval_variance and the marker summaries share:
`tables.graded.graded_table` reads tasks and rewards, and one more loop reads row["markers"] (each value a number
in [0, 1], 1.0 = good), lineage.eval_run and the by= label. Everything after is bincount arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from numbers import Real
from operator import itemgetter
from typing import Any

import numpy as np

from whileai_train.errors import ConfigError, RowError
from whileai_train.measure.defaults import EVAL_RUN_KEY, NO_GROUP, NOT_MARKERS
from whileai_train.tables.defaults import PASS_THRESHOLD
from whileai_train.tables.graded import Graded, graded_table, name_rows

__all__ = ["PASS_AT_1", "GroupBy", "Side", "read_side"]

PASS_AT_1 = "pass@1"

GroupBy = str | Callable[[Mapping[str, Any]], Any] | None

_FIX_MARKER = ("stamp markers as numbers in [0, 1] with 1.0 the good outcome (flip a bad-is-high marker to 1 - v "
               "and rename it), or drop the marker")


@dataclass
class Side:
    """A side's rows as arrays. `keep[i]` says whether row i counts (tasks=, balance_rollouts change it)."""

    what: str
    table: Graded
    markers: dict[str, np.ndarray]          # name -> per-row value, NaN where the row does not carry it
    eval_run: np.ndarray | None             # per-row run number (-1 unstamped); None when no row is stamped
    run_labels: list[str]
    group_of_row: np.ndarray | None         # per-row group number; None without by=
    groups: list[str]
    keep: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    @property
    def n_tasks(self) -> int:
        return self.table.n_tasks

    def values(self, name: str) -> np.ndarray:
        """Per-row values of `name` (pass@1: 1.0 pass / 0.0 fail, NaN ungraded), NaN where the row does not count."""
        if name == PASS_AT_1:
            column = np.where(self.table.graded, self.table.passed.astype(float), np.nan)
        else:
            column = self.markers[name]
        return np.where(self.keep, column, np.nan)

    def names(self) -> set[str]:
        return set(self.markers)


def _label(value: Any) -> str:
    if value is None:
        return NO_GROUP
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _no_values(markers: Mapping[str, Any]) -> tuple[Any, ...]:
    return ()


def _getter(names: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    if not names:
        return _no_values
    if len(names) == 1:
        only = names[0]
        return lambda markers: (markers[only],)
    return itemgetter(*names)


def _fast_matrix(values: list[tuple[Any, ...]], width: int) -> np.ndarray | None:
    """The fast path's values as a (rows, names) float matrix, or None when any is not a plain int or float."""
    if not values or not width:
        return np.zeros((len(values), width))
    if not set(map(type, chain.from_iterable(values))) <= {float, int}:
        return None
    return np.array(values, dtype=float)


def _read_markers(i: int, markers: Any, marker_rows: dict[str, list[int]], marker_values: dict[str, list[float]],
                  *, whole_row: bool = False) -> None:
    """Read one row's markers into per-name lists (the general path); a value that is not a number raises."""
    if whole_row:
        markers = markers.get("markers")
    if not isinstance(markers, Mapping):
        raise RowError(i, "markers", f"markers is {type(markers).__name__}, not an object", _FIX_MARKER)
    for name, value in markers.items():
        if name in NOT_MARKERS or value is None:  # None: a marker not measured on this row
            continue
        if value.__class__ is not float and value.__class__ is not int:
            if isinstance(value, bool) or not isinstance(value, Real):
                raise RowError(i, f"markers.{name}", f"marker {name!r} is {value!r}, not a number", _FIX_MARKER)
            value = float(value)
        got = marker_rows.get(name)
        if got is None:
            got = marker_rows[name] = []
            marker_values[name] = []
        got.append(i)
        marker_values[name].append(value)


def read_side(source: Any, *, what: str, pass_threshold: float = PASS_THRESHOLD, by: GroupBy = None) -> Side:
    """Read one side: tasks and rewards (graded_table), markers, lineage.eval_run and the by= label of each row.

    A marker value that is not a number, NaN, or outside [0, 1] raises RowError naming the row and
    `markers.<name>` (the message counts every such row of that marker). Keys in NOT_MARKERS (kl) are skipped.
    """
    if by is not None and not (isinstance(by, str) or callable(by)):
        raise ConfigError(f"by={by!r}: pass a row key, a marker name, or a callable from a row to its group")
    table = graded_table(source, pass_threshold=pass_threshold, what=what)
    rows = table.rows
    n = len(rows)
    marker_rows: dict[str, list[int]] = {}
    marker_values: dict[str, list[float]] = {}
    runs: list[int] = []
    run_index: dict[str, int] = {}
    labels: list[str] = []
    group_index: dict[str, int] = {}
    stamped = False
    common: Any = None  # the key set most rows share: read by one itemgetter call (the fast path)
    names: tuple[str, ...] = ()
    getter: Callable[[Mapping[str, Any]], tuple[Any, ...]] = _no_values
    fast_rows: list[int] = []
    fast_values: list[tuple[Any, ...]] = []
    for i, row in enumerate(rows):
        markers = row.get("markers")
        if markers:
            if markers.__class__ is dict and markers.keys() == common:
                fast_rows.append(i)
                fast_values.append(getter(markers))
            elif common is None and markers.__class__ is dict:
                common = set(markers)
                names = tuple(sorted(name for name in common if name not in NOT_MARKERS))
                getter = _getter(names)
                fast_rows.append(i)
                fast_values.append(getter(markers))
            else:
                _read_markers(i, markers, marker_rows, marker_values)
        lineage = row.get("lineage")
        run = -1
        if lineage and isinstance(lineage, Mapping):
            stamp = lineage.get(EVAL_RUN_KEY)
            if stamp is not None:
                stamped = True
                label = str(stamp)
                run = run_index.get(label, -1)
                if run < 0:
                    run = run_index[label] = len(run_index)
        runs.append(run)
        if by is not None:
            if callable(by):
                raw = by(row)
            elif by in row:
                raw = row[by]
            else:
                found = row.get("markers")
                raw = found.get(by) if isinstance(found, Mapping) else None
            label = raw if raw.__class__ is str else _label(raw)
            number = group_index.get(label)
            if number is None:
                number = group_index[label] = len(group_index)
            labels.append(label)
    fast = _fast_matrix(fast_values, len(names))
    if fast is None:  # a None, a bool or a non-number among them: read those rows one by one (and name the bad one)
        for i in fast_rows:
            _read_markers(i, rows[i], marker_rows, marker_values, whole_row=True)
    columns: dict[str, np.ndarray] = {}
    fast_where = np.array(fast_rows, dtype=np.int64)
    for name in sorted(set(marker_rows) | (set(names) if fast is not None else set())):
        where = np.array(marker_rows.get(name, []), dtype=np.int64)
        values = np.array(marker_values.get(name, []), dtype=float)
        if fast is not None and name in names:
            where = np.concatenate([fast_where, where])
            values = np.concatenate([fast[:, names.index(name)], values])
            order = np.argsort(where, kind="stable")
            where, values = where[order], values[order]
        bad = np.flatnonzero(np.isnan(values) | (values < 0.0) | (values > 1.0))
        if len(bad):
            first = int(where[bad[0]])
            raise RowError(first, f"markers.{name}",
                           f"marker {name!r} is {float(values[bad[0]])!r}, outside [0, 1] ({len(bad)} rows: "
                           f"{name_rows(where[bad])})", _FIX_MARKER)
        column = np.full(n, math.nan)
        column[where] = values
        columns[name] = column
    group_of_row = None
    groups: list[str] = []
    if by is not None:
        groups = list(group_index)
        group_of_row = np.array([group_index[label] for label in labels], dtype=np.int64)
    return Side(what=what, table=table, markers=columns,
                eval_run=np.array(runs, dtype=np.int64) if stamped else None, run_labels=list(run_index),
                group_of_row=group_of_row, groups=groups, keep=np.ones(n, dtype=bool))
