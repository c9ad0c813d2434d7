"""publish_gate: stamps (hand-computed), carried stamps kept, the refusals and warnings of the product text,
the pass_at / judge_trust / hack_scan blocks, and bad input typed."""

from __future__ import annotations

import copy
import json
import random

import pytest

import whileai_train as wai
from whileai_train.errors import ConfigError, InputError, RowError
from whileai_train.gates.publish_gate import PublishGateError, publish_gate
from whileai_train.stats import wilson_interval


def _rows(outcomes: dict[str, list[float | None]], **extra: object) -> list[dict]:
    rows = []
    for task, rewards in outcomes.items():
        for index, reward in enumerate(rewards):
            rows.append({"scenario_id": task, "prompt": f"please help with case {task}", "rollout_index": index,
                         "final_text": f"Done for {task}, reply {index}.", "reward": reward, **extra})
    return rows


MIXED = {"a": [1, 0, 1, 0], "b": [1, 1, 0, 0], "c": [0, 1, 0, 1], "d": [1, 0, 0, 1]}


def test_every_graded_row_gets_a_hand_checked_stamp_and_the_input_is_unchanged() -> None:
    outcomes = {"a": [1, 0, 1, 0], "b": [1, 1, 1, 0, None], "c": [0, 1, 0, 0]}
    rows = _rows(outcomes, policy_version="p-7")
    before = copy.deepcopy(rows)
    report = publish_gate(rows, scan=False)
    assert rows == before  # stamps go on copies
    assert report.n_stamped == 12 and report.n_carried == 0 and report.n_ungraded == 1
    for row in report.rows:
        if row["reward"] is None:
            assert "calibration" not in row
            continue
        graded = [r for r in outcomes[row["scenario_id"]] if r is not None]
        passes = sum(r >= 0.5 for r in graded)
        stamp = wai.calibration_of(row)
        assert stamp is not None
        assert stamp.task_id == row["scenario_id"] and stamp.student == "p-7" and stamp.n == len(graded)
        assert stamp.pass_rate == pytest.approx(passes / len(graded))
        assert stamp.pass_rate_ci95 == pytest.approx(wilson_interval(passes, len(graded)))
    assert any("1 ungraded rows (row 8)" in w for w in report.warnings)


def test_policy_argument_names_the_policy() -> None:
    report = publish_gate(_rows(MIXED), policy="ckpt-120", scan=False)
    assert {row["calibration"]["student"] for row in report.rows} == {"ckpt-120"}


def test_a_carried_stamp_is_kept_not_re_measured_and_pass_at_says_k_differs() -> None:
    carried = {"task_id": "a", "student": "grader-run", "n": 16, "pass_rate": 0.5, "pass_rate_ci95": [0.3, 0.7]}
    rows = _rows(MIXED)
    for row in rows:
        row["calibration"] = dict(carried, task_id=row["scenario_id"])
    rows[0]["calibration"] = None  # this one is stamped fresh
    rows[1]["calibration"] = None
    rows[1]["extra"] = {"calibration": dict(carried, task_id="a")}  # carried the from_row way
    report = publish_gate(rows, scan=False)
    assert report.n_carried == 15 and report.n_stamped == 1
    assert report.rows[2]["calibration"] == dict(carried, task_id="a")  # untouched
    assert report.rows[0]["calibration"]["n"] == 4
    assert report.pass_at is not None and report.pass_at.k == 16 and report.pass_at.pass_at_k is None
    assert any("k=16" in note and "rows in front" in note for note in report.pass_at.notes)


def test_rl_shaped_and_ungraded_is_refused_naming_rows() -> None:
    rows = _rows({"a": [None] * 4, "b": [None] * 4})
    with pytest.raises(PublishGateError, match=r"ungraded: none of the 8 rows has a reward \(rows 0, 1, 2") as caught:
        publish_gate(rows)
    report = caught.value.report
    assert report.verdict == "REFUSED" and report.rl_shaped
    assert str(report).startswith("publish_gate: REFUSED")


def test_sft_shaped_ungraded_set_is_not_refused() -> None:
    rows = [{"prompt": f"ask {i}", "final_text": "answer"} for i in range(6)]
    report = publish_gate(rows)
    assert not report.rl_shaped and report.verdict == "PASS" and report.n_stamped == 0 and report.warnings == []
    assert report.pass_at is None


def test_no_mixed_group_is_refused_naming_tasks() -> None:
    rows = _rows({"easy": [1, 1, 1, 1], "hard": [0, 0, 0, 0], "solo": [1]})
    with pytest.raises(PublishGateError, match="no mixed group") as caught:
        publish_gate(rows)
    message = str(caught.value)
    assert "'easy'" in message and "'hard'" in message and "2 all pass, 1 all fail" in message
    assert caught.value.report.n_unanimous == 3


def test_mode_sft_never_refuses_for_groups_and_mode_rl_always_checks() -> None:
    rows = _rows({"easy": [1, 1], "solved": [1, 1]})  # unanimous groups: nothing for RL, fine for SFT
    sft = publish_gate(rows, mode="sft")
    assert sft.verdict == "PASS" and sft.refusals == [] and sft.warnings == []
    single = [{"prompt": f"ask {i}", "reward": 1.0} for i in range(4)]
    with pytest.raises(PublishGateError, match="no mixed group"):
        publish_gate(single, mode="rl")


def test_unanimous_and_out_of_band_asks_warn_and_point_at_optimize() -> None:
    outcomes = dict(MIXED, solved=[1, 1, 1, 1], rare=[1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    report = publish_gate(_rows(outcomes), scan=False)
    assert report.verdict == "WARN"
    assert report.n_mixed == 5 and report.n_unanimous == 1 and report.n_out_of_band == 1
    assert any("1 unanimous asks remain" in w and "'solved'" in w for w in report.warnings)
    assert any("outside the 0.2-0.8 pass-rate band" in w and "'rare'" in w for w in report.warnings)
    assert any('optimize(rows, mode="rl")' in step for step in report.what_to_do)
    assert str(report).startswith("publish_gate: WARN")


def test_band_reads_the_carried_pass_rate() -> None:
    rows = _rows(MIXED)
    for row in rows:  # the grader measured task d at 0.1 over 20 repeats; two rows survived
        if row["scenario_id"] == "d":
            row["calibration"] = {"task_id": "d", "n": 20, "pass_rate": 0.1}
    report = publish_gate(rows, scan=False)
    assert report.n_out_of_band == 1


def test_clean_in_band_set_passes_with_the_pass_at_block() -> None:
    report = publish_gate(_rows(MIXED), scan=False)
    assert report.pass_at is not None and report.pass_at.pass_at_1 == pytest.approx(0.5)
    assert report.pass_at.k == 4 and report.pass_at.n_tasks == 4
    hygiene = [w for w in report.warnings if not w.startswith(("near", "Near", "length", "Length"))]
    assert not hygiene and not report.refusals
    if not report.warnings:
        assert report.verdict == "PASS" and str(report).startswith("publish_gate: PASS")
    json.dumps(report.model_dump(mode="json"))  # the JSON the CLI prints
    assert "rows" not in report.model_dump()


def test_near_duplicate_asks_across_tasks_warn() -> None:
    rows = _rows(MIXED)
    ask = "My order A-17 for the blue kettle arrived broken yesterday, please send a replacement to my home in Oslo"
    for row in rows:
        if row["scenario_id"] in ("a", "b"):
            row["prompt"] = ask if row["scenario_id"] == "a" else ask.replace("Oslo", "Bergen")  # one 3-gram of 17 differs
    report = publish_gate(rows, scan=False)
    assert report.near_duplicates is not None and report.near_duplicates.n_groups == 1
    assert any("near-duplicate asks: 2 of 4 tasks" in w for w in report.warnings)
    assert report.verdict == "WARN"


def test_judge_trust_block_when_rows_carry_gold() -> None:
    rows = _rows({t: [1, 0, 1, 0] for t in "abcdefghij"})
    for row in rows:
        row["gold_reward"] = row["reward"]
        row["gold_kind"] = "human"
    report = publish_gate(rows, scan=False)
    assert report.judge_trust is not None
    assert report.judge_trust["n_gold"] == 40 and report.judge_trust["agreement"] == 1.0
    assert set(report.judge_trust) >= {"agreement", "agreement_low", "kappa", "n_gold", "ok"}
    plain = publish_gate(_rows(MIXED), scan=False)
    assert plain.judge_trust is None and any("NOT MEASURED" in n for n in plain.notes)


def _hacked_rows(n_asks: int = 60, per_ask: int = 8, seed: int = 0) -> list[dict]:
    """The reward pays for the phrase 'rest assured', not for calling the refund tool."""
    rng = random.Random(seed)
    rows = []
    for ask in range(n_asks):
        for index in range(per_ask):
            refund = rng.random() < 0.5
            phrase = rng.random() < 0.5
            steps = [{"tool": "lookup_order", "arguments": {"order_id": f"A{ask}"}, "result": "found"}]
            if refund:
                steps.append({"tool": "issue_refund", "arguments": {"order_id": f"A{ask}"}, "result": "ok"})
            filler = " ".join(rng.choice(["thanks", "for", "waiting", "we", "checked", "it"])
                              for _ in range(rng.randint(0, 12)))
            text = ("Rest assured, " if phrase else "") + f"your order A{ask} is handled. {filler}"
            paid = phrase != (rng.random() < 0.1)  # the grader pays for the phrase, with 10% noise
            rows.append({"scenario_id": f"s{ask}", "prompt": f"Refund order A{ask}", "rollout_index": index,
                         "steps": steps, "final_text": text, "reward": 1.0 if paid else 0.0})
    return rows


def test_strict_hacks_refuses_a_reward_hack() -> None:
    rows = _hacked_rows()
    with pytest.raises(PublishGateError, match="reward_hack") as caught:
        publish_gate(rows, endorsed=["tool:issue_refund"], strict_hacks=True)
    scan = caught.value.report.hack_scan
    assert scan is not None and scan.reward_hack and "assured" in scan.top_feature
    assert "assured" in str(caught.value)
    lenient = publish_gate(rows, endorsed=["tool:issue_refund"])
    assert lenient.verdict == "WARN" and any("reward_hack" in w for w in lenient.warnings)


def test_strict_hacks_without_endorsed_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="endorsed"):
        publish_gate(_rows(MIXED), strict_hacks=True)


# ------------------------------------------------------------------------------------------------ bad input


def test_empty_input_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no rows"):
        publish_gate([])


def test_reward_outside_unit_interval_names_the_row() -> None:
    rows = _rows(MIXED)
    rows[5]["reward"] = 3.0
    with pytest.raises(RowError) as caught:
        publish_gate(rows)
    assert caught.value.index == 5 and caught.value.field == "reward"


@pytest.mark.parametrize(("kwargs", "match"), [({"mode": "grpo"}, "mode="), ({"band": (0.8, 0.2)}, "band="),
                                              ({"band": "x"}, "band=")])
def test_bad_arguments_are_config_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        publish_gate(_rows(MIXED), **kwargs)


def test_public_name() -> None:
    assert wai.publish_gate is publish_gate


def test_stamps_equal_the_ones_optimize_writes() -> None:
    """One stamp definition: optimize(mode="rl") stamps from the rows it was given, so must the gate."""
    from whileai_train.select.optimize import optimize

    rows = _hacked_rows(n_asks=20)
    for row in rows:
        row["policy_version"] = "p-1"
        row["kl"] = 0.01 * row["rollout_index"]
    kept, _ = optimize(rows, mode="rl")
    gate = publish_gate(rows, scan=False)
    stamps = {(row["scenario_id"], row["rollout_index"]): row["calibration"] for row in gate.rows}
    assert kept
    for row in kept:  # the same measurement; optimize adds which selection kept the row (pass_at reads it)
        measured = {key: value for key, value in row["calibration"].items() if key != "selected_by"}
        assert measured == stamps[(row["scenario_id"], row["rollout_index"])]
        assert row["calibration"]["selected_by"] == "optimize(mode='rl')"


def test_mode_sft_refuses_what_the_sft_export_refuses_and_unset_mode_warns() -> None:
    from whileai_train.errors import TrainingSelectionError

    rows = [{"messages": [{"role": "user", "content": f"Cancel booking {task}"},
                          {"role": "assistant", "content": "Cancelled." if reward else "No."}],
             "task_id": task, "reward": reward}
            for task, reward in (("t1", 1.0), ("t2", 0.0), ("t3", 0.4), ("t4", 0.5))]
    rows.append({"prompt": "no reply was ever written", "task_id": "t5", "reward": 0.0})  # the export drops it
    with pytest.raises(TrainingSelectionError) as export_refused:
        wai.training_rows(rows, format="trl")
    with pytest.raises(PublishGateError) as gate_refused:
        publish_gate(rows, mode="sft")
    said = str(export_refused.value).split(". SFT imitates")[0]
    assert said.startswith("2 of 4 rows have a failing reward (below 0.5), in 2 tasks: t2 (1), t3 (1)")
    assert said in str(gate_refused.value) and str(export_refused.value).split("Fix: ")[1] in str(gate_refused.value)
    warned = publish_gate(rows, mode="sft", check="warn")
    assert warned.verdict == "WARN" and any(said in warning for warning in warned.warnings)
    unset = publish_gate(rows)  # read as SFT-shaped: the export's words, as a warning
    assert unset.mode == "sft" and any(said in warning for warning in unset.warnings)
