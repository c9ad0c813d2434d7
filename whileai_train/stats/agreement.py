"""Agreement between two raters: Cohen's kappa (Cohen 1960)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["cohen_kappa"]


def cohen_kappa(a: Sequence[object], b: Sequence[object]) -> float | None:
    """Cohen's kappa of two label sequences: (p_o - p_e) / (1 - p_e).

    Returns None when it is undefined: no items, or chance agreement of 1 (both raters used one
    and the same label throughout), where any "agreement beyond chance" is 0/0.
    """
    if len(a) != len(b):
        raise ValueError(f"cohen_kappa: {len(a)} labels against {len(b)}")
    if len(a) == 0:
        return None
    labels, codes = np.unique(np.asarray(list(a) + list(b), dtype=object).astype(str), return_inverse=True)
    first, second = codes[: len(a)], codes[len(a):]
    k = len(labels)
    table = np.zeros((k, k), dtype=float)
    np.add.at(table, (first, second), 1.0)
    total = table.sum()
    observed = np.trace(table) / total
    expected = float((table.sum(axis=1) @ table.sum(axis=0)) / (total * total))
    if expected >= 1.0:
        return None
    return float((observed - expected) / (1.0 - expected))
