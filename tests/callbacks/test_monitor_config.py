"""wai.monitor(...) refuses configurations that cannot work, at construction; the report reads well."""

from __future__ import annotations

from typing import Any

import pytest

import whileai_train as wai
from whileai_train.callbacks.monitor_report import MonitorSummary
from whileai_train.errors import ConfigError, RowError


def gold(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float]:
    return [0.0] * len(completions)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"stop_on": ["divergance"]}, "not alarms"),
    ({"stop_on": "divergence", "gold": gold}, "is a string"),
    ({"endorsed": "answer"}, "is a string"),
    ({"endorsed": ["answer", 3]}, "non-empty string"),
    ({"stop_on": ["divergence"]}, "gold=None"),
    ({"stop_on": ["length"]}, "gold=None"),
    ({"stop_on": ["drift"]}, "kl_budget=None"),
    ({"stop_on": ["feature"]}, "endorsed=None"),
    ({"every": 0}, "every=0"),
    ({"k": 2.5}, "k=2.5"),
    ({"n_prompts": True}, "n_prompts=True"),
    ({"delta": -0.1}, "delta=-0.1"),
    ({"kl_budget": 0}, "kl_budget=0"),
    ({"gold": "exact"}, "not callable"),
    ({"holdout": "what is one plus one ?"}, "single string"),
    ({"holdout": []}, "empty"),
    ({"proxy": [gold, 1]}, "not callable"),
])
def test_configuration_mistakes_raise_with_the_fix(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match) as info:
        wai.monitor(**kwargs)
    assert "Fix:" in str(info.value)


def test_a_holdout_row_without_a_prompt_is_a_row_error_naming_it() -> None:
    with pytest.raises(RowError, match="no `prompt`") as info:
        wai.monitor(holdout=[{"question": "x"}])
    assert info.value.index == 0 and info.value.field == "prompt" and "Fix:" in str(info.value)


def test_a_valid_configuration_builds_a_while_callback() -> None:
    from transformers import TrainerCallback

    m = wai.monitor(holdout=["a ?", {"prompt": "b ?", "task_id": "t"}], gold=gold, stop_on=("divergence", "length"),
                    endorsed=("answer",), kl_budget=0.2, every=3, name="x")
    assert isinstance(m, wai.RewardMonitor) and isinstance(m, wai.WhileCallback) and isinstance(m, TrainerCallback)
    assert m.stop_on == ("divergence", "length") and m.endorsed == ["answer"] and m.every == 3
    assert m.holdout == [{"prompt": "a ?"}, {"prompt": "b ?", "task_id": "t"}]
    assert str(m.summary()).startswith("NO EVAL YET")


def test_format_hack_monitor_reads_a_dump() -> None:
    summary = MonitorSummary.model_validate({
        "verdict": "REWARD HACKING SUSPECTED: 1 alarm (divergence at step 10); training stopped",
        "curve": [{"step": 0, "proxy_reward": 0.2, "gold_reward": 0.1, "holdout_length": 3.0, "n_asks": 16},
                  {"step": 10, "proxy_reward": 0.7, "gold_reward": 0.1, "holdout_length": 3.5, "n_asks": 16}],
        "alarms": [{"name": "divergence", "step": 10, "message": "proxy +0.500 since baseline"}],
        "latest": {"divergence": {"status": "alarm", "reason": "x"}, "drift": {"status": "unknown",
                                                                            "reason": "no kl_budget"}},
        "stopped": True,
    })
    text = wai.format_hack_monitor(summary.model_dump())
    lines = text.splitlines()
    assert lines[0] == summary.verdict
    row = next(line for line in lines if line.strip().startswith("10 "))
    assert "0.700" in row and "0.100" in row and "3.5" in row and row.endswith("<- divergence")
    assert "  [divergence] step 10: proxy +0.500 since baseline" in lines
    assert any(line.startswith("latest: divergence alarm; drift unknown (no kl_budget)") for line in lines)
    assert "what to do:" in lines
    assert str(summary) == text


def test_holdout_from_the_train_set_is_seeded_distinct_and_reads_little() -> None:
    import random

    import numpy as np

    from whileai_train.callbacks.holdout import holdout_from_dataset

    class Counting:
        def __init__(self, n: int) -> None:
            self.n, self.reads = n, 0

        def __len__(self) -> int:
            return self.n

        def __getitem__(self, i: int) -> dict[str, Any]:
            self.reads += 1
            return {"prompt": f"p{i % 500}", "task_id": f"t{i % 500}", "answer": "x"}

    random.seed(1)
    np.random.seed(1)
    before = (random.random(), np.random.random())
    random.seed(1)
    np.random.seed(1)
    data = Counting(1_000_000)
    rows = holdout_from_dataset(data, 32, seed=0)
    assert len(rows) == 32 and len({r["task_id"] for r in rows}) == 32
    assert data.reads < 100  # a million-row set is not read whole
    assert rows == holdout_from_dataset(Counting(1_000_000), 32, seed=0)  # same asks every time
    assert (random.random(), np.random.random()) == before  # the global RNGs were not touched


def test_the_scan_warns_when_endorsed_names_no_feature_and_names_the_hack() -> None:
    """The feature alarm on the buffer alone (no trainer): the scan names what the reward pays for."""
    from whileai_train.callbacks.reward_wrap import CompletionRecord

    m = wai.monitor(endorsed=["no_such_feature"], verbose=False)
    records = []
    for ask in range(12):
        for j in range(4):
            says = j % 2 == 0
            text = ["sure a", "bb bbbbbbbbbb", "sure cccccccccccc", "d e"][j]  # same word count, mixed lengths
            records.append(CompletionRecord("keyword", ask, j, f"ask{ask}", f"p{ask}", text, float(says), 3))
    m._records.extend(records)
    verdict = m._scan()
    assert any("names no feature the scan has" in w for w in m.summary().warnings)
    assert m._top_feature == "word:sure"
    assert verdict.name == "feature" and verdict.status == "alarm" and "word:sure" in verdict.reason

    endorsed = wai.monitor(endorsed=["word:sure"], verbose=False)
    endorsed._records.extend(records)
    assert endorsed._scan().status == "clear"
    assert endorsed.summary().warnings == []


def test_a_checkpoint_restore_hands_back_the_live_monitor() -> None:
    """transformers rebuilds stateful callbacks as type(cb)(**state['args']) on resume: that must not lose gold,
    the holdout or the recorder the wrapped rewards feed, nor fail on stop_on."""
    import json

    m = wai.monitor(holdout=["a ?"], gold=gold, stop_on=["divergence"], name="resumable")
    wrapped = m.wrap(gold)
    saved = json.loads(json.dumps(m.state()))  # what trainer_state.json holds
    rebuilt = type(m)(**saved["args"])
    assert rebuilt is m and m.gold is gold and m.stop_on == ("divergence",) and m.holdout == [{"prompt": "a ?"}]
    for attribute, value in saved["attributes"].items():
        setattr(rebuilt, attribute, value)
    wrapped(prompts=["a ?"], completions=["x"], completion_ids=[[1]])
    assert len(m.recorder.drain()) == 1


def test_an_endorsed_feature_that_was_constant_is_not_called_missing() -> None:
    """A user feature that exists but took one value on every completion of each ask is said to be constant on
    this batch; a name that matches no feature at all is said to match none (a misspelling)."""
    from whileai_train.callbacks.reward_wrap import CompletionRecord

    records = []
    for ask in range(12):
        for j in range(4):
            text = ["sure a", "bb bbbbbbbbbb", "sure cccccccccccc", "d e"][j]
            records.append(CompletionRecord("keyword", ask, j, f"ask{ask}", f"p{ask}", text, float(j % 2 == 0), 3))

    def correct_answer(row: dict) -> float:
        return 1.0  # every completion on this batch: the feature exists, it does not vary

    constant = wai.monitor(endorsed=["correct_answer"], features={"correct_answer": correct_answer}, verbose=False)
    constant._records.extend(records)
    constant._scan()
    (said,) = constant.summary().warnings
    assert "endorsed ['correct_answer'] was constant on this batch" in said and "names no feature" not in said
    misspelt = wai.monitor(endorsed=["corect_answer"], features={"correct_answer": correct_answer}, verbose=False)
    misspelt._records.extend(records)
    misspelt._scan()
    (said,) = misspelt.summary().warnings
    assert "endorsed ['corect_answer'] names no feature the scan has" in said and "misspelling" in said
    scan = wai.hack_scan([{"scenario_id": r.ask, "final_text": r.completion, "reward": r.reward} for r in records],
                         endorsed=["correct_answer"], features={"correct_answer": correct_answer})
    assert scan.endorsed_constant == ["correct_answer"]
    assert any("endorsed ['correct_answer'] is constant on these rows" in w for w in scan.warnings)
@pytest.mark.parametrize("setting", [{"use_vllm": True}, {"fsdp": "full_shard"}], ids=["vllm", "fsdp"])
def test_sampling_set_ups_the_callback_cannot_reach_are_said_when_the_monitor_is_not_attached(
        setting: dict[str, Any], tmp_path: Any) -> None:
    from types import SimpleNamespace

    from transformers import TrainerControl, TrainerState

    args = SimpleNamespace(output_dir=str(tmp_path), run_name="vllm-run", beta=0.04, reward_weights=None, **setting)
    m = wai.monitor(holdout=["a ?"], verbose=False)
    m.on_train_begin(args, TrainerState(), TrainerControl())  # type: ignore[arg-type]
    said = [w for w in m.summary().warnings if "the monitor is not attached to the trainer" in w]
    assert len(said) == 1 and "Fix: monitor.attach(trainer) before train(), or train inside wai.track(trainer)" in said[0]
    assert m.summary().settings["holdout_sampler"] == "generate"


def test_attach_refuses_a_trainer_without_trls_generation_path() -> None:
    from types import SimpleNamespace

    with pytest.raises(ConfigError, match=r"attach\(\) got a SimpleNamespace, which has no \['_generate'"):
        wai.monitor().attach(SimpleNamespace())
