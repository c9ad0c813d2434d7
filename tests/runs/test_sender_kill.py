"""A training process SIGKILLed mid-run loses at most the last flush interval; `whileai-train sync`
sends the rest and finishes the run "failed" with a line saying the process ended without finishing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.http_server import FaultyServer

pytestmark = pytest.mark.trainer

CHILD = textwrap.dedent(
    """
    import sys, time
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainerCallback, TrainingArguments
    import whileai_train as wai

    tiny, out = sys.argv[1], sys.argv[2]
    tok = AutoTokenizer.from_pretrained(tiny)
    ids = [tok(f"order {i} refund status is done").input_ids[:8] for i in range(8)]
    width = min(len(x) for x in ids)
    ids = [x[:width] for x in ids]

    class Block(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kw):
            if state.global_step == 3:
                time.sleep(0.5)  # > the flush interval: what was logged is on disk now
                print("LOGGED", cb.run.logged, flush=True)
                time.sleep(120)  # killed here

    cb = wai.WhileCallback(name="killed")
    args = TrainingArguments(output_dir=out, max_steps=6, per_device_train_batch_size=2, logging_steps=1,
                             report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True)
    Trainer(model=AutoModelForCausalLM.from_pretrained(tiny), args=args,
            train_dataset=Dataset.from_dict({"input_ids": ids, "labels": ids}), callbacks=[cb, Block()]).train()
    """
)


def wait_logged(child: subprocess.Popen[str]) -> int | None:
    """The child's count of logged points, printed once they are flushed (then it sleeps, to be killed)."""
    assert child.stdout is not None
    for line in child.stdout:
        if line.startswith("LOGGED"):
            return int(line.split()[1])
    return None


def test_sigkill_mid_run_then_sync(tmp_path: Path, tiny_dir: Path, isolated_home: Path) -> None:
    server = FaultyServer(tmp_path / "server.db")
    try:
        server.set("error500")  # nothing lands while the process lives
        script = tmp_path / "child.py"
        script.write_text(CHILD)
        env = {**os.environ, "WHILEAI_API_KEY": server.api_key, "WHILEAI_API_URL": server.url,
               "WHILEAI_FLUSH_INTERVAL_S": "0.05", "WHILEAI_CONNECT_TIMEOUT_S": "1.0",
               "WHILEAI_READ_TIMEOUT_S": "1.0", "WHILEAI_OPEN_TIMEOUT_S": "1.0", "WHILEAI_BACKOFF_MAX_S": "0.2",
               "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        with subprocess.Popen([sys.executable, str(script), str(tiny_dir), str(tmp_path / "out")], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as child:
            try:
                assert wait_logged(child) == 3
            finally:
                child.send_signal(signal.SIGKILL)
                child.wait(timeout=30)
        spool = list((isolated_home / ".whileai" / "spool").glob("*.jsonl"))
        assert len(spool) == 1
        server.set("ok")
        done = subprocess.run([sys.executable, "-m", "whileai_train.cli", "sync"], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        assert server.api_key not in done.stdout + done.stderr
        runs = server.runs()
        assert len(runs) == 1
        record = server.run(runs[0]["id"])
        assert [p["seq"] for p in server.points(runs[0]["id"])] == [0, 1, 2]
        assert [p["step"] for p in server.points(runs[0]["id"])] == [1, 2, 3]
        assert record["status"] == "failed" and "ended without finishing" in record["error"]
        assert not list((isolated_home / ".whileai" / "spool").glob("*.jsonl"))
    finally:
        server.close()


def test_sigkill_local_store_keeps_what_was_flushed(tmp_path: Path, tiny_dir: Path, isolated_home: Path) -> None:
    from whileai_train.runs.store import LocalStore

    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env: dict[str, Any] = {**os.environ, "WHILEAI_FLUSH_INTERVAL_S": "0.05",
                           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    with subprocess.Popen([sys.executable, str(script), str(tiny_dir), str(tmp_path / "out")], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as child:
        try:
            assert wait_logged(child) == 3
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
    store = LocalStore()
    (run,) = store.list_runs()
    # the process is gone and no handler ran: the next reader finishes the run "failed", saying why
    assert run["status"] == "failed"
    record = store.get_run(run["id"])
    assert f"pid {child.pid}" in record["error"] and "ended without finishing" in record["error"]
    assert [p["step"] for p in store.points(run["id"])] == [1, 2, 3]
