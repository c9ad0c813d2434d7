"""The base of every public report: a pydantic model that also reads like the product text's dicts.

``report["hack_scan"]`` and ``report.hack_scan`` are the same value; ``str(report)`` is the human reading
(each report's own ``__str__``: verdict first) and ``report.model_dump()`` the JSON. :class:`Kept` is what every
function that keeps some rows returns: ``rows, report = wai.optimize(...)`` (or ``wai.decontaminate(...)``).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel
from typing_extensions import NamedTuple  # a generic NamedTuple on Python 3.10 too

__all__ = ["Kept", "Report"]


class Report(BaseModel):
    """A pydantic report with read-only mapping access to its fields and properties."""

    def _readable(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        return key in type(self).model_fields or isinstance(getattr(type(self), key, None), property)

    def __getitem__(self, key: str) -> Any:
        if self._readable(key):
            return getattr(self, key)
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return self._readable(key)

    def get(self, key: str, default: Any = None) -> Any:
        """The value under `key`, or `default` when the report has no such key."""
        return getattr(self, key) if self._readable(key) else default


ReportT = TypeVar("ReportT", bound=Report, covariant=True)


class Kept(NamedTuple, Generic[ReportT]):
    """What a function that keeps some rows returns: the kept rows (new dicts; the input is untouched) and its report.

    Unpacks as ``rows, report = wai.decontaminate(rows, "eval.jsonl")`` (optimize and the selectors return the
    same pair), or read ``.rows`` and ``.report``. Passing the pair itself where rows belong is a RowError that
    says to unpack it.
    """

    rows: list[dict[str, Any]]
    report: ReportT
