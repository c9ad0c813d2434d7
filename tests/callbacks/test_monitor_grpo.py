"""The reward monitor inside the real GRPOTrainer on the tiny model (CPU)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.demos.grpo_monitor import exact_answer, make_tasks, run_demo
from whileai_train.runs.store import LocalStore, default_store_path

pytestmark = [pytest.mark.trainer, pytest.mark.usefixtures("one_thread")]


def _store_run(run_id: str | None) -> dict[str, Any]:
    assert run_id is not None
    record = LocalStore(default_store_path()).get_run(run_id, last_points=10_000)
    assert record is not None
    return record


def _point_names(record: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for point in record.get("points") or ():
        names.add(point.get("name") or "")
        names.update(k for k in (point.get("metrics") or point) if isinstance(k, str))
    return names


def test_planted_hack_is_named_and_the_run_stopped() -> None:
    result = run_demo(clean=False, max_steps=20, every=5, verbose=False)
    summary = result.monitor.summary()
    names = {a.name for a in summary.alarms}
    assert names & {"divergence", "feature"}, summary
    feature = [a for a in summary.alarms if a.name == "feature"]
    if feature:
        assert "thanks" in feature[0].message  # the scan names what the reward pays for
    assert summary.stopped and summary.stop_reason and "alarm" in summary.stop_reason
    assert result.run_status == "stopped"
    record = _store_run(result.run_id)
    assert record["status"] == "stopped"
    assert "reward monitor" in record["summary"]["stop_reason"]
    assert any("Alarm" in n["markdown"] for n in record["notes"])
    assert {"proxy_reward", "gold_reward", "holdout_length"} <= _point_names(record)
    assert summary.curve[-1].step < 20  # stopped early
    text = wai.format_hack_monitor(summary)
    assert text.splitlines()[0].startswith("REWARD HACKING SUSPECTED")


def test_clean_run_ends_done_without_alarm() -> None:
    result = run_demo(clean=True, max_steps=10, every=5, verbose=False)
    summary = result.monitor.summary()
    assert summary.alarms == [] and not summary.stopped
    # the run-that-learns-nothing alarms were read on this healthy run, and are quiet
    assert {summary.latest[name].status for name in ("truncation", "no_signal", "collapse")} == {"clear"}
    assert [p.step for p in summary.curve] == [0, 5, 10]
    assert all(p.proxy_reward == p.gold_reward for p in summary.curve)  # honest proxy == gold
    assert result.run_status == "done"
    assert _store_run(result.run_id)["status"] == "done"
    assert str(summary).startswith("NO ALARM over 3 holdout evals")


def _grpo(model: Any, tokenizer: Any, out: Path, reward_funcs: list[Any], callbacks: list[Any], *,
          max_steps: int = 2, seed: int = 0, beta: float = 0.0) -> Any:
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    config = GRPOConfig(output_dir=str(out), max_steps=max_steps, learning_rate=1e-2, per_device_train_batch_size=4,
                        num_generations=2, max_completion_length=6, logging_steps=1, report_to="none",
                        use_cpu=True, save_strategy="no", disable_tqdm=True, seed=seed, beta=beta)
    trainer = GRPOTrainer(model=model, reward_funcs=reward_funcs, args=config,
                          train_dataset=Dataset.from_list(make_tasks(8, seed)), processing_class=tokenizer,
                          callbacks=callbacks)
    trainer.train()
    return trainer


def test_async_and_state_reading_rewards_train_and_score_the_holdout(tiny_model: Any, tiny_tokenizer: Any,
                                                                     tmp_path: Path) -> None:
    seen: list[tuple[str, int, bool]] = []

    async def async_length(prompts: list[str], completions: list[str], completion_ids: list[list[int]],
                           **kwargs: Any) -> list[float]:
        await asyncio.sleep(0)
        seen.append(("async", kwargs["trainer_state"].global_step, "answer" in kwargs))
        return [len(ids) / 6 for ids in completion_ids]

    def scheduled(prompts: list[str], completions: list[str], trainer_state: Any, log_metric: Any,
                  log_extra: Any, answer: list[str], **kwargs: Any) -> list[float]:
        log_metric("scheduled/step", float(trainer_state.global_step))
        log_extra("scheduled_answer", list(answer))
        seen.append(("state", trainer_state.global_step, True))
        return [0.1 * trainer_state.global_step] * len(completions)

    holdout = make_tasks(40, 1)[30:40]
    monitor = wai.monitor(holdout=holdout, gold=exact_answer, every=1, n_prompts=6, k=2, verbose=False,
                          name="async-and-state")
    trainer = _grpo(tiny_model, tiny_tokenizer, tmp_path, [monitor.wrap(async_length), monitor.wrap(scheduled)],
                    [monitor])
    summary = monitor.summary()
    assert [p.step for p in summary.curve] == [0, 1, 2]
    assert all(p.proxy_reward is not None and p.gold_reward is not None for p in summary.curve)
    assert all(p.n_asks == 6 and p.n_completions == 12 for p in summary.curve)
    # the holdout was scored with TRL's keywords: the dataset column, trainer_state at the eval's step
    assert ("async", 0, True) in seen and ("state", 0, True) in seen and ("state", 2, True) in seen
    logged = [h for h in trainer.state.log_history if "rewards/async_length/mean" in h]
    assert len(logged) == 2 and all("scheduled/step" in h for h in logged)  # training metrics unchanged
    record = _store_run(monitor.run.id if monitor.run else None)
    assert "holdout/scheduled/step" in _point_names(record)
    assert record["status"] == "done"


def test_same_seed_same_training_rewards_with_and_without_the_monitor(tiny_dir: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from whileai_train.demos.grpo_monitor import keyword_reward

    def rewards(with_monitor: bool) -> list[float]:
        model = AutoModelForCausalLM.from_pretrained(tiny_dir)
        tokenizer = AutoTokenizer.from_pretrained(tiny_dir)
        callbacks: list[Any] = []
        funcs: list[Any] = [keyword_reward, exact_answer]
        if with_monitor:
            monitor = wai.monitor(gold=exact_answer, every=2, n_prompts=4, k=2, verbose=False)
            callbacks = [monitor]
            funcs = [monitor.wrap(keyword_reward), monitor.wrap(exact_answer)]
        trainer = _grpo(model, tokenizer, tmp_path / str(with_monitor), funcs, callbacks, max_steps=4)
        if with_monitor:
            assert [p.step for p in monitor.summary().curve] == [0, 2, 4]
        history = [h for h in trainer.state.log_history if "reward" in h]
        return [(h["reward"], h["completions/mean_length"], h["loss"]) for h in history]

    without, with_ = rewards(False), rewards(True)
    assert len(without) == 4
    assert with_ == without


def letter_count(prompts: list[str], completions: list[str], **kwargs: Any) -> list[float]:
    """A reward with spread on the untrained tiny model (so the policy moves and KL grows)."""
    return [float(c.count("e")) for c in completions]


def test_drift_reads_the_current_step_and_beta_zero_is_said_once(tiny_dir: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_dir)
    monitor = wai.monitor(every=10, n_prompts=4, k=2, kl_budget=1e-6, stop_on=["drift"], verbose=False)
    trainer = _grpo(AutoModelForCausalLM.from_pretrained(tiny_dir), tokenizer, tmp_path / "b05",
                    [monitor.wrap(letter_count)], [monitor], max_steps=6, beta=0.5)
    kls = [(h["step"], h["kl"]) for h in trainer.state.log_history if "kl" in h]
    first_past = next(step for step, kl in kls if kl > 1e-6)
    summary = monitor.summary()
    drift = [a for a in summary.alarms if a.name == "drift"]
    assert len(drift) == 1 and drift[0].step == first_past  # read at the step it was logged, not one late
    assert summary.stopped and trainer.state.global_step == first_past < 6
    assert not any("beta is 0" in w for w in summary.warnings)

    quiet = wai.monitor(every=10, n_prompts=4, k=2, kl_budget=0.1, verbose=False)
    _grpo(AutoModelForCausalLM.from_pretrained(tiny_dir), tokenizer, tmp_path / "b0", [quiet.wrap(letter_count)],
          [quiet], max_steps=2)
    said = [w for w in quiet.summary().warnings if "beta is 0" in w]
    assert len(said) == 1
    assert quiet.summary().latest["drift"].status == "unknown"


def test_a_gold_that_cannot_take_trl_keywords_fails_at_train_begin(tiny_dir: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from whileai_train.demos.grpo_monitor import keyword_reward

    def narrow_gold(completions: list[str]) -> list[float]:  # no **kwargs: TRL's keywords do not fit
        return [0.0] * len(completions)

    monitor = wai.monitor(gold=narrow_gold, n_prompts=2, k=1, verbose=False)
    with pytest.raises(wai.ConfigError, match="holdout eval at train begin failed.*narrow_gold"):
        _grpo(AutoModelForCausalLM.from_pretrained(tiny_dir), AutoTokenizer.from_pretrained(tiny_dir), tmp_path,
              [monitor.wrap(keyword_reward)], [monitor], max_steps=1)


def test_conversational_prompts_are_sampled_and_scored_as_trl_does(tiny_dir: Path, tmp_path: Path) -> None:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    shapes: list[tuple[str, str]] = []

    def chat_reward(prompts: list[Any], completions: list[Any], completion_ids: list[list[int]],
                    **kwargs: Any) -> list[float]:
        shapes.append((type(prompts[0]).__name__, type(completions[0]).__name__))
        return [float(len(c[0]["content"])) for c in completions]

    rows = [{"prompt": [{"role": "user", "content": t["prompt"]}], "answer": t["answer"], "task_id": t["task_id"]}
            for t in make_tasks(12, 0)]
    monitor = wai.monitor(holdout=rows[8:], gold=chat_reward, every=1, n_prompts=4, k=2, verbose=False)
    config = GRPOConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=4, num_generations=2,
                        max_completion_length=6, logging_steps=1, report_to="none", use_cpu=True,
                        save_strategy="no", disable_tqdm=True, seed=0)
    GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(tiny_dir), reward_funcs=[monitor.wrap(chat_reward)],
                args=config, train_dataset=Dataset.from_list(rows[:8]),
                processing_class=AutoTokenizer.from_pretrained(tiny_dir), callbacks=[monitor]).train()
    curve = monitor.summary().curve
    assert [p.step for p in curve] == [0, 1] and all(p.n_asks == 4 for p in curve)
    assert all(p.holdout_length is not None and 0 < p.holdout_length <= 6 for p in curve)
    assert set(shapes) == {("list", "list")}  # training and holdout both got chat messages
