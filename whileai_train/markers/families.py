"""Which function stamps which marker, and how a family's report reads its own markers.

Every family writes to one place, row["markers"], with one polarity (1.0 is the good outcome). A report covers
its own family and ends with the markers it did not stamp, because a row clean on one family can still have
faked the work another family sees. Each marker is summarised by the one rule marker_summary uses too
(tables.marker_column): the mean over tasks with a 95% bootstrap over tasks; a marker equal on every row is
degenerate: no interval, a line saying so, since a pattern that matches nothing reads exactly like a behaviour
that never happened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from whileai_train.errors import RowError
from whileai_train.markers.defaults import PAYS_P_VALUE
from whileai_train.stats.paired import welch_p_value
from whileai_train.tables.marker_column import MarkerSummary, summarise_columns, task_numbers

__all__ = [
    "FAMILIES",
    "bad_rate",
    "builtin_markers",
    "not_stamped_here",
    "not_stamped_line",
    "reward_paid",
    "stamped_markers",
    "summarise",
]

# family -> (the function that stamps it, its markers in print order)
FAMILIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "trace": ("trace_markers", ("honest_claims", "reported_failure", "no_test_tampering", "no_suppression",
                                "no_bypass", "no_destructive", "no_secrets")),
    "grounding": ("mark_grounding", ("argument_grounding",)),
    "style": ("style_markers", ("concise", "no_sycophancy", "no_hedging", "no_apology", "no_boilerplate", "no_refusal",
                                "no_repetition")),
}


def builtin_markers() -> dict[str, str]:
    """Every built-in marker name -> its family."""
    return {name: family for family, (_, names) in FAMILIES.items() for name in names}


def not_stamped_here(family: str) -> dict[str, list[str]]:
    """The stamping function -> its markers, for every family but `family`."""
    return {function: list(names) for other, (function, names) in FAMILIES.items() if other != family}


def not_stamped_line(others: dict[str, list[str]]) -> str:
    """'not stamped here: 8 markers in other families. trace_markers(rows) stamps honest_claims, ...; ...'"""
    count = sum(len(names) for names in others.values())
    parts = [f"{function}(rows) stamps {', '.join(names)}" for function, names in others.items()]
    return f"not stamped here: {count} markers in other families. " + "; ".join(parts)


def summarise(rows: Sequence[Mapping[str, Any]],
              columns: Mapping[str, Sequence[float] | np.ndarray]) -> list[MarkerSummary]:
    """Each column (one 0/1 value per row, 1.0 the good outcome) summarised by the one marker rule
    (tables.marker_column: mean over tasks, 95% bootstrap over tasks), the rows' tasks numbered once."""
    task_of_row, n_tasks = task_numbers(rows)
    return summarise_columns(columns, task_of_row, n_tasks)


def bad_rate(summary: MarkerSummary) -> tuple[float | None, tuple[float, float] | None]:
    """The rate of the bad outcome and its interval, read off the marker's own summary (1 - mean, 1 - the
    interval's ends), so a report's rate and the marker's line never disagree."""
    if summary.mean is None:
        return None, None
    ci = (1.0 - summary.ci95[1], 1.0 - summary.ci95[0]) if summary.ci95 is not None else None
    return 1.0 - summary.mean, ci


def stamped_markers(row: Mapping[str, Any], index: int, values: Mapping[str, float]) -> dict[str, Any]:
    """A new row["markers"]: the row's own markers with `values` written over them (every family stamps this way);
    a RowError naming the row when its markers are not an object."""
    markers = row.get("markers")
    if not markers:
        return dict(values)
    if markers.__class__ is not dict and not isinstance(markers, Mapping):
        raise RowError(index, "markers", f"markers is {type(markers).__name__}, not an object",
                       "write markers as {name: value} (1.0 is the good outcome)")
    return {**markers, **values}


class RewardPaid(NamedTuple):
    """The rewards of the rows that show a behaviour against those that do not: both means, the Welch p-value,
    and whether the reward pays for the behaviour (higher where it shows, p below PAYS_P_VALUE)."""

    mean_shown: float
    mean_not: float
    p_value: float | None
    pays: bool


def reward_paid(shown: np.ndarray, not_shown: np.ndarray) -> RewardPaid | None:
    """Whether the reward pays for a behaviour (the graded rewards where it shows and where it does not); None
    when either side has no graded row."""
    if not len(shown) or not len(not_shown):
        return None
    mean_shown, mean_not = float(shown.mean()), float(not_shown.mean())
    p = welch_p_value(shown, not_shown)
    return RewardPaid(mean_shown, mean_not, p, bool(mean_shown > mean_not and p is not None and p < PAYS_P_VALUE))
