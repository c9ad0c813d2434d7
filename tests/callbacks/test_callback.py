"""WhileCallback on real transformers and TRL trainers (tiny model, CPU), against the local store and a
real HTTP server: every logged point arrives once; status, summary and cost are right."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.http_server import FaultyServer
from whileai_train.runs.config import SenderConfig
from whileai_train.runs.store import LocalStore

pytestmark = pytest.mark.trainer

FAST = SenderConfig(flush_interval_s=0.05, finish_wait_s=10.0, connect_timeout_s=1.0, read_timeout_s=1.0,
                    open_timeout_s=1.0, backoff_base_s=0.05, backoff_max_s=0.2)


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


def test_trainer_to_local_store(tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path) -> None:
    from transformers import Trainer

    import whileai_train as wai

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
    assert str(run).startswith(f"run local-trainer ({run.id}): done at step 3/3, to the local store ")
    assert str(run).endswith(f"; no cost estimate (cpu, {run.seconds:.1f} s)")


def test_sft_trainer_to_http_server(tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    import whileai_train as wai

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
        assert str(run).endswith(f"; about ${summary['cost_usd']:.2f} (A10G, {run.seconds:.1f} s, estimate)")
        assert str(run).startswith(f"run sft-http ({run.id}): done at step 3/3, to the platform ")
        assert not list((Path(tmp_path) / "home" / ".whileai" / "spool").glob("*.jsonl"))
    finally:
        server.close()


def _trainer(tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path, callbacks: list[Any], **args: Any) -> Any:
    from transformers import Trainer

    extra = {k: args.pop(k) for k in ("compute_loss_func",) if k in args}
    return Trainer(model=tiny_model, args=trainer_args(tmp_path, **args), train_dataset=lm_dataset(tiny_tokenizer),
                   callbacks=callbacks, **extra)


def test_loss_that_raises_finishes_failed(tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path) -> None:
    import whileai_train as wai

    calls = {"n": 0}

    def exploding_loss(outputs: Any, labels: Any, num_items_in_batch: Any = None) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("loss exploded at the second batch")
        return outputs.logits.float().mean() * 0 + outputs.logits.float().pow(2).mean()

    cb = wai.WhileCallback(name="crash", config=FAST)
    trainer = _trainer(tiny_model, tiny_tokenizer, tmp_path, [cb], compute_loss_func=exploding_loss)
    with pytest.raises(RuntimeError, match="loss exploded"):  # the error still reaches the user
        with wai.track(trainer):
            trainer.train()
    record = LocalStore().get_run(cb.run.id)
    assert record["status"] == "failed"
    assert record["error"] == "RuntimeError: loss exploded at the second batch"
    assert cb.run.status == "failed"


class StopAt:
    """A callback that stops training at a step, the way EarlyStoppingCallback does."""

    def __new__(cls, step: int) -> Any:
        from transformers import TrainerCallback

        class _Stop(TrainerCallback):
            def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                if state.global_step == step:
                    control.should_training_stop = True

        return _Stop()


@pytest.mark.parametrize("stopper_first", [True, False])
def test_stopped_by_another_callback_in_any_order(tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path,
                                                  stopper_first: bool) -> None:
    import whileai_train as wai

    cb = wai.WhileCallback(name="stopped", config=FAST)
    callbacks = [StopAt(2), cb] if stopper_first else [cb, StopAt(2)]
    trainer = _trainer(tiny_model, tiny_tokenizer, tmp_path, callbacks, max_steps=5)
    trainer.train()
    record = LocalStore().get_run(cb.run.id)
    assert record["status"] == "stopped"
    assert record["summary"]["stop_reason"].startswith("training stopped at step 2 of 5")
    assert record["points_count"] == 2


def test_subclass_stop_records_reason(tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path) -> None:
    import whileai_train as wai

    class Monitor(wai.WhileCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            super().on_log(args, state, control, logs=logs, **kwargs)
            if state.global_step == 3:  # the last step: stopping exactly there must still say "stopped"
                self.stop("reward hacking alarm: length up 3x", control)

    cb = Monitor(name="monitor", config=FAST)
    trainer = _trainer(tiny_model, tiny_tokenizer, tmp_path, [cb], max_steps=3)
    trainer.train()
    record = LocalStore().get_run(cb.run.id)
    assert record["status"] == "stopped"
    assert record["summary"]["stop_reason"] == "reward hacking alarm: length up 3x"
    assert record["notes"][0]["markdown"] == "Training stopped: reward hacking alarm: length up 3x"


def test_checkpoint_resume_continues_the_same_run(tiny_model: Any, tiny_tokenizer: Any, tiny_dir: Path,
                                                  tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM, TrainerCallback

    import whileai_train as wai

    class CrashAt3(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if state.global_step == 3:
                raise KeyboardInterrupt("preempted")

    cb = wai.WhileCallback(name="resumed", config=FAST)
    first = _trainer(tiny_model, tiny_tokenizer, tmp_path, [cb, CrashAt3()], max_steps=4, save_strategy="steps",
                     save_steps=2)
    with pytest.raises(KeyboardInterrupt), wai.track(first):
        first.train()
    run_id = cb.run.id
    assert LocalStore().get_run(run_id)["status"] == "failed"

    cb2 = wai.WhileCallback(name="ignored-on-resume", config=FAST)
    second = _trainer(AutoModelForCausalLM.from_pretrained(tiny_dir), tiny_tokenizer, tmp_path, [cb2],
                      max_steps=4, save_strategy="steps", save_steps=2)
    second.train(resume_from_checkpoint=str(tmp_path / "out" / "checkpoint-2"))
    assert cb2.run.id == run_id
    assert len(LocalStore().list_runs()) == 1
    record = LocalStore().get_run(run_id)
    assert record["status"] == "done" and record["name"] == "resumed" and record["step"] == 4
    points = LocalStore().points(run_id)
    assert [p["step"] for p in points] == [1, 2, 3, 4]  # the crash came before step 3 was logged
    assert len({p["seq"] for p in points}) == 4


def test_every_numeric_trl_key_is_kept_with_readable_names() -> None:
    """The keys GRPOTrainer 1.16 logs (docs/trl_facts.md) and eval_* keys reach the run; the end totals go to
    the summary."""
    from transformers import TrainerControl, TrainerState, TrainingArguments

    import whileai_train as wai
    from whileai_train.runs.sinks import MemorySink

    sink = MemorySink()
    cb = wai.WhileCallback(run=wai.run(name="grpo-keys", sink=sink, config=FAST))
    logs = {"loss": 0.1, "grad_norm": 1.5, "learning_rate": 1e-6, "num_tokens": 1234.0,
            "completions/mean_length": 40.0, "completions/min_length": 10.0, "completions/max_length": 90.0,
            "completions/mean_terminated_length": 38.0, "completions/clipped_ratio": 0.1,
            "rewards/exact_match/mean": 0.4, "rewards/exact_match/std": 0.2, "reward": 0.4, "reward_std": 0.2,
            "frac_reward_zero_std": 0.25, "entropy": 1.2, "step_time": 0.8, "epoch": 0.5, "kl": 0.01,
            "clip_ratio/low_mean": 0.0, "clip_ratio/high_mean": 0.0, "clip_ratio/region_mean": 0.0,
            "clip_ratio/low_min": 0.0, "clip_ratio/high_max": 0.0}
    state, control = TrainerState(), TrainerControl()
    state.global_step, state.max_steps = 7, 10
    args = TrainingArguments(output_dir="unused", report_to="none", use_cpu=True)
    cb.on_log(args, state, control, logs=dict(logs))
    cb.on_log(args, state, control, logs={"eval_loss": 0.3, "eval_runtime": 0.1, "epoch": 0.5})
    cb.on_log(args, state, control, logs={"train_runtime": 12.5, "train_loss": 0.2, "total_flos": 10.0,
                                          "epoch": 1.0})
    cb.on_train_end(args, state, control)
    first, second = (sink.points[cb.run.id][s] for s in (0, 1))
    expected = {("lr" if k == "learning_rate" else k) for k in logs}
    assert expected | {"step", "ts", "seq"} == set(first)
    assert first["lr"] == 1e-6 and first["step"] == 7 and second["eval_loss"] == 0.3
    assert len(sink.points[cb.run.id]) == 2
    summary = sink.runs[cb.run.id]["summary"]
    assert summary["train_runtime"] == 12.5 and summary["train_loss"] == 0.2
    assert sink.runs[cb.run.id]["status"] == "stopped"  # 7 of 10 steps: ended early
    assert summary["stop_reason"].startswith("training stopped at step 7 of 10")


def test_a_crash_without_track_is_finished_failed_at_exit(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    script = tmp_path / "crash.py"
    script.write_text("import whileai_train as wai\nrun = wai.run(name='no-track')\nrun.log(1, loss=1.0)\n"
                      "raise RuntimeError('reward function exploded')\n")
    done = subprocess.run([sys.executable, str(script)], env=dict(os.environ), capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 1 and "reward function exploded" in done.stderr
    (record,) = LocalStore().list_runs()
    full = LocalStore().get_run(record["id"])
    assert full["status"] == "failed" and full["error"] == "RuntimeError: reward function exploded"
    assert full["points_count"] == 1


def test_a_configuration_mistake_raises_at_train_begin_by_its_class(tmp_path: Path) -> None:
    """A bad key is a mistake in code: the callback raises it (a RunError, matched by class, subclasses too)
    instead of warning and training without a run."""
    from transformers import TrainerControl, TrainerState

    import whileai_train as wai

    callback = wai.WhileCallback(name="bad-key", api_key="sk bad\nkey")
    with pytest.raises(wai.RunError) as info:
        callback.on_train_begin(trainer_args(tmp_path), TrainerState(), TrainerControl())
    assert "sk bad" not in str(info.value) and callback.run is None
