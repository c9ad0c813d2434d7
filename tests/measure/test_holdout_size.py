"""holdout_size / detectable_effect: the binomial model by hand, the product text's figures (a voice lane at 0 to
0.127: the model says 14 tasks, the concentrated gain 54), the measured paths, saturation, and the round trip."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

import whileai_train as wai
from whileai_train.errors import ConfigError

Z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)


def _model_n(effect: float, base: float, k: int) -> int:
    variance = (base * (1 - base) + (base + effect) * (1 - base - effect)) / k
    return max(2, math.ceil(Z ** 2 * variance / effect ** 2))


def test_the_model_by_hand_and_the_product_texts_voice_lane() -> None:
    report = wai.holdout_size(0.127, base=0.0, k=4)
    assert report.n_tasks == _model_n(0.127, 0.0, 4) == 14
    assert report.n_tasks_concentrated == 54 and report.n_tasks_concentrated > report.n_tasks
    assert report.path == "model" and not report.saturated
    assert any("spread evenly" in note and "independent" in note for note in report.notes)
    assert str(report).startswith("holdout_size: 14 paired tasks to detect +0.127 at 80% power")
    for effect, base, k in [(0.05, 0.5, 1), (0.1, 0.3, 4), (0.2, 0.6, 8)]:
        sized = wai.holdout_size(effect, base=base, k=k)
        assert sized.n_tasks == _model_n(effect, base, k)
        assert sized.n_tasks_concentrated >= sized.n_tasks  # the concentrated case never asks for fewer


@pytest.mark.parametrize("base,k", [(0.0, 4), (0.3, 1), (0.5, 2), (0.7, 8)])
def test_holdout_size_and_detectable_effect_are_inverses(base: float, k: int) -> None:
    for n in (2, 14, 54, 200, 1000):
        found = wai.detectable_effect(n, base=base, k=k)
        if found.effect is None:
            continue
        assert wai.holdout_size(found.effect, base=base, k=k).n_tasks == n
        if base + found.effect_concentrated <= 1:
            assert wai.holdout_size(found.effect_concentrated, base=base, k=k).n_tasks_concentrated == n
    for effect in (0.02, 0.05, 0.127, 0.2):
        if base + effect > 1:
            continue
        n = wai.holdout_size(effect, base=base, k=k).n_tasks
        if n > 2:
            assert wai.detectable_effect(n, base=base, k=k).effect <= effect + 1e-12
            assert wai.detectable_effect(n - 1, base=base, k=k).effect > effect


def test_task_std_path_and_its_inverse() -> None:
    report = wai.holdout_size(0.05, task_std=0.3)
    assert report.path == "task_std" and report.n_tasks == math.ceil(Z ** 2 * 0.09 / 0.0025)
    found = wai.detectable_effect(report.n_tasks, task_std=0.3)
    assert found.effect == pytest.approx(Z * 0.3 / math.sqrt(report.n_tasks))
    assert wai.holdout_size(found.effect, task_std=0.3).n_tasks == report.n_tasks
    assert "task_std 0.300" in str(report) and "task_std 0.300" in str(found)
    print(report)
    print(found)


def _eval(p: np.ndarray, k: int, rng: np.random.Generator) -> list[dict]:
    passed = rng.random((len(p), k)) < p[:, None]
    return [{"scenario_id": f"t{t}", "reward": float(passed[t, j])} for t in range(len(p)) for j in range(k)]


def test_before_alone_measures_base_k_and_the_spread_and_asks_for_fewer_tasks() -> None:
    rng = np.random.default_rng(3)
    p = np.clip(0.5 + rng.choice([-0.4, 0.4], 400), 0, 1)  # spread 0.4 around 0.5
    before = _eval(p, 4, rng)
    report = wai.holdout_size(0.05, before=before)
    rates = np.array([np.mean([r["reward"] for r in before[4 * t:4 * t + 4]]) for t in range(400)])
    spread_var = rates.var(ddof=1) - np.mean(rates * (1 - rates) / 3)
    assert report.path == "before" and report.k == 4 and report.base == pytest.approx(rates.mean())
    assert report.task_spread == pytest.approx(math.sqrt(spread_var))
    assert report.model_ratio == pytest.approx(1 / (1 - spread_var / (report.base * (1 - report.base))))
    assert report.model_ratio == pytest.approx(2.78, abs=0.3)  # the product text's 2.78x at spread 0.4
    assert report.n_tasks < report.n_tasks_model
    found = wai.detectable_effect(report.n_tasks, before=before)
    assert wai.holdout_size(found.effect, before=before).n_tasks == report.n_tasks
    # printing both is what a user does first; before= alone has no task_std to print
    assert report.task_std is None and found.task_std is None
    assert str(report).startswith(f"holdout_size: {report.n_tasks} paired tasks to detect +0.050 at 80% power "
                                  f"(binomial model on a measured base (before), base {report.base:.3f}, k=4)")
    assert str(found).startswith(f"detectable_effect: {report.n_tasks} paired tasks detect {found.effect:+.3f}")
    assert f"task spread {report.task_spread:.3f}" in str(report)
    print(report)
    print(found)


def test_before_and_after_read_the_paired_sd_with_the_covariance_in_it() -> None:
    rng = np.random.default_rng(5)
    p = rng.uniform(0.1, 0.8, 300)
    before, after = _eval(p, 4, rng), _eval(p + 0.1, 4, rng)
    report = wai.holdout_size(0.05, before=before, after=after)
    d = np.array([np.mean([r["reward"] for r in after[4 * t:4 * t + 4]]) -
                  np.mean([r["reward"] for r in before[4 * t:4 * t + 4]]) for t in range(300)])
    assert report.path == "before_after" and report.task_std == pytest.approx(d.std(ddof=1))
    assert report.n_tasks == math.ceil(Z ** 2 * d.var(ddof=1) / 0.05 ** 2)
    delta = wai.delta_report(before, after)
    lo, hi = delta.target_ci95
    from_ci = (hi - lo) * math.sqrt(delta.n_paired_tasks) / 3.92  # the product text's reading of target_ci95
    assert from_ci == pytest.approx(report.task_std, rel=0.1)
    assert f"measured (before_after), task_std {report.task_std:.3f}" in str(report)
    assert f"task_std {report.task_std:.3f}" in str(wai.detectable_effect(report.n_tasks, before=before, after=after))


def test_saturated_at_the_ceiling_answers_with_the_model_at_base_pass_rate() -> None:
    report = wai.holdout_size(0.05, base=0.95)
    assert report.saturated and report.base == 0.5 and report.n_tasks == _model_n(0.05, 0.5, 1)
    assert any("ceiling 0.9" in w and "20-80%" in w for w in report.warnings)
    before = [{"scenario_id": f"t{t}", "reward": 1.0} for t in range(50) for _ in range(2)]
    measured = wai.holdout_size(0.05, before=before, after=before)
    assert measured.saturated and measured.path == "model"
    assert "SATURATED" in str(measured) and "SATURATED" in str(wai.detectable_effect(40, before=before, after=before))


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="58% is 0.58"):
        wai.holdout_size(0.05, base=58)
    with pytest.raises(ConfigError, match="effect"):
        wai.holdout_size(0)
    with pytest.raises(ConfigError, match="over a pass rate of 1"):
        wai.holdout_size(0.3, base=0.8)
    with pytest.raises(ConfigError, match="n_tasks"):
        wai.detectable_effect(1)
    with pytest.raises(ConfigError, match="after= without before="):
        wai.holdout_size(0.05, after=[{"scenario_id": "a", "reward": 1.0}])
