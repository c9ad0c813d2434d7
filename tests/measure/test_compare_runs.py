"""compare_runs: paired over shared tasks (numbers from stats.paired_comparison on hand-computed task rates),
paired share and the note, the unpaired Welch fallback (checked against scipy), the verdicts, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

import whileai_train as wai
from whileai_train.errors import ConfigError, InputError, RowError
from whileai_train.measure.compare_runs import compare_runs
from whileai_train.stats import paired_comparison, welch_p_value
from whileai_train.stats.welch import welch_interval


def _rows(rates: dict[str, list[float | None]], **extra: object) -> list[dict]:
    return [{"scenario_id": task, "prompt": f"ask {task}", "reward": reward, **extra}
            for task, rewards in rates.items() for reward in rewards]


BEFORE = {"a": [1, 0, 0, 0], "b": [0, 0, 0, 0], "c": [1, 1, 0, 0], "d": [1, 0, 0, 0], "e": [0, 0, 1, 0],
          "f": [1, 1, 1, 0], "g": [0, 0, 0, 0]}
AFTER = {"a": [1, 1, 1, 0], "b": [1, 0, 1, 0], "c": [1, 1, 1, 1], "d": [1, 1, 0, 0], "e": [1, 1, 1, 0],
         "f": [1, 1, 1, 1], "g": [1, 0, 0, 1]}


def _rate(rewards: list) -> float:
    return sum(r >= 0.5 for r in rewards) / len(rewards)


def test_paired_numbers_equal_paired_comparison_on_hand_task_rates() -> None:
    report = compare_runs(_rows(BEFORE), _rows(AFTER), seed=3)
    tasks = sorted(BEFORE)
    before = [_rate(BEFORE[t]) for t in tasks]
    after = [_rate(AFTER[t]) for t in tasks]
    expected = paired_comparison(before, after, seed=3)
    assert report.test == "paired" and report.n_paired == 7 and report.paired_share == 1.0
    assert report.delta == pytest.approx(expected.delta)
    assert report.ci95 == expected.ci95
    assert report.p_value == expected.p_value
    assert report.before == pytest.approx(np.mean(before)) and report.after == pytest.approx(np.mean(after))
    assert report.verdict == "improved"
    assert str(report).startswith("compare_runs: improved: ")


def test_reversed_is_regressed() -> None:
    assert compare_runs(_rows(AFTER), _rows(BEFORE)).verdict == "regressed"


def test_tasks_on_one_side_are_dropped_with_a_note_and_paired_share() -> None:
    before = dict(BEFORE, only_before=[1, 1])
    after = dict(AFTER, x1=[0, 1], x2=[1, 1])
    report = compare_runs(_rows(before), _rows(after))
    assert report.n_paired == 7 and report.n_before_only == 1 and report.n_after_only == 2
    assert report.paired_share == pytest.approx(7 / 10)
    assert "3 on one side only dropped (1 before only, 2 after only)" in report.note
    tasks = sorted(BEFORE)
    expected = paired_comparison([_rate(BEFORE[t]) for t in tasks], [_rate(AFTER[t]) for t in tasks])
    assert report.ci95 == expected.ci95
    assert not any("under half" in w for w in report.warnings)


def test_under_half_paired_warns_to_pin_the_tasks() -> None:
    before = dict(BEFORE, **{f"b{i}": [0, 1] for i in range(5)})
    after = dict(AFTER, **{f"a{i}": [1, 1] for i in range(5)})
    report = compare_runs(_rows(before), _rows(after))
    assert report.paired_share == pytest.approx(7 / 17)
    assert any("under half the tasks paired" in w and "tasks=" in w for w in report.warnings)


def test_fewer_than_five_shared_tasks_falls_back_to_welch_and_says_so() -> None:
    before = {"a": [1, 0], "b": [0, 0], "c": [1, 1], "d": [0, 1], "x": [0, 0]}
    after = {"a": [1, 1], "b": [1, 0], "c": [1, 1], "y": [1, 1], "z": [1, 0], "w": [0, 1]}
    report = compare_runs(_rows(before), _rows(after))
    b = [_rate(before[t]) for t in before]
    a = [_rate(after[t]) for t in after]
    assert report.test == "unpaired_welch" and report.n_paired == 3
    assert report.delta == pytest.approx(np.mean(a) - np.mean(b))
    assert report.ci95 == pytest.approx(welch_interval(a, b))
    assert report.p_value == pytest.approx(sps.ttest_ind(a, b, equal_var=False).pvalue)
    assert any("fell back to the unpaired Welch test" in note for note in report.notes)
    assert "unpaired Welch" in str(report)


def test_no_difference_detected_explains_itself() -> None:
    same = {t: [1, 0, 1, 0] for t in "abcdefgh"}
    noisy = {t: ([1, 1, 1, 0] if i % 2 else [1, 0, 0, 0]) for i, t in enumerate("abcdefgh")}
    report = compare_runs(_rows(same), _rows(noisy))
    assert report.verdict == "no_difference_detected"
    assert report.ci95[0] <= 0 <= report.ci95[1]
    assert "not that the runs are equal" in str(report)


def test_one_task_per_side_is_not_measured() -> None:
    report = compare_runs(_rows({"a": [1, 0]}), _rows({"b": [1, 1]}))
    assert report.verdict == "not_measured" and report.ci95 is None


def test_different_settings_warn() -> None:
    report = compare_runs(_rows(BEFORE, temperature=0.7), _rows(AFTER, temperature=1.0))
    assert any("different temperature" in w for w in report.warnings)


def test_public_name_and_jsonl_paths(tmp_path) -> None:
    import json

    paths = []
    for name, data in (("before", BEFORE), ("after", AFTER)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in _rows(data)))
        paths.append(path)
    assert wai.compare_runs(*paths).verdict == "improved"


def test_bad_input_is_typed() -> None:
    with pytest.raises(InputError, match="no rows"):
        compare_runs([], _rows(AFTER))
    with pytest.raises(InputError, match="none of the 2 after rows has a reward"):
        compare_runs(_rows(BEFORE), _rows({"a": [None, None]}))
    with pytest.raises(RowError) as caught:
        compare_runs(_rows(BEFORE), _rows({"a": [1, 2.0]}))
    assert caught.value.index == 1
    with pytest.raises(ConfigError):
        compare_runs(_rows(BEFORE), _rows(AFTER), min_paired=1)


# --------------------------------------------------------------------------------------- stats.welch


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_welch_interval_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.random(6 + seed), rng.random(9) * 0.5
    expected = sps.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    low, high = welch_interval(a, b)
    assert low == pytest.approx(expected.low, abs=1e-10) and high == pytest.approx(expected.high, abs=1e-10)
    assert welch_p_value(a, b) == pytest.approx(sps.ttest_ind(a, b, equal_var=False).pvalue)


def test_welch_interval_edges() -> None:
    assert welch_interval([1.0], [0.0, 1.0]) is None
    assert welch_interval([1.0, 1.0], [0.0, 0.0]) == (1.0, 1.0)


def test_two_runs_of_one_policy_read_as_no_difference_most_of_the_time() -> None:
    """Under the null (same per-task rates, fresh samples) a difference is claimed about 5% of the time."""
    rng = np.random.default_rng(77)
    claimed = 0
    trials = 300
    for trial in range(trials):
        rates = rng.beta(2, 2, 20)
        sides = [{f"t{t}": [float(x) for x in rng.random(4) < rates[t]] for t in range(20)} for _ in range(2)]
        report = compare_runs(_rows(sides[0]), _rows(sides[1]), draws=500, seed=trial)
        claimed += report.verdict != "no_difference_detected"
    assert 0.01 <= claimed / trials <= 0.10, claimed / trials
