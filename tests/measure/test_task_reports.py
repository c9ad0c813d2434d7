"""group_signal and dataset_report against hand-computed values on a seeded set: the per-task
mixed share with its Wilson interval (scipy), per-tier pass rates over tasks with their Wilson intervals (scipy
where each task has one rollout, the hand formula where tasks repeat)."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import binomtest, norm

import whileai_train as wai

TIER_RATE = {"easy": 0.85, "middle": 0.5, "hard": 0.15}


def _seeded(k: int, n_tasks: int = 60, seed: int = 7) -> list[dict[str, Any]]:
    """n_tasks situations in three tiers, k rollouts each, two phrasings per situation (one task, not two)."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_tasks):
        tier = list(TIER_RATE)[t % 3]
        for j in range(k):
            rows.append({"scenario_id": f"s{t}", "prompt": f"{'Please ' if j % 2 else ''}handle case {t}",
                         "rollout_index": j, "tier": tier, "reward": float(rng.random() < TIER_RATE[tier])})
    return rows


def _by_task(rows: list[dict[str, Any]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row.get("reward") is not None:
            out[row["scenario_id"]].append(row["reward"])
    return out


def _hand_wilson(successes: float, n: int) -> tuple[float, float]:
    z = norm.ppf(0.975)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_group_signal_counts_mixed_tasks_by_hand_and_the_share_is_wilson() -> None:
    rows = _seeded(k=4)
    tasks = _by_task(rows)
    mixed = [t for t, r in tasks.items() if 0 < sum(r) < len(r)]
    all_pass = [t for t, r in tasks.items() if sum(r) == len(r)]
    all_fail = [t for t, r in tasks.items() if sum(r) == 0]
    report = wai.group_signal(rows)
    assert isinstance(report, wai.GroupSignalReport)
    assert report.n_tasks == report.grouped_tasks == 60 and report.n_graded == 240  # phrasings are one task
    assert report.mixed_tasks == len(mixed) and report.all_pass_tasks == len(all_pass)
    assert report.all_fail_tasks == len(all_fail) and len(mixed) + len(all_pass) + len(all_fail) == 60
    assert report.mixed_share == pytest.approx(len(mixed) / 60)
    ci = binomtest(len(mixed), 60).proportion_ci(confidence_level=0.95, method="wilson")
    assert report.mixed_share_ci95 == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert report.signal_rows == 4 * len(mixed) and report.signal_row_share == pytest.approx(len(mixed) / 60)
    assert report.zero_std_tasks == len(all_pass) + len(all_fail)  # 0/1 rewards: zero spread is unanimous
    by_task = {item.task: item for item in report.tasks}
    for task, rewards in tasks.items():
        assert by_task[task].n == 4 and by_task[task].passes == sum(rewards)
        assert by_task[task].reward_std == pytest.approx(float(np.std(rewards)))
        assert by_task[task].mixed == (task in mixed)
    assert report.rollouts_per_task == {4: 60}
    verdict = "OK" if len(mixed) >= 32 else "LOW SIGNAL"
    assert report.verdict == verdict and str(report).startswith(f"group_signal: {verdict}: {len(mixed)} of 60 tasks")


def test_group_signal_verdicts_partial_credit_and_single_rollouts() -> None:
    unanimous = [{"scenario_id": f"s{t}", "reward": float(t % 2)} for t in range(5) for _ in range(3)]
    report = wai.group_signal(unanimous)
    assert report.verdict == "NO SIGNAL" and report.mixed_tasks == 0 and report.what_to_do
    assert str(report).startswith("group_signal: NO SIGNAL: 0 of 5 tasks mixed")
    few = wai.group_signal(_seeded(k=4, n_tasks=9))
    assert few.verdict == "LOW SIGNAL" and any("min_mixed_tasks=32" in w for w in few.warnings)
    assert wai.group_signal(_seeded(k=4, n_tasks=9), min_mixed_tasks=1).verdict == "OK"
    partial = [{"scenario_id": "p", "reward": r} for r in (0.1, 0.3, 0.2)]  # all fail by the split, spread > 0
    (item,) = wai.group_signal(partial).tasks
    assert not item.mixed and item.reward_std > 0 and wai.group_signal(partial).zero_std_tasks == 0
    single = wai.group_signal([{"scenario_id": f"s{t}", "reward": 1.0} for t in range(3)])
    assert single.mixed_share is None and single.single_rollout_tasks == 3
    assert str(single).startswith("group_signal: NO SIGNAL: no task has two graded rollouts")
    with pytest.raises(wai.ConfigError, match="min_mixed_tasks"):
        wai.group_signal(partial, min_mixed_tasks=0)
    with pytest.raises(wai.InputError):
        wai.group_signal([{"scenario_id": "u", "reward": None}])


def test_dataset_report_tiers_by_hand_with_one_rollout_per_task_equal_scipys_wilson() -> None:
    rows = _seeded(k=1, n_tasks=90)
    report = wai.dataset_report(rows)
    assert isinstance(report, wai.DatasetReport) and [t.tier for t in report.tiers] == ["easy", "hard", "middle"]
    for tier in report.tiers:
        rewards = [row["reward"] for row in rows if row["tier"] == tier.tier]
        passes = int(sum(rewards))
        ci = binomtest(passes, len(rewards)).proportion_ci(confidence_level=0.95, method="wilson")
        assert tier.n_tasks == tier.n_rows == len(rewards) == 30
        assert tier.pass_rate == pytest.approx(passes / 30)
        assert tier.ci95 == pytest.approx((ci.low, ci.high), abs=1e-12)
        assert tier.grouped_tasks == 0 and tier.mixed_share is None
    overall = binomtest(int(sum(r["reward"] for r in rows)), 90).proportion_ci(method="wilson")
    assert report.ci95 == pytest.approx((overall.low, overall.high), abs=1e-12) and not report.notes
    assert str(report).startswith("dataset_report ok: 3 tiers by tier over 90 tasks (90 rows); pass rate")


def test_dataset_report_with_repeats_is_the_mean_over_tasks_and_wilson_over_tasks() -> None:
    rows = _seeded(k=4)
    report = wai.dataset_report(rows)
    tasks = _by_task(rows)
    tier_of = {row["scenario_id"]: row["tier"] for row in rows}
    for tier in report.tiers:
        rates = [float(np.mean(r)) for t, r in tasks.items() if tier_of[t] == tier.tier]
        mixed = sum(1 for t, r in tasks.items() if tier_of[t] == tier.tier and 0 < sum(r) < len(r))
        assert tier.n_tasks == len(rates) == 20 and tier.n_rows == tier.n_graded == 80
        assert tier.pass_rate == pytest.approx(np.mean(rates))
        assert tier.ci95 == pytest.approx(_hand_wilson(np.mean(rates) * 20, 20), abs=1e-12)
        assert tier.mixed_tasks == mixed and tier.mixed_share == pytest.approx(mixed / 20)
        rows_wilson = binomtest(int(tier.pass_rate * 80), 80).proportion_ci(method="wilson")
        assert tier.ci95[1] - tier.ci95[0] > rows_wilson.high - rows_wilson.low  # not 80 independent draws
    easy, hard = (next(t for t in report.tiers if t.tier == name) for name in ("easy", "hard"))
    assert easy.ci95[0] > hard.ci95[1]  # the seeded tiers separate
    assert report.mixed_tasks == wai.group_signal(rows).mixed_tasks
    assert report.pass_rate == pytest.approx(wai.pass_at(rows).pass_at_1)
    assert any("Wilson over tasks, not over rows" in note for note in report.notes)


def test_dataset_report_reads_the_tier_from_tags_lineage_or_a_callable_and_warns(tmp_path: Path) -> None:
    rows = _seeded(k=2, n_tasks=12)
    tagged = [{**{k: v for k, v in row.items() if k != "tier"}, "tags": {"difficulty": row["tier"]}}
              for row in rows]
    assert [t.tier for t in wai.dataset_report(tagged, by="difficulty").tiers] == ["easy", "hard", "middle"]
    in_lineage = [{**{k: v for k, v in row.items() if k != "tier"}, "lineage": {"tier": row["tier"]}}
                  for row in rows]
    assert wai.dataset_report(in_lineage).model_dump() == wai.dataset_report(rows).model_dump()
    by_parity = wai.dataset_report(rows, by=lambda row: int(row["scenario_id"][1:]) % 2)
    assert [t.tier for t in by_parity.tiers] == ["0", "1"] and by_parity.by == "<lambda>"
    untiered = wai.dataset_report([{**row, "tier": None} for row in rows[:4]] + rows[4:])
    assert untiered.tiers[-1].tier == "(none)" and untiered.tiers[-1].n_rows == 4
    assert str(untiered).startswith("dataset_report check the warnings")
    assert any("4 of 24 rows name no tier" in w for w in untiered.warnings)
    split = [dict(row, tier="hard") if row["scenario_id"] == "s0" and row["rollout_index"] == 1 else row
             for row in rows]
    assert any("1 tasks have rows in more than one tier (s0)" in w for w in wai.dataset_report(split).warnings)
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert wai.dataset_report(path).model_dump() == wai.dataset_report(rows).model_dump()
    with pytest.raises(wai.ConfigError, match="by="):
        wai.dataset_report(rows, by="")
