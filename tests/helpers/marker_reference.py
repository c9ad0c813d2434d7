"""The marker rule written out by hand, for the tests to hold the package's summaries against.

Per-task means (tasks in sorted key order), their mean, and the percentile bootstrap over tasks drawn with
numpy directly: `draws` rows of task indices from default_rng(seed), the mean of each row, the 2.5% and 97.5%
quantiles. Written from the definition, not from the package's code.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def per_task_means(tasks: Sequence[str], values: Sequence[float]) -> np.ndarray:
    """Each task's mean over its rows, tasks in sorted order."""
    grouped: dict[str, list[float]] = {}
    for task, value in zip(tasks, values, strict=True):
        grouped.setdefault(task, []).append(float(value))
    return np.array([sum(grouped[task]) / len(grouped[task]) for task in sorted(grouped)])


def hand_interval(per_task: np.ndarray, *, draws: int = 2000, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    replicates = per_task[rng.integers(0, len(per_task), size=(draws, len(per_task)))].mean(axis=1)
    low, high = np.quantile(replicates, [0.025, 0.975])
    return float(low), float(high)
