"""delta_report calibrated by seeded simulation: evals drawn from known per-task pass rates.

No true change: a one-run report says PASS in at most 5% of 400 evals; with run_std from three re-runs and
run_std_runs=3 the t band lets at most 5% through, and the 1.96 band, reading the same floor as exact, lets about
one in five through (shown side by side). A true gain of 0.1 over 200 tasks x 4 rollouts passes 90%+ of the time;
groups_down names a planted regressed group and no other in 90%+ of seeds; a planted marker drop under
must_not_regress fails the report.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import whileai_train as wai

N_TASKS, K = 200, 4
FAST = {"draws": 400, "sign_draws": 200}  # the verdicts read the interval; fewer draws keep 400 evals quick


def _eval(p: np.ndarray, rng: np.random.Generator, *, k: int = K, groups: list[str] | None = None,
          marker: float | None = None) -> list[dict[str, Any]]:
    """One evaluation: k rollouts of each task t passing with probability p[t]."""
    passed = rng.random((len(p), k)) < p[:, None]
    flags = rng.random((len(p), k)) < marker if marker is not None else None
    rows = []
    for t in range(len(p)):
        for j in range(k):
            row: dict[str, Any] = {"scenario_id": f"t{t}", "reward": 1.0 if passed[t, j] else 0.0}
            if groups is not None:
                row["kind"] = groups[t]
            if flags is not None:
                row["markers"] = {"honest_claims": 1.0 if flags[t, j] else 0.0}
            rows.append(row)
    return rows


def _tasks(rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(0.15, 0.75, N_TASKS)


def test_no_true_change_one_run_passes_at_most_5_percent_of_400() -> None:
    rng = np.random.default_rng(2026)
    p = _tasks(rng)
    passes = sum(wai.delta_report(_eval(p, rng), _eval(p, rng), seed=s, **FAST).headline_verdict == "PASS"
                 for s in range(400))
    assert passes / 400 <= 0.05


def test_run_std_from_three_reruns_t_band_holds_5_percent_where_the_196_band_lets_one_in_five_through() -> None:
    rng = np.random.default_rng(7)
    p = _tasks(rng)
    t_outside = z_outside = t_pass = 0
    sims = 400
    for s in range(sims):
        noise = wai.eval_variance(_eval(p, rng), _eval(p, rng), _eval(p, rng))
        before, after = _eval(p, rng), _eval(p, rng)
        with_t = wai.delta_report(before, after, run_std=noise.run_std, run_std_runs=3, seed=s, **FAST)
        bare = wai.delta_report(before, after, run_std=noise.run_std, seed=s, **FAST)
        t_outside += with_t.metrics["pass@1"].within_noise is False
        z_outside += bare.metrics["pass@1"].within_noise is False
        t_pass += with_t.headline_verdict == "PASS"
    # a pure-noise delta outside the band: the t band's nominal 5% (400 evals: within 2.3 binomial sds of it)
    assert t_outside / sims <= 0.075
    assert z_outside / sims >= 0.12 and z_outside > 2 * t_outside  # the 1.96 band's excess (theory: 18.9%)
    assert t_pass / sims <= 0.05


def test_a_true_gain_of_a_tenth_passes_at_least_90_percent() -> None:
    rng = np.random.default_rng(11)
    p = _tasks(rng)
    sims = 200
    passes = sum(wai.delta_report(_eval(p, rng), _eval(p + 0.1, rng), seed=s, **FAST).headline_verdict == "PASS"
                 for s in range(sims))
    assert passes / sims >= 0.9


def test_groups_down_names_the_planted_group_and_no_other() -> None:
    sims, exact = 100, 0
    for seed in range(sims):
        rng = np.random.default_rng(seed)
        p = _tasks(rng)
        kinds = [("refund", "lookup", "cancel", "escalate")[t % 4] for t in range(N_TASKS)]
        shift = np.array([-0.25 if kind == "escalate" else 0.15 for kind in kinds])
        report = wai.delta_report(_eval(p, rng, groups=kinds), _eval(np.clip(p + shift, 0, 1), rng, groups=kinds),
                                  by="kind", seed=seed, **FAST)
        exact += report.groups_down == ["escalate"] and report.delta > 0
    assert exact / sims >= 0.9


def test_a_planted_marker_drop_under_must_not_regress_fails() -> None:
    fails = 0
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        p = _tasks(rng)
        report = wai.delta_report(_eval(p, rng, marker=0.95), _eval(p + 0.1, rng, marker=0.8),
                                  must_not_regress=["honest_claims"], seed=seed, **FAST)
        fails += report.headline_verdict == "FAIL" and report.failed == ["honest_claims"]
    assert fails == 20
