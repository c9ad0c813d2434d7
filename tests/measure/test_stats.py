"""stats/ checked against independent computations (scipy, or the formula written out here)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from whileai_train.stats import (
    bootstrap_mean_ci,
    cohen_kappa,
    group_means,
    paired_comparison,
    sign_flip_p_value,
    t_quantile,
    welch_p_value,
    wilson_interval,
)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (41, 50), (1, 3), (180, 200)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    expected = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    low, high = wilson_interval(k, n)
    assert low == pytest.approx(expected.low, abs=1e-9)
    assert high == pytest.approx(expected.high, abs=1e-9)


def test_wilson_with_no_trials_is_uninformative() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


def _kappa_by_hand(a: list, b: list) -> float:
    n = len(a)
    labels = sorted(set(a) | set(b))
    p_o = sum(x == y for x, y in zip(a, b)) / n
    p_e = sum((a.count(c) / n) * (b.count(c) / n) for c in labels)
    return (p_o - p_e) / (1 - p_e)


def test_kappa_matches_the_formula() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        a = rng.integers(0, 2, 40).tolist()
        b = [x if rng.random() < 0.8 else 1 - x for x in a]
        assert cohen_kappa(a, b) == pytest.approx(_kappa_by_hand(a, b), abs=1e-12)
    a = ["x", "y", "z", "x", "y", "z", "x"]
    b = ["x", "y", "x", "x", "z", "z", "y"]
    assert cohen_kappa(a, b) == pytest.approx(_kappa_by_hand(a, b))


def test_kappa_undefined_cases() -> None:
    assert cohen_kappa([], []) is None
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) is None
    assert cohen_kappa([1, 0], [0, 1]) == pytest.approx(-1.0)


def test_t_quantile_matches_tables() -> None:
    assert t_quantile(0.975, 2) == pytest.approx(4.302652729911275, rel=1e-9)
    assert t_quantile(0.975, 1) == pytest.approx(12.706204736174698, rel=1e-9)
    assert t_quantile(0.975, math.inf) == pytest.approx(1.959963984540054, rel=1e-9)


def test_group_means_matches_a_loop() -> None:
    keys = ["b", "a", "b", "c", "a", "b"]
    values = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    grouped = group_means(keys, values)
    assert grouped.keys == ["a", "b", "c"]
    assert grouped.means.tolist() == pytest.approx([0.5, 2 / 3, 1.0])
    assert grouped.counts.tolist() == [2, 3, 1]
    assert [grouped.keys[i] for i in grouped.inverse] == keys


def test_bootstrap_interval_agrees_with_scipy_percentile_bootstrap() -> None:
    rng = np.random.default_rng(0)
    values = rng.binomial(8, 0.6, size=60) / 8
    ours = bootstrap_mean_ci(values, draws=20000, seed=1)
    theirs = sps.bootstrap((values,), np.mean, n_resamples=20000, method="percentile",
                           random_state=2).confidence_interval
    assert ours[0] == pytest.approx(theirs.low, abs=0.006)
    assert ours[1] == pytest.approx(theirs.high, abs=0.006)


def test_bootstrap_is_seeded_and_handles_edges() -> None:
    values = [0.0, 0.5, 1.0, 0.25]
    assert bootstrap_mean_ci(values, seed=7) == bootstrap_mean_ci(values, seed=7)
    assert bootstrap_mean_ci([]) is None
    assert bootstrap_mean_ci([0.3]) is None  # one task: nothing to resample, no interval


def test_bootstrap_interval_over_tasks_is_calibrated() -> None:
    """Over 500 simulated data sets with a known pass rate the 95% interval covers it 93%-97% of the time."""
    rng = np.random.default_rng(2026)
    truth, n_tasks, k = 0.55, 150, 4
    covered = 0
    for trial in range(500):
        # tasks differ in difficulty around the truth; rows within a task are repeats (not independent)
        task_rates = rng.beta(5.5, 4.5, n_tasks)  # mean 5.5 / (5.5 + 4.5) = truth
        per_task = rng.binomial(k, task_rates) / k
        low, high = bootstrap_mean_ci(per_task, draws=1000, seed=trial)
        covered += low <= truth <= high
    assert 0.93 <= covered / 500 <= 0.97, covered / 500


def test_sign_flip_is_exact_against_scipy() -> None:
    rng = np.random.default_rng(5)
    before = rng.random(10)
    after = before + rng.normal(0.15, 0.2, 10)
    ours = sign_flip_p_value(after - before)
    theirs = sps.permutation_test((after, before), lambda x, y: np.mean(x - y), permutation_type="samples",
                                  n_resamples=np.inf, alternative="two-sided").pvalue
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_sign_flip_exact_by_enumeration() -> None:
    d = np.array([0.5, -0.25, 1.0, 0.75, 0.0, 0.5])
    observed = abs(d.mean())
    count = sum(abs(np.dot(signs, d) / len(d)) >= observed - 1e-12
                for signs in itertools.product([-1, 1], repeat=len(d)))
    assert sign_flip_p_value(d) == pytest.approx(count / 2 ** len(d))


def test_sign_flip_monte_carlo_for_many_tasks() -> None:
    rng = np.random.default_rng(9)
    null = rng.normal(0, 1, 40)
    shifted = rng.normal(0.8, 1, 40)
    assert sign_flip_p_value(null) > 0.05
    assert 0 < sign_flip_p_value(shifted) < 0.01


def test_paired_comparison_and_welch() -> None:
    rng = np.random.default_rng(11)
    before = rng.random(30)
    after = before + 0.2
    result = paired_comparison(before, after)
    assert result.n == 30 and result.delta == pytest.approx(0.2)
    assert result.ci95 == pytest.approx((0.2, 0.2))
    a, b = rng.random(12), rng.random(9) + 0.3
    assert welch_p_value(a, b) == pytest.approx(sps.ttest_ind(a, b, equal_var=False).pvalue, rel=1e-9)
    assert welch_p_value([1.0], b) is None
