"""Reading a request body as JSON without trusting it: every malformed value becomes an ApiError naming
the field (never an exception that drops the connection or answers 500).

Refused: bytes that are not UTF-8, text that is not JSON, nesting past MAX_DEPTH, strings holding a lone
surrogate (SQLite cannot store them), integers past 64 bits. NaN and Infinity (not JSON, but written by
some encoders) are read as null. Pydantic validation errors are turned into the same error shape.

The rule is the standard library's reader (`_read_json`); orjson reads the common body about five times
faster beside it, with the checks it leaves to do done in C calls where it can (`_shallow`), and hands to
the rule every body that they refuse or that holds a run of 19 digits. tests/server/test_serve_body.py pins them equal.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from pydantic import ValidationError

from whileai_train.server.defaults import MAX_DEPTH

__all__ = ["ApiError", "field_path", "from_validation_error", "parse_json_body"]

_INT64 = (-(2**63), 2**63 - 1)


class ApiError(Exception):
    """An HTTP refusal: `status`, a stable `code`, the message, and the `field` at fault when known."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        super().__init__(message)

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"error": self.message, "code": self.code}
        if self.field is not None:
            out["field"] = self.field
        return out


def field_path(parts: list[Any] | tuple[Any, ...]) -> str:
    """("points", 3, "loss") -> "points[3].loss"."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text or "body"


def parse_json_body(raw: bytes) -> tuple[Any, bool]:
    """The body as a JSON value and whether it held NaN/Infinity (read as null). Empty body -> {}."""
    if raw.strip() and _LONG_RUN not in raw.translate(_DIGITS):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # the rule says what is wrong with it, in its own words
        else:
            if _shallow(value, 0):
                return value, False
    return _read_json(raw)


# An integer literal past 64 bits has 19 digits or more, and orjson would read one past 2^64 as a float:
# a body with a run of 19 digits anywhere goes to the rule (digits are mapped to "9" to find the run in C).
_DIGITS = bytes.maketrans(b"012345678", b"999999999")
_LONG_RUN = b"9" * 19
_CONTAINERS = frozenset({dict, list})


def _shallow(value: Any, depth: int) -> bool:
    """The fast path's share of `_check`: orjson has already refused lone surrogates and bytes that are not
    UTF-8, and without a run of 19 digits every integer is within 64 bits; what is left is the depth. Each
    container's item types are looked at in one C call; only nested containers are visited."""
    if type(value) not in _CONTAINERS:
        return True
    if depth > MAX_DEPTH:
        return False
    items = value.values() if type(value) is dict else value
    if _CONTAINERS.isdisjoint(map(type, items)):
        return True
    return all(_shallow(item, depth + 1) for item in items if type(item) in _CONTAINERS)


def _read_json(raw: bytes) -> tuple[Any, bool]:
    """The rule: the standard library's reader, NaN / Infinity read as null, then the checks."""
    if not raw.strip():
        return {}, False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, "bad_encoding", f"the body is not UTF-8 (bad byte at offset {exc.start})",
                       "body") from None
    constants: list[str] = []

    def constant(name: str) -> None:
        constants.append(name)

    try:
        value = json.loads(text, parse_constant=constant)
    except RecursionError:
        raise ApiError(400, "too_deep", f"the body nests deeper than {MAX_DEPTH} levels", "body") from None
    except ValueError as exc:
        raise ApiError(400, "not_json", f"the body is not JSON ({exc})", "body") from None
    _check(value, [], 0)
    return value, bool(constants)


def _check(value: Any, trail: list[Any], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise ApiError(400, "too_deep", f"nesting deeper than {MAX_DEPTH} levels", field_path(trail))
    kind = type(value)
    if kind is str:
        _check_text(value, trail)
    elif kind is int:
        if not _INT64[0] <= value <= _INT64[1]:
            raise ApiError(400, "int_too_large", "an integer past 64 bits", field_path(trail))
    elif kind is dict:
        for key, item in value.items():
            trail.append(key)
            _check_text(key, trail)
            if type(item) is not float:  # the common case: a metric value needs no look
                _check(item, trail, depth + 1)
            trail.pop()
    elif kind is list:
        for i, item in enumerate(value):
            trail.append(i)
            _check(item, trail, depth + 1)
            trail.pop()


def _check_text(text: str, trail: list[Any]) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError(400, "lone_surrogate", "a string holds a lone surrogate (\\ud800-\\udfff), which is not "
                       "text; send the character itself or its full surrogate pair", field_path(trail)) from None


def from_validation_error(exc: ValidationError, prefix: tuple[Any, ...] = ()) -> ApiError:
    """The first problem pydantic found, as an ApiError naming its field (others follow in the message)."""
    errors = exc.errors(include_url=False, include_input=False)
    if not errors:
        return ApiError(400, "invalid", str(exc))
    first = errors[0]
    loc = [p for p in (*prefix, *first["loc"]) if p != "body"]
    field = field_path(loc)
    message = f"{field}: {first['msg']}"
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return ApiError(400, "invalid", message, field)
