"""Beside trackio and wandb: with report_to=["trackio", "wandb"] (wandb offline) in the same GRPO trainer, each
tracker keeps its own run and we keep ours, and the reward monitor's alarm is also an alert in both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from whileai_train.runs.store import LocalStore

pytestmark = pytest.mark.trainer
ROOT = Path(__file__).resolve().parents[1]


def test_trackio_wandb_and_our_run_side_by_side_with_the_alarm_in_each(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WANDB_MODE": "offline", "WANDB_DIR": str(tmp_path / "wandb"),
           "WANDB_SILENT": "true", "TRACKIO_DIR": str(tmp_path / "trackio"), "OMP_NUM_THREADS": "1"}
    (tmp_path / "wandb").mkdir()
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "side_trackers_train.py"), str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    ours = result["ours"]
    assert ours["status"] == "stopped" and ours["alarms"] == [["feature", 5]]
    assert ours["alerted"] == [["trackio", "wandb"]]  # the one alarm reached both trackers
    (run,) = LocalStore().list_runs()
    assert run["id"] == ours["id"] and run["status"] == "stopped"
    assert [p["step"] for p in LocalStore().points(run["id"]) if "loss" in p] == [1, 2, 3, 4, 5]
    trackio = result["trackio"]
    assert trackio["name"] == "side-by-side" and trackio["steps"] == [1, 2, 3, 4, 5]
    ((title, text),) = trackio["alerts"]
    assert title == "reward monitor: feature alarm"
    assert text.startswith("!!! REWARD MONITOR ALARM [feature] at step 5: reward tracks 'word:thanks'")
    wandb = result["wandb"]
    assert wandb["offline"] and {"train/loss", "train/reward"} <= set(wandb["summary_keys"])
    ((title, text, level),) = wandb["alerts"]  # read back from the offline run file `wandb sync` would send
    assert title == "reward monitor: feature alarm" and level == "WARN"
    assert text.startswith("!!! REWARD MONITOR ALARM [feature] at step 5: reward tracks 'word:thanks'")


def test_a_failing_tracker_is_one_warning_and_never_reaches_training(monkeypatch: pytest.MonkeyPatch,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    from types import SimpleNamespace

    from whileai_train.callbacks import side_trackers

    sent: list[tuple[str, str, str]] = []

    class BrokenRun:
        def alert(self, title: str, text: str, level: str) -> None:
            raise ConnectionError("wandb-core is gone")

    class GoodRun:
        def alert(self, title: str, text: str, level: str) -> None:
            sent.append((title, text, level))

    monkeypatch.setitem(sys.modules, "trackio", SimpleNamespace(
        context_vars=SimpleNamespace(current_run=SimpleNamespace(get=lambda: None))))  # imported, no run
    monkeypatch.setitem(sys.modules, "wandb", SimpleNamespace(run=BrokenRun()))
    monkeypatch.setattr(side_trackers, "_failed", set())
    assert side_trackers.alert_side_trackers("reward monitor: length alarm", "line 1") == []
    assert side_trackers.alert_side_trackers("reward monitor: length alarm", "line 2") == []
    assert caplog.text.count("could not raise the alarm as a wandb alert (ConnectionError: wandb-core is gone)") == 1
    monkeypatch.setitem(sys.modules, "wandb", SimpleNamespace(run=GoodRun()))
    assert side_trackers.alert_side_trackers("t" * 80, "line 3") == ["wandb"]
    assert sent == [("t" * 63, "line 3", "WARN")]  # wandb takes a title under 64 characters
