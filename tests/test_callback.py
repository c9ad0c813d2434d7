"""WhileCallback on real transformers and TRL trainers (tiny model, CPU), against the local store and a
real HTTP server: every logged point arrives once; status, summary and cost are right."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.http_server import FaultyServer
from whileai_train.runs.config import SenderConfig
from whileai_train.runs.store import LocalStore

pytestmark = pytest.mark.trainer

FAST = SenderConfig(flush_interval_s=0.05, finish_wait_s=5.0, connect_timeout_s=0.5, read_timeout_s=0.5,
                    open_timeout_s=0.5, backoff_base_s=0.05, backoff_max_s=0.2)


def lm_dataset(tokenizer: Any, n: int = 8) -> Any:
    from datasets import Dataset

    ids = [tokenizer(f"order {i} refund status is done please check").input_ids[:12] for i in range(n)]
    width = min(len(x) for x in ids)
    ids = [x[:width] for x in ids]
    return Dataset.from_dict({"input_ids": ids, "labels": ids})


def trainer_args(tmp_path: Path, **overrides: Any) -> Any:
    from transformers import TrainingArguments

    kw: dict[str, Any] = dict(output_dir=str(tmp_path / "out"), max_steps=3, per_device_train_batch_size=2,
                              logging_steps=1, report_to="none", use_cpu=True, save_strategy="no",
                              disable_tqdm=True, learning_rate=1e-3)
    kw.update(overrides)
    return TrainingArguments(**kw)


class Recorder:
    """Every point the callback handed to its run, as (seq, step, loss)."""

    def __init__(self, callback: Any) -> None:
        self.callback = callback


def logged_points(run: Any) -> int:
    return int(run.logged)


def test_trainer_to_local_store(tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path) -> None:
    import whileai_train as wai
    from transformers import Trainer

    cb = wai.WhileCallback(name="local-trainer", config=FAST)
    trainer = Trainer(model=tiny_model, args=trainer_args(tmp_path), train_dataset=lm_dataset(tiny_tokenizer),
                      callbacks=[cb])
    with wai.track(trainer):
        trainer.train()
    run = cb.run
    assert run is not None and run.sink == "local" and run.status == "done"
    record = LocalStore().get_run(run.id)
    assert record is not None
    assert record["status"] == "done" and record["total_steps"] == 3 and record["step"] == 3
    points = LocalStore().points(run.id)
    assert [p["step"] for p in points] == [1, 2, 3]
    assert len({p["seq"] for p in points}) == len(points) == run.logged
    history = [h for h in trainer.state.log_history if "loss" in h]
    assert [p["loss"] for p in points] == pytest.approx([h["loss"] for h in history])
    assert all("lr" in p and "grad_norm" in p and "learning_rate" not in p for p in points)
    summary = record["summary"]
    assert summary["gpu"] == "cpu" and summary["gpu_count"] == 0 and summary["cost_usd"] is None
    assert summary["cost_basis"] == "no estimate: no GPU (cpu)"
    assert summary["steps"] == 3 and summary["points"] == 3 and "train_runtime" in summary
    assert str(run).startswith("no cost estimate (cpu, ")


def test_sft_trainer_to_http_server(tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import whileai_train as wai
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    server = FaultyServer(tmp_path / "server.db")
    try:
        monkeypatch.setenv("WHILEAI_API_KEY", server.api_key)
        monkeypatch.setenv("WHILEAI_API_URL", server.url)
        rows = [{"messages": [{"role": "user", "content": f"check order {i}"},
                              {"role": "assistant", "content": "the order is done"}]} for i in range(8)]
        args = SFTConfig(output_dir=str(tmp_path / "out"), max_steps=3, per_device_train_batch_size=2,
                         logging_steps=1, report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True,
                         max_length=32)
        cb = wai.WhileCallback(name="sft-http", config=FAST, gpu="A10G", gpu_count=1)
        trainer = SFTTrainer(model=tiny_model, args=args, train_dataset=Dataset.from_list(rows),
                             processing_class=tiny_tokenizer, callbacks=[cb])
        with wai.track(trainer):
            trainer.train()
        run = cb.run
        assert run is not None and run.sink == "platform"
        record = server.run(run.id)
        assert record["status"] == "done" and record["name"] == "sft-http" and record["total_steps"] == 3
        points = server.points(run.id)
        assert len(points) == run.logged == 3
        assert sorted(p["seq"] for p in points) == list(range(3))
        assert all("num_tokens" in p and "mean_token_accuracy" in p and "cost_usd" in p for p in points)
        summary = record["summary"]
        assert summary["gpu"] == "A10G" and summary["gpu_count"] == 1
        assert summary["cost_basis"] == "estimate: A10G at $1.10/h, modal.com/pricing 2026-09-20"
        assert summary["cost_usd"] == round(summary["seconds"] / 3600 * 1.10, 2)
        assert str(run) == f"about ${summary['cost_usd']:.2f} (A10G, {run.seconds:.0f} s, estimate)"
        assert not list((Path(tmp_path) / "home" / ".whileai" / "spool").glob("*.jsonl"))
    finally:
        server.close()
