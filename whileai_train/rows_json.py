"""The row contract's two JSON rules: a tool call's arguments as an object, and any non-text value as its text.

rows.py imports both (and keeps their names); they live here so that the contract module stays one idea long.

* :func:`tool_arguments`: arguments given as an object, a JSON string (decoded, twice when encoded twice) or
  nothing, read as a dict; anything else is a typed error naming the row and the field.
* :func:`as_text`: message content as text: a string as it is, None as "", anything else as the JSON
  ``json.JSONEncoder(ensure_ascii=False, default=str)`` writes. :func:`flat_object_text` writes the common value
  (a tool result object of text, whole numbers, booleans and nulls) the same way without building an encoder
  each call; a property test pins it to the rule.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring
from typing import Any

from whileai_train.errors import ToolArgumentsError

__all__ = ["as_text", "flat_object_text", "tool_arguments"]


def tool_arguments(raw: Any, index: int | None, field: str) -> dict[str, Any]:
    """A tool call's arguments as a dict: an object as it is (copied), a JSON string decoded (twice when it was
    encoded twice), nothing as {}; anything else is a ToolArgumentsError naming the row and the field."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            decoded = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ToolArgumentsError(index, field, f"tool arguments are not valid JSON ({exc.msg})",
                                     "write arguments as a JSON object, e.g. {\"order_id\": \"A1\"}") from None
        if isinstance(decoded, str):  # encoded twice: decode once more, the object is what was meant
            return tool_arguments(decoded, index, field)
        if isinstance(decoded, Mapping):
            return dict(decoded)
        raw = decoded
    raise ToolArgumentsError(index, field, f"tool arguments are a {type(raw).__name__}, not an object",
                             "write arguments as a JSON object of parameter names to values")


_TEXT_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)  # built once: json.dumps(default=) builds one a call
_KEY_SEPARATOR, _ITEM_SEPARATOR = _TEXT_ENCODER.key_separator, _TEXT_ENCODER.item_separator


def as_text(value: Any) -> str:
    """Message content as text: a string as it is, None as "", anything else as its JSON (the rule)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if value.__class__ is dict:
        text = flat_object_text(value)
        if text is not None:
            return text
    return _TEXT_ENCODER.encode(value)


def _finite_float(value: float) -> str | None:
    return float.__repr__(value) if math.isfinite(value) else None  # NaN and infinity: the rule writes them


# how the rule writes each plain value, by its exact type (None: not a plain value after all)
_PLAIN_VALUES: dict[type, Callable[[Any], str | None]] = {
    str: encode_basestring, int: int.__repr__, bool: lambda value: "true" if value else "false",
    type(None): lambda _value: "null", float: _finite_float}


def flat_object_text(value: dict[Any, Any]) -> str | None:
    """The fast path of :func:`as_text` for an object whose keys are text and whose values are text, whole numbers,
    booleans, nulls or finite floats (exact types): the same JSON, written item by item; None for any other object
    (the rule writes it then)."""
    items = []
    for key, item in value.items():
        write = _PLAIN_VALUES.get(item.__class__)
        written = None if write is None else write(item)
        if written is None or key.__class__ is not str:
            return None
        items.append(f"{encode_basestring(key)}{_KEY_SEPARATOR}{written}")
    return "{" + _ITEM_SEPARATOR.join(items) + "}"
