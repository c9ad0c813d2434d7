"""Paired comparison over shared tasks: bootstrap interval of the mean difference, sign-flip p-value.

The sign-flip permutation test (Fisher 1935; Good 2005) is exact for n <= 16 shared tasks (all
2^n sign patterns) and Monte-Carlo above, with the +1 correction so p is never 0 (Phipson & Smyth 2010).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from whileai_train.stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_DRAWS, DEFAULT_SEED, bootstrap_mean_ci

__all__ = ["PairedComparison", "paired_comparison", "sign_flip_p_value", "welch_p_value"]

EXACT_SIGN_FLIP_MAX_N = 16
SIGN_FLIP_DRAWS = 10_000
SIGN_CELLS_PER_CHUNK = 4_000_000  # 32 MB of signs per chunk; the generator's stream does not depend on the split


@dataclass(frozen=True)
class PairedComparison:
    """Mean of after - before over paired tasks, its bootstrap interval and the sign-flip p-value."""

    n: int
    delta: float
    ci95: tuple[float, float] | None
    p_value: float | None


def sign_flip_p_value(differences: Sequence[float] | np.ndarray, *, draws: int = SIGN_FLIP_DRAWS,
                      seed: int = DEFAULT_SEED) -> float | None:
    """Two-sided p-value of mean(differences) == 0 under random sign flips; None with no data."""
    d = np.asarray(differences, dtype=float)
    n = len(d)
    if n == 0:
        return None
    observed = abs(d.mean())
    tolerance = 1e-12 * max(1.0, observed)
    if n <= EXACT_SIGN_FLIP_MAX_N:
        patterns = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1) * 2 - 1
        stats = np.abs(patterns @ d) / n
        return float(np.mean(stats >= observed - tolerance))
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = max(1, SIGN_CELLS_PER_CHUNK // n)  # same draws as one (draws, n) matrix, without 1 GB at 12.5k tasks
    for start in range(0, draws, chunk):
        signs = rng.choice(np.array([-1.0, 1.0]), size=(min(chunk, draws - start), n))
        hits += int(np.sum(np.abs(signs @ d) / n >= observed - tolerance))
    return float((1 + hits) / (draws + 1))


def paired_comparison(before: Sequence[float] | np.ndarray, after: Sequence[float] | np.ndarray, *,
                      draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED,
                      confidence: float = DEFAULT_CONFIDENCE) -> PairedComparison:
    """Compare per-task values of two arms on the same tasks (index i is one task on both sides)."""
    b, a = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    if b.shape != a.shape:
        raise ValueError(f"paired_comparison: {len(b)} tasks before against {len(a)} after")
    d = a - b
    if len(d) == 0:
        return PairedComparison(0, float("nan"), None, None)
    return PairedComparison(len(d), float(d.mean()),
                            bootstrap_mean_ci(d, draws=draws, seed=seed, confidence=confidence),
                            sign_flip_p_value(d, seed=seed))


def welch_p_value(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float | None:
    """Two-sided Welch t-test p-value (unpaired fallback); None when either side has < 2 values."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) < 2 or len(y) < 2:
        return None
    vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    if vx + vy == 0:
        return 1.0 if x.mean() == y.mean() else 0.0
    from scipy.stats import t

    statistic = (x.mean() - y.mean()) / np.sqrt(vx + vy)
    df = (vx + vy) ** 2 / (vx ** 2 / (len(x) - 1) + vy ** 2 / (len(y) - 1))
    return float(2 * t.sf(abs(statistic), df))
