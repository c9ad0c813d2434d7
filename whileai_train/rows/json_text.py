"""The row contract's two JSON rules: a tool call's arguments as an object, and any non-text value as its text.

rows.py imports both (and keeps their names); they live here so that the contract module stays one idea long.

* :func:`tool_arguments`: arguments given as an object, a JSON string (decoded, twice when encoded twice) or
  nothing, read as a dict; anything else is a typed error naming the row and the field.
* :func:`loads`: json.loads, reading a bare JSON value by the C scanner directly;
* :func:`as_text`: message content as text: a string as it is, None as "", anything else as the JSON
  ``json.JSONEncoder(ensure_ascii=False, default=str)`` writes (one encoder, built once).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from whileai_train.errors import ToolArgumentsError

__all__ = ["as_text", "loads", "tool_arguments"]

_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # the C scanner json.loads ends in, without its two Python layers


def loads(text: str) -> Any:
    """json.loads(text), the same value or the same JSONDecodeError: a text that is one JSON value with nothing
    around it is read by the scanner directly (a third of the cost on short texts); any other goes to json.loads."""
    try:
        value, end = _SCAN(text, 0)
    except (StopIteration, json.JSONDecodeError):
        return json.loads(text)
    if end != len(text):
        return json.loads(text)
    return value


def tool_arguments(raw: Any, index: int | None, field: str) -> dict[str, Any]:
    """A tool call's arguments as a dict: an object as it is (copied), a JSON string decoded (twice when it was
    encoded twice), nothing as {}; anything else is a ToolArgumentsError naming the row and the field."""
    if raw is None or raw == "":
        return {}
    if raw.__class__ is str or isinstance(raw, str):
        try:
            decoded = loads(raw)
        except json.JSONDecodeError as exc:
            raise ToolArgumentsError(index, field, f"tool arguments are not valid JSON ({exc.msg})",
                                     "write arguments as a JSON object, e.g. {\"order_id\": \"A1\"}") from None
        if decoded.__class__ is dict:
            return decoded  # type: ignore[no-any-return]
        if isinstance(decoded, str):  # encoded twice: decode once more, the object is what was meant
            return tool_arguments(decoded, index, field)
        raw = decoded
    elif isinstance(raw, Mapping):
        return dict(raw)
    raise ToolArgumentsError(index, field, f"tool arguments are a {type(raw).__name__}, not an object",
                             "write arguments as a JSON object of parameter names to values")


_TEXT_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)  # built once: json.dumps(default=) builds one a call


def as_text(value: Any) -> str:
    """Message content as text: a string as it is, None as "", anything else as its JSON (the rule)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return _TEXT_ENCODER.encode(value)
