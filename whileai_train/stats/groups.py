"""Per-group (per-task) means, vectorised: the unit every report resamples is the task, not the row."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["GroupMeans", "group_means"]


@dataclass(frozen=True)
class GroupMeans:
    """`keys[i]` has `counts[i]` values whose mean is `means[i]`; `inverse[j]` is row j's group."""

    keys: list[str]
    means: np.ndarray
    counts: np.ndarray
    inverse: np.ndarray


def group_means(keys: Sequence[str], values: Sequence[float] | np.ndarray) -> GroupMeans:
    """Mean of `values` within each distinct key (keys sorted), with counts and the row->group map."""
    if len(keys) != len(values):
        raise ValueError(f"group_means: {len(keys)} keys against {len(values)} values")
    data = np.asarray(values, dtype=float)
    if len(keys) == 0:
        return GroupMeans([], np.zeros(0), np.zeros(0, dtype=int), np.zeros(0, dtype=int))
    unique, inverse = np.unique(np.asarray(keys, dtype=object).astype(str), return_inverse=True)
    counts = np.bincount(inverse)
    sums = np.bincount(inverse, weights=data)
    return GroupMeans([str(k) for k in unique], sums / counts, counts, inverse)
