"""Many paired comparisons at once: shared bootstrap draws over one task set, shared sign-flip patterns.

delta_report compares pass@1, every marker and the target within every group over (subsets of) one set of
paired tasks. The intervals come from `stats.bootstrap.bootstrap_mean_cis` (one set of draws for all columns of
one task set, each interval exactly `bootstrap_mean_ci`'s). `sign_flip_p_values` draws one sign pattern per draw for all tasks (random bits, eight signs a byte)
and applies it to every column; a column leaves out the tasks where it is NaN. Exact (every pattern, as
`sign_flip_p_value`) when the task axis has at most EXACT_SIGN_FLIP_MAX_N tasks, Monte-Carlo with the +1
correction (Phipson & Smyth 2010) above.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from whileai_train.stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_DRAWS, DEFAULT_SEED, bootstrap_mean_cis
from whileai_train.stats.paired import (
    EXACT_SIGN_FLIP_MAX_N,
    SIGN_CELLS_PER_CHUNK,
    SIGN_FLIP_DRAWS,
    PairedComparison,
)

__all__ = ["paired_comparisons", "sign_flip_p_values"]


Columns = Sequence[Sequence[float] | np.ndarray] | np.ndarray


def _matrix(columns: Columns, what: str) -> np.ndarray:
    data = [np.asarray(c, dtype=float) for c in columns]
    n = len(data[0])
    if any(len(c) != n for c in data):
        raise ValueError(f"{what}: columns of lengths {[len(c) for c in data]}; they must share one task axis")
    return np.stack(data, axis=1)


def sign_flip_p_values(differences: Columns, *, draws: int = SIGN_FLIP_DRAWS, seed: int = DEFAULT_SEED) -> list[float | None]:
    """Two-sided sign-flip p-value of mean == 0 for each column; a column's NaN tasks are not in its test."""
    if len(differences) == 0:
        return []
    d = _matrix(differences, "sign_flip_p_values")
    n = d.shape[0]
    present = ~np.isnan(d)
    sizes = present.sum(axis=0)
    d = np.where(present, d, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.abs(d.sum(axis=0)) / sizes
    threshold = (observed - 1e-12 * np.maximum(1.0, observed)) * sizes  # compared on sums, not means
    if n <= EXACT_SIGN_FLIP_MAX_N:
        patterns = (((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1) * 2 - 1).astype(float)
        hits = np.sum(np.abs(patterns @ d) >= threshold, axis=0)
        values = hits / 2 ** n
        return [float(v) if size else None for v, size in zip(values, sizes)]
    rng = np.random.default_rng(seed)
    total = d.sum(axis=0)
    counted = np.zeros(d.shape[1], dtype=np.int64)
    chunk = max(1, SIGN_CELLS_PER_CHUNK // n)
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        packed = rng.integers(0, 256, size=(size, (n + 7) // 8), dtype=np.uint8)
        bits = np.unpackbits(packed, axis=1, count=n).astype(float)
        counted += np.sum(np.abs(2.0 * (bits @ d) - total) >= threshold, axis=0)  # +d where the bit is 1, -d where 0
    return [float((1 + h) / (draws + 1)) if size else None for h, size in zip(counted.tolist(), sizes)]


def paired_comparisons(before: Columns, after: Columns, *, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED,
                       sign_draws: int = SIGN_FLIP_DRAWS,
                       confidence: float = DEFAULT_CONFIDENCE) -> list[PairedComparison]:
    """`paired_comparison` for several columns over the same tasks (row i of every column is one task)."""
    if len(before) != len(after):
        raise ValueError(f"paired_comparisons: {len(before)} before columns against {len(after)} after")
    differences = [np.asarray(a, dtype=float) - np.asarray(b, dtype=float) for b, a in zip(before, after)]
    if not differences:
        return []
    intervals = bootstrap_mean_cis(differences, draws=draws, seed=seed, confidence=confidence)
    p_values = sign_flip_p_values(differences, draws=sign_draws, seed=seed)
    return [PairedComparison(len(d), float(d.mean()) if len(d) else float("nan"), ci, p)
            for d, ci, p in zip(differences, intervals, p_values)]
