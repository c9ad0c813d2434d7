"""The reward monitor on tool-calling GRPO (trl 1.16 tools= and environment_factory=) on the tiny model warmed up to
call the refund desk's tools: the holdout samples as training does, and what goes wrong there is a warning."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.demos.refund_desk import (
    TOOLS,
    RefundDesk,
    correct_refund,
    make_tasks,
    refund_called,
)
from whileai_train.runs.store import LocalStore, default_store_path

# the first test here may build the session's warmed-up desk model (conftest.desk_dir, ~100 CPU seconds): a
# generous deadline for a loaded machine
pytestmark = [pytest.mark.trainer, pytest.mark.timeout(1800),
              pytest.mark.usefixtures("one_thread", "trl_experimental_silenced")]

ROOT = Path(__file__).resolve().parents[2]


def _grpo(desk_dir: Path, out: Path, monitor: Any, proxy: Any, *, steps: int = 2, attach: bool = True,
          **kwargs: Any) -> Any:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    config = GRPOConfig(output_dir=str(out), max_steps=steps, learning_rate=1e-3, per_device_train_batch_size=8,
                        num_generations=4, max_completion_length=128, max_tool_calling_iterations=2,
                        logging_steps=1, report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True,
                        seed=0)
    trainer = GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(desk_dir), reward_funcs=[monitor.wrap(proxy)],
                          args=config, train_dataset=Dataset.from_list(kwargs.pop("train", make_tasks(16, 0))),
                          processing_class=AutoTokenizer.from_pretrained(desk_dir), callbacks=[monitor], **kwargs)
    trainer.remove_callback(PrinterCallback)
    if attach:
        wai.track(trainer).train()
    else:
        trainer.train()
    return trainer


class Recorder:
    """A gold scorer that keeps what it was handed (and scores the refund decision)."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.__name__ = "gold"

    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float]:
        seen = {"completions": completions, **kwargs}
        if "environments" in kwargs:  # environments are reset for the next eval: keep what they held now
            seen["refunded"] = [list(e.refunded) for e in kwargs["environments"]]
            seen["orders"] = [e.order_id for e in kwargs["environments"]]
        self.calls.append(seen)
        return correct_refund(completions, **kwargs)


def test_with_tools_the_holdout_sees_the_tools_the_loop_and_the_parsing_of_training(desk_dir: Path,
                                                                                    tmp_path: Path) -> None:
    gold = Recorder()
    monitor = wai.monitor(holdout=make_tasks(24, 1)[16:], gold=gold, every=1, n_prompts=8, k=2, verbose=False)
    trainer = _grpo(desk_dir, tmp_path, monitor, refund_called, tools=TOOLS, steps=2)
    assert [len(c["completions"]) for c in gold.calls] == [16, 16, 16]
    messages = [m for call in gold.calls for completion in call["completions"] for m in completion]
    calls = [c["function"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
    results = [m for m in messages if m["role"] == "tool"]
    assert "lookup_order" in {c["name"] for c in calls} and results
    for result in results:  # a misspelt tool name is TRL's failed call, "Tool ... not found."
        if result["name"] == "lookup_order":
            assert result["content"] in ("paid", "shipped", "error: no such order")
        elif result["name"] != "issue_refund":
            assert result["content"] == str({"error": f"Tool {result['name']} not found."})
    summary = monitor.summary()
    assert summary.settings["holdout_sampler"] == "trainer"
    failed_calls = [w for w in summary.warnings if w.startswith("holdout tool calls failed")]
    assert [w for w in summary.warnings if w not in failed_calls] == [
        "drift: GRPOConfig.beta is 0, so TRL logs no KL and drift cannot be read. Fix: GRPOConfig(beta=0.04) to watch "
        "drift."]
    # a failed holdout call (a misspelt tool, issue_refund on a shipped order) is one warning, only when there was one
    failed = sum(p.tool_failures or 0 for p in summary.curve)
    assert len(failed_calls) == (1 if failed else 0), (failed, summary.warnings)
    holdout_rate = sum(p.tool_calls or 0 for p in summary.curve) / sum(p.n_completions for p in summary.curve)
    training = [h["tools/call_frequency"] for h in trainer.state.log_history if "tools/call_frequency" in h]
    training_rate = sum(training) / len(training)
    # calls per completion are 0, 1 or 2 (sd <= 1): three standard errors of the two means apart at most
    assert abs(holdout_rate - training_rate) < 3 * math.sqrt(1 / 48 + 1 / 16)
    assert holdout_rate > 0.5 and all(p.tool_completions for p in summary.curve)
    assert monitor.run is not None
    record = LocalStore(default_store_path()).get_run(monitor.run.id, last_points=10_000)
    assert record is not None
    names = {k for point in record["points"] for k in (point.get("metrics") or point)}
    assert {"tools/call_frequency", "tools/holdout_call_frequency", "tools/holdout_failure_frequency",
            "holdout/share"} <= names, names
    assert "tool calls on the holdout:" in str(summary) and "completions called a tool" in str(summary)
    # the same rates in the trainer's own logs (every report_to tracker), as calls per completion and failed calls
    logged = [(h["step"], h["monitor/tool_call_frequency"]) for h in trainer.state.log_history
              if "monitor/tool_call_frequency" in h]
    assert logged == [(p.step, (p.tool_calls or 0) / p.n_completions) for p in summary.curve]


def test_not_attached_the_holdout_samples_without_tools_and_says_so(desk_dir: Path, tmp_path: Path) -> None:
    monitor = wai.monitor(holdout=make_tasks(24, 1)[16:], gold=correct_refund, every=1, n_prompts=8, k=2,
                          verbose=False)
    _grpo(desk_dir, tmp_path, monitor, refund_called, tools=TOOLS, steps=1, attach=False)
    summary = monitor.summary()
    assert summary.settings["holdout_sampler"] == "generate"
    assert all(p.tool_calls is None for p in summary.curve)
    assert any("training calls tools but the monitor is not attached" in w for w in summary.warnings)


def test_with_environment_factory_gold_receives_the_holdouts_own_environments(desk_dir: Path, tmp_path: Path) -> None:
    gold = Recorder()
    monitor = wai.monitor(holdout=make_tasks(24, 1)[16:], gold=gold, every=2, n_prompts=8, k=2, verbose=False)
    trainer = _grpo(desk_dir, tmp_path, monitor, refund_called, environment_factory=RefundDesk, steps=2)
    training_pool = {id(e) for e in trainer._environment_pool[None]}
    assert len(gold.calls) == 2
    for call in gold.calls:
        environments = call["environments"]
        assert len(environments) == len(call["completions"]) == 16
        assert all(isinstance(e, RefundDesk) for e in environments) and not {id(e) for e in environments} & training_pool
        assert call["orders"] == call["order_id"]  # each reset with its own row
        for refunded, completion in zip(call["refunded"], call["completions"], strict=True):
            refunds = [m for m in completion if m["role"] == "tool" and m["name"] == "issue_refund"
                       and not m["content"].startswith("{'error'")]
            assert len(refunded) == len(refunds)  # the tools that ran were this environment's methods
    assert any(m["role"] == "tool" for call in gold.calls for c in call["completions"] for m in c)


def test_a_holdout_environment_that_cannot_be_reset_and_a_raising_tool_are_warnings_not_exceptions(
        desk_dir: Path, tmp_path: Path) -> None:
    class Closing(RefundDesk):
        def reset(self, **row: Any) -> str | None:
            if row.get("closed"):
                raise ConnectionError("the desk for this order is closed")
            return super().reset(**row)

    holdout = make_tasks(24, 1)[16:]
    for row in holdout[:3]:
        row["closed"] = True
    for row in holdout[3:]:
        row["closed"] = False
    train = make_tasks(16, 0)
    for row in train:
        row["closed"] = False
    gold = Recorder()
    monitor = wai.monitor(holdout=holdout, gold=gold, every=1, n_prompts=8, k=2, verbose=False)
    trainer = _grpo(desk_dir, tmp_path, monitor, refund_called, environment_factory=Closing, train=train, steps=1)
    assert trainer.state.global_step == 1 and monitor.run is not None and monitor.run.status == "done"
    summary = monitor.summary()
    closed = [w for w in summary.warnings if "the desk for this order is closed" in w]
    assert closed == ["holdout environment: environment reset raised ConnectionError: the desk for this order is "
                      "closed; those completions are left out of proxy and gold"]
    assert all(len(c["completions"]) == 10 for c in gold.calls)  # 5 open holdout rows x k=2 scored
    assert [p.n_completions for p in summary.curve] == [10, 10]
    failed = sum(p.tool_failures or 0 for p in summary.curve)
    if failed:  # issue_refund raises on a shipped order: a failed call in the trajectory, and one warning
        assert any(w.startswith("holdout tool calls failed") for w in summary.warnings)


@pytest.mark.parametrize("clean", [False, True], ids=["planted-hack", "honest"])
def test_recipe_grpo_tools_names_the_tool_hack_and_the_honest_twin_stays_quiet(desk_dir: Path, clean: bool) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "recipes/04-train/grpo-tools/run.py"), "--model", str(desk_dir),
                           *(["--clean"] if clean else [])], capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    if clean:  # no reward-hack alarm (no_signal may say the short honest run's groups all pass or all fail)
        assert "REWARD HACKING SUSPECTED" not in done.stdout and "REWARD MONITOR ALARM [feature]" not in done.stdout
        assert ": done;" in done.stdout
    else:
        assert "REWARD HACKING SUSPECTED" in done.stdout and ": stopped;" in done.stdout
        alarm_lines = [line.strip() for line in done.stdout.split("\nalarms:\n", 1)[1].splitlines()
                       if line.startswith("  [")]  # the report's alarm lines
        named = [line for line in alarm_lines if line.startswith(("[divergence]", "[feature]"))]
        assert any("tracks 'tool:issue_refund'" in line for line in named), alarm_lines
    assert "tool calls on the holdout:" in done.stdout
