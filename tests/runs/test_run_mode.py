"""WHILEAI_MODE: disabled opens no store and writes no file while every call works; offline keeps the local store
even when a platform key is set (no request reaches the platform); a wrong value is a ConfigError with the fix."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.http_server import FaultyServer
from whileai_train.errors import ConfigError
from whileai_train.runs.store import LocalStore


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def test_disabled_records_nothing_writes_nothing_and_every_call_is_a_no_op(monkeypatch: pytest.MonkeyPatch,
                                                                           tmp_path: Path) -> None:
    import whileai_train as wai

    with contextlib.closing(FaultyServer(tmp_path / "platform.db")) as server:
        monkeypatch.setenv("WHILEAI_MODE", "disabled")
        monkeypatch.setenv("WHILEAI_API_KEY", server.api_key)
        monkeypatch.setenv("WHILEAI_API_URL", server.url)
        home = Path(os.environ["WHILEAI_HOME"])
        with wai.run(name="off", total_steps=3) as run:
            for step in range(1, 4):
                run.log(step, loss=1.0 / step)
            run.note("a note")
            run.progress(3, 3)
            assert run.flush(1.0) == 0
        assert isinstance(run, wai.Run) and run.sink == "disabled" and run.id is None
        assert run.logged == 0 and run.where == "nowhere (WHILEAI_MODE=disabled)"
        assert str(run) == "run off: not recorded here (WHILEAI_MODE=disabled)"
        run.finish("done")  # finishing twice is still nothing
        assert server.requests == []  # the key was set, and nothing reached the platform
    assert _files(home) == []


@pytest.mark.trainer
def test_disabled_callback_and_monitor_train_as_usual_and_leave_no_file(tiny_model: Any, tiny_tokenizer: Any,
                                                                        tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    import whileai_train as wai
    from whileai_train.demos.grpo_monitor import exact_answer, keyword_reward, make_tasks

    monkeypatch.setenv("WHILEAI_MODE", "disabled")
    home = Path(os.environ["WHILEAI_HOME"])
    tasks = make_tasks(16, seed=0)
    monitor = wai.monitor(holdout=tasks[8:], gold=exact_answer, every=2, n_prompts=8, k=2, verbose=False)
    config = GRPOConfig(output_dir=str(tmp_path / "grpo"), max_steps=2, learning_rate=1e-4,
                        per_device_train_batch_size=4, num_generations=2, max_completion_length=4, logging_steps=1,
                        use_cpu=True, save_strategy="no", disable_tqdm=True, seed=0, report_to="none")
    trainer = GRPOTrainer(model=tiny_model, reward_funcs=[monitor.wrap(keyword_reward)], args=config,
                          train_dataset=Dataset.from_list(tasks[:8]), processing_class=tiny_tokenizer,
                          callbacks=[monitor])
    with wai.track(trainer) as tracked:
        trainer.train()
    assert tracked.run is not None and tracked.run.sink == "disabled" and tracked.run.status == "disabled"
    summary = monitor.summary()
    assert [p.step for p in summary.curve] == [0, 2] and summary.run_id is None
    assert [e["step"] for e in trainer.state.log_history if "monitor/proxy_reward" in e] == [0, 2]
    assert _files(home) == []


def test_offline_keeps_the_local_store_with_a_key_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import whileai_train as wai

    with contextlib.closing(FaultyServer(tmp_path / "platform.db")) as server:
        monkeypatch.setenv("WHILEAI_MODE", "offline")
        monkeypatch.setenv("WHILEAI_API_KEY", server.api_key)
        monkeypatch.setenv("WHILEAI_API_URL", server.url)
        with wai.run(name="plane", total_steps=2) as run:
            run.log(1, loss=0.5)
            run.log(2, loss=0.25)
        assert run.sink == "local" and run.status == "done"
        assert "(WHILEAI_MODE=offline;" in capsys.readouterr().out
        assert server.requests == []
    assert [p["loss"] for p in LocalStore().points(run.id)] == [0.5, 0.25]
    assert wai.get_run(run.id)["where"] == "local"


@pytest.mark.parametrize("value", ["off", "Disabled ", ""])
def test_mode_values(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    import whileai_train as wai

    monkeypatch.setenv("WHILEAI_MODE", value)
    if value == "off":
        with pytest.raises(ConfigError, match="WHILEAI_MODE='off' is not one of online, offline, disabled. Fix"):
            wai.run(name="x")
        return
    run = wai.run(name="x")
    run.finish("done")
    assert run.sink == ("disabled" if value.strip() else "local")


def test_offline_runs_reach_the_platform_with_sync_later_and_only_once(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    import subprocess
    import sys

    import whileai_train as wai

    with contextlib.closing(FaultyServer(tmp_path / "platform.db")) as server:
        monkeypatch.setenv("WHILEAI_MODE", "offline")
        monkeypatch.setenv("WHILEAI_API_KEY", server.api_key)
        monkeypatch.setenv("WHILEAI_API_URL", server.url)
        with wai.run(name="on-a-plane", total_steps=1200, tags=["away"]) as run:
            for step in range(1, 1201):  # past one batch of 500
                run.log(step, loss=1.0 / step)
            run.note("written offline")
        still_open = wai.run(name="still-open")  # running: left for a later sync
        assert server.requests == []
        monkeypatch.setenv("WHILEAI_MODE", "online")
        done = subprocess.run([sys.executable, "-m", "whileai_train.cli", "sync"], capture_output=True, text=True,
                              timeout=120, check=False, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"{run.id}: 1200 points, its notes and its finish (done) sent to {server.url}" in done.stdout
        there = server.store.get_run(run.id)
        assert there is not None and there["status"] == "done" and there["name"] == "on-a-plane"
        assert [p["step"] for p in server.store.points(run.id)] == list(range(1, 1201))
        assert [n["markdown"] for n in there["notes"]] == ["written offline"]
        assert there["summary"]["tags"] == "away" and there["summary"]["points"] == 1200
        assert server.store.get_run(still_open.id) is None
        sent = len(server.requests)
        again = subprocess.run([sys.executable, "-m", "whileai_train.cli", "sync"], capture_output=True, text=True,
                               timeout=120, check=False, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
        assert again.returncode == 0 and "nothing to sync" in again.stdout
        assert len(server.requests) == sent  # sent once
        still_open.finish("done")
    assert LocalStore().get_run(run.id)["summary"]["synced_to"].startswith(server.url)
