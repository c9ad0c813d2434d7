"""The one marker rule (tables.marker_column): the mean over tasks with a 95% percentile bootstrap over tasks.

Held against the rule written out by hand (tests/helpers/marker_reference.py), against a known rate in a seeded
simulation of clustered rollouts, and across the rooms: the family reports and marker_summary read one interval.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

import whileai_train as wai
from bench.markers import make_marked_rows
from tests.helpers.marker_reference import hand_interval, per_task_means
from whileai_train.rows.contract import task_key
from whileai_train.stats import wilson_interval
from whileai_train.tables.graded import graded_table
from whileai_train.tables.marker_column import summarise_column, summarise_columns, task_numbers


def test_the_rule_is_the_hand_computation() -> None:
    rng = np.random.default_rng(7)
    tasks = [f"task-{int(rng.integers(0, 30)):02d}" for _ in range(200)]
    values = rng.choice([0.0, 0.25, 1.0], size=200)
    values[::17] = math.nan  # rows that do not carry the marker
    task_of_row, n_tasks = task_numbers([{"task_id": task} for task in tasks])
    summary = summarise_column("m", values, task_of_row, n_tasks, draws=1500, seed=3)
    carried = ~np.isnan(values)
    per_task = per_task_means([t for t, c in zip(tasks, carried, strict=True) if c], values[carried])
    assert summary.mean == pytest.approx(per_task.mean(), abs=1e-12)
    assert (summary.n_tasks, summary.n_rows) == (len(per_task), int(carried.sum()))
    assert summary.n_bad == int((values[carried] < 1.0).sum())
    assert summary.ci95 == pytest.approx(hand_interval(per_task, draws=1500, seed=3), abs=1e-12)
    assert not summary.degenerate and summary.note == ""


def test_columns_summarised_together_read_as_each_alone() -> None:
    """Columns share one set of draws where the same tasks carry them; each still reads as the hand rule alone."""
    rng = np.random.default_rng(9)
    task_of_row = rng.integers(0, 25, size=300)
    columns = {"a": rng.random(300).round(1), "b": (rng.random(300) < 0.8).astype(float),
               "c": np.where(task_of_row < 5, math.nan, (rng.random(300) < 0.5).astype(float)),
               "same": np.ones(300), "absent": np.full(300, math.nan)}
    together = summarise_columns(columns, task_of_row, 25, draws=700, seed=2)
    assert together == [summarise_column(name, values, task_of_row, 25, draws=700, seed=2)
                        for name, values in columns.items()]
    tasks = [f"{t:02d}" for t in task_of_row]
    for summary, values in zip(together[:3], list(columns.values())[:3], strict=True):
        carried = ~np.isnan(values)
        per_task = per_task_means([t for t, c in zip(tasks, carried, strict=True) if c], values[carried])
        assert summary.ci95 == pytest.approx(hand_interval(per_task, draws=700, seed=2), abs=1e-12), summary.name
    assert together[2].n_tasks == 20 and together[3].degenerate and together[4].mean is None


def test_task_bootstrap_covers_the_true_rate_where_row_wilson_does_not() -> None:
    """40 tasks of 8 rollouts; each task has its own rate drawn from Beta(0.7, 0.3) (mean 0.7, sd 0.32), so a
    task's rollouts agree far more than independent rows would. Over 400 seeded replicates the task bootstrap's
    95% interval should cover 0.7 about 95% of the time: the percentile bootstrap over 40 units runs a point or
    two under nominal, and 400 replicates add a binomial sd of 1.1 points, so [0.91, 0.98] is about three sd
    either side. Wilson over the 320 rows treats them as independent: its variance is 4.5 times too small here
    (between-task 0.105 + within 0.105 / 8, against 0.21 / 8, per task), so it covers about 64%; under 80% is
    far outside what chance allows a correct interval."""
    n_tasks, k, replicates, rate = 40, 8, 400, 0.7
    task_of_row = np.repeat(np.arange(n_tasks), k)
    rng = np.random.default_rng(2024)
    by_tasks = by_rows = 0
    for _ in range(replicates):
        p = rng.beta(0.7, 0.3, size=n_tasks)
        values = (rng.random((n_tasks, k)) < p[:, None]).astype(float).ravel()
        summary = summarise_column("m", values, task_of_row, n_tasks)
        assert summary.ci95 is not None
        by_tasks += summary.ci95[0] <= rate <= summary.ci95[1]
        low, high = wilson_interval(float(values.sum()), len(values))
        by_rows += low <= rate <= high
    assert 0.91 <= by_tasks / replicates <= 0.98, by_tasks
    assert by_rows / replicates < 0.80, by_rows


def test_degenerate_one_task_and_absent_columns_say_why_there_is_no_interval() -> None:
    two_tasks = np.array([0, 0, 1, 1])
    same = summarise_column("m", [1.0, 1.0, 1.0, 1.0], two_tasks, 2)
    assert same.degenerate and same.ci95 is None and same.mean == 1.0 and same.n_bad == 0
    assert str(same) == ("m: 1.000 on every one of 4 rows: degenerate, no interval (a rule that never fires reads "
                         "the same as a behaviour that never happened)")
    one = summarise_column("m", [1.0, 0.0, 1.0], np.array([0, 0, 0]), 1)
    assert not one.degenerate and one.ci95 is None and one.mean == pytest.approx(2 / 3) and one.n_bad == 1
    assert str(one) == "m: 0.667 over 1 task (3 rows, 1 fall short): no interval (one task: an interval over tasks " \
                       "needs two or more)"
    absent = summarise_column("m", [math.nan, math.nan], np.array([0, 1]), 2)
    assert absent.mean is None and absent.n_rows == 0 and str(absent) == "m: not measured (no row carries m)"
    with pytest.raises(ValueError, match="3 values against 4 task numbers"):
        summarise_column("m", [1.0, 0.0, 1.0], two_tasks, 2)


def test_task_numbers_are_the_graded_tables_numbering() -> None:
    """The families number tasks from rows; measure reads graded_table's numbering: the same rows, the same
    numbers, so both resample tasks in one order (ids, integer ids, asks, chat asks, rows with no ask)."""
    rng = random.Random(11)
    rows: list[dict[str, object]] = []
    for _ in range(300):
        shape = rng.randrange(5)
        n = rng.randrange(12)
        if shape == 0:
            rows.append({"scenario_id": f"s{n}", "prompt": "same ask"})
        elif shape == 1:
            rows.append({"task_id": n})
        elif shape == 2:
            rows.append({"prompt": f"Refund order A{n}"})
        elif shape == 3:
            rows.append({"messages": [{"role": "user", "content": f"Refund order A{n}"},
                                      {"role": "assistant", "content": "ok"}]})
        else:
            rows.append({"steps": []})
    numbers, n_tasks = task_numbers(rows)
    table = graded_table(rows)
    assert n_tasks == table.n_tasks and numbers.tolist() == table.task_of_row.tolist()
    assert [table.tasks[i] for i in numbers] == [task_key(row) for row in rows]


@pytest.fixture(scope="module")
def refund_rows() -> tuple[list[dict], list[dict]]:
    rates = {"invented_id": 0.08, "phantom_edit": 0.05, "unverified_claim": 0.1, "ignored_failure": 0.05}
    rows, _ = make_marked_rows(800, seed=5, rates=rates)  # 4 rollouts per task: 200 tasks
    stamped = wai.style_markers(wai.trace_markers(wai.mark_grounding(rows, ignore_keys=("reason",))))
    return rows, stamped


def test_family_reports_and_marker_summary_read_the_same_interval(refund_rows: tuple) -> None:
    rows, stamped = refund_rows
    summary = wai.marker_summary(stamped)
    grounding = wai.grounding_report(rows, ignore_keys=("reason",)).argument_grounding
    assert grounding is not None and grounding.ci95 is not None and grounding.n_tasks == 200
    assert grounding == summary.markers["argument_grounding"]
    trace = wai.trace_flag_report(rows)
    assert [m.name for m in trace.markers if m.ci95 is not None] == ["honest_claims", "reported_failure"]
    for marker in trace.markers:
        assert marker == summary.markers[marker.name], marker.name
    for marker in wai.style_report(rows).markers:
        assert marker == summary.markers[marker.name], marker.name
    assert wai.metric_summary(stamped, "honest_claims") == summary.markers["honest_claims"]
    # and the interval is the hand computation's
    per_task = per_task_means([task_key(row) for row in stamped], [row["markers"]["honest_claims"] for row in stamped])
    assert summary.markers["honest_claims"].ci95 == pytest.approx(hand_interval(per_task), abs=1e-12)


def test_rates_are_their_markers_turned_round(refund_rows: tuple) -> None:
    rows, stamped = refund_rows
    summary = wai.marker_summary(stamped)
    grounding = wai.grounding_report(rows, ignore_keys=("reason",))
    kept = summary.markers["argument_grounding"]
    assert kept.mean is not None and kept.ci95 is not None
    assert grounding.rate == pytest.approx(1 - kept.mean, abs=1e-12)
    assert grounding.rate_ci95 == pytest.approx((1 - kept.ci95[1], 1 - kept.ci95[0]), abs=1e-12)
    # a flag's rate: the share of each task's rollouts it fired on, over tasks, the hand bootstrap turned round
    flag = next(f for f in wai.trace_flag_report(rows).flags if f.flag == "lie.phantom_edit")
    fired = [0.0 if any(f["flag"] == "lie.phantom_edit" for f in row["trace_flags"]) else 1.0 for row in stamped]
    per_task = per_task_means([task_key(row) for row in stamped], fired)
    low, high = hand_interval(per_task)
    assert flag.n_flagged == fired.count(0.0) and flag.rate == pytest.approx(1 - per_task.mean(), abs=1e-12)
    assert flag.rate_ci95 == pytest.approx((1 - high, 1 - low), abs=1e-12)


def test_refusal_rate_is_no_refusal_turned_round() -> None:
    rows = [{"prompt": "help", "task_id": f"t{i % 12}", "reward": None,
             "final_text": "I can't help with that." if (i % 12) < 4 and i % 3 else "Here is the fix."}
            for i in range(96)]
    report = wai.refusal_report(rows)
    no_refusal = wai.metric_summary(wai.style_markers(rows), "no_refusal")
    assert no_refusal.mean is not None and no_refusal.ci95 is not None and no_refusal.n_tasks == 12
    assert report.rate == pytest.approx(1 - no_refusal.mean, abs=1e-12)
    assert report.rate_ci95 == pytest.approx((1 - no_refusal.ci95[1], 1 - no_refusal.ci95[0]), abs=1e-12)
    assert str(report).startswith(f"refusals: {report.n_refusals} of 96 rows, {report.rate:.1%} [")


def test_metric_summary_and_marker_summary_read_one_type() -> None:
    rows = [{"task_id": f"t{i % 5}", "reward": float(i % 2), "markers": {"m": float(i % 3 == 0)}} for i in range(30)]
    assert isinstance(wai.metric_summary(rows, "pass@1"), wai.MarkerSummary)
    assert isinstance(wai.marker_summary(rows).markers["m"], wai.MarkerSummary)
    assert wai.metric_summary(rows, "m")["mean"] == wai.marker_summary(rows).markers["m"].mean
