"""The export hot path's shortcuts write exactly what the plain path writes.

TRL rows go through orjson only where its bytes equal `json`'s (jsonl.dumps_plain); these tests pin that the
file is byte for byte the `json` encoding of the same rows, for floats on both sides of repr's exponent
bounds, tuples, non-text keys, big integers, text subclasses and non-ASCII text; and that the argument walk and
the leak scan give the verdicts of the general code.
"""

from __future__ import annotations

import json
import math
import random
import struct
from pathlib import Path

import pytest

import whileai_train as wai
from whileai_train.demos.rollouts import refund_rollouts
from whileai_train.exporters.jsonl import dumps, dumps_plain, plain_float
from whileai_train.exporters.leaks import leaks_by_row, privileged_strings
from whileai_train.exporters.shape import _json_exact

_BOUNDARY_FLOATS = [0.0, -0.0, 1e-4, math.nextafter(1e-4, 0.0), 1e-5, 2.5e-5, 1e16, math.nextafter(1e16, 0.0),
                    9999999999999998.0, 1e22, 5e-324, 1.7976931348623157e308, 0.1, 1 / 3, 123.456, -7.25, 1e15]


def _random_floats(n: int) -> list[float]:
    rng = random.Random(7)
    out = []
    while len(out) < n:
        value = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if math.isfinite(value):
            out.append(value)
        out.append(round(rng.uniform(-1e6, 1e6), rng.randint(0, 8)))
    return out


def test_plain_float_is_exactly_where_repr_has_no_exponent():
    for value in _BOUNDARY_FLOATS + _random_floats(20000):
        assert plain_float(value) == ("e" not in repr(value)), value


def test_dumps_plain_writes_what_dumps_writes():
    class Text(str):
        pass

    values = [
        {"a": value, "b": [value, {"c": value}]} for value in _BOUNDARY_FLOATS + _random_floats(2000)
        if plain_float(value)
    ]
    values += [
        {"t": (1, 2, [3])}, {"k": {1: "x", 2.5: "y", False: "z", None: "n"}}, {"big": 2 ** 80, "neg": -(2 ** 70)},
        {"sub": Text("x")}, {"text": "é ☃ 𝄞 \u2028 \u2029 \x00 \x1f \" \\ /"}, {"nested": [[[]], {}, [{}]]},
        {"bool": [True, False, None]}, {"int": [0, -1, 2 ** 63 - 1, -(2 ** 63)]},
    ]
    for value in values:
        assert dumps_plain(value) == dumps(value), value


def test_dumps_plain_refusals_are_dumps_refusals():
    for bad in ({"s": {1, 2}}, {"o": object()}):
        with pytest.raises(TypeError):
            dumps(bad)
        with pytest.raises(TypeError):
            dumps_plain(bad)


def _odd_rows() -> list[dict]:
    rows = list(refund_rollouts(40))
    odd = [1e16, 1e-5, 2.5e-5, 1e300, 0.1, 123.456, -0.0, 9999999999999998.0]
    for i, value in enumerate(odd):
        rows[i]["steps"][0]["arguments"] = {"x": value, "nested": {"y": [value, 1, "é☃"]}}
    rows[10]["steps"][0]["arguments"] = {"t": (1, 2)}
    rows[11]["steps"][0]["arguments"] = {1: "x"}
    rows[12]["steps"][0]["arguments"] = {"big": 2 ** 80}
    rows[13]["steps"][0]["arguments"] = '{"a": 2.0e20, "b": 1e-7}'
    rows[14]["steps"][0]["result"] = {"k": 1e-9, "u": "ü"}
    # carried stamps: exponent floats, big integers, a text subclass, non-text keys (carried_plain's verdicts)
    rows[0]["team"] = "refunds"
    rows[15]["markers"] = {"m": 1e-7, "n": None}
    rows[16]["reward"] = 2.5e-5
    rows[17]["team"] = _Text("desk")
    rows[18]["lineage"] = {1: "x", "y": [1e20]}
    rows[19]["markers"] = {"big": 2 ** 80}
    rows[20]["calibration"] = {"task_id": "refund-5", "n": 4, "pass_rate": 0.1, "pass_rate_ci95": (0.01, 0.4)}
    return rows


class _Text(str):
    pass


@pytest.mark.parametrize("options", [{}, {"mask_mode": "final"}, {"unroll": True}, {"max_tool_output_chars": 10},
                                     {"system_prompt": "Be brief."}])
def test_trl_file_is_the_json_encoding_of_training_rows(tmp_path: Path, options):
    rows = _odd_rows()
    out, report = wai.training_rows(rows, format="trl", check="warn", **options)
    written = wai.export_dataset(rows, tmp_path / "x.jsonl", format="trl", check="warn", **options)
    expected = "".join(dumps(row) + "\n" for row in out)
    assert (tmp_path / "x.jsonl").read_text(encoding="utf-8") == expected
    assert written.model_dump(exclude={"path"}) == report.model_dump(exclude={"path"})
    assert report.tool_call_roundtrip.invalid == 2  # the tuple and the int key
    written_rows = [json.loads(line) for line in expected.splitlines()]
    assert {"m": 1e-7, "n": None} in [row["markers"] for row in written_rows]
    assert {"1": "x", "y": [1e20]} in [row["lineage"] for row in written_rows]
    assert {row["team"] for row in written_rows} == {"refunds", "desk", None}


def test_argument_verdicts():
    class Text(str):
        pass

    exact = [{"a": 1}, {"a": [1, "x", None, True, 1.5]}, {"a": {"b": {"c": 1e300}}}, [], {}, "x", 0.0]
    changed = [{"a": (1,)}, {1: "x"}, {"a": {None: 1}}, {"a": Text("x")}, (1, 2), {"a": [{2.5: 1}]}]
    impossible = [{"a": float("nan")}, {"a": [float("inf")]}, {"a": {1, 2}}, {"a": object()}, {(1, 2): "x"},
                  {"a": {"b": -float("inf")}}]
    assert all(_json_exact(value) is True for value in exact)
    assert all(_json_exact(value) is False for value in changed)
    assert all(_json_exact(value) is None for value in impossible)


def test_flat_privileged_dict_gives_the_general_scan():
    privileged = {"a": "Internal  Code RC-1", "b": "short", "c": "ÄÖÜ Straße note"}
    # the general path (a list holding the same values) pops the stack in the same order
    assert privileged_strings(privileged) == privileged_strings([privileged["a"], privileged["b"], privileged["c"]])
    assert privileged_strings(privileged) == ["äöü strasse note", "internal code rc-1"]


def test_leak_scan_reads_numbers_and_nested_arguments():
    rows = list(refund_rollouts(3))
    rows[0]["privileged"] = {"gold": "ORDER 123456"}
    rows[0]["steps"][0]["arguments"] = {"order": {"kind": "order", "ids": ["order   123456"]}}
    rows[1]["privileged"] = {"amount": 987654}
    rows[1]["steps"][0]["arguments"] = {"amount": 987654}
    rows[2]["privileged"] = {"gold": "seen already"}
    rows[2]["prompt"] = "it was SEEN ALREADY"
    rows[2]["final_text"] = "seen already"
    assert leaks_by_row(rows) == {0: ["order 123456"], 1: ["987654"]}


def test_remembered_privileged_strings_follow_the_values():
    from whileai_train.exporters.leaks import quotes_privileged

    said = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "codes 123456.0 and 123456"}]
    # equal as dict keys (123456 == 123456.0), different as text: each value gets its own strings
    assert quotes_privileged(said, {"a": 123456}) == ["123456"]
    assert quotes_privileged(said, {"a": 123456.0}) == ["123456.0"]
    for _ in range(2):  # the second call reads the remembered strings
        assert quotes_privileged(said, {"a": "Other  123456"}) == []
        assert quotes_privileged(said, {"a": "CODES   123456.0"}) == ["codes 123456.0"]
