"""metric_summary / marker_summary: means over tasks with a hand bootstrap's interval; degenerate markers."""

from __future__ import annotations

import numpy as np
import pytest

import whileai_train as wai
from whileai_train.errors import ConfigError, RowError


def _hand_bootstrap(values: np.ndarray, draws: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(draws, len(values)))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


ROWS = [{"scenario_id": f"t{t}", "reward": None,
         "markers": {"honest": [1.0, 0.0, 0.5][(t + j) % 3], "no_secrets": 1.0, "no_bypass": 1.0,
                     **({"grounded": 0.0} if t < 3 else {})}}
        for t in range(7) for j in range(2)]


def test_each_marker_is_a_mean_over_tasks_with_a_hand_bootstrap_interval() -> None:
    report = wai.marker_summary(ROWS, seed=4, draws=1000)
    per_task = np.array([np.mean([[1.0, 0.0, 0.5][(t + j) % 3] for j in range(2)]) for t in range(7)])
    honest = report.markers["honest"]
    assert honest.mean == pytest.approx(per_task.mean()) and honest.n_tasks == 7 and honest.n_rows == 14
    assert honest.ci95 == pytest.approx(_hand_bootstrap(per_task, 1000, 4), abs=1e-12)
    assert wai.metric_summary(ROWS, "honest", seed=4, draws=1000) == honest


def test_degenerate_markers_get_no_interval_a_line_and_one_warning_naming_all() -> None:
    report = wai.marker_summary(ROWS)
    assert report.degenerate == ["grounded", "no_bypass", "no_secrets"]
    for name in report.degenerate:
        assert report.markers[name].ci95 is None and report.markers[name].degenerate
    assert report.markers["grounded"].n_tasks == 3
    assert len(report.warnings) == 1 and all(name in report.warnings[0] for name in report.degenerate)
    text = str(report)
    assert text.startswith("marker_summary: 4 markers over 7 tasks") and "3 degenerate" in text.splitlines()[0]
    assert str(report.markers["no_secrets"]).startswith("no_secrets: 1.000 on every one of 14 rows: degenerate, "
                                                         "no interval")
    assert report.markers["no_secrets"].line() in text.splitlines()


def test_metric_summary_of_pass_at_1_and_unknown_names() -> None:
    rows = [{"scenario_id": f"t{t}", "reward": float(j < t % 3)} for t in range(9) for j in range(3)]
    summary = wai.metric_summary(rows, "pass@1", seed=1)
    rates = np.array([(t % 3) / 3 for t in range(9)])
    assert summary.mean == pytest.approx(rates.mean())
    assert summary.ci95 == pytest.approx(_hand_bootstrap(rates, 2000, 1), abs=1e-12)
    with pytest.raises(ConfigError, match="no row carries 'honest'"):
        wai.metric_summary(rows, "honest")


def test_a_marker_outside_unit_interval_names_row_and_field() -> None:
    with pytest.raises(RowError) as error:
        wai.marker_summary([{"scenario_id": "a", "markers": {"m": 0.5}}, {"scenario_id": "a", "markers": {"m": -1}}])
    assert error.value.index == 1 and error.value.field == "markers.m"


def test_rows_with_other_marker_sets_none_and_numpy_values_read_like_the_rest() -> None:
    rows = [
        {"scenario_id": "a", "markers": {"m": 1.0, "n": 0.0}},
        {"scenario_id": "a", "markers": {"m": 0.0}},
        {"scenario_id": "b", "markers": {"n": 1.0, "m": 0.5, "kl": 3.2}},
        {"scenario_id": "b", "markers": {"m": None, "n": np.float64(0.25)}},
        {"scenario_id": "c", "markers": {"n": 0.5, "m": 1}},
        {"scenario_id": "c"},
    ]
    report = wai.marker_summary(rows, draws=200)
    assert set(report.markers) == {"m", "n"}  # kl is not a behaviour marker
    assert report.markers["m"].mean == pytest.approx(np.mean([0.5, 0.5, 1.0])) and report.markers["m"].n_rows == 4
    assert report.markers["n"].mean == pytest.approx(np.mean([0.0, (1.0 + 0.25) / 2, 0.5]))
    assert report.markers["n"].n_rows == 4 and report.markers["n"].n_tasks == 3
    with pytest.raises(RowError) as error:
        wai.marker_summary([{"scenario_id": "a", "markers": {"m": 1.0}}, {"scenario_id": "a", "markers": {"m": True}}])
    assert error.value.index == 1 and error.value.field == "markers.m"
