"""The parts a gate runs in a thread: the same reports as in the caller's thread, errors raised in the caller."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from whileai_train.gates import publish_gate
from whileai_train.gates.overlap import start
from whileai_train.gates.publish_gate import PublishGateError

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.gen_rows import make_rows, plant_near_duplicate_asks


def test_a_job_returns_its_value_and_raises_its_error_in_the_caller() -> None:
    seen = []

    def part(x: int) -> int:
        seen.append(threading.current_thread().name)
        return x * 2

    assert start(True, part, 21).result() == 42
    assert start(False, part, 4).result() == 8
    assert seen[0].startswith("whileai-") and seen[1] == threading.current_thread().name

    def broken() -> None:
        raise ValueError("in the thread")

    job = start(True, broken)
    job.wait()  # waiting keeps the error for result()
    with pytest.raises(ValueError, match="in the thread"):
        job.result()


def test_a_running_part_leaves_the_switch_interval_as_the_user_set_it() -> None:
    """Another thread reads the interval while two parts run: it is the user's own value throughout."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.003)
    try:
        release = threading.Event()
        seen = []
        first = start(True, lambda: (seen.append(sys.getswitchinterval()), release.wait(5)))
        second = start(True, lambda: seen.append(sys.getswitchinterval()))
        second.result()
        assert sys.getswitchinterval() == 0.003  # the first part still runs
        release.set()
        first.result()
        assert seen == [0.003, 0.003]
        assert sys.getswitchinterval() == 0.003
    finally:
        sys.setswitchinterval(before)


def _with_min_rows(monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    monkeypatch.setattr(publish_gate, "OVERLAP_MIN_ROWS", rows)


def test_publish_gate_report_is_the_same_with_parts_in_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    rows, _ = plant_near_duplicate_asks(make_rows(1600, hack="phrase", seed=4), 6, seed=2)

    def reading() -> str:
        try:
            report = publish_gate.publish_gate(rows, mode="rl", endorsed=["marker:resolved"])
        except PublishGateError as error:
            report = error.report
        return report.model_dump_json()

    _with_min_rows(monkeypatch, 10**12)  # every part in the caller's thread
    plain = reading()
    _with_min_rows(monkeypatch, 0)  # pass_at and the near-duplicate search in a thread
    assert reading() == plain
    assert '"n_groups":6' in plain  # the near-duplicate block ran (in the thread, the second time)
