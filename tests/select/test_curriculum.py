"""curriculum on tasks with known pass rates."""

from __future__ import annotations

import json
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.errors import ConfigError, InputError, RowError


def ask(task: str, passes: int, k: int) -> list[dict[str, Any]]:
    return [{"task_id": task, "prompt": f"handle {task}", "reward": 1.0 if i < passes else 0.0,
             "final_text": f"{task} attempt {i}"} for i in range(k)]


def tenths(*passes: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for p in passes:
        rows += ask(f"p{p}", p, 10)
    return rows


def test_splits_trainable_retired_and_not_ready() -> None:
    report = wai.curriculum(tenths(0, 1, 2, 5, 8, 9, 10))
    assert [item.task_id for item in report.trainable] == ["p8", "p5", "p2"]  # easy to hard
    assert [item.pass_rate for item in report.trainable] == [0.8, 0.5, 0.2]
    assert report.retired == ["p9", "p10"] and report.not_ready == ["p0", "p1"]
    assert report.in_band == 3 and report.tasks == 7 and report["in_band"] == 3


def test_agrees_with_optimize_on_which_tasks_are_trainable() -> None:
    rows = tenths(*range(11))
    kept, _ = wai.optimize(rows, mode="rl")
    report = wai.curriculum(rows)
    assert {row["task_id"] for row in kept} == {item.task_id for item in report.trainable}


def test_tiers_are_contiguous_easy_to_hard_buckets() -> None:
    report = wai.curriculum(tenths(2, 3, 4, 5, 6, 7, 8, 2, 5))
    # nine trainable tasks (two ids repeat: p2 and p5 have 20 rows at the same rate) -> seven tasks
    assert len(report.trainable) == 7
    assert [len(tier) for tier in report.tiers] == [3, 2, 2]
    assert report.tiers[0] == ["p8", "p7", "p6"] and report.tiers[-1] == ["p3", "p2"]
    assert [item.tier for item in report.trainable] == [1, 1, 1, 2, 2, 3, 3]
    assert report.tier_ranges[0] == (0.6, 0.8)
    few = wai.curriculum(tenths(4, 6), tiers=5)
    assert few.tiers == [["p6"], ["p4"]]


def test_moved_edges_and_the_in_band_count() -> None:
    report = wai.curriculum(tenths(0, 1, 5, 9, 10), solved=0.95, floor=0.05)
    assert [item.task_id for item in report.trainable] == ["p9", "p5", "p1"]
    assert report.in_band == 1  # only 0.5 sits in 0.2-0.8
    assert report.retired == ["p10"] and report.not_ready == ["p0"]


def test_a_carried_calibration_stamp_is_the_difficulty() -> None:
    stamp = {"task_id": "a", "n": 16, "pass_rate": 0.5, "pass_rate_ci95": [0.28, 0.72]}
    rows = [{**row, "calibration": stamp} for row in ask("a", 2, 2)]  # the kept rows all pass
    report = wai.curriculum(rows + ask("b", 2, 2))
    assert [(item.task_id, item.pass_rate, item.n, item.source) for item in report.trainable] == [
        ("a", 0.5, 16, "stamp")]
    assert report.retired == ["b"] and report.from_stamps == 1


def test_curriculum_after_optimize_reads_the_graded_measurement() -> None:
    rows = tenths(3, 5, 7)
    kept, _ = wai.optimize(rows + [{**rows[0], "final_text": "dup"}, {**rows[0], "final_text": "dup"}], mode="rl")
    report = wai.curriculum(kept)
    assert report.from_stamps == 3 and {item.n for item in report.trainable} == {10, 12}


def test_low_k_and_ungraded_tasks_warn() -> None:
    rows = ask("a", 2, 4) + [{"task_id": "u", "prompt": "x", "reward": None}]
    report = wai.curriculum(rows)
    assert report.ungraded == 1 and any("no graded row" in w for w in report.warnings)
    assert any(w.startswith("low k") for w in report.warnings)
    assert not any(w.startswith("low k") for w in wai.curriculum(ask("a", 8, 16)).warnings)


def test_report_prints_the_verdict_first_and_dumps_to_json() -> None:
    report = wai.curriculum(tenths(2, 5, 10))
    assert str(report).splitlines()[0].startswith("curriculum: 2 trainable tasks in 2 tiers; 1 retired")
    json.dumps(report.model_dump(mode="json"))
    nothing = wai.curriculum(tenths(10, 0))
    assert str(nothing).startswith("curriculum: NOTHING TRAINABLE")


def test_bad_arguments_and_input() -> None:
    rows = tenths(5)
    for options in ({"floor": 0.9, "solved": 0.5}, {"tiers": 0}, {"solved": 1.5}, {"floor": "0.2"}):
        with pytest.raises(ConfigError):
            wai.curriculum(rows, **options)
    with pytest.raises(InputError, match="no rows"):
        wai.curriculum([])
    with pytest.raises(InputError, match="ungraded"):
        wai.curriculum([{"task_id": "a", "prompt": "x", "reward": None}])
    with pytest.raises(RowError, match="outside"):
        wai.curriculum([{"task_id": "a", "prompt": "x", "reward": 3.0}])
