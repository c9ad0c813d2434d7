"""Many paired comparisons over one task set at once: shared bootstrap draws, shared sign-flip patterns.

delta_report compares pass@1 and every marker over the same paired tasks. Each column's interval equals
`bootstrap_mean_ci(column, draws=draws, seed=seed)` (the indices are drawn once for all columns, see
`shared_draws`). The sign-flip p-value is exact for n <= EXACT_SIGN_FLIP_MAX_N (every sign pattern, the same
number `sign_flip_p_value` gives) and Monte-Carlo above, from random bits (eight signs a byte) shared by every
column, with the +1 correction (Phipson & Smyth 2010).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from whileai_train.stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_DRAWS
from whileai_train.stats.paired import EXACT_SIGN_FLIP_MAX_N, SIGN_FLIP_DRAWS, PairedComparison
from whileai_train.stats.shared_draws import bootstrap_mean_cis

__all__ = ["paired_comparisons", "sign_flip_p_values"]

_SIGN_CELLS_PER_CHUNK = 2_000_000  # (draws x tasks) signs per chunk: 16 MB as float64


def sign_flip_p_values(differences: Sequence[Sequence[float] | np.ndarray] | np.ndarray, *,
                       draws: int = SIGN_FLIP_DRAWS, seed: int = 0) -> list[float | None]:
    """Two-sided sign-flip p-value of mean == 0 for each column (each of one length, one value per task)."""
    columns = [np.asarray(c, dtype=float) for c in differences]
    if not columns:
        return []
    n = len(columns[0])
    if any(len(c) != n for c in columns):
        raise ValueError(f"sign_flip_p_values: columns of lengths {[len(c) for c in columns]}; they must share tasks")
    if n == 0:
        return [None for _ in columns]
    d = np.stack(columns, axis=1)  # (n, m)
    observed = np.abs(d.mean(axis=0))
    threshold = observed - 1e-12 * np.maximum(1.0, observed)
    if n <= EXACT_SIGN_FLIP_MAX_N:
        patterns = (((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1) * 2 - 1).astype(float)
        stats = np.abs(patterns @ d) / n
        return [float(v) for v in np.mean(stats >= threshold, axis=0)]
    rng = np.random.default_rng(seed)
    total = d.sum(axis=0)
    hits = np.zeros(d.shape[1], dtype=np.int64)
    chunk = max(1, _SIGN_CELLS_PER_CHUNK // n)
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        packed = rng.integers(0, 256, size=(size, (n + 7) // 8), dtype=np.uint8)
        bits = np.unpackbits(packed, axis=1, count=n).astype(float)
        flipped = np.abs(2.0 * (bits @ d) - total) / n  # sum of +d where the bit is 1 and -d where it is 0
        hits += np.sum(flipped >= threshold, axis=0)
    return [float((1 + h) / (draws + 1)) for h in hits.tolist()]


def paired_comparisons(before: Sequence[Sequence[float] | np.ndarray], after: Sequence[Sequence[float] | np.ndarray],
                       *, draws: int = DEFAULT_DRAWS, seed: int = 0, sign_draws: int = SIGN_FLIP_DRAWS,
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
