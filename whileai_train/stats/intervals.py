"""Closed-form intervals and quantiles: Wilson score interval, normal and Student-t quantiles."""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["normal_quantile", "t_quantile", "wilson_interval"]


def normal_quantile(p: float) -> float:
    """The standard normal quantile (inverse CDF) at `p`."""
    return NormalDist().inv_cdf(p)


def t_quantile(p: float, df: float) -> float:
    """Student's t quantile at `p` with `df` degrees of freedom (df=inf gives the normal one)."""
    if df <= 0:
        raise ValueError(f"t_quantile needs df > 0, got {df}")
    if math.isinf(df):
        return normal_quantile(p)
    from scipy.stats import t

    return float(t.ppf(p, df))


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (Wilson 1927).

    Unlike the Wald interval it stays inside [0, 1] and keeps near-nominal coverage at small n and
    at rates near 0 or 1, which is where judge agreement and probe flip rates live. n=0 gives (0, 1).
    """
    if n <= 0:
        return (0.0, 1.0)
    if successes < 0 or successes > n:
        raise ValueError(f"wilson_interval: successes={successes} outside [0, n={n}]")
    z = normal_quantile(0.5 + confidence / 2)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))
