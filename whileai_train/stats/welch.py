"""Welch's unpaired interval for a difference of means (Welch 1947): the fallback when too few tasks pair."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from whileai_train.stats.bootstrap import DEFAULT_CONFIDENCE
from whileai_train.stats.intervals import t_quantile

__all__ = ["welch_interval"]


def welch_interval(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *,
                   confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float] | None:
    """Interval of mean(a) - mean(b) with Welch-Satterthwaite degrees of freedom.

    None when either side has fewer than 2 values; a point when both sides have no spread.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) < 2 or len(y) < 2:
        return None
    delta = float(x.mean() - y.mean())
    vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    if vx + vy == 0:
        return (delta, delta)
    df = (vx + vy) ** 2 / (vx ** 2 / (len(x) - 1) + vy ** 2 / (len(y) - 1))
    half = t_quantile(0.5 + confidence / 2, df) * float(np.sqrt(vx + vy))
    return (delta - half, delta + half)
