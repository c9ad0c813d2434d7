"""The row contract's JSON rule for a tool call's arguments, and the JSON reading it is decoded by.

rows.py imports them (and keeps their names); they live here so that the contract module stays one idea long.
(Any non-text value as its text is the message-text rule's: rows/content.py's as_text.)

* :func:`tool_arguments`: arguments given as an object, a JSON string (decoded, twice when encoded twice) or
  nothing, read as a dict; anything else is a typed error naming the row and the field.
* :func:`loads`: json.loads, reading a bare JSON value by the C scanner directly.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from whileai_train.errors import ToolArgumentsError

__all__ = ["loads", "tool_arguments"]

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
