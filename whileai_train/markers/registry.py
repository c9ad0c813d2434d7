"""Markers by name or as callables, read over rows: what the reward monitor's ``markers=`` takes.

A name is a built-in marker (families.FAMILIES: argument_grounding, the seven trace markers, the seven style
markers); a callable is ``fn(row) -> number`` (None for no value) named by its ``__name__``. Each family needed
is read once over the rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from whileai_train.errors import ConfigError
from whileai_train.markers.families import builtin_markers

__all__ = ["MarkerEntry", "check_markers", "marker_values"]


def check_markers(markers: Any) -> list[tuple[str, str | Callable[[Mapping[str, Any]], Any]]]:
    """markers= as [(name, built-in name or callable)], or a ConfigError naming the fix."""
    if markers is None:
        return []
    known = builtin_markers()
    if isinstance(markers, (str, bytes)):
        raise ConfigError(f"markers={markers!r} is a string; a list is expected. Fix: markers=[{markers!r}]")
    if not isinstance(markers, Iterable):
        raise ConfigError(f"markers={markers!r} must be a list of marker names or callables. "
                          "Fix: markers=['honest_claims', my_marker]")
    out: list[tuple[str, str | Callable[[Mapping[str, Any]], Any]]] = []
    for item in markers:
        if isinstance(item, str):
            if item not in known:
                raise ConfigError(f"markers= names {item!r}, which no family stamps. Fix: use one of "
                                  f"{', '.join(known)}, or pass a callable row -> number")
            out.append((item, item))
        elif callable(item):
            name = getattr(item, "__name__", None) or type(item).__name__
            out.append((str(name), item))
        else:
            raise ConfigError(f"markers= has {item!r}; each entry is a marker name or a callable row -> number. "
                              "Fix: markers=['honest_claims', my_marker]")
    names = [name for name, _ in out]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ConfigError(f"markers= has two markers named {', '.join(twice)}. Fix: give each callable its own "
                          "__name__ (def my_marker(row): ...)")
    return out


def _number(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


MarkerEntry = tuple[str, "str | Callable[[Mapping[str, Any]], Any]"]


def marker_values(rows: Sequence[Mapping[str, Any]], markers: Sequence[MarkerEntry]
                  ) -> dict[str, list[float | None]]:
    """Each marker's value on each row (None where a callable gave none)."""
    known = builtin_markers()
    families = {known[spec] for _, spec in markers if isinstance(spec, str)}
    # each family's per-row rule, read straight off the rows (no stamped copy of every row is built); the
    # grounding and trace families read one trajectory per row between them
    readers: list[Callable[[list[tuple[int, Any]]], Mapping[str, float]]] = []
    if "grounding" in families:
        from whileai_train.markers.grounding import grounding_in

        readers.append(grounding_in)
    if "trace" in families:
        from whileai_train.markers.trace_flags import CallMemo, flags_in, trace_marker_values

        calls: CallMemo = {}
        readers.append(lambda events: trace_marker_values(flags_in(events, memo=calls)))
    style_of: Callable[[Mapping[str, Any], int], Mapping[str, float]] | None = None
    if "style" in families:
        from whileai_train.markers.style import style_of as read_style

        style_of = read_style
    if readers:
        from whileai_train.markers.trajectory import read_events
    stamped: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        values = dict(row.get("markers") or {})
        if readers:
            events = read_events(row, index)
            for read in readers:
                values.update(read(events))
        if style_of is not None:
            values.update(style_of(row, index))
        stamped.append(values)
    out: dict[str, list[float | None]] = {}
    for name, spec in markers:
        if isinstance(spec, str):
            out[name] = [_number(values.get(spec)) for values in stamped]
        else:
            out[name] = [_number(spec(row)) for row in rows]
    return out
