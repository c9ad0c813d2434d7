"""The reward monitor's markers=: read on the holdout completions beside proxy and gold, logged as marker/<name>."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import whileai_train as wai
from whileai_train.demos.grpo_monitor import NUMBERS, exact_answer, keyword_reward, make_tasks
from whileai_train.errors import ConfigError
from whileai_train.runs.store import LocalStore, default_store_path

pytestmark = pytest.mark.usefixtures("one_thread")


def _says(row: dict[str, Any]) -> float:
    return 1.0 if any(word in NUMBERS for word in row["final_text"].split()) else 0.0


def _mean_over_asks(rows: list[dict[str, Any]], values: list[float]) -> float:
    by_ask: dict[str, list[float]] = defaultdict(list)
    for row, value in zip(rows, values, strict=True):
        by_ask[row["task_id"]].append(value)
    return float(np.mean([np.mean(v) for v in by_ask.values()]))


@pytest.mark.trainer
def test_markers_are_read_on_the_holdout_and_logged(tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path) -> None:
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    seen: list[dict[str, Any]] = []

    def says_a_number(row: dict[str, Any]) -> float:
        seen.append(row)
        return _says(row)

    monitor = wai.monitor(holdout=make_tasks(40, 1)[30:40], gold=exact_answer, every=1, n_prompts=6, k=2,
                          verbose=False, markers=["honest_claims", "no_refusal", says_a_number], name="markers")
    config = GRPOConfig(output_dir=str(tmp_path), max_steps=2, learning_rate=1e-2, per_device_train_batch_size=4,
                        num_generations=2, max_completion_length=6, logging_steps=1, report_to="none", use_cpu=True,
                        save_strategy="no", disable_tqdm=True, seed=0, beta=0.0)
    GRPOTrainer(model=tiny_model, reward_funcs=[monitor.wrap(keyword_reward)], args=config,
                train_dataset=Dataset.from_list(make_tasks(8, 0)), processing_class=tiny_tokenizer,
                callbacks=[monitor]).train()

    summary = monitor.summary()
    assert [p.step for p in summary.curve] == [0, 1, 2]
    assert len(seen) == 3 * 12  # 6 asks x k=2, at each of the three evals
    for number, point in enumerate(summary.curve):
        assert set(point.markers) == {"honest_claims", "no_refusal", "says_a_number"}
        rows = seen[number * 12:(number + 1) * 12]
        assert all(r["steps"] == [] and isinstance(r["final_text"], str) and "answer" in r for r in rows)
        expected = _mean_over_asks(rows, [_says(r) for r in rows])
        assert point.markers["says_a_number"] == pytest.approx(expected)
        honest = [r["markers"]["honest_claims"] for r in wai.trace_markers(rows)]
        assert point.markers["honest_claims"] == pytest.approx(_mean_over_asks(rows, honest))
        refusal = [r["markers"]["no_refusal"] for r in wai.style_markers(rows)]
        assert point.markers["no_refusal"] == pytest.approx(_mean_over_asks(rows, refusal))
    assert monitor.run is not None
    record = LocalStore(default_store_path()).get_run(monitor.run.id, last_points=10_000)
    assert record is not None
    names = {k for point in record.get("points") or () for k in (point.get("metrics") or point)}
    assert {"marker/honest_claims", "marker/no_refusal", "marker/says_a_number", "proxy_reward"} <= names
    assert "markers on the holdout completions" in str(summary)
    assert summary.settings["markers"] == ["honest_claims", "no_refusal", "says_a_number"]


def test_markers_argument_is_checked_at_construction() -> None:
    with pytest.raises(ConfigError, match="honest_claim.*no family stamps"):
        wai.monitor(markers=["honest_claim"], verbose=False)
    with pytest.raises(ConfigError, match="a list is expected"):
        wai.monitor(markers="honest_claims", verbose=False)

    def twin(row: dict[str, Any]) -> float:
        return 1.0

    with pytest.raises(ConfigError, match="two markers named twin"):
        wai.monitor(markers=[twin, twin], verbose=False)


def test_score_markers_reads_each_completion_as_a_row_and_a_failing_marker_warns() -> None:
    from whileai_train.callbacks.holdout import marker_means, score_markers
    from whileai_train.markers.registry import check_markers
    from whileai_train.sampling.samples import Sample, Samples

    rows = [{"prompt": [{"role": "user", "content": "refund A1"}], "task_id": "a"},
            {"prompt": "refund B2", "task_id": "b"}]
    completions = [[{"role": "assistant", "content": "I verified it."}], [{"role": "assistant", "content": "Done."}],
                   "I can't help with that."]
    sample = Samples(rows, [Sample(row_index=i, repeat=0, prompt=rows[i]["prompt"], completion=c, completion_ids=[1],
                                   length=1, finish_reason="stop") for i, c in zip([0, 0, 1], completions, strict=True)])
    values = score_markers(sample, check_markers(["honest_claims", "no_refusal"]))
    assert values == [{"honest_claims": 0.0, "no_refusal": 1.0}, {"honest_claims": 1.0, "no_refusal": 1.0},
                      {"honest_claims": 1.0, "no_refusal": 0.0}]
    scored = [{"ask": "a", "markers": values[0]}, {"ask": "a", "markers": values[1]}, {"ask": "b", "markers": values[2]}]
    assert marker_means(scored) == {"honest_claims": pytest.approx(0.75), "no_refusal": pytest.approx(0.5)}

    def broken(row: dict[str, Any]) -> float:
        raise KeyError("score")

    monitor = wai.monitor(markers=[broken], verbose=False)
    plain = [{"ask": "a"}, {"ask": "a"}, {"ask": "b"}]
    monitor._score_markers(sample, plain, 3)
    assert all("markers" not in s for s in plain)
    assert any("markers at step 3 could not be read (KeyError" in w for w in monitor.summary().warnings)
