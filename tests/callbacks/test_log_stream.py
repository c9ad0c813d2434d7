"""The monitor's holdout readings in the trainer's own log stream (monitor/...): log_history, and what trackio,
wandb (offline) and TensorBoard hold, each at the eval's step; our run keeps them under their own names only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.callbacks.test_side_trackers import wandb_records

from whileai_train.callbacks.holdout_completions import TABLE_COLUMNS
from whileai_train.callbacks.log_stream import PREFIX
from whileai_train.callbacks.monitor_defaults import ALARMS
from whileai_train.runs.store import LocalStore

pytestmark = pytest.mark.trainer
ROOT = Path(__file__).resolve().parents[2]
ALARM_KEYS = {f"{PREFIX}alarm/{name}" for name in ALARMS}
CORE = {f"{PREFIX}proxy_reward", f"{PREFIX}gold_reward", f"{PREFIX}holdout_length"} | ALARM_KEYS


def _monitor_steps(entries: list[dict[str, Any]], key: str, step_key: str = "step") -> list[int]:
    return [int(e[step_key]) for e in entries if key in e]


def test_readings_reach_log_history_trackio_wandb_and_tensorboard_at_the_eval_steps(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WANDB_MODE": "offline", "WANDB_DIR": str(tmp_path / "wandb"),
           "WANDB_SILENT": "true", "TRACKIO_DIR": str(tmp_path / "trackio"), "OMP_NUM_THREADS": "1"}
    (tmp_path / "wandb").mkdir()
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "callbacks" / "log_stream_train.py"), str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert not [w for w in result["warnings"] if "callback list" in w]

    # log_history: the baseline at step 0, then evals at 2 and 4 (every=2); step 2 is not a logging step
    # (logging_steps=3), so the monitor made the trainer log there, beside the trainer's own keys
    history = result["log_history"]
    assert _monitor_steps(history, f"{PREFIX}proxy_reward") == [0, 2, 4]
    for entry in history:
        if f"{PREFIX}proxy_reward" in entry:
            assert CORE <= set(entry)
            assert all(entry[k] in (0.0, 1.0) for k in ALARM_KEYS)
            low, high = entry[f"{PREFIX}gold_reward_ci_low"], entry[f"{PREFIX}gold_reward_ci_high"]
            assert low <= entry[f"{PREFIX}gold_reward"] <= high
            assert entry["step"] == 0 or "loss" in entry  # in the trainer's own log of that step
    assert [e["step"] for e in history if "loss" in e] == [2, 3, 4]

    # trackio: the same keys (trackio's callback prefixes train/), with the trainer's global step
    trackio = [row for row in result["trackio"] if "train/global_step" in row]
    assert _monitor_steps(trackio, f"train/{PREFIX}proxy_reward", "train/global_step") == [0, 2, 4]
    assert _monitor_steps(trackio, f"train/{PREFIX}alarm/divergence", "train/global_step") == [0, 2, 4]

    # wandb (offline): the history records its run file holds, each with train/global_step
    steps = []
    for record in wandb_records(Path(result["wandb_file"])):
        if record.WhichOneof("record_type") != "history":
            continue
        items = {"/".join(item.nested_key) or item.key: json.loads(item.value_json) for item in record.history.item}
        if f"train/{PREFIX}gold_reward" in items:
            steps.append(int(items["train/global_step"]))
    assert steps == [0, 2, 4]

    # the holdout completions, as each tracker's own Table at each eval: 8 asks x 2 completions
    assert [t["step"] for t in result["trackio_tables"]] == [0, 2, 4]
    for logged in result["trackio_tables"]:
        assert logged["table"]["_type"] == "trackio.table"
        assert len(logged["table"]["_value"]) == 16 and set(logged["table"]["_value"][0]) == set(TABLE_COLUMNS)
    wandb_tables = [json.loads(Path(path).read_text()) for path in result["wandb_tables"]]
    assert len(wandb_tables) == 3
    for table in wandb_tables:
        assert table["columns"] == list(TABLE_COLUMNS) and len(table["data"]) == 16
    assert sorted({row[0] for table in wandb_tables for row in table["data"]}) == [0, 2, 4]  # the step column

    # TensorBoard: scalar events at the global step
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(result["tensorboard"])
    events.Reload()
    assert [e.step for e in events.Scalars(f"train/{PREFIX}proxy_reward")] == [0, 2, 4]
    assert [e.step for e in events.Scalars(f"train/{PREFIX}alarm/feature")] == [0, 2, 4]

    # our run holds the readings under their own names, never a second time under monitor/
    points = LocalStore(Path(env["WHILEAI_HOME"]) / "runs.db").points(result["run_id"])
    assert [p["step"] for p in points if "proxy_reward" in p] == [0, 2, 4]
    assert not [k for p in points for k in p if k.startswith(PREFIX)]


def test_attached_monitor_puts_its_readings_first_and_every_later_callback_sees_them(tiny_model: Any,
                                                                                     tiny_tokenizer: Any,
                                                                                     tmp_path: Path) -> None:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    import whileai_train as wai
    from whileai_train.demos.grpo_monitor import exact_answer, keyword_reward, make_tasks

    seen: list[tuple[int, set[str]]] = []

    class Reader(TrainerCallback):  # a reporter of the user's own, added before the monitor
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            seen.append((state.global_step, {k for k in logs or {} if k.startswith(PREFIX)}))

    tasks = make_tasks(24, seed=0)
    monitor = wai.monitor(holdout=tasks[16:], gold=exact_answer, every=3, n_prompts=8, k=2, verbose=False)
    config = GRPOConfig(output_dir=str(tmp_path / "grpo"), max_steps=3, learning_rate=1e-4,
                        per_device_train_batch_size=4, num_generations=2, max_completion_length=4, logging_steps=1,
                        use_cpu=True, save_strategy="no", disable_tqdm=True, seed=0, report_to="none")
    trainer = GRPOTrainer(model=tiny_model, reward_funcs=[monitor.wrap(keyword_reward)], args=config,
                          train_dataset=Dataset.from_list(tasks[:16]), processing_class=tiny_tokenizer,
                          callbacks=[Reader(), monitor])
    wai.track(trainer).train()
    assert trainer.callback_handler.callbacks[0] is monitor._stream  # first, before every reporter
    assert [(step, CORE <= keys) for step, keys in seen if keys] == [(0, True), (3, True)]
    assert [step for step, _ in seen] == [0, 1, 2, 3, 3]  # the baseline, the trainer's 3 logs, the end totals
    assert [e["step"] for e in trainer.state.log_history if f"{PREFIX}holdout_length" in e] == [0, 3]
    run = wai.get_run(monitor.run.id)
    assert not [k for p in run["points"] for k in p if k.startswith(PREFIX)]
