"""pass_at: estimators against the hand formula, intervals against stats.bootstrap_mean_ci, bad input typed."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

import whileai_train as wai
from whileai_train.errors import ConfigError, InputError, RowError
from whileai_train.measure.pass_at import pass_at, pass_at_k_estimate, pass_pow_k_estimate
from whileai_train.stats import bootstrap_mean_ci
from whileai_train.stats.bootstrap import bootstrap_mean_cis


def _rows(outcomes: dict[str, list[float | None]], **extra: object) -> list[dict]:
    rows = []
    for task, rewards in outcomes.items():
        for index, reward in enumerate(rewards):
            rows.append({"scenario_id": task, "prompt": f"ask {task} #{index}", "rollout_index": index,
                         "reward": reward, **extra})
    return rows


@pytest.mark.parametrize(("n", "c", "k"), [(10, 0, 1), (10, 3, 1), (10, 3, 5), (10, 8, 5), (16, 16, 8),
                                           (200, 7, 10), (5, 5, 5), (5, 0, 5), (1, 1, 1)])
def test_estimators_equal_the_hand_formula(n: int, c: int, k: int) -> None:
    at_k = pass_at_k_estimate([n], [c], k)[0]
    pow_k = pass_pow_k_estimate([n], [c], k)[0]
    assert at_k == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k), abs=1e-12)
    assert pow_k == pytest.approx(math.comb(c, k) / math.comb(n, k), abs=1e-12)


def test_estimator_is_unbiased_against_brute_force_subsets() -> None:
    # the mean over every k-subset of the n tries of "any pass" / "all pass" is what the estimators give
    import itertools

    tries = [1, 0, 0, 1, 1, 0, 0]
    for k in (1, 2, 3, 4):
        subsets = list(itertools.combinations(tries, k))
        assert pass_at_k_estimate([7], [3], k)[0] == pytest.approx(np.mean([max(s) for s in subsets]))
        assert pass_pow_k_estimate([7], [3], k)[0] == pytest.approx(np.mean([min(s) for s in subsets]))


def test_groups_smaller_than_k_are_not_estimated() -> None:
    assert math.isnan(pass_at_k_estimate([3], [1], 4)[0])
    assert math.isnan(pass_pow_k_estimate([3], [1], 4)[0])


def test_pass_at_1_and_intervals_equal_bootstrap_over_hand_computed_task_means() -> None:
    outcomes = {"t3": [1, 0, 0, 1], "t1": [1, 1, 1, 1], "t2": [0, 0, 0, 0], "t0": [1, 0, 1, 0.7],
                "t4": [0, 0, 1, 0], "t5": [1, 1, 0, 1]}
    rows = _rows(outcomes)
    random.Random(3).shuffle(rows)
    report = pass_at(rows, seed=7)
    # by hand, tasks in sorted task_key order; 0.7 passes (>= 0.5)
    ordered = sorted(outcomes)
    rates = [sum(r >= 0.5 for r in outcomes[t]) / 4 for t in ordered]
    assert report.n_tasks == 6 and report.n_rows == 24 and report.k == 4
    assert report.pass_at_1 == pytest.approx(np.mean(rates))
    assert report.ci95 == bootstrap_mean_ci(rates, seed=7)
    counts = [sum(r >= 0.5 for r in outcomes[t]) for t in ordered]
    pow_k = [math.comb(c, 4) / math.comb(4, 4) for c in counts]
    at_k = [1 - math.comb(4 - c, 4) / math.comb(4, 4) for c in counts]
    assert report.pass_pow_k == pytest.approx(np.mean(pow_k))
    assert report.pass_at_k == pytest.approx(np.mean(at_k))
    assert report.pass_pow_k_ci95 == pytest.approx(bootstrap_mean_ci(pow_k, seed=7), abs=1e-12)
    assert report.pass_at_k_ci95 == pytest.approx(bootstrap_mean_ci(at_k, seed=7), abs=1e-12)
    assert report["ci95"] == report.ci95
    assert str(report).startswith("pass_at: pass@1 ")


def test_k_eligible_groups_only_and_explicit_k() -> None:
    outcomes = {"a": [1, 0, 1, 0, 1, 1], "b": [0, 0, 1, 0, 0, 0], "c": [1, 0], "d": [0, 1, 1, 1, 1, 0]}
    report = pass_at(_rows(outcomes), k=3)
    eligible = ["a", "b", "d"]
    counts = {t: sum(outcomes[t]) for t in outcomes}
    at_k = [1 - math.comb(6 - counts[t], 3) / math.comb(6, 3) for t in eligible]
    pow_k = [math.comb(counts[t], 3) / math.comb(6, 3) for t in eligible]
    assert report.n_tasks == 4 and report.n_k_eligible == 3
    assert report.pass_at_k == pytest.approx(np.mean(at_k))
    assert report.pass_at_k_ci95 == pytest.approx(bootstrap_mean_ci(at_k), abs=1e-12)
    assert report.pass_pow_k_ci95 == pytest.approx(bootstrap_mean_ci(pow_k), abs=1e-12)
    assert report.ci95 == bootstrap_mean_ci([counts[t] / len(outcomes[t]) for t in sorted(outcomes)])
    assert any("fewer than 3" in note for note in report.notes)


def test_no_eligible_group_reads_n_a() -> None:
    report = pass_at(_rows({"a": [1, 0], "b": [0, 1]}), k=8)
    assert report.pass_at_k is None and report.pass_pow_k is None and report.n_k_eligible == 0
    assert "n/a" in str(report)


def test_default_k_comes_from_carried_stamps() -> None:
    rows = _rows({"a": [1, 0, 1], "b": [0, 1, 1]}, calibration={"task_id": "x", "n": 16, "pass_rate": 0.5})
    report = pass_at(rows)
    assert report.k == 16 and report.pass_at_k is None
    assert any("carried calibration" in note for note in report.notes)


def test_pass_k_on_an_optimize_selection_reads_n_a_where_the_graded_rows_had_it() -> None:
    """optimize(mode="rl") keeps only mixed groups, so over its whole kept groups pass^4 is 0
    and pass@4 is 1 by construction. The stamps say the graded rows had k=4: pass_at reads both n/a."""
    graded = _rows({"a": [1, 0, 0, 0], "b": [1, 1, 0, 0], "c": [1, 1, 1, 0], "d": [1, 1, 1, 1], "e": [0, 0, 0, 0]})
    graded = [{**row, "final_text": f"reply {i}"} for i, row in enumerate(graded)]  # distinct: none is a duplicate
    before = pass_at(graded)
    assert before.k == 4 and before.pass_pow_k == pytest.approx(0.2) and before.pass_at_k == pytest.approx(0.8)
    kept, _ = wai.optimize(graded, mode="rl")
    assert sorted({row["scenario_id"] for row in kept}) == ["a", "b", "c"] and len(kept) == 12
    assert all(wai.calibration_of(row).n == 4 for row in kept)
    after = pass_at(kept)
    assert after.k == 4 and after.pass_pow_k is None and after.pass_at_k is None
    assert after.pass_pow_k_ci95 is None and after.pass_at_k_ci95 is None
    assert after.n_selected_tasks == 3 and after.n_k_eligible == 0 and after.selected_by == "optimize(mode='rl')"
    assert after.pass_at_1 == pytest.approx(0.5)  # pass@1 is still the rows in front
    assert "pass^4 and pass@4: n/a (a selection: optimize(mode='rl')" in str(after).splitlines()[1]
    # an explicit k reads the same; rows that were never selected keep theirs beside the selection
    assert pass_at(kept, k=2).pass_pow_k is None
    mixed = pass_at(kept + _rows({"z": [1, 1, 1, 1]}))
    assert mixed.n_k_eligible == 1 and mixed.n_selected_tasks == 3 and mixed.pass_pow_k == 1.0
    # a selection that dropped nothing is the graded rows: pass^k stays measured
    whole = [row for row in graded if row["scenario_id"] in ("b", "c")]
    kept_all, _ = wai.optimize(whole, mode="rl")
    assert len(kept_all) == len(whole) and all("selected_by" not in row["calibration"] for row in kept_all)
    assert pass_at(kept_all).pass_at_k == pass_at(whole).pass_at_k == pytest.approx(1.0)
    # a stamp the gate wrote (graded, not selected) leaves pass^k measured
    stamped = [{**row, "calibration": {"task_id": row["scenario_id"], "n": 4, "pass_rate": 0.5}} for row in graded]
    assert pass_at(stamped).pass_pow_k == pytest.approx(0.2)


def test_one_rollout_per_task_gives_no_pass_k() -> None:
    report = pass_at(_rows({"a": [1], "b": [0], "c": [1]}))
    assert report.k is None and report.pass_at_1 == pytest.approx(2 / 3)
    assert report.ci95 == bootstrap_mean_ci([1.0, 0.0, 1.0])


def test_tasks_are_task_keys_not_prompt_strings() -> None:
    rows = [{"scenario_id": "s1", "prompt": "cancel my order", "reward": 1.0},
            {"scenario_id": "s1", "prompt": "please cancel the order", "reward": 0.0},
            {"task_id": "t9", "prompt": "refund", "reward": 1.0},
            {"prompt": "bare ask", "reward": 1.0}, {"prompt": "bare ask", "reward": 1.0}]
    report = pass_at(rows)
    assert report.n_tasks == 3
    assert report.pass_at_1 == pytest.approx((0.5 + 1 + 1) / 3)


def test_config_is_read_off_rows_and_mixed_settings_warn() -> None:
    rows = _rows({"a": [1, 0], "b": [1, 1]}, temperature=0.7, max_tokens=512,
                 lineage={"policy_version": "p-3"}, judge_meta={"judge_version": "j-1"})
    report = pass_at(rows)
    assert report.config == {"temperature": 0.7, "reply_budget": 512, "policy_version": "p-3",
                             "judge_version": "j-1"}
    assert not report.warnings
    rows[0]["temperature"] = 1.0
    mixed = pass_at(rows)
    assert mixed.config["temperature"] == [0.7, 1.0]
    assert any("temperature" in warning for warning in mixed.warnings)


def test_reads_a_jsonl_path(tmp_path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in _rows({"a": [1, 0], "b": [1, 1]})))
    assert wai.pass_at(path).pass_at_1 == pytest.approx(0.75)


# ------------------------------------------------------------------------------------------------ bad input


def test_empty_input_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no rows"):
        pass_at([])


def test_all_ungraded_is_an_input_error_naming_rows() -> None:
    with pytest.raises(InputError, match=r"none of the 3 rows has a reward \(rows 0, 1, 2\)"):
        pass_at(_rows({"a": [None, None], "b": [None]}))


def test_some_ungraded_rows_are_skipped_with_a_warning_naming_them() -> None:
    report = pass_at(_rows({"a": [1, None, 0], "b": [None, 1]}))
    assert report.n_graded == 3 and report.pass_at_1 == pytest.approx((0.5 + 1) / 2)
    assert any("rows 1, 3" in warning for warning in report.warnings)


@pytest.mark.parametrize("bad", [1.5, -0.1, 7])
def test_reward_outside_unit_interval_names_the_row(bad: float) -> None:
    rows = _rows({"a": [1, 0, bad], "b": [0, bad]})
    with pytest.raises(RowError) as caught:
        pass_at(rows)
    assert caught.value.index == 2 and caught.value.field == "reward"
    assert "2 rows: rows 2, 4" in str(caught.value)


@pytest.mark.parametrize("bad", ["1", True, float("nan")])
def test_reward_of_wrong_type_names_the_row(bad: object) -> None:
    with pytest.raises(RowError) as caught:
        pass_at(_rows({"a": [1, bad]}))
    assert caught.value.index == 1 and caught.value.field == "reward"


def test_one_class_only_is_measured_not_refused() -> None:
    report = pass_at(_rows({"a": [1, 1], "b": [1, 1]}))
    assert report.pass_at_1 == 1.0 and report.ci95 == (1.0, 1.0)


@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_bad_k_is_a_config_error(k: object) -> None:
    with pytest.raises(ConfigError, match="k="):
        pass_at(_rows({"a": [1, 0]}), k=k)  # type: ignore[arg-type]


# ------------------------------------------------------------------------- stats.bootstrap.bootstrap_mean_cis


@pytest.mark.parametrize("n", [2, 3, 17, 600])
def test_bootstrap_mean_cis_equal_bootstrap_mean_ci_column_by_column(n: int) -> None:
    rng = np.random.default_rng(n)
    columns = [rng.random(n), rng.integers(0, 2, n).astype(float), rng.random(n) ** 3]
    assert bootstrap_mean_cis(columns, seed=11) == [bootstrap_mean_ci(c, seed=11) for c in columns]
    assert bootstrap_mean_cis(columns, seed=11, draws=333, confidence=0.9) == [
        bootstrap_mean_ci(c, seed=11, draws=333, confidence=0.9) for c in columns]


def test_bootstrap_mean_cis_edge_cases() -> None:
    assert bootstrap_mean_cis([[], []]) == [None, None]
    assert bootstrap_mean_cis([[0.25], [1.0]]) == [None, None]  # one task: nothing to resample
    with pytest.raises(ValueError, match="share tasks"):
        bootstrap_mean_cis([[1.0, 0.0], [1.0]])


def test_pass_at_interval_covers_a_known_pass_rate_about_95_percent_of_the_time() -> None:
    """End to end through rows and task grouping: 500 simulated evals with a known mean pass rate."""
    rng = np.random.default_rng(404)
    truth, n_tasks, k = 0.6, 80, 4
    covered = 0
    for trial in range(500):
        rates = rng.beta(6.0, 4.0, n_tasks)  # task difficulty around the truth (mean 6 / 10)
        outcomes = {f"t{t:03d}": [float(x) for x in rng.random(k) < rates[t]] for t in range(n_tasks)}
        report = pass_at(_rows(outcomes), k=1, draws=1000, seed=trial)
        low, high = report.ci95
        covered += low <= truth <= high
    assert 0.93 <= covered / 500 <= 0.97, covered / 500
