"""Beside trackio and wandb: with report_to=["trackio", "wandb"] (wandb offline) in the same GRPO trainer, each
tracker keeps its own run and we keep ours, and the reward monitor's alarm is also an alert in both."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from whileai_train.runs.store import LocalStore

pytestmark = pytest.mark.trainer
ROOT = Path(__file__).resolve().parents[2]


def wandb_records(path: Path) -> list[Any]:
    """The records of a wandb run file (what `wandb sync` sends): a leveldb-style log of 32 KiB blocks after a
    7-byte file header, each record a protobuf in one or more fragments (full, or first / middle / last)."""
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B", data[:8]
    pos, block, pending, records = 7, 32768, b"", []
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:  # a block's tail too short for a header is padding
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        pending += data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):  # a full record, or the last fragment of one
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            records.append(record)
            pending = b""
    return records


def test_trackio_wandb_and_our_run_side_by_side_with_the_alarm_in_each(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WANDB_MODE": "offline", "WANDB_DIR": str(tmp_path / "wandb"),
           "WANDB_SILENT": "true", "TRACKIO_DIR": str(tmp_path / "trackio"), "OMP_NUM_THREADS": "1"}
    (tmp_path / "wandb").mkdir()
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "callbacks" / "side_trackers_train.py"), str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    # What holds on any CPU: the feature alarm names the planted word, the run stops at its step (before the
    # last, 10), and every alarm reaches both trackers. Whether divergence fires beside it follows the float
    # trajectory (kernels differ by CPU), so the alarms are not pinned.
    ours = result["ours"]
    (stop,) = [step for name, step in ours["alarms"] if name == "feature"]
    assert ours["status"] == "stopped" and stop < 10
    assert ours["alerted"] == [["trackio", "wandb"]] * len(ours["alarms"])  # each alarm reached both trackers
    (run,) = LocalStore().list_runs()
    assert run["id"] == ours["id"] and run["status"] == "stopped"
    assert [p["step"] for p in LocalStore().points(run["id"]) if "loss" in p] == list(range(1, stop + 1))
    trackio = result["trackio"]
    assert trackio["name"] == "side-by-side" and trackio["steps"] == list(range(1, stop + 1))
    feature = f"!!! REWARD MONITOR ALARM [feature] at step {stop}: reward tracks 'word:thanks'"
    assert len(trackio["alerts"]) == len(ours["alarms"])
    ((title, text),) = [(t, x) for t, x in trackio["alerts"] if t == "reward monitor: feature alarm"]
    assert text.startswith(feature)
    wandb = result["wandb"]
    assert wandb["offline"] and {"train/loss", "train/reward"} <= set(wandb["summary_keys"])
    alerts = [record.alert for record in wandb_records(Path(wandb["run_file"]))
              if record.WhichOneof("record_type") == "alert"]  # the offline run file `wandb sync` would send
    assert len(alerts) == len(ours["alarms"])
    ((title, text, level),) = [(alert.title, alert.text, alert.level) for alert in alerts
                               if alert.title == "reward monitor: feature alarm"]
    assert level == "WARN" and text.startswith(feature)


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
