"""Which function stamps which marker, and how a family's report reads its own markers.

Every family writes to one place, row["markers"], with one polarity (1.0 is the good outcome). A report covers
its own family and ends with the markers it did not stamp, because a row clean on one family can still have
faked the work another family sees. A marker equal on every row is degenerate: no interval, a line saying so,
since a pattern that matches nothing reads exactly like a behaviour that never happened.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from whileai_train.stats import wilson_interval

__all__ = [
    "FAMILIES",
    "MarkerSummary",
    "builtin_markers",
    "family_of",
    "not_stamped_here",
    "not_stamped_line",
    "summarise",
]

# family -> (the function that stamps it, its markers in print order)
FAMILIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "trace": ("trace_markers", ("honest_claims", "reported_failure", "no_test_tampering", "no_suppression",
                                "no_bypass", "no_destructive", "no_secrets")),
    "grounding": ("mark_grounding", ("argument_grounding",)),
    "style": ("style_markers", ("concise", "no_sycophancy", "no_hedging", "no_refusal", "no_repetition")),
}


def builtin_markers() -> dict[str, str]:
    """Every built-in marker name -> its family."""
    return {name: family for family, (_, names) in FAMILIES.items() for name in names}


def family_of(name: str) -> str | None:
    """The family that stamps marker `name`, or None for a marker no built-in family writes."""
    return builtin_markers().get(name)


def not_stamped_here(family: str) -> dict[str, list[str]]:
    """The stamping function -> its markers, for every family but `family`."""
    return {function: list(names) for other, (function, names) in FAMILIES.items() if other != family}


def not_stamped_line(others: dict[str, list[str]]) -> str:
    """'not stamped here: 8 markers in other families. trace_markers(rows) stamps honest_claims, ...; ...'"""
    count = sum(len(names) for names in others.values())
    parts = [f"{function}(rows) stamps {', '.join(names)}" for function, names in others.items()]
    return f"not stamped here: {count} markers in other families. " + "; ".join(parts)


class MarkerSummary(BaseModel):
    """One marker over the rows: its mean (the share of rows with the good outcome for a 0/1 marker), a 95%
    Wilson interval, how many rows had the bad outcome, and whether it was the same on every row."""

    name: str
    mean: float | None = None
    ci95: tuple[float, float] | None = None
    n_rows: int = 0
    n_bad: int = 0
    degenerate: bool = False

    def line(self) -> str:
        """'  no_hedging      0.912 [0.897, 0.925]  88 of 1000 rows' (or the degenerate reading)."""
        if self.mean is None:
            return f"  {self.name:<18} no rows"
        if self.degenerate:
            return (f"  {self.name:<18} {self.mean:.3f}  degenerate: the same on all {self.n_rows} rows (no interval; "
                    "a pattern that matches nothing reads like a behaviour that never happened)")
        assert self.ci95 is not None
        return (f"  {self.name:<18} {self.mean:.3f} [{self.ci95[0]:.3f}, {self.ci95[1]:.3f}]  "
                f"{self.n_bad} of {self.n_rows} rows fall short")


def summarise(name: str, values: Sequence[float]) -> MarkerSummary:
    """The summary of one 0/1 marker's values (one per row)."""
    n = len(values)
    if n == 0:
        return MarkerSummary(name=name)
    good = float(sum(values))
    mean = good / n
    degenerate = all(value == values[0] for value in values)
    return MarkerSummary(name=name, mean=mean, ci95=None if degenerate else wilson_interval(good, n), n_rows=n,
                         n_bad=sum(1 for value in values if value < 1.0), degenerate=degenerate)
