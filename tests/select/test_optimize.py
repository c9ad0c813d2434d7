"""optimize / select_for_rl / select_for_sft on rows built to a known truth."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

import whileai_train as wai
from whileai_train.errors import ConfigError, InputError, RowError
from whileai_train.select.select_rl import fault_kind


def rollout(task: str, index: int, reward: float | None, **extra: Any) -> dict[str, Any]:
    """One flat rollout row with a trajectory of its own (so no two are duplicates unless asked)."""
    row: dict[str, Any] = {
        "task_id": task, "prompt": f"please handle {task}", "rollout_index": index, "reward": reward,
        "steps": [{"tool": "lookup", "arguments": {"id": task}, "result": f"record {index}"}],
        "final_text": f"{task}: done, attempt {index}",
    }
    row.update(extra)
    return row


def ask(task: str, passes: int, k: int, start: int = 0, **extra: Any) -> list[dict[str, Any]]:
    """k rollouts of one ask, the first `passes` of them passing (reward 1.0), the rest failing (0.0)."""
    return [rollout(task, start + i, 1.0 if i < passes else 0.0, **extra) for i in range(k)]


def asks_in(rows: list[dict[str, Any]]) -> list[str]:
    """The asks of the kept rows, in the order they were taken."""
    order: list[str] = []
    for row in rows:
        if not order or order[-1] != row["task_id"]:
            order.append(row["task_id"])
    return order


# ------------------------------------------------------------------------------------------------ rl: what is kept


def test_keeps_exactly_the_in_band_mixed_groups() -> None:
    rows: list[dict[str, Any]] = []
    for passes in range(9):  # pass rates 0, 1/8, ..., 1 on eight rollouts each
        rows += ask(f"p{passes}", passes, 8)
    kept, report = wai.optimize(rows, mode="rl")
    # in band [0.2, 0.8]: 2/8, 3/8, ..., 6/8; unanimous: 0/8 and 8/8; out of band: 1/8 and 7/8
    assert set(asks_in(kept)) == {"p2", "p3", "p4", "p5", "p6"}
    assert len(kept) == 5 * 8 and report.kept == 40 and report.asks_kept == 5 and report.asks == 9
    assert report.dropped == {"junk": 0, "duplicate": 0, "truncated": 0, "unanimous": 16, "out_of_band": 16,
                              "budget": 0}
    assert report.dropped_asks == {"unanimous": 2, "out_of_band": 2, "budget": 0}


def test_band_edges_are_inside_the_band() -> None:
    rows = ask("fifth", 1, 5) + ask("four_fifths", 4, 5) + ask("nine_tenths", 9, 10)
    kept, _ = wai.optimize(rows, mode="rl")
    assert set(asks_in(kept)) == {"fifth", "four_fifths"}
    kept, report = wai.optimize(rows, mode="rl", band=(0.3, 0.9))
    assert set(asks_in(kept)) == {"four_fifths", "nine_tenths"} and report.band == (0.3, 0.9)


def test_each_drop_reason_is_counted_once_in_order() -> None:
    rows = ask("a", 2, 4) + ask("b", 2, 4)
    rows.append(rollout("a", 10, None))                        # junk: ungraded
    rows.append({**rollout("a", 11, 1.0), "steps": [], "final_text": ""})  # junk: empty
    rows.append(rollout("b", 12, 0.0, error="tool timeout"))  # junk: errored
    rows.append(rollout("", 13, 1.0, prompt=""))               # junk: no task
    rows.append(copy.deepcopy(rows[0]))                        # duplicate of a's first rollout
    rows.append({**copy.deepcopy(rows[1]), "truncated": True})  # duplicate and truncated: counted as duplicate
    rows.append(rollout("b", 14, 1.0, finish_reason="length"))  # truncated
    kept, report = wai.optimize(rows, mode="rl")
    assert report.junk == {"ungraded": 1, "no_task": 1, "errored": 1, "empty": 1}
    assert report.dropped == {"junk": 4, "duplicate": 2, "truncated": 1, "unanimous": 0, "out_of_band": 0,
                              "budget": 0}
    assert len(kept) == 8 and report.kept == 8
    junk_warning = next(w for w in report.warnings if w.startswith("dropped 4 junk rows"))
    assert "rows 8, 9, 10, 11" in junk_warning


def test_the_same_trajectory_in_two_asks_is_not_a_duplicate() -> None:
    first = ask("a", 1, 2)
    second = [{**copy.deepcopy(row), "task_id": "b"} for row in first]
    kept, report = wai.optimize(first + second, mode="rl")
    assert report.dropped["duplicate"] == 0 and len(kept) == 4


def test_rollouts_with_one_final_text_but_different_steps_are_not_duplicates() -> None:
    rows = ask("a", 1, 4)
    for i, row in enumerate(rows):
        row["final_text"] = "Done."
        row["steps"] = [{"tool": "lookup", "arguments": {"id": i}, "result": "ok"}]
    rows.append(copy.deepcopy(rows[2]))
    _, report = wai.optimize(rows, mode="rl")
    assert report.dropped["duplicate"] == 1


def test_duplicates_follow_the_dedupe_groups_rule() -> None:
    rows = ask("a", 2, 4) + ask("b", 1, 3)
    rows.append({**copy.deepcopy(rows[0]), "steps": [{**rows[0]["steps"][0], "result": "another answer"}]})
    rows.append(copy.deepcopy(rows[5]))
    _, report = wai.optimize(rows, mode="rl")
    assert report.dropped["duplicate"] == wai.dedupe_groups(rows).n_duplicates == 2


def test_nothing_kept_says_where_the_rows_went() -> None:
    rows = [rollout("a", i, float(i % 2), error="sandbox died") for i in range(4)] + ask("b", 1, 8)
    kept, report = wai.optimize(rows, mode="rl")
    assert kept == []
    assert any(w.startswith("nothing kept: rows dropped as junk 4") and "1 outside the 0.2-0.8 band" in w
               for w in report.warnings)


def test_drop_order_truncation_before_unanimity() -> None:
    # the one pass is truncated: dropping it leaves an all-fail ask, which is then unanimous
    rows = [rollout("a", 0, 1.0, truncated=True)] + [rollout("a", i, 0.0) for i in range(1, 4)]
    kept, report = wai.optimize(rows, mode="rl")
    assert kept == [] and report.dropped["truncated"] == 1 and report.dropped["unanimous"] == 3
    kept, report = wai.optimize(rows, mode="rl", truncated="penalize")
    assert kept == [] and report.dropped["unanimous"] == 4
    kept, report = wai.optimize(rows, mode="rl", truncated="keep")
    assert len(kept) == 4 and report.truncated == {"seen": 1, "kept_as_overlong": 1}


def test_penalize_keeps_truncated_rows_as_failures_with_the_judged_score() -> None:
    rows = [rollout("a", 0, 0.9, finish_reason="length")] + ask("a", 2, 4, start=1)
    before = copy.deepcopy(rows)
    kept, report = wai.optimize(rows, mode="rl", truncated="penalize")
    assert report.truncated == {"seen": 1, "penalized": 1} and len(kept) == 5
    penalized = next(row for row in kept if row["rollout_index"] == 0)
    assert penalized["reward"] == 0.0 and penalized["reward_before_penalty"] == 0.9
    assert rows == before and "reward_before_penalty" not in rows[0]
    assert sum(row["reward"] >= 0.5 for row in kept) == 2


def test_bad_truncated_and_order_and_band_raise() -> None:
    rows = ask("a", 1, 2)
    for options in ({"truncated": "clip"}, {"order": "easy_first"}, {"band": (0.8, 0.2)}, {"band": 0.5},
                    {"max_rows": 0}, {"max_asks": 1.5}):
        with pytest.raises(ConfigError):
            wai.optimize(rows, mode="rl", **options)


# ------------------------------------------------------------------------------------------------ rl: order


def _faulted(task: str, passes: int, k: int, kind: str) -> list[dict[str, Any]]:
    return ask(task, passes, k, fault=kind)


def test_round_robin_across_fault_kinds_then_pass_rates() -> None:
    rows = (_faulted("a25", 1, 4, "timeout") + _faulted("a25b", 1, 4, "timeout") + _faulted("a50", 2, 4, "timeout")
            + _faulted("a75", 3, 4, "timeout") + _faulted("b50", 2, 4, "bad_data") + _faulted("b50b", 2, 4, "bad_data"))
    kept, report = wai.optimize(rows, mode="rl")
    # timeout asks in turn across pass rates: a25, a50, a75, then a25b; bad_data: b50, b50b; kinds alternate
    assert asks_in(kept) == ["a25", "b50", "a50", "b50b", "a75", "a25b"]
    assert report.fault_kinds == {"timeout": 4, "bad_data": 2}
    assert report.pass_rates == {"0.25": 2, "0.50": 3, "0.75": 1}


def test_order_middle_ranks_nearest_to_half_first() -> None:
    rows = (_faulted("a25", 1, 4, "timeout") + _faulted("a25b", 1, 4, "timeout") + _faulted("a50", 2, 4, "timeout")
            + _faulted("a75", 3, 4, "timeout") + _faulted("b50", 2, 4, "bad_data") + _faulted("b50b", 2, 4, "bad_data"))
    kept, report = wai.optimize(rows, mode="rl", order="middle")
    assert asks_in(kept) == ["a50", "b50", "b50b", "a25", "a25b", "a75"] and report.order == "middle"


def test_budget_keeps_whole_asks_in_order() -> None:
    rows = ask("a25", 1, 4) + ask("a50", 2, 4) + ask("a75", 3, 4) + ask("b50", 3, 6)
    kept, report = wai.optimize(rows, mode="rl", max_asks=2)
    assert asks_in(kept) == ["a25", "a50"] and report.dropped["budget"] == 10 and report.dropped_asks["budget"] == 2
    kept, report = wai.optimize(rows, mode="rl", max_rows=13)  # a25, a50, a75 fit (12); b50 (6) does not
    assert asks_in(kept) == ["a25", "a50", "a75"] and len(kept) == 12 and report.dropped["budget"] == 6


def test_fault_kind_reads_the_row_then_its_lineage() -> None:
    assert fault_kind({"fault_kind": "timeout"}) == "timeout"
    assert fault_kind({"fault": {"kind": "rate_limit", "p": 0.1}}) == "rate_limit"
    assert fault_kind({"faults": ["b", "a"]}) == "a+b"
    assert fault_kind({"lineage": {"fault": "stale_cache"}}) == "stale_cache"
    assert fault_kind({"faults": [], "lineage": {}}) == "none"


# ------------------------------------------------------------------------------------------------ rl: contract


def test_input_rows_are_never_mutated_and_kept_rows_are_new_dicts() -> None:
    rows = ask("a", 2, 4) + [rollout("a", 9, 1.0, truncated=True)] + ask("b", 0, 4)
    before = copy.deepcopy(rows)
    for options in ({}, {"truncated": "penalize"}, {"truncated": "keep"}):
        kept, _ = wai.optimize(rows, mode="rl", **options)
        assert rows == before
        assert all(all(new is not old for old in rows) for new in kept)
    kept, _ = wai.optimize(rows, mode="sft")
    assert rows == before and kept and all(all(new is not old for old in rows) for new in kept)


@pytest.mark.parametrize("mode", ["RL", "ppo", "", None, "dpo", 1])
def test_a_mode_that_is_not_rl_or_sft_raises(mode: Any) -> None:
    with pytest.raises(ConfigError, match="mode"):
        wai.optimize(ask("a", 1, 2), mode=mode)


def test_an_option_of_the_other_mode_raises_naming_it() -> None:
    with pytest.raises(ConfigError, match="min_reward.*mode='sft'"):
        wai.optimize(ask("a", 1, 2), mode="rl", min_reward=0.5)
    with pytest.raises(ConfigError, match="truncated.*mode='rl'"):
        wai.optimize(ask("a", 1, 2), mode="sft", truncated="drop")


def test_select_for_rl_is_optimize_rl_and_result_unpacks() -> None:
    rows = ask("a", 1, 4) + ask("b", 2, 4)
    result = wai.select_for_rl(rows)
    kept, report = result
    assert result.rows is kept and result.report is report
    assert kept == wai.optimize(rows, mode="rl").rows


def test_rows_can_come_from_a_jsonl_path(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ask("a", 2, 4)))
    kept, report = wai.optimize(path, mode="rl")
    assert len(kept) == 4 and report.n == 4


# ------------------------------------------------------------------------------------------------ calibration


def _wilson_by_hand(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_calibration_stamp_is_measured_on_the_rows_given() -> None:
    rows = ask("a", 3, 10)                       # graded: 3 of 10 pass
    rows.append(copy.deepcopy(rows[0]))          # a duplicate pass: the grader saw it, so it counts in k
    rows.append(rollout("a", 20, 1.0, truncated=True))  # truncated pass: counts in k, then dropped
    rows.append(rollout("a", 21, None))          # ungraded: not a repeat the grader saw
    kept, report = wai.optimize(rows, mode="rl")
    assert len(kept) == 10 and report.calibration == {"stamped": 10, "carried": 0}
    stamp = kept[0]["calibration"]
    assert stamp["task_id"] == "a" and stamp["n"] == 12 and stamp["pass_rate"] == pytest.approx(5 / 12)
    expected = sps.binomtest(5, 12).proportion_ci(confidence_level=0.95, method="wilson")
    assert stamp["pass_rate_ci95"][0] == pytest.approx(expected.low, abs=1e-9)
    assert stamp["pass_rate_ci95"][1] == pytest.approx(expected.high, abs=1e-9)
    assert stamp["pass_rate_ci95"] == pytest.approx(_wilson_by_hand(5, 12), abs=1e-9)
    typed = wai.calibration_of(kept[0])
    assert typed is not None and typed.n == 12 and typed.pass_rate_ci95 == pytest.approx(_wilson_by_hand(5, 12))
    assert "calibration" not in rows[0]


def test_calibration_stamp_names_the_student_and_mean_kl() -> None:
    rows = [rollout("a", i, float(i % 2), policy_version="policy-7", kl=0.1 * (i + 1)) for i in range(4)]
    kept, _ = wai.optimize(rows, mode="rl")
    stamp = kept[0]["calibration"]
    assert stamp["student"] == "policy-7" and stamp["mean_kl"] == pytest.approx(0.25)


def test_a_carried_stamp_is_kept_not_remeasured() -> None:
    carried = {"task_id": "a", "student": "policy-1", "n": 32, "pass_rate": 0.5, "pass_rate_ci95": [0.33, 0.67]}
    rows = [{**row, "calibration": carried} for row in ask("a", 1, 4)] + ask("b", 1, 4)
    kept, report = wai.optimize(rows, mode="rl")
    assert report.calibration == {"stamped": 4, "carried": 4}
    assert [row["calibration"]["n"] for row in kept if row["task_id"] == "a"] == [32] * 4
    assert [row["calibration"]["n"] for row in kept if row["task_id"] == "b"] == [4] * 4
    extra_stamped = [{**row, "extra": {"calibration": carried}} for row in ask("c", 1, 4)]
    kept, report = wai.optimize(extra_stamped, mode="rl")
    assert report.calibration["carried"] == 4 and "calibration" not in kept[0]


def test_low_k_warning_under_16_rollouts_per_ask() -> None:
    _, report = wai.optimize(ask("a", 4, 8) + ask("b", 3, 8), mode="rl")
    assert report.low_k and report.rollouts_per_task == 8
    warning = next(w for w in report.warnings if w.startswith("low k"))
    assert "fewer than 16" in warning and "0.3" in warning
    _, report = wai.optimize(ask("a", 8, 16) + ask("b", 5, 16), mode="rl")
    assert not report.low_k and not any(w.startswith("low k") for w in report.warnings)


# ------------------------------------------------------------------------------------------------ warnings, reports


def test_eval_sourced_rows_are_counted_and_warned_not_dropped() -> None:
    rows = ask("a", 2, 4) + ask("b", 2, 4, lineage={"source": "eval"})
    kept, report = wai.optimize(rows, mode="rl")
    assert len(kept) == 8 and report.eval_sourced == 4 and report.eval_sourced_rows == [4, 5, 6, 7]
    assert any("eval_sourced: 4 rows" in w and "rows 4, 5, 6, 7" in w for w in report.warnings)
    _, clean = wai.optimize(ask("a", 2, 4), mode="rl")
    assert clean.eval_sourced == 0 and not any("eval_sourced" in w for w in clean.warnings)


def test_pass_k_note_in_hygiene_warnings_when_groups_were_pruned() -> None:
    _, report = wai.optimize(ask("a", 2, 4) + ask("b", 0, 4), mode="rl")
    assert any("pass^k and pass@k are n/a" in w for w in report.hygiene_warnings)


def test_report_reads_like_a_dict_and_prints_the_verdict_first() -> None:
    _, report = wai.optimize(ask("a", 2, 4) + ask("b", 4, 4), mode="rl")
    assert report["dropped"]["unanimous"] == 4 and report["hack_scan"] is None and "kept" in report
    with pytest.raises(KeyError):
        report["no_such_key"]
    text = str(report)
    assert text.splitlines()[0].startswith("optimize rl: kept") and "4 of 8 rows" in text.splitlines()[0]
    json.dumps(report.model_dump(mode="json"))


def test_one_class_only_keeps_nothing_and_says_why() -> None:
    kept, report = wai.optimize(ask("a", 4, 4) + ask("b", 4, 4), mode="rl")
    assert kept == [] and report.verdict == "NOTHING KEPT"
    assert str(report).startswith("optimize rl: NOTHING KEPT")
    assert any("one class only" in w and "every graded row passes" in w for w in report.warnings)


# ------------------------------------------------------------------------------------------------ bad input


def test_empty_input_raises_input_error() -> None:
    for mode in ("rl", "sft"):
        with pytest.raises(InputError, match="no rows"):
            wai.optimize([], mode=mode)


def test_all_ungraded_raises_input_error() -> None:
    with pytest.raises(InputError, match="all 3 rows are ungraded"):
        wai.optimize([rollout("a", i, None) for i in range(3)], mode="rl")


@pytest.mark.parametrize(("bad", "problem"), [(1.5, "outside"), (-0.1, "outside"), (float("nan"), "NaN"),
                                              ("1", "not a number"), (True, "not a number")])
def test_bad_reward_raises_row_error_naming_the_row(bad: Any, problem: str) -> None:
    rows = ask("a", 2, 4)
    rows[2]["reward"] = bad
    for mode in ("rl", "sft"):
        with pytest.raises(RowError, match=problem) as caught:
            wai.optimize(rows, mode=mode)
        assert caught.value.index == 2 and caught.value.field == "reward" and "row 2" in str(caught.value)


def test_rewards_outside_range_counts_every_bad_row() -> None:
    rows = ask("a", 2, 4) + ask("b", 2, 4)
    for i in (1, 5, 6):
        rows[i]["reward"] = 2.0
    with pytest.raises(RowError, match=r"3 rows: rows 1, 5, 6"):
        wai.optimize(rows, mode="rl")


def test_a_row_that_is_not_a_dict_raises() -> None:
    with pytest.raises(RowError, match="row 1"):
        wai.optimize([rollout("a", 0, 1.0), "not a row"], mode="rl")


# ------------------------------------------------------------------------------------------------ sft


def partial(task: str, rewards: list[float | None], **extra: Any) -> list[dict[str, Any]]:
    return [rollout(task, i, reward, **extra) for i, reward in enumerate(rewards)]


def test_sft_top_per_prompt_keeps_each_prompts_best_at_or_above_min_reward() -> None:
    rows = partial("a", [0.2, 1.0, 0.6, 1.0]) + partial("b", [0.9, 0.3]) + partial("c", [0.0, 0.0])
    kept, report = wai.optimize(rows, mode="sft", min_reward=1.0)
    assert [(row["task_id"], row["rollout_index"]) for row in kept] == [("a", 1)]  # ties: first in input order
    assert report.prompts == 3 and report.prompts_kept == 1 and report.prompts_passing == 1
    kept, report = wai.optimize(rows, mode="sft")  # min_reward: the export's pass threshold, 0.5
    assert [(row["task_id"], row["rollout_index"]) for row in kept] == [("a", 1), ("b", 0)]
    assert report.min_reward == 0.5 and report.prompts_passing == 2
    kept, _ = wai.optimize(rows, mode="sft", min_reward=0.5, per_prompt=2)
    assert [(row["task_id"], row["rollout_index"]) for row in kept] == [("a", 1), ("a", 3), ("b", 0)]


def test_sft_top_k_overall_keeps_the_best_k_across_prompts() -> None:
    rows = partial("a", [0.7, 0.95]) + partial("b", [0.9, 0.99]) + partial("c", [0.1])
    kept, report = wai.optimize(rows, mode="sft", select="top_k_overall", min_reward=0.5, k=3)
    assert sorted(row["reward"] for row in kept) == [0.9, 0.95, 0.99] and report.k == 3
    kept, report = wai.optimize(rows, mode="sft", select="top_k_overall", min_reward=0.5)  # top_per_prompt's size
    assert sorted(row["reward"] for row in kept) == [0.95, 0.99] and report.k == 2


def test_sft_random_controls_match_the_size_and_prompts_and_are_seeded() -> None:
    rng = np.random.default_rng(3)
    rows: list[dict[str, Any]] = []
    for t in range(30):
        rows += partial(f"t{t}", [float(x) for x in (rng.random(4) < 0.5)])
    top, top_report = wai.optimize(rows, mode="sft")
    rand, rand_report = wai.optimize(rows, mode="sft", select="random_per_prompt", seed=1)
    assert len(rand) == len(top) == top_report.prompts_passing
    assert sorted(asks_in(rand)) == sorted(asks_in(top))
    assert any(row["reward"] < 1.0 for row in rand)  # the control does not look at the reward
    again, _ = wai.optimize(rows, mode="sft", select="random_per_prompt", seed=1)
    assert again == rand
    overall, overall_report = wai.optimize(rows, mode="sft", select="random_k_overall", seed=2)
    assert len(overall) == len(top) and overall_report.select == "random_k_overall"
    assert wai.optimize(rows, mode="sft", select="random_k_overall", seed=2).rows == overall
    assert rand_report.eval_sourced == 0


def test_sft_group_stats_n0_n1_mean_std() -> None:
    rewards = [0.0, 0.4, 0.5, 1.0, 1.0]
    kept, report = wai.optimize(partial("a", rewards) + partial("b", [0.0, 0.0]), mode="sft")
    stats = kept[0]["group_stats"]
    assert stats["n"] == 5 and stats["n0"] == 2 and stats["n1"] == 3
    assert stats["reward_mean"] == pytest.approx(np.mean(rewards))
    assert stats["reward_std"] == pytest.approx(np.std(rewards))
    by_task = {group["task_id"]: group for group in report.groups}
    assert by_task["b"] == {"task_id": "b", "n": 2, "n0": 2, "n1": 0, "reward_mean": 0.0, "reward_std": 0.0,
                            "kept": 0}
    assert kept[0]["calibration"]["pass_rate"] == pytest.approx(0.6)


def test_sft_selection_effective_and_completions_per_prompt() -> None:
    _, report = wai.optimize(partial("a", [1.0, 0.0, 1.0, 0.5]) + partial("b", [1.0, 1.0, 0.0, 0.0]), mode="sft")
    assert report.completions_per_prompt_mean == 4.0 and report.selection_effective
    _, single = wai.optimize(partial("a", [1.0]) + partial("b", [1.0]) + partial("c", [0.0]), mode="sft")
    assert single.completions_per_prompt_mean == 1.0 and not single.selection_effective
    assert any("SFT_COMPLETIONS_PER_PROMPT" in w and "4 per prompt" in w for w in single.warnings)


def test_sft_nothing_reaches_min_reward_warns() -> None:
    kept, report = wai.optimize(partial("a", [0.3, 0.45]) + partial("b", [0.4, 0.2]), mode="sft")
    assert kept == [] and report.verdict == "NOTHING KEPT" and str(report).startswith("optimize sft: NOTHING KEPT")
    assert any("no completion reached min_reward=0.5" in w and "best reward 0.45" in w for w in report.warnings)


def test_sft_eval_sourced_and_ungraded_rows_named() -> None:
    rows = partial("a", [1.0, 0.0], lineage={"source": "eval"}) + partial("b", [None, 1.0])
    kept, report = wai.optimize(rows, mode="sft")
    assert len(kept) == 2 and report.eval_sourced == 1 and report.eval_sourced_rows == [0]
    assert report.ungraded == 1 and any("ungraded" in w and "row 2" in w for w in report.warnings)


def test_sft_group_by_prompt_keeps_one_per_phrasing() -> None:
    rows = partial("a", [1.0, 1.0]) + [{**row, "prompt": "other phrasing"} for row in partial("a", [1.0, 0.0])]
    by_task, _ = wai.optimize(rows, mode="sft")
    by_prompt, report = wai.optimize(rows, mode="sft", group_by="prompt")
    assert len(by_task) == 1 and len(by_prompt) == 2 and report.prompts == 2


def test_sft_bad_options_raise() -> None:
    rows = partial("a", [1.0, 0.0])
    for options in ({"select": "best"}, {"k": 2}, {"select": "top_k_overall", "k": 0}, {"min_reward": "1"},
                    {"per_prompt": 0}, {"group_by": "scenario"}):
        with pytest.raises(ConfigError):
            wai.optimize(rows, mode="sft", **options)


# ------------------------------------------------------------------------------------------------ hack scan carried


def _planted_shortcut_rows(seed: int = 0) -> list[dict[str, Any]]:
    """Reward tracks the word 'guaranteed' in the reply; the endorsed refund tool is called at random."""
    rng = np.random.default_rng(seed)
    filler = ["order", "customer", "shipping", "account", "status", "today", "please", "thanks", "checked", "update"]
    rows: list[dict[str, Any]] = []
    for t in range(40):
        for i in range(8):
            hacked = bool(rng.random() < 0.5)
            words = list(rng.choice(filler, size=int(rng.integers(3, 12)))) + (["guaranteed"] if hacked else [])
            steps = [{"tool": "lookup", "arguments": {"id": t}, "result": "ok"}]
            if rng.random() < 0.5:
                steps.append({"tool": "refund", "arguments": {"id": t}, "result": "ok"})
            rows.append({"task_id": f"t{t}", "prompt": f"help with order {t}", "steps": steps,
                         "final_text": " ".join(words) + f" ref {t}-{i}", "reward": 1.0 if hacked else 0.0})
    return rows


def test_hack_scan_is_carried_with_endorsed_and_its_warnings_join_hygiene() -> None:
    rows = _planted_shortcut_rows()
    kept, report = wai.optimize(rows, mode="rl", endorsed=["tool:refund"])
    scan = report["hack_scan"]
    assert scan is not None and type(scan).__name__ == "HackScanReport"
    assert scan.reward_hack is True and "guaranteed" in (scan.top_feature or "")
    assert scan.n_rows == len(kept)
    assert any(w.startswith("hack_scan: ") for w in report.hygiene_warnings)
    assert report["correlations"] is not None
    text = str(report)
    assert text.startswith("optimize rl: kept, REWARD HACK flagged") and "  hack_scan: REWARD HACK" in text
    json.dumps(report.model_dump(mode="json"))
    _, plain = wai.optimize(rows, mode="rl")
    assert plain["hack_scan"] is None and plain["correlations"] is not None
    _, own = wai.optimize(rows, mode="rl", features={"says_guaranteed": lambda row: "guaranteed" in row["final_text"]})
    assert own["hack_scan"] is not None and own["hack_scan"].reward_hack is None
    assert any(f.name.endswith("says_guaranteed") and f.above_floor for f in own["hack_scan"].features)


def test_endorsed_as_a_string_raises_before_any_work() -> None:
    with pytest.raises(ConfigError, match="letter by letter"):
        wai.optimize(ask("a", 1, 2), mode="rl", endorsed="tool:refund")


def test_band_is_the_measured_pass_rate_not_the_share_of_distinct_trajectories() -> None:
    # half the rollouts pass, each in its own way; the other half fail with one identical trajectory
    passes = [rollout("half", i, 1.0) for i in range(5)]
    same_failure = {"steps": [{"tool": "lookup", "arguments": {"id": "half"}, "result": "timeout"}],
                    "final_text": "could not do it"}
    fails = [rollout("half", 5 + i, 0.0, **same_failure) for i in range(5)]
    kept, report = wai.optimize(passes + fails, mode="rl")
    # dedupe leaves 5 passes + 1 failure (5/6 = 0.83 of what is left), but the policy solves this ask 50%
    # of the time: in band, so the group is kept (without the four duplicate failures)
    assert report.dropped["duplicate"] == 4
    assert report.dropped_asks["out_of_band"] == 0
    assert len(kept) == 6 and {row["calibration"]["pass_rate"] for row in kept} == {0.5}
