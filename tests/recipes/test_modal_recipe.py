"""recipes/05-modal/grpo: the Modal app is configured as its docstring says (no network), and train() survives a
preemption as one run: killed after a checkpoint, started again on a fresh disk against a real `whileai-train
serve`, it ends as one run, "done", with every point exactly once."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.serve_helpers import ServeProcess
from whileai_train.runs.store import LocalStore

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipes" / "05-modal" / "grpo"
KEY = "serve-key-0123456789"


def _load_app() -> ModuleType:
    spec = importlib.util.spec_from_file_location("modal_grpo_app", RECIPE / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_modal_app_imports_and_its_function_is_configured_as_documented(monkeypatch: pytest.MonkeyPatch) -> None:
    import modal  # the optional extra (pip install "whileai_train[modal]"), in the test extra
    seen: dict[str, Any] = {}
    real = modal.App.function

    def recording(self: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        return real(self, **kwargs)

    monkeypatch.setattr(modal.App, "function", recording)
    app = _load_app()
    assert isinstance(app.grpo, modal.Function) and app.app.name == "whileai-grpo"
    assert seen["gpu"] == app.GPU == "A10G"
    assert [secret.name for secret in seen["secrets"]] == ["whileai"]  # the platform key, never in the image
    (mount, volume), = seen["volumes"].items()
    assert mount == "/checkpoints" and volume.name == "whileai-grpo-checkpoints"
    assert isinstance(seen["retries"], modal.Retries) and seen["retries"].max_retries == 3
    assert seen["timeout"] == 6 * 60 * 60
    for documented in ("GPU", "SECRET", "CHECKPOINTS", "RETRIES", "modal secret create whileai"):
        assert documented in (app.__doc__ or "")


def _attempt(out: Path, disk: Path, serve: ServeProcess, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WHILEAI_HOME": str(disk), "WHILEAI_API_URL": serve.url,
           "WHILEAI_API_KEY": KEY, "WHILEAI_FLUSH_INTERVAL_S": "0.2"}
    return subprocess.run([sys.executable, str(ROOT / "tests" / "recipes" / "preempted_train.py"), str(out), *args], env=env,
                          capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.trainer
@pytest.mark.parametrize(("signal_name", "signum", "reason"), [
    ("TERM", signal.SIGTERM, "SIGTERM"),              # Kubernetes, Slurm, cloud spot reclaims
    ("INT", signal.SIGINT, "KeyboardInterrupt"),      # Modal: SIGINT, raised in Python as KeyboardInterrupt
])
def test_a_preempted_attempt_resumes_as_the_same_run_with_every_point_once(
        tmp_path: Path, signal_name: str, signum: int, reason: str) -> None:
    out = tmp_path / "volume" / "grpo"  # the Modal Volume: it survives the container
    with ServeProcess(tmp_path / "server-home", "--api-key", KEY) as serve:
        store = LocalStore(tmp_path / "server-home" / "runs.db")

        first = _attempt(out, tmp_path / "disk-1", serve, "--preempt-at", "6", "--signal", signal_name)
        assert first.returncode == -signum, first.stdout[-3000:] + first.stderr[-3000:]
        assert "checkpoint-4 saved" in first.stdout and "checkpoint-8 saved" not in first.stdout
        (run,) = store.list_runs()
        assert run["status"] == "running"  # interrupted, not "failed": the next attempt continues it
        assert f"run {run['id']} interrupted ({reason}" in first.stdout
        delivered = [p["step"] for p in store.points(run["id"]) if "loss" in p]
        assert delivered == [1, 2, 3, 4, 5, 6]  # sent before the process went, also past the checkpoint

        shutil.rmtree(tmp_path / "disk-1")  # the container's disk (local store, spool) goes with it
        second = _attempt(out, tmp_path / "disk-2", serve)
        assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
        assert "resuming from checkpoint-4" in second.stdout
        assert f"run 'modal-grpo' ({run['id']}) continues {serve.url}" in second.stdout

        (record,) = store.list_runs()
        assert record["id"] == run["id"] and record["status"] == "done" and record["name"] == "modal-grpo"
        assert f"run {run['id']}: done" in second.stdout
        points = store.points(run["id"])
        assert [p["step"] for p in points if "loss" in p] == list(range(1, 13))  # steps 5 and 6 once, not twice
        assert [p["step"] for p in points if "proxy_reward" in p] == [0, 4, 8, 12]  # no second baseline
        assert len({p["seq"] for p in points}) == len(points)
        notes = [n["markdown"] for n in store.get_run(run["id"])["notes"]]
        assert sum("Attempt interrupted" in note for note in notes) == 1
        assert sum(note.startswith("Reward monitor: drift:") for note in notes) == 1  # said once, not per attempt

        third = _attempt(out, tmp_path / "disk-3", serve)  # the finished job run again (a Modal retry, a re-run)
        assert third.returncode == 0, third.stdout[-3000:] + third.stderr[-3000:]
        assert (f"training is done: checkpoint-12 is step 12 of 12; nothing to train (run {run['id']})"
                in third.stdout)
        assert "resuming from" not in third.stdout
        assert store.points(run["id"]) == points and store.list_runs()[0]["status"] == "done"  # nothing trained
