"""The server's body reader: orjson's fast path gives exactly what the rule (the standard library's reader)
gives, value for value and refusal for refusal, on hand-picked edge cases and on generated bodies."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whileai_train.server.body import ApiError, _read_json, parse_json_body


def _outcome(read: Any, raw: bytes) -> tuple[str, Any]:
    try:
        value, had_constants = read(raw)
    except ApiError as exc:
        return "refused", (exc.status, exc.code, exc.field)
    return "read", (json.dumps(value, sort_keys=True, allow_nan=True), type(value).__name__, had_constants)


EDGES = [
    b'{"points": [{"seq": 0, "step": 1, "loss": 0.5}]}', b"{}", b"[]", b"  ", b"null", b"0", b"-0", b"1.0",
    b"1e5", b"1E-400", b"1e400", b"-1e400", b"123456789012345678", b"9223372036854775807", b"9223372036854775808",
    b"-9223372036854775808", b"-9223372036854775809", b"18446744073709551616", b'"1234567890123456789"',
    b'{"a": NaN, "b": Infinity, "c": -Infinity}', b'{"a": 1, "a": 2}', b'"\\ud800"', b'"\\ud83d\\ude00"',
    b'{"k\\udc80": 1}', b'"\xff"', b"\xef\xbb\xbf{}", b'"a\x01b"', b'"tab\there"', b"{not json", b"[1, 2,]",
    b"[" * 31 + b"]" * 31, b"[" * 40 + b"]" * 40, b"[" * 1000 + b"]" * 1000, b"[" * 100000 + b"]" * 100000,
    b'{"x": [1, 2, 3]} trailing', b"\x00", '{"name": "caf\u00e9 \u202e"}'.encode(), b'{"a": 1.7976931348623157e308}',
    b'{"a": 5e-324}', b'{"a": 0.1}', b"true", b"false", b'{"n": -1.5e-7}',
]


@pytest.mark.parametrize("raw", EDGES, ids=range(len(EDGES)))
def test_the_fast_path_reads_every_edge_as_the_rule_does(raw: bytes) -> None:
    assert _outcome(parse_json_body, raw) == _outcome(_read_json, raw)


_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                     st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8))
_values = st.recursive(_scalars, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                        st.dictionaries(st.text(max_size=6), kids, max_size=4)),
                       max_leaves=40)


@settings(max_examples=300, deadline=None)
@given(_values, st.integers(min_value=0, max_value=3), st.binary(max_size=3))
def test_the_fast_path_reads_generated_bodies_as_the_rule_does(value: Any, cut: int, noise: bytes) -> None:
    raw = json.dumps(value, allow_nan=True).encode()
    for body in (raw, raw[: max(0, len(raw) - cut)] + noise):  # well-formed, and then broken
        assert _outcome(parse_json_body, body) == _outcome(_read_json, body)


def test_nan_and_infinity_are_read_as_null() -> None:
    value, had_constants = parse_json_body(b'{"a": NaN, "b": [Infinity], "c": 1}')
    assert had_constants and value == {"a": None, "b": [None], "c": 1}
    assert parse_json_body(b'{"a": 1.5}') == ({"a": 1.5}, False)
