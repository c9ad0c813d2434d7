"""build_preference_pairs: pass vs fail rows of one task, built to a known truth."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.errors import ConfigError, InputError, RowError


def rows_of(task: str, rewards: list[float | None], **extra: Any) -> list[dict[str, Any]]:
    return [{"task_id": task, "prompt": f"handle {task}", "reward": reward, "final_text": f"{task} reply {i}", **extra}
            for i, reward in enumerate(rewards)]


def test_best_pass_meets_worst_fail_first() -> None:
    rows = rows_of("a", [0.6, 0.0, 1.0, 0.3, 0.8])
    pairs, report = wai.build_preference_pairs(rows)
    assert [(p["chosen_index"], p["rejected_index"]) for p in pairs] == [(2, 1), (4, 3)]
    assert [(p["chosen_reward"], p["rejected_reward"]) for p in pairs] == [(1.0, 0.0), (0.8, 0.3)]
    assert pairs[0]["chosen"] == rows[2] and pairs[0]["chosen"] is not rows[2]
    assert pairs[0]["rejected"] == rows[1] and pairs[0]["prompt"] == "handle a" and pairs[0]["task_id"] == "a"
    assert report.pairs == 2 and report.tasks_paired == 1 and report.margin_mean == pytest.approx(0.75)


def test_unanimous_tasks_give_no_pairs_and_are_counted() -> None:
    rows = rows_of("a", [1.0, 0.0]) + rows_of("b", [1.0, 1.0]) + rows_of("c", [0.0, 0.2]) + rows_of("d", [None])
    pairs, report = wai.build_preference_pairs(rows)
    assert len(pairs) == 1 and report.tasks == 4 and report.tasks_paired == 1
    assert report.skipped == {"ungraded": 1, "all_pass": 1, "all_fail": 1}
    assert any("ungraded" in w and "row 6" in w for w in report.warnings)


def test_pairs_never_cross_phrasings() -> None:
    rows = rows_of("a", [1.0]) + [{**row, "prompt": "handle a, reworded"} for row in rows_of("a", [0.0])]
    pairs, report = wai.build_preference_pairs(rows)
    assert pairs == [] and report.skipped == {"split_across_prompts": 1}


def test_max_pairs_per_task_caps_across_phrasings() -> None:
    rows = rows_of("a", [1.0, 1.0, 0.0, 0.0]) + [{**row, "prompt": "reworded"} for row in rows_of("a", [1.0, 0.0])]
    pairs, _ = wai.build_preference_pairs(rows)
    assert len(pairs) == 3
    pairs, report = wai.build_preference_pairs(rows, max_pairs_per_task=2)
    assert len(pairs) == 2 and report.max_pairs_per_task == 2


def test_threshold_moves_the_split() -> None:
    rows = rows_of("a", [0.9, 0.7, 0.4])
    assert len(wai.build_preference_pairs(rows).pairs) == 1
    pairs, _ = wai.build_preference_pairs(rows, threshold=0.8)
    assert [(p["chosen_reward"], p["rejected_reward"]) for p in pairs] == [(0.9, 0.4)]


def test_eval_sourced_pairs_are_counted_and_warned_not_dropped() -> None:
    rows = rows_of("a", [1.0, 0.0]) + rows_of("b", [1.0], lineage={"source": "eval"}) + rows_of("b", [0.0])
    pairs, report = wai.build_preference_pairs(rows)
    assert len(pairs) == 2 and report.eval_sourced == 1 and report.eval_sourced_rows == [2]
    assert any("eval_sourced: 1 pairs" in w for w in report.warnings)
    assert report["eval_sourced"] == 1


def test_one_class_only_warns_and_prints_no_pairs() -> None:
    pairs, report = wai.build_preference_pairs(rows_of("a", [1.0, 1.0]) + rows_of("b", [0.9]))
    assert pairs == [] and any("one class only" in w and "every graded row passes" in w for w in report.warnings)
    assert str(report).startswith("preference pairs: NO PAIRS")
    json.dumps(report.model_dump(mode="json"))


def test_input_rows_are_not_mutated() -> None:
    rows = rows_of("a", [1.0, 0.0, 0.5])
    before = copy.deepcopy(rows)
    pairs, _ = wai.build_preference_pairs(rows)
    pairs[0]["chosen"]["reward"] = -1
    assert rows == before


def test_bad_input_and_arguments() -> None:
    with pytest.raises(InputError, match="no rows"):
        wai.build_preference_pairs([])
    with pytest.raises(InputError, match="ungraded"):
        wai.build_preference_pairs(rows_of("a", [None, None]))
    with pytest.raises(RowError, match="outside") as caught:
        wai.build_preference_pairs(rows_of("a", [1.0, 2.0]))
    assert caught.value.index == 1
    for options in ({"threshold": 0.0}, {"threshold": 1.5}, {"max_pairs_per_task": 0}):
        with pytest.raises(ConfigError):
            wai.build_preference_pairs(rows_of("a", [1.0, 0.0]), **options)
