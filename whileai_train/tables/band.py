"""The one validator of a difficulty band (optimize(mode="rl"), publish_gate, curriculum).

A band is a closed interval of pass rates, ``low <= rate <= high``, with ``0 <= low <= high <= 1``. A zero-width
band such as (0.5, 0.5) is legitimate, not a mistake: the interval is closed, so it holds the tasks measured at
exactly that rate (at k = 8, the asks solved 4 times of 8: the most variance a group-relative advantage can get).
"""

from __future__ import annotations

import numbers
from typing import Any

from whileai_train.errors import ConfigError
from whileai_train.tables.defaults import BAND

__all__ = ["check_band"]


def check_band(band: Any, *, who: str, edges: tuple[str, str] | None = None) -> tuple[float, float]:
    """`band` as (low, high) floats, or a ConfigError naming `who` and the fix.

    `edges` names the two parameters when the caller takes the edges separately (curriculum's floor, solved).
    """
    shown = f"{edges[0]}={band[0]!r}, {edges[1]}={band[1]!r}" if edges is not None else f"band={band!r}"
    fix = (f"keep 0 <= {edges[0]} <= {edges[1]} <= 1 (the defaults are the band's edges, {BAND[0]} and {BAND[1]})"
           if edges is not None else f"pass a (low, high) pair of pass rates with 0 <= low <= high <= 1, e.g. {BAND}")
    if isinstance(band, (str, bytes)):
        raise ConfigError(f"{who}: {shown} is not two pass rates. Fix: {fix}")
    try:
        low, high = band
    except (TypeError, ValueError):
        raise ConfigError(f"{who}: {shown} is not two pass rates. Fix: {fix}") from None
    if not all(isinstance(edge, numbers.Real) and not isinstance(edge, bool) for edge in (low, high)):
        raise ConfigError(f"{who}: {shown} is not two pass rates (numbers). Fix: {fix}")
    lo, hi = float(low), float(high)
    if not 0.0 <= lo <= hi <= 1.0:
        raise ConfigError(f"{who}: {shown} is not 0 <= low <= high <= 1. Fix: {fix}")
    return lo, hi
