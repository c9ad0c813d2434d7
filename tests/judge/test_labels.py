"""attach_labels: the four key forms, the warnings and errors of the product text, and no mutation."""

from __future__ import annotations

import copy

import pytest

import whileai_train as wai
from whileai_train.errors import LabelError


def _rows() -> list[dict]:
    return [
        {"rollout_id": "r0", "scenario_id": "s1", "rollout_index": 0, "prompt": "cancel order A1", "reward": 1.0},
        {"rollout_id": "r1", "scenario_id": "s1", "rollout_index": 1, "prompt": "cancel order A1", "reward": 0.0},
        {"rollout_id": "r2", "scenario_id": "s2", "rollout_index": 0, "prompt": "refund order B2", "reward": 1.0},
        {"rollout_id": "r3", "scenario_id": "s3", "rollout_index": 0, "prompt": "track parcel C3", "reward": 0.0},
    ]


def test_every_key_form_names_its_row() -> None:
    rows = _rows()
    before = copy.deepcopy(rows)
    labels = [
        {"key": "r0", "label": 1},  # rollout_id
        {"key": "s1#1", "label": 0},  # scenario_id#rollout_index
        {"scenario_id": "s2", "rollout_index": 0, "label": True},  # two fields
        {"key": "track parcel C3", "label": 1},  # prompt
    ]
    out = wai.attach_labels(rows, labels, kind="human")
    assert [r["gold_reward"] for r in out] == [1.0, 0.0, 1.0, 1.0]
    assert {r["gold_kind"] for r in out} == {"human"}
    assert rows == before  # the input is not changed


def test_dict_labels_and_verifier_reads_program() -> None:
    out = wai.attach_labels(_rows(), {"r2": 0, ("s3", 0): 1}, kind="verifier")
    assert out[2]["gold_reward"] == 0.0 and out[2]["gold_kind"] == "program"
    assert out[3]["gold_reward"] == 1.0 and out[3]["gold_kind"] == "program"
    assert "gold_reward" not in out[0] and "gold_kind" not in out[1]


def test_key_naming_no_row_warns_with_its_form() -> None:
    with pytest.warns(UserWarning, match=r"1 of 3 label keys name no row \(human labels\).*'s9#4' \(as scenario_id#"):
        out = wai.attach_labels(_rows(), [{"key": "r0", "label": 1}, {"key": "r1", "label": 0},
                                          {"key": "s9#4", "label": 1}])
    assert out[0]["gold_reward"] == 1.0


def test_no_key_naming_any_row_raises() -> None:
    with pytest.raises(LabelError, match="none of the 2 label keys names a row.*'nope'"):
        wai.attach_labels(_rows(), {"nope": 1, "also-nope": 0})


def test_key_naming_two_rows_raises_before_any_change() -> None:
    rows = _rows()
    before = copy.deepcopy(rows)
    # "cancel order A1" is the prompt of two rows (two rollouts of one ask)
    with pytest.raises(LabelError, match=r"names 2 rows \(\[0, 1\]\).*no row was changed.*unique rollout_id"):
        wai.attach_labels(rows, [{"key": "r2", "label": 1}, {"key": "cancel order A1", "label": 1}])
    assert rows == before


def test_pooled_runs_repeat_scenario_and_index() -> None:
    pooled = [{"scenario_id": "s1", "rollout_index": 0, "prompt": "a", "run": "x"},
              {"scenario_id": "s1", "rollout_index": 0, "prompt": "a", "run": "y"}]
    with pytest.raises(LabelError, match="scenario_id#rollout_index.*stamp a unique rollout_id"):
        wai.attach_labels(pooled, {"s1#0": 1})


def test_other_kind_raises_naming_the_accepted() -> None:
    with pytest.raises(LabelError, match="'human', 'program'.*'model'"):
        wai.attach_labels(_rows(), {"r0": 1}, kind="crowd")


def test_bad_label_values_and_shapes() -> None:
    with pytest.raises(LabelError, match="1 \\(pass\\) or 0 \\(fail\\)"):
        wai.attach_labels(_rows(), {"r0": "yes"})
    with pytest.raises(LabelError, match="1 \\(pass\\) or 0 \\(fail\\)"):
        wai.attach_labels(_rows(), {"r0": 2})
    with pytest.raises(LabelError, match="no labels given"):
        wai.attach_labels(_rows(), [])
    with pytest.raises(LabelError, match="names no row"):
        wai.attach_labels(_rows(), [{"label": 1}])
    with pytest.raises(LabelError, match="two different labels"):
        wai.attach_labels(_rows(), [{"key": "r0", "label": 1}, {"key": "s1#0", "label": 0}])
