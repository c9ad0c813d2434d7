"""The base of every public report: a pydantic model that also reads like a dict.

``report["hack_scan"]`` and ``report.hack_scan`` are the same value; ``str(report)`` is the human reading
(each report's own ``__str__``: verdict first) and ``report.model_dump()`` the JSON. Shown as a REPL or notebook
cell's value, a report is short: ``repr`` is its verdict line and sizes (never the rows it was computed from), and
``_repr_markdown_`` (what Jupyter renders) is the verdict, then its numbers as tables, then the whole reading.
:class:`KeptRows` is what every function that keeps some rows returns: ``rows, report = wai.optimize(...)`` (or
``wai.decontaminate(...)``); its repr counts the rows instead of printing them.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel
from typing_extensions import NamedTuple  # a generic NamedTuple on Python 3.10 too

__all__ = ["KeptRows", "Report"]


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

    def headline(self) -> str:
        """The verdict line: the first line of the human reading."""
        if type(self).__str__ is BaseModel.__str__:  # a report without a reading of its own: its name
            return type(self).__name__
        return str(self).split("\n", 1)[0]

    def __repr__(self) -> str:
        sizes = [size for name in type(self).model_fields if (size := _size(name, getattr(self, name)))]
        shown = ", ".join(sizes[:_REPR_SIZES]) + (", ..." if len(sizes) > _REPR_SIZES else "")
        return f"{type(self).__name__}({_clip(self.headline(), _REPR_HEADLINE)!r}{', ' if shown else ''}{shown})"

    def _repr_markdown_(self) -> str:
        """What a notebook shows: the verdict first, then the report's numbers as tables, then the whole reading."""
        reading = str(self).splitlines() if type(self).__str__ is not BaseModel.__str__ else []
        out = [f"**{_cell(self.headline(), 400)}**", ""]
        scalars: list[tuple[str, Any]] = []
        blocks: list[str] = []
        for name in type(self).model_fields:
            value = getattr(self, name)
            if _is_scalar(value):
                scalars.append((name, value))
            elif isinstance(value, Report):
                scalars.append((name, value.headline()))
            else:
                blocks += _block(name, value)
        if scalars:
            out += _table(["", "value"], [[name, value] for name, value in scalars]) + [""]
        out += blocks
        if len(reading) > 1:
            out += ["<details><summary>the whole reading</summary>", "", "```text", *reading, "```", "</details>"]
        return "\n".join(out).rstrip() + "\n"


# how much a repr and a notebook table show: a cell's value is a glance, the reading is str(report)
_REPR_HEADLINE = 200  # characters of the verdict line in repr
_REPR_SIZES = 8  # fields counted in repr
_TABLE_ROWS = 20  # rows of one markdown table
_CELL_CHARS = 120


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _size(name: str, value: Any) -> str | None:
    """`n_rows=240`, `warnings=[2]`: a number or a count, never the items themselves."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return f"{name}={value}"
    if isinstance(value, (list, tuple, dict, set)) and value:
        return f"{name}=[{len(value)}]"
    return None


def _cell(value: Any, limit: int = _CELL_CHARS) -> str:
    if isinstance(value, float):
        text = f"{value:.4g}"
    elif isinstance(value, BaseModel):
        text = value.headline() if isinstance(value, Report) else type(value).__name__
    elif isinstance(value, (list, tuple, dict)) and not _is_scalar(value):
        text = ", ".join(_cell(item, limit) for item in value) if all(map(_is_scalar, value)) else f"[{len(value)}]"
    else:
        text = str(value)
    return _clip(text, limit).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows[:_TABLE_ROWS]]
    if len(rows) > _TABLE_ROWS:
        lines.append(f"| ... {len(rows) - _TABLE_ROWS} more |" + " |" * (len(header) - 1))
    return lines


def _block(name: str, value: Any) -> list[str]:
    """A field that is not one number: a table of a mapping or of a list of records, a list of lines, else
    nothing."""
    if isinstance(value, dict) and value:
        return [f"*{name}*", "", *_table(["", "value"], [[key, item] for key, item in value.items()]), ""]
    if not isinstance(value, (list, tuple)) or not value:
        return []
    if all(isinstance(item, str) for item in value):
        return [f"*{name}*", "", *[f"- {_cell(item, 400)}" for item in value[:_TABLE_ROWS]], ""]
    records = [item.model_dump() if isinstance(item, BaseModel) else item for item in value]
    if all(isinstance(record, dict) for record in records):
        columns = list(dict.fromkeys(key for record in records[:_TABLE_ROWS] for key in record
                                     if _is_scalar(record[key])))
        if columns:
            return [f"*{name}*", "", *_table(columns, [[record.get(key) for key in columns] for record in records]),
                    ""]
    return []


ReportT = TypeVar("ReportT", bound=Report, covariant=True)


class KeptRows(NamedTuple, Generic[ReportT]):
    """What a function that keeps some rows returns: the kept rows (new dicts; the input is untouched) and its
    report.

    Unpacks as ``rows, report = wai.decontaminate(rows, "eval.jsonl")`` (optimize and the selectors return the
    same pair), or read ``.rows`` and ``.report``. Passing the pair itself where rows belong is a RowError that
    says to unpack it.
    """

    rows: list[dict[str, Any]]
    report: ReportT

    def __repr__(self) -> str:
        return f"KeptRows(rows=[{len(self.rows)} rows], report={self.report!r})"
