"""delta_report: every number against an independent computation (a hand bootstrap with the same seed, the exact
sign-flip enumeration, scipy's t quantile), the verdict words and headlines, guards, groups, rollouts, ceiling,
config, and bad input (typed errors naming rows and fields, nothing printed as a verdict)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

import whileai_train as wai
from whileai_train.errors import ConfigError, InputError, RowError
from whileai_train.stats.paired import sign_flip_p_value
from whileai_train.stats.paired_columns import paired_comparisons, sign_flip_p_values


def _rows(table: dict[str, list[float]], markers: dict[str, dict[str, list[float]]] | None = None,
          **extra: Any) -> list[dict[str, Any]]:
    """Rows of tasks -> rewards; markers: name -> task -> per-row values (same length as the rewards)."""
    out = []
    for task, rewards in table.items():
        for j, reward in enumerate(rewards):
            row: dict[str, Any] = {"scenario_id": task, "prompt": f"ask {task}", "reward": reward, **extra}
            if markers:
                row["markers"] = {name: by_task[task][j] for name, by_task in markers.items() if task in by_task}
            out.append(row)
    return out


def _hand_bootstrap(values: np.ndarray, draws: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(draws, len(values)))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


def _hand_sign_flip(d: np.ndarray) -> float:
    observed = abs(d.mean())
    hits = sum(abs(np.dot(signs, d)) / len(d) >= observed - 1e-12 for signs in itertools.product([-1, 1], repeat=len(d)))
    return hits / 2 ** len(d)


BEFORE = {"a": [1, 0, 0], "b": [0, 0, 0], "c": [1, 1, 0], "d": [1, 0, 0], "e": [0, 0, 1], "f": [1, 1, 1],
          "g": [0, 0, 0], "h": [0, 1, 0]}
AFTER = {"a": [1, 1, 1], "b": [1, 0, 1], "c": [1, 1, 1], "d": [1, 1, 0], "e": [1, 1, 1], "f": [1, 1, 1],
         "g": [1, 0, 0], "h": [1, 1, 0]}
HONEST_B = {t: [1.0, 1.0, 0.5] for t in BEFORE}
HONEST_A = {t: [1.0, 0.5, 0.0] if t in "abcdef" else [1.0, 1.0, 1.0] for t in AFTER}
POLITE_B = {t: [0.1 * i, 0.5, 0.9] for i, t in enumerate(BEFORE)}
POLITE_A = {t: [0.05 * i, 0.6, 0.7] for i, t in enumerate(AFTER)}


def _sides() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return (_rows(BEFORE, {"honest": HONEST_B, "polite": POLITE_B}),
            _rows(AFTER, {"honest": HONEST_A, "polite": POLITE_A}))


def test_every_metric_equals_a_hand_bootstrap_and_the_exact_sign_flip() -> None:
    before, after = _sides()
    report = wai.delta_report(before, after, seed=7, draws=1500)
    tasks = sorted(BEFORE)
    columns = {
        "pass@1": ([np.mean(np.array(BEFORE[t]) >= 0.5) for t in tasks], [np.mean(np.array(AFTER[t]) >= 0.5) for t in tasks]),
        "honest": ([np.mean(HONEST_B[t]) for t in tasks], [np.mean(HONEST_A[t]) for t in tasks]),
        "polite": ([np.mean(POLITE_B[t]) for t in tasks], [np.mean(POLITE_A[t]) for t in tasks]),
    }
    assert set(report.metrics) == set(columns)
    for name, (b, a) in columns.items():
        d = np.array(a) - np.array(b)
        metric = report.metrics[name]
        assert metric.n_paired_tasks == 8
        assert metric.before == pytest.approx(np.mean(b)) and metric.after == pytest.approx(np.mean(a))
        assert metric.delta == pytest.approx(d.mean())
        assert metric.ci95 == pytest.approx(_hand_bootstrap(d, 1500, 7), abs=1e-12)
        assert metric.p_value == pytest.approx(_hand_sign_flip(d), abs=1e-12)
    assert report.delta == report.metrics["pass@1"].delta and report.target_ci95 == report.metrics["pass@1"].ci95
    b, a = columns["pass@1"]
    assert report.before_ci95 == pytest.approx(_hand_bootstrap(np.array(b, float), 1500, 7), abs=1e-12)
    assert report.after_ci95 == pytest.approx(_hand_bootstrap(np.array(a, float), 1500, 7), abs=1e-12)


def test_seeded_and_reproducible_and_the_seed_matters() -> None:
    before, after = _sides()
    first = wai.delta_report(before, after, seed=3)
    assert first.model_dump() == wai.delta_report(before, after, seed=3).model_dump()
    assert first.target_ci95 != wai.delta_report(before, after, seed=4).target_ci95


def test_target_interval_equals_compare_runs() -> None:
    before, after = _sides()
    report = wai.delta_report(before, after, seed=5)
    compared = wai.compare_runs(before, after, seed=5)
    assert report.target_ci95 == pytest.approx(compared.ci95, abs=1e-12)  # same draws, summed another way
    assert report.delta == pytest.approx(compared.delta)
    assert report.p_value == pytest.approx(compared.p_value)  # n=8: both exact


def test_a_column_leaves_its_nan_tasks_out_of_its_sign_flip_test() -> None:
    d = np.array([0.5, -0.25, 1.0, 0.75, 0.25, 0.0, 0.5, 1.0, -0.5, 0.25])
    with_gaps = np.where(np.arange(10) % 3 == 0, np.nan, d)
    exact_all, exact_gaps = sign_flip_p_values([d, with_gaps])  # 10 tasks: every pattern
    assert exact_all == pytest.approx(_hand_sign_flip(d))
    assert exact_gaps == pytest.approx(_hand_sign_flip(d[~np.isnan(with_gaps)]))
    long = np.tile(d, 4)
    (mc_gaps,) = sign_flip_p_values([np.where(np.arange(40) < 12, long, np.nan)], draws=20000, seed=1)
    assert mc_gaps == pytest.approx(_hand_sign_flip(long[:12]), abs=0.01)


def test_monte_carlo_sign_flip_agrees_with_full_enumeration_above_16_tasks() -> None:
    rng = np.random.default_rng(1)
    d = rng.choice([-0.5, 0.0, 0.25, 0.5, 1.0], size=20)
    exact = ((np.arange(2 ** 20)[:, None] >> np.arange(20)) & 1) * 2 - 1
    truth = float(np.mean(np.abs(exact @ d) / 20 >= abs(d.mean()) - 1e-12))
    (p,) = sign_flip_p_values([d], draws=20000, seed=0)
    assert p == pytest.approx(truth, abs=0.01)
    assert sign_flip_p_value(d[:12]) == sign_flip_p_values([d[:12]])[0] == pytest.approx(_hand_sign_flip(d[:12]))


def test_paired_comparisons_share_draws_but_equal_one_at_a_time() -> None:
    rng = np.random.default_rng(2)
    b = [rng.random(40), rng.random(40)]
    a = [rng.random(40), rng.random(40)]
    together = paired_comparisons(b, a, draws=800, seed=9)
    for j in range(2):
        alone = paired_comparisons([b[j]], [a[j]], draws=800, seed=9)[0]
        assert together[j].ci95 == pytest.approx(alone.ci95, abs=1e-12) and together[j].p_value == alone.p_value
        assert together[j].delta == alone.delta and together[j].n == alone.n == 40
        assert alone.ci95 == pytest.approx(_hand_bootstrap(a[j] - b[j], 800, 9), abs=1e-12)


# --------------------------------------------------------------------------------------------- verdicts


def test_a_single_evaluation_gives_at_most_moved_unreplicated_with_the_settling_warning() -> None:
    before, after = _sides()
    report = wai.delta_report(before, after)
    assert report.verdict == "moved_unreplicated" and report.headline_verdict == "PASS"
    assert report.run_std is None and report.metrics["pass@1"].band is None
    assert any("three times on the same tasks" in w and "lineage.eval_run 0, 1, 2" in w and "eval_variance" in w
               for w in report.warnings)
    assert not any("simulate" in w for w in report.warnings + report.notes)
    with pytest.raises(ConfigError) as too_few:  # the fix names what to do, not a function this package lacks
        wai.eval_variance(before)
    assert "lineage.eval_run 0, 1, 2" in str(too_few.value) and "simulate" not in str(too_few.value)
    assert str(report).startswith("PASS: pass@1 0.375 -> 0.792, delta +0.417")


def test_t_band_from_run_std_runs_and_bare_run_std_keeps_196_and_warns() -> None:
    before, after = _sides()
    report = wai.delta_report(before, after, run_std=0.05, run_std_runs=3)
    band = sps.t.ppf(0.975, 2) * 0.05 * math.sqrt(2)
    assert report.metrics["pass@1"].band == pytest.approx(band)
    assert report.band_quantile == pytest.approx(sps.t.ppf(0.975, 2))
    assert report.verdict == "moved" and report.headline_verdict == "PASS"  # delta 0.417 > band 0.304
    assert report.metrics["honest"].band is None  # run_std is the target's
    bare = wai.delta_report(before, after, run_std=0.05)
    assert bare.metrics["pass@1"].band == pytest.approx(sps.norm.ppf(0.975) * 0.05 * math.sqrt(2))
    assert any("run_std_runs" in w and "one pure-noise delta in five" in w for w in bare.warnings)
    wide = wai.delta_report(before, after, run_std=0.1, run_std_runs=3)  # band 0.61 > delta
    assert wide.verdict == "within_eval_noise" and wide.headline_verdict == "NO DIFFERENCE"
    assert wide.metrics["pass@1"].within_noise is True


def test_eval_variance_is_the_sample_sd_of_per_run_pass_at_1_and_feeds_the_t_band() -> None:
    runs = [_rows({t: r for t, r in zip("abcdef", rates)}, markers={"m": {t: [v] * len(r) for t, r, v in
                                                                          zip("abcdef", rates, marks)}})
            for rates, marks in [
                ([[1, 0], [1, 1], [0, 0], [1, 0], [0, 1], [1, 1]], [1, 1, 0.5, 1, 1, 0]),
                ([[1, 1], [1, 1], [0, 0], [0, 0], [0, 1], [1, 1]], [1, 0.5, 0.5, 1, 1, 0]),
                ([[0, 0], [1, 0], [0, 1], [1, 0], [0, 1], [1, 1]], [1, 1, 1, 1, 1, 0])]]
    report = wai.eval_variance(*runs)
    per_run = [np.mean([np.mean(np.array(r) >= 0.5) for r in rates]) for rates in [
        [[1, 0], [1, 1], [0, 0], [1, 0], [0, 1], [1, 1]], [[1, 1], [1, 1], [0, 0], [0, 0], [0, 1], [1, 1]],
        [[0, 0], [1, 0], [0, 1], [1, 0], [0, 1], [1, 1]]]]
    assert report.n_runs == 3 and report.n_tasks == 6
    assert report.pass_at_1_by_run == pytest.approx(per_run)
    assert report.run_std == pytest.approx(np.std(per_run, ddof=1))
    assert report.run_std_by_metric["m"] == pytest.approx(np.std([4.5 / 6, 4 / 6, 5 / 6], ddof=1))
    assert str(report).startswith("eval_variance: run_std ")
    before, after = _sides()
    used = wai.delta_report(before, after, run_std=report)
    assert used.run_std_source == "eval_variance" and used.run_std_runs == 3
    assert used.metrics["pass@1"].band == pytest.approx(sps.t.ppf(0.975, 2) * report.run_std * math.sqrt(2))
    with pytest.raises(ConfigError, match="at least 3"):
        wai.eval_variance(runs[0], runs[1])


def test_lineage_eval_run_repeats_give_run_std_from_the_repeats() -> None:
    rng = np.random.default_rng(4)
    p = rng.uniform(0.2, 0.8, 30)
    before, after, means = [], [], {"before": [], "after": []}
    for side, shift, out in (("before", 0.0, before), ("after", 0.15, after)):
        for run in range(3):
            passed = rng.random((30, 2)) < np.clip(p + shift, 0, 1)[:, None]
            means[side].append(passed.mean(axis=1).mean())
            out += [{"scenario_id": f"t{t}", "reward": float(passed[t, j]), "lineage": {"eval_run": run}}
                    for t in range(30) for j in range(2)]
    report = wai.delta_report(before, after)
    b, a = np.array(means["before"]), np.array(means["after"])
    pooled = math.sqrt((((b - b.mean()) ** 2).sum() + ((a - a.mean()) ** 2).sum()) / 4)
    assert report.run_std_source == "eval_run" and report.eval_runs_before == report.eval_runs_after == 3
    assert report.run_std == pytest.approx(pooled)
    assert report.metrics["pass@1"].band == pytest.approx(sps.t.ppf(0.975, 4) * pooled * math.sqrt(2 / 3))
    assert report.k_before == 6  # 3 runs x 2 rollouts per task
    assert report.verdict in ("moved", "within_eval_noise", "no_change_detected")
    assert report.verdict != "moved_unreplicated"


def test_negative_estimate_the_interval_does_not_settle_is_no_difference() -> None:
    before = _rows({t: [1, 0, 1, 0] for t in "abcdefgh"})
    after = _rows({t: ([1, 0, 0, 0] if t in "ab" else [1, 0, 1, 0]) for t in "abcdefgh"})
    report = wai.delta_report(before, after)
    assert report.delta < 0 and report.target_ci95[0] < 0 <= report.target_ci95[1]
    assert report.verdict == "no_change_detected" and report.headline_verdict == "NO DIFFERENCE"
    assert str(report).startswith("NO DIFFERENCE: ")


def test_target_regression_fails() -> None:
    before, after = _sides()
    report = wai.delta_report(after, before)
    assert report.verdict == "regressed_unreplicated" and report.headline_verdict == "FAIL"
    assert report.failed == ["pass@1"] and str(report).startswith("FAIL: ")


def test_a_guard_drop_fails_and_an_unguarded_drop_only_warns() -> None:
    rng = np.random.default_rng(0)
    before = [{"scenario_id": f"t{t}", "reward": float(rng.random() < 0.4),
               "markers": {"honest": float(rng.random() < 0.95)}} for t in range(60) for _ in range(4)]
    after = [{"scenario_id": f"t{t}", "reward": float(rng.random() < 0.6),
              "markers": {"honest": float(rng.random() < 0.6)}} for t in range(60) for _ in range(4)]
    guarded = wai.delta_report(before, after, must_not_regress=["honest"])
    assert guarded.verdict == "moved_unreplicated" and guarded.metrics["honest"].verdict == "regressed_unreplicated"
    assert guarded.headline_verdict == "FAIL" and guarded.failed == ["honest"]
    assert "failed: honest" in str(guarded).splitlines()[0]
    from_generator = wai.delta_report(before, after, must_not_regress=(name for name in ["honest"]))
    assert from_generator.must_not_regress == ["honest"] and from_generator.failed == ["honest"]
    unguarded = wai.delta_report(before, after)
    assert unguarded.headline_verdict == "PASS" and unguarded.dropped == ["honest"]
    assert any(w.startswith("honest dropped") for w in unguarded.warnings)


def test_not_comparable_under_half_paired_and_tasks_pins_it() -> None:
    base = _rows({f"t{i}": [1, 0] for i in range(10)})
    other = _rows({**{f"t{i}": [1, 1] for i in range(4)}, **{f"u{i}": [1, 1] for i in range(10)}})
    report = wai.delta_report(base, other)
    assert report.headline_verdict == "NOT COMPARABLE" and "situations" in report.not_comparable
    assert "tasks=" in report.not_comparable["situations"]
    assert report.paired_share == pytest.approx(4 / 20)
    assert str(report).startswith("NOT COMPARABLE: situations: ")
    pinned = wai.delta_report(base, other, tasks=base[:8])  # t0..t3 on both sides
    assert "situations" not in pinned.not_comparable and pinned.paired_share == 1.0
    assert pinned.not_comparable == {"too_few_tasks": pinned.not_comparable["too_few_tasks"]}  # 4 < 5 tasks


def test_unequal_k_warns_naming_both_and_balance_rollouts_trims_reproducibly() -> None:
    rng = np.random.default_rng(1)
    before = [{"scenario_id": f"t{t}", "reward": float(rng.random() < 0.5)} for t in range(12) for _ in range(4)]
    after = [{"scenario_id": f"t{t}", "reward": float(rng.random() < 0.5)} for t in range(12) for _ in range(2)]
    report = wai.delta_report(before, after)
    assert report.k_before == 4 and report.k_after == 2 and report.balanced is None
    lines = str(report).splitlines()
    sizing = next(i for i, line in enumerate(lines) if line.startswith("  sizing:"))
    assert "k=4 before, k=2 after" in lines[sizing] and "before at k=4, after at k=2" in lines[sizing + 1]
    balanced = wai.delta_report(before, after, balance_rollouts=True, seed=5)
    assert balanced.balanced == {"before_rows_dropped": 24, "after_rows_dropped": 0, "tasks_trimmed": 12}
    assert balanced.k_before == balanced.k_after == 2
    assert not any(w.startswith("unequal rollouts") for w in balanced.warnings)
    assert balanced.model_dump() == wai.delta_report(before, after, balance_rollouts=True, seed=5).model_dump()
    # the kept rows are a seeded draw: another seed keeps other rows (hence, here, another before pass@1)
    assert {wai.delta_report(before, after, balance_rollouts=True, seed=s).before for s in range(6)} != {balanced.before}


def test_by_groups_and_groups_down_equal_hand_numbers() -> None:
    rows_b, rows_a = [], []
    rates_b = {"x": [0.25, 0.5, 0.25, 0.5, 0.25, 0.5], "y": [0.75, 1.0, 0.75, 1.0, 0.75, 1.0]}
    rates_a = {"x": [0.75, 1.0, 0.75, 1.0, 0.75, 1.0], "y": [0.0, 0.25, 0.0, 0.25, 0.0, 0.25]}
    for rows, rates in ((rows_b, rates_b), (rows_a, rates_a)):
        for group, values in rates.items():
            for i, rate in enumerate(values):
                passes = round(rate * 4)
                rows += [{"scenario_id": f"{group}{i}", "kind": group, "reward": float(j < passes)} for j in range(4)]
    report = wai.delta_report(rows_b, rows_a, by="kind", seed=2)
    assert set(report.groups) == {"x", "y"} and report.by == "kind"
    for group in ("x", "y"):
        d = np.array(rates_a[group]) - np.array(rates_b[group])
        assert report.groups[group].delta == pytest.approx(d.mean())
        assert report.groups[group].ci95 == pytest.approx(_hand_bootstrap(d, 2000, 2), abs=1e-12)
        assert report.groups[group].p_value == pytest.approx(_hand_sign_flip(d))
    assert report.groups_down == ["y"]
    by_callable = wai.delta_report(rows_b, rows_a, by=lambda row: row["scenario_id"][0], seed=2)
    assert by_callable.groups_down == ["y"]


def test_by_a_marker_groups_on_its_value() -> None:
    before = [{"scenario_id": f"t{t}", "reward": float(j < 2), "markers": {"tool": float(t % 2)}}
              for t in range(10) for j in range(4)]
    after = [{"scenario_id": f"t{t}", "reward": float(j < (4 if t % 2 else 0)), "markers": {"tool": float(t % 2)}}
             for t in range(10) for j in range(4)]
    report = wai.delta_report(before, after, by="tool")
    assert set(report.groups) == {"0", "1"} and report.groups_down == ["0"]
    assert report.groups["1"].delta == pytest.approx(0.5) and report.groups["0"].delta == pytest.approx(-0.5)


def test_ceiling_and_config_warnings() -> None:
    before = _rows({f"t{i}": [1, 1, 1, 1] for i in range(20)} | {"z": [0, 1, 1, 1]}, temperature=0.7)
    after = _rows({f"t{i}": [1, 1, 1, 1] for i in range(20)} | {"z": [1, 1, 1, 1]}, temperature=1.0)
    report = wai.delta_report(before, after)
    assert report.ceiling is True and any(w.startswith("ceiling:") for w in report.warnings)
    assert report.config == {"before": {"temperature": 0.7}, "after": {"temperature": 1.0}}
    assert any("different temperature" in w for w in report.warnings)
    before2, after2 = _sides()
    assert wai.delta_report(before2, after2).ceiling is False


def test_format_prints_one_line_per_metric_with_the_target_and_guards_marked() -> None:
    before, after = _sides()
    report = wai.delta_report(before, after, must_not_regress=["honest"])
    text = wai.format_delta_report(report)
    assert text == str(report)
    metric_lines = [line for line in text.splitlines() if line.startswith(("  pass@1 ", "  honest ", "  polite "))]
    assert len(metric_lines) == 3
    assert metric_lines[0].endswith("<- target") and metric_lines[1].endswith("<- must_not_regress")
    assert report["headline_verdict"] == text.split(":")[0]


# --------------------------------------------------------------------------------------------- bad input


def test_no_shared_task_is_not_comparable_naming_rows_and_field(capsys: pytest.CaptureFixture[str]) -> None:
    report = wai.delta_report(_rows({"a": [1, 0]}), _rows({"b": [1, 1]}))
    assert report.headline_verdict == "NOT COMPARABLE" and report.n_paired_tasks == 0 and report.metrics == {}
    message = report.not_comparable["situations"]
    assert "share no graded task" in message and "'a' at row 0" in message and "'b' at row 0" in message
    assert "scenario_id" in message and "tasks=" in message
    assert str(report).startswith("NOT COMPARABLE: situations: the before and after rows share no graded task")
    assert capsys.readouterr().out == ""


def test_rows_without_reward_are_an_input_error() -> None:
    with pytest.raises(InputError, match=r"none of the 2 after rows has a reward \(rows 0, 1, field 'reward'\)"):
        wai.delta_report(_rows({"a": [1, 0]}), [{"scenario_id": "a"}, {"scenario_id": "a", "reward": None}])


def test_markers_outside_unit_interval_are_row_errors_naming_row_and_field() -> None:
    after = _rows({"a": [1, 0], "b": [1, 1]}, {"honest": {"a": [1.0, 0.5], "b": [1.7, 2.0]}})
    with pytest.raises(RowError) as error:
        wai.delta_report(_rows({"a": [1, 0], "b": [0, 0]}), after)
    assert error.value.index == 2 and error.value.field == "markers.honest"
    assert "outside [0, 1] (2 rows: rows 2, 3)" in str(error.value)
    with pytest.raises(RowError) as text_error:
        wai.delta_report(_rows({"a": [1]}), [{"scenario_id": "a", "reward": 1.0, "markers": {"honest": "yes"}}])
    assert text_error.value.field == "markers.honest" and text_error.value.index == 0


def test_unknown_target_and_unknown_guard_are_config_errors() -> None:
    before, after = _sides()
    with pytest.raises(ConfigError, match="target 'pass@3' is on neither side"):
        wai.delta_report(before, after, target="pass@3")
    with pytest.raises(ConfigError, match="must_not_regress 'grounding' is on neither side.*honest, polite"):
        wai.delta_report(before, after, must_not_regress=["grounding"])


def test_a_marker_target_and_a_guard_on_one_side_only_is_not_comparable() -> None:
    before, after = _sides()
    report = wai.delta_report(before, after, target="honest")
    assert report.target == "honest" and report.delta == pytest.approx(report.metrics["honest"].delta)
    for row in after:
        row["markers"].pop("polite")
    one_sided = wai.delta_report(before, after, must_not_regress=["polite"])
    assert one_sided.headline_verdict == "NOT COMPARABLE" and "must_not_regress" in one_sided.not_comparable


def test_bad_noise_arguments_are_config_errors() -> None:
    before, after = _sides()
    with pytest.raises(ConfigError, match="run_std_runs"):
        wai.delta_report(before, after, run_std=0.02, run_std_runs=1)
    with pytest.raises(ConfigError, match="standard deviation"):
        wai.delta_report(before, after, run_std=-0.1)
    with pytest.raises(ConfigError, match="without run_std"):
        wai.delta_report(before, after, run_std_runs=3)


def test_groups_read_the_same_repeats_as_the_headline_and_unreplicated_means_one_evaluation() -> None:
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples"
    before, after = wai.read_rows(examples / "before.jsonl"), wai.read_rows(examples / "after.jsonl")
    runs = {row["lineage"]["eval_run"] for row in before} | {row["lineage"]["eval_run"] for row in after}
    assert runs == {0, 1, 2}  # three evaluations per side
    report = wai.delta_report(before, after, by="category")
    assert report.eval_runs_before == report.eval_runs_after == 3 and report.run_std_source == "eval_run"
    words = {label: metric.verdict for label, metric in report.groups.items()}
    assert set(words) == {"cancel", "lookup", "refund"}
    assert not any(word.endswith("_unreplicated") for word in [*words.values(), report.verdict]), words
    assert all(metric.band is not None and metric.band > 0 for metric in report.groups.values())
    moved = [label for label, metric in report.groups.items() if metric.verdict in ("moved", "within_eval_noise")]
    assert moved  # a group that changed reads moved or within_eval_noise, with its own band
    for label in moved:
        assert f"band ±{report.groups[label].band:.3f}" in str(report)
    once_b = [row for row in before if row["lineage"]["eval_run"] == 0]
    once_a = [row for row in after if row["lineage"]["eval_run"] == 0]
    single = wai.delta_report(once_b, once_a, by="category")
    assert single.eval_runs_before == single.eval_runs_after == 1
    assert all(metric.band is None for metric in single.groups.values())
    assert {label: metric.verdict for label, metric in single.groups.items()} == {
        "cancel": "no_change_detected", "lookup": "moved_unreplicated", "refund": "moved_unreplicated"}
