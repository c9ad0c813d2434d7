"""Several per-task columns bootstrapped with one set of draws: each interval equals `bootstrap_mean_ci`.

pass_at needs pass@1, pass^k and pass@k intervals over the same tasks. Drawing the resampling indices once
and reusing them for every column gives, column by column, exactly the replicates `bootstrap_means` gives
with the same seed (the generator's integer stream does not depend on how it is split into calls), at
the cost of one draw. Small chunks keep the index matrix in cache, which is where most of the time goes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from whileai_train.stats.bootstrap import CELLS_PER_CHUNK, DEFAULT_CONFIDENCE, DEFAULT_DRAWS, DEFAULT_SEED

__all__ = ["bootstrap_mean_cis"]


def bootstrap_mean_cis(columns: Sequence[Sequence[float] | np.ndarray], *, draws: int = DEFAULT_DRAWS,
                       seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE
                       ) -> list[tuple[float, float] | None]:
    """Percentile intervals of the mean of each column (all of one length: one value per task, same tasks).

    Column j's interval equals ``bootstrap_mean_ci(columns[j], draws=draws, seed=seed)``: None with no
    task, a point with one.
    """
    data = [np.asarray(column, dtype=float) for column in columns]
    if not data:
        return []
    n = len(data[0])
    if any(len(column) != n for column in data):
        raise ValueError(f"bootstrap_mean_cis: columns of lengths {[len(c) for c in data]}; they must share tasks")
    if n == 0:
        return [None for _ in data]
    if n == 1:
        return [(float(c[0]), float(c[0])) for c in data]
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
