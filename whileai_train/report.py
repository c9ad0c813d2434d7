"""The base of every public report: a pydantic model that also reads like the product text's dicts.

``report["hack_scan"]`` and ``report.hack_scan`` are the same value; ``str(report)`` is the human reading
(each report's own ``__str__``: verdict first) and ``report.model_dump()`` the JSON.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

__all__ = ["Report"]


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

    def _repr_markdown_(self) -> str:
        """What a notebook shows as a cell's value: the verdict line in bold, then the whole reading."""
        reading = str(self)
        return f"**{reading.splitlines()[0] if reading else type(self).__name__}**\n\n```\n{reading}\n```"
