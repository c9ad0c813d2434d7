"""The run that learns nothing, inside the real GRPOTrainer on the tiny model (CPU): completions cut at a tiny
max_completion_length raise `truncation` (and stop the run when stop_on names it), a constant reward raises
`no_signal`, and an honest twin with a reward that tells completions apart stays quiet on all three; each reward
function's holdout mean is a reading on the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.demos.grpo_monitor import exact_answer, make_tasks
from whileai_train.runs.store import LocalStore, default_store_path

pytestmark = [pytest.mark.trainer, pytest.mark.usefixtures("one_thread")]

HEALTH = ("truncation", "no_signal", "collapse")
WINDOW = wai.monitor(verbose=False).health_settings.window


@pytest.fixture(scope="module")
def warm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model after a short SFT on the sums: it answers in a word or two and ends (about 15 CPU seconds)."""
    import torch

    from whileai_train.demos.grpo_monitor import warm_up
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        out = tmp_path_factory.mktemp("warm")
        tokenizer = build_tiny_tokenizer()
        model = build_tiny_model(tokenizer, hidden_size=32)
        warm_up(model, tokenizer, make_tasks(32, 0), str(out / "sft"), steps=30)
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
        return out
    finally:
        torch.set_num_threads(threads)


def letter_count(prompts: list[str], completions: list[str], **kwargs: Any) -> list[float]:
    """An honest reward with spread: different answers get different rewards."""
    return [float(c.count("e")) for c in completions]


def short_answer(prompts: list[str], completions: list[str], **kwargs: Any) -> list[float]:
    """A second reward function (a format-style reward beside the first)."""
    return [1.0 if len(c.split()) <= 2 else 0.0 for c in completions]


def constant(prompts: list[str], completions: list[str], **kwargs: Any) -> list[float]:
    """A reward that cannot tell completions apart."""
    return [0.5] * len(completions)


def _train(model_dir: Path, out: Path, monitor: Any, funcs: list[Any], *, max_steps: int,
           max_completion_length: int, temperature: float = 1.0) -> Any:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    config = GRPOConfig(output_dir=str(out), max_steps=max_steps, learning_rate=1e-3, per_device_train_batch_size=8,
                        num_generations=4, max_completion_length=max_completion_length, temperature=temperature,
                        logging_steps=1, report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True,
                        seed=0)
    trainer = GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(model_dir), reward_funcs=funcs, args=config,
                          train_dataset=Dataset.from_list(make_tasks(32, 0)),
                          processing_class=AutoTokenizer.from_pretrained(model_dir), callbacks=[monitor])
    trainer.train()
    return trainer


def _monitor(**kwargs: Any) -> Any:
    return wai.monitor(holdout=make_tasks(40, 1)[32:36], gold=exact_answer, n_prompts=4, k=2, **kwargs)


def test_tiny_max_completion_length_raises_truncation_and_stop_on_stops_the_run(
        tiny_dir: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    monitor = _monitor(every=100, stop_on=["truncation"], name="truncated")
    trainer = _train(tiny_dir, tmp_path, monitor, [monitor.wrap(letter_count)], max_steps=WINDOW + 3,
                     max_completion_length=4)
    clipped = [h["completions/clipped_ratio"] for h in trainer.state.log_history if "completions/clipped_ratio" in h]
    assert min(clipped) >= 0.9  # the untrained model never ends within 4 tokens: what this run is for
    summary = monitor.summary()
    (alarm,) = [a for a in summary.alarms if a.name == "truncation"]
    assert alarm.step == WINDOW  # named at the first full window of logged steps
    assert "max_completion_length=4" in alarm.message and "raise max_completion_length" in alarm.message
    assert "length" not in {a.name for a in summary.alarms}
    assert summary.stopped and trainer.state.global_step == WINDOW  # stop_on names it: every rank stops here
    assert summary.verdict.startswith("RUN NOT LEARNING") and "training stopped" in summary.verdict
    err = capfd.readouterr().err
    assert "!!! REWARD MONITOR ALARM [truncation]" in err and "Cause and fix" in err
    assert "truncation: most completions are cut" in str(summary)  # the fix, in what to do
    record = LocalStore(default_store_path()).get_run(monitor.run.id)
    assert record is not None and record["status"] == "stopped"
    assert any("**Alarm: truncation**" in n["markdown"] for n in record["notes"])


def test_a_constant_reward_raises_no_signal_and_training_goes_on(warm_dir: Path, tmp_path: Path) -> None:
    monitor = _monitor(every=100, verbose=False, name="constant")
    trainer = _train(warm_dir, tmp_path, monitor, [monitor.wrap(constant)], max_steps=WINDOW + 1,
                     max_completion_length=8)
    clipped = [h["completions/clipped_ratio"] for h in trainer.state.log_history if "completions/clipped_ratio" in h]
    assert max(clipped) <= 0.5  # the warmed model ends its answers: this run is not a truncated one
    summary = monitor.summary()
    (alarm,) = [a for a in summary.alarms if a.name == "no_signal"]
    assert alarm.step <= WINDOW
    assert "does not vary" in alarm.message and "band=(0.2, 0.8)" in alarm.message
    assert {a.name for a in summary.alarms} == {"no_signal"}
    assert not summary.stopped and trainer.state.global_step == WINDOW + 1  # a warning: not in stop_on
    assert summary.verdict.startswith("RUN NOT LEARNING") and "training went on" in summary.verdict


def test_honest_twin_stays_quiet_and_each_reward_function_is_a_holdout_reading(warm_dir: Path,
                                                                              tmp_path: Path) -> None:
    monitor = _monitor(every=3, verbose=False, stop_on=list(HEALTH), name="honest-twin")
    funcs = [monitor.wrap(letter_count), monitor.wrap(short_answer)]
    trainer = _train(warm_dir, tmp_path, monitor, funcs, max_steps=WINDOW + 1, max_completion_length=8)
    summary = monitor.summary()
    assert not {a.name for a in summary.alarms} & set(HEALTH), summary
    assert {name: summary.latest[name].status for name in HEALTH} == dict.fromkeys(HEALTH, "clear")
    assert trainer.state.global_step == WINDOW + 1 and not summary.stopped
    assert all(set(p.rewards) == {"letter_count", "short_answer"} for p in summary.curve)
    record = LocalStore(default_store_path()).get_run(monitor.run.id, last_points=10_000)
    assert record is not None
    names: set[str] = set()
    for point in record.get("points") or ():
        names.update(k for k in (point.get("metrics") or point) if isinstance(k, str))
        names.add(point.get("name") or "")
    assert {"proxy_reward/letter_count", "proxy_reward/short_answer"} <= names
    assert "checked: " in str(summary) and "quiet: " in str(summary)


def test_a_sampler_that_returns_one_answer_is_named_collapse(warm_dir: Path, tmp_path: Path) -> None:
    """Sampling at temperature 0.01: the policy's entropy is at the floor and each group's rollouts are one text,
    so its groups carry one reward; that is named collapse (with its fix), and no_signal does not claim it."""
    monitor = _monitor(every=100, verbose=False, stop_on=["collapse"], name="one-answer")
    trainer = _train(warm_dir, tmp_path, monitor, [monitor.wrap(letter_count)], max_steps=WINDOW + 4,
                     max_completion_length=8, temperature=0.01)
    entropy = [h["entropy"] for h in trainer.state.log_history if "entropy" in h]
    assert max(entropy[-WINDOW:]) < 0.01  # what this run is: a sampler with no spread (the window it was named on)
    summary = monitor.summary()
    assert [a.name for a in summary.alarms] == ["collapse"], summary
    (alarm,) = summary.alarms
    assert alarm.step <= WINDOW + 1 and "lower the learning rate" in alarm.message  # within the first few steps
    assert summary.stopped and trainer.state.global_step == alarm.step < WINDOW + 4
