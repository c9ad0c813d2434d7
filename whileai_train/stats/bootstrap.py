"""The percentile bootstrap over tasks (Efron & Tibshirani 1993), seeded and vectorised.

The resampled unit is the task: rows of one task are repeats of one situation, not independent
draws, so resampling rows would make intervals too narrow.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["CELLS_PER_CHUNK", "DEFAULT_CONFIDENCE", "DEFAULT_DRAWS", "DEFAULT_SEED", "bootstrap_mean_ci", "bootstrap_mean_cis",
           "bootstrap_means"]

DEFAULT_DRAWS = 2000  # the percentile bootstrap over tasks (docs/measurement.md): 2000 draws, seeded
DEFAULT_CONFIDENCE = 0.95
# seeded: the same rows give the same interval on every call; 0 is our choice
DEFAULT_SEED = 0
# (draws x tasks) int64 indices drawn per chunk: ~8 MB, so memory stays flat at any task count; every bootstrap
# in stats/ draws in chunks of this size
CELLS_PER_CHUNK = 1_000_000


def bootstrap_means(task_values: Sequence[float] | np.ndarray, *, draws: int = DEFAULT_DRAWS,
                    seed: int = DEFAULT_SEED) -> np.ndarray:
    """`draws` bootstrap replicates of the mean of `task_values` (one value per task)."""
    values = np.asarray(task_values, dtype=float)
    n = len(values)
    if n == 0:
        return np.zeros(0)
    rng = np.random.default_rng(seed)
    out = np.empty(draws)
    chunk = max(1, CELLS_PER_CHUNK // n)
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        out[start:start + size] = values[rng.integers(0, n, size=(size, n))].mean(axis=1)
    return out


def bootstrap_mean_ci(task_values: Sequence[float] | np.ndarray, *, draws: int = DEFAULT_DRAWS,
                      seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float] | None:
    """Percentile interval of the mean over tasks; None with fewer than two tasks (one task has no spread to
    resample, and a zero-width interval would read as certainty)."""
    values = np.asarray(task_values, dtype=float)
    if len(values) < 2:
        return None
    replicates = bootstrap_means(values, draws=draws, seed=seed)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(replicates, [tail, 1.0 - tail])
    return (float(low), float(high))


# Several per-task columns over the same tasks (pass@1, pass^k and pass@k; every marker of one task set): the
# resampling indices are drawn once and reused for every column, which gives, column by column, exactly the
# replicates `bootstrap_means` gives with the same seed (the generator's integer stream does not depend on how
# it is split into calls), for the cost of one draw. tests/measure/test_pass_at.py pins it to `bootstrap_mean_ci`.
def bootstrap_mean_cis(columns: Sequence[Sequence[float] | np.ndarray], *, draws: int = DEFAULT_DRAWS,
                       seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE
                       ) -> list[tuple[float, float] | None]:
    """Percentile intervals of the mean of each column (all of one length: one value per task, same tasks).

    Column j's interval equals ``bootstrap_mean_ci(columns[j], draws=draws, seed=seed)``: None with fewer than
    two tasks.
    """
    data = [np.asarray(column, dtype=float) for column in columns]
    if not data:
        return []
    n = len(data[0])
    if any(len(column) != n for column in data):
        raise ValueError(f"bootstrap_mean_cis: columns of lengths {[len(c) for c in data]}; they must share tasks")
    if n < 2:
        return [None for _ in data]
    rng = np.random.default_rng(seed)
    replicates = np.empty((len(data), draws))
    chunk = max(1, CELLS_PER_CHUNK // n)
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        index = rng.integers(0, n, size=(size, n))
        for j, column in enumerate(data):
            replicates[j, start:start + size] = column[index].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    out: list[tuple[float, float] | None] = []
    for row in replicates:
        low, high = np.quantile(row, [tail, 1.0 - tail])
        out.append((float(low), float(high)))
    return out
