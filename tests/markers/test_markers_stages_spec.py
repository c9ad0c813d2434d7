"""Stage lineage (stamp_stage, stage_of, stage_report) and the model spec as an object (load_spec, stamp_spec)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.errors import ConfigError, InputError, RowError


def rows_for(tasks: list[str], stage: str) -> list[dict[str, Any]]:
    return wai.stamp_stage([{"scenario_id": t, "prompt": f"ask {t}", "steps": []} for t in tasks], stage)


def test_stages_constant_and_stamping() -> None:
    assert wai.STAGES == ("sft", "rm", "rl", "eval", "mid")
    row = {"scenario_id": "a", "prompt": "x", "lineage": {"source": "rollout"}}
    before = copy.deepcopy(row)
    (sft,) = wai.stamp_stage([row], "sft")
    (rl,) = wai.stamp_stage([sft], "rl")
    assert row == before  # the input row is not changed
    assert wai.stage_of(row) is None and wai.stage_of(sft) == "sft" and wai.stage_of(rl) == "rl"
    assert rl["lineage"] == {"source": "rollout", "stage": "rl", "stages": ("sft", "rl")}
    with pytest.raises(ConfigError, match="sft, rm, rl, eval, mid"):
        wai.stamp_stage([row], "train")
    with pytest.raises(RowError, match="row 0.*lineage"):
        wai.stamp_stage([{"lineage": "sft"}], "sft")


def test_unstamped_eval_rows_are_read_as_eval_when_passed_as_eval_and_never_called_clean() -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    train = wai.read_rows(examples / "rollouts.jsonl")
    evals = wai.read_rows(examples / "eval.jsonl")  # unstamped, as an eval file comes; 5 of its tasks are trained on
    leaked = sorted({row["scenario_id"] for row in evals} & {row["scenario_id"] for row in train})
    assert len(leaked) == 5
    glued = wai.stage_report(wai.stamp_stage(train, "rl") + evals)  # the old README line: not OK any more
    assert not glued.ok and glued.n_unstamped == len(evals)
    assert str(glued).startswith(f"stages: NOT CHECKED: {len(evals)} of the {len(train) + len(evals)} rows passed as "
                                 "rows carry no stage")
    assert "eval_rows=eval_rows" in str(glued)
    report = wai.stage_report(wai.stamp_stage(train, "rl"), eval_rows=evals)
    assert report.leaked_tasks == leaked and report.leaked_by_stage == {"rl": 5} and not report.ok
    assert report.rows_per_stage == {"rl": len(train), "eval": len(evals)} and report.n_eval_rows == len(evals)
    assert str(report).startswith("stages: EVAL LEAK: 5 tasks used both in eval and in training (rl 5)")
    stamped = wai.stage_report(wai.stamp_stage(train, "rl") + wai.stamp_stage(evals, "eval"))
    assert stamped.leaked_tasks == leaked
    unchecked = wai.stage_report(wai.stamp_stage(train, "rl"))
    assert not unchecked.ok and str(unchecked).startswith("stages: NO EVAL SIDE")
    clean, _ = wai.decontaminate(train, evals)
    assert wai.stage_report(wai.stamp_stage(clean, "rl"), eval_rows=evals).ok


def test_stage_report_flags_a_task_used_in_eval_and_training() -> None:
    rows = (rows_for(["t1", "t2", "t3"], "sft") + rows_for(["t4", "t5"], "rl") + rows_for(["t3", "t5", "t9"], "eval")
            + rows_for(["t9"], "eval"))
    report = wai.stage_report(rows + [{"scenario_id": "t0", "prompt": "x"}])
    assert report.rows_per_stage == {"sft": 3, "rl": 2, "eval": 4}
    assert report.tasks_per_stage == {"sft": 3, "rl": 2, "eval": 3}
    assert report.leaked_tasks == ["t3", "t5"] and report.leaked_by_stage == {"sft": 1, "rl": 1}
    assert report.n_unstamped == 1 and not report.ok
    text = str(report)
    assert text.startswith("stages: EVAL LEAK: 2 tasks used both in eval and in training (sft 1, rl 1)")
    clean = wai.stage_report(rows_for(["t1"], "sft") + rows_for(["t2"], "eval"))
    assert clean.ok and str(clean).startswith("stages: OK")
    # a task is a situation, not a string: a rephrased eval prompt of a trained scenario still leaks
    rephrased = rows_for(["t1"], "sft") + wai.stamp_stage([{"scenario_id": "t1", "prompt": "other words"}], "eval")
    assert wai.stage_report(rephrased).leaked_tasks == ["t1"]


SPEC = {"source": "character recipe", "traits": [
    {"id": "honest", "name": "Honest", "principle": "Say only what you did.", "authority": "platform"},
    {"id": "brief", "name": "Brief", "principle": "Answer in a few sentences.", "authority": "user"}]}


def test_load_spec_version_is_a_content_hash(tmp_path: Path) -> None:
    spec = wai.load_spec(SPEC)
    assert isinstance(spec, wai.Spec) and spec.behaviors() == ["honest", "brief"]
    assert spec.id == "character recipe" and len(spec.version) == 12
    assert wai.load_spec(copy.deepcopy(SPEC)).version == spec.version  # same content, same version
    edited = copy.deepcopy(SPEC)
    edited["traits"][0]["principle"] = "Say only what you did, and say it plainly."
    assert wai.load_spec(edited).version != spec.version  # any edit to a principle changes it
    reordered = copy.deepcopy(SPEC)
    reordered["traits"].reverse()
    assert wai.load_spec(reordered).version != spec.version
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(SPEC))
    assert wai.load_spec(path).version == spec.version and wai.load_spec(str(path)) == wai.load_spec(path)
    assert wai.load_spec(spec) is spec
    assert str(spec).startswith(f"spec character recipe version {spec.version}: 2 traits")


@pytest.mark.parametrize("bad, match", [
    ({"source": "x"}, "traits"),
    ({"traits": [{"id": "a", "principle": "p"}, {"id": "a", "principle": "q"}]}, r"traits\[1\]\.id 'a' is used twice"),
    ({"traits": [{"id": "", "principle": "p"}]}, r"traits\[0\]\.id"),
    ({"traits": [{"id": "a"}]}, r"traits\[0\]\.principle"),
    ([1, 2], "load_spec got a list"),
])
def test_bad_specs_are_typed_errors(bad: Any, match: str) -> None:
    with pytest.raises(InputError, match=match):
        wai.load_spec(bad)


def test_bad_spec_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        wai.load_spec(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{\"traits\": [")
    with pytest.raises(InputError, match="not a JSON spec"):
        wai.load_spec(broken)


def test_stamp_spec_tags_every_row() -> None:
    rows = [{"prompt": "a"}, {"prompt": "b", "spec_version": "old"}]
    stamped = wai.stamp_spec(rows, SPEC)
    version = wai.load_spec(SPEC).version
    assert [(r["spec_id"], r["spec_version"]) for r in stamped] == [("character recipe", version)] * 2
    assert rows[1]["spec_version"] == "old" and "spec_id" not in rows[0]
