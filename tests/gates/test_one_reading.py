"""One reading of each trajectory: hack_scan and the trace flags say what they said before the one-pass reader
(commit 31ab727, recorded in tests/data/ by tests/helpers/one_reading_sample.py) on a seeded sample of both row shapes, and
every consumer of the reader sees what the separate rule functions see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.one_reading_sample import SAMPLES, reading, sample
from whileai_train.gates.features import read_scan
from whileai_train.markers.trace_flags import flags_of, stamped_flags, trace_markers
from whileai_train.rows.contract import agent_parts
from whileai_train.tables.trajectories import read_trajectories

EXPECTED = json.loads((Path(__file__).parents[1] / "data" / "hack_scan_31ab727.json").read_text())


@pytest.mark.parametrize("name", SAMPLES)
def test_hack_scan_names_the_same_features_and_flags_as_before(name: str) -> None:
    got = reading(sample(name))
    want = EXPECTED[name]
    assert [f[0] for f in got["features"]] == [f[0] for f in want["features"]]
    assert got == want


def test_the_markers_sample_fires_flags_in_both_shapes() -> None:  # the comparison above is not over clean rows
    assert len(EXPECTED["flat/markers"]["flags"]) == len(EXPECTED["messages/markers"]["flags"]) > 100


@pytest.mark.parametrize("name", ["flat/markers", "messages/markers"])
def test_the_scan_reads_parts_and_flags_once_as_the_rules_read_them(name: str) -> None:
    rows = sample(name)[:400]
    scanned = read_scan(rows)
    plain = read_trajectories(rows)
    assert scanned.flags == [tuple(flags_of(row, i)) for i, row in enumerate(rows)]
    assert scanned.texts == plain.texts == ["\n".join(agent_parts(row).texts) for row in rows]
    for column in ("n_calls", "turns", "errors", "hashes"):
        assert (getattr(scanned, column) == getattr(plain, column)).all(), column
    stamped = trace_markers(rows)
    carried = read_scan(stamped)  # flags a row carries are read as stamped, not read again
    assert carried.flags == [tuple(stamped_flags(row) or ()) for row in stamped] == scanned.flags


def test_publish_gate_scans_what_hack_scan_scans() -> None:  # it reads trace flags only for the rows it scans
    import whileai_train as wai

    for name in ("flat/markers", "messages/markers"):
        rows = sample(name)
        alone = wai.hack_scan(rows, endorsed=["marker:resolved"], seed=5)
        gate = wai.publish_gate(rows, mode="rl", endorsed=["marker:resolved"], seed=5).hack_scan
        assert gate is not None
        assert [(f.name, f.rho) for f in gate.features] == [(f.name, f.rho) for f in alone.features]
        assert any(f.name.startswith("trace:") for f in alone.features)
