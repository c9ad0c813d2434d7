"""The trainer backend (sampling/trainer_path.py): sampling through trl 1.16's GRPOTrainer._generate.

TRL keeps that path private; these tests pin every part the backend uses and fail when TRL changes it: the
call and its return, the eval mode it samples in, the tool dicts and environments it reads, the vLLM branch.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from whileai_train.demos.refund_desk import RefundDesk, make_tasks
from whileai_train.sampling.generate import GenerateSampler
from whileai_train.sampling.rewards import ScoreSink, call_reward
from whileai_train.sampling.samples import settings_from_config
from whileai_train.sampling.trainer_path import TrainerSampler, trainer_path_missing

# the first test here may build the session's warmed-up desk model (conftest.desk_dir, ~100 CPU seconds): a
# generous deadline for a loaded machine
pytestmark = [pytest.mark.trainer, pytest.mark.timeout(1800),
              pytest.mark.usefixtures("one_thread", "trl_experimental_silenced")]


def lookup_order(order_id: str) -> str:
    """Look up an order.

    Args:
        order_id: the order id
    """
    return "paid"  # every order looks refundable: the desk goes on to refund


def issue_refund(order_id: str) -> str:
    """Refund an order.

    Args:
        order_id: the order id
    """
    raise RuntimeError("refunds are paused")


def zero(completions: list[Any], **kwargs: Any) -> list[float]:
    return [0.0] * len(completions)


def _trainer(desk_dir: Path, out: Path, **kwargs: Any) -> Any:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    settings = {"top_k": 1, "max_completion_length": 160, **kwargs.pop("config", {})}
    config = GRPOConfig(output_dir=str(out), max_steps=1, per_device_train_batch_size=4, num_generations=2,
                        report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True, **settings)
    return GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(desk_dir), reward_funcs=[zero], args=config,
                       train_dataset=Dataset.from_list(make_tasks(8, 0)),
                       processing_class=AutoTokenizer.from_pretrained(desk_dir), **kwargs)


def test_trl_keeps_the_parts_the_trainer_path_reads(desk_dir: Path, tmp_path: Path) -> None:
    from trl import GRPOTrainer

    trainer = _trainer(desk_dir, tmp_path, tools=[issue_refund, lookup_order])
    assert trainer_path_missing(trainer) == []
    assert list(inspect.signature(GRPOTrainer._generate).parameters) == ["self", "prompts"]
    loop = inspect.getsource(GRPOTrainer._tool_call_loop)
    assert "self._sync_tool_dicts[" in loop and "self._async_tool_dicts[" in loop
    assert "self._batch_environments" in inspect.getsource(GRPOTrainer._tokenize_prompts)
    assert 'reward_kwargs["environments"] = self.environments' in inspect.getsource(GRPOTrainer._calculate_rewards)
    assert 'mode = "train" if self.model.training else "eval"' in inspect.getsource(GRPOTrainer._generate)


def test_greedy_samples_through_the_trainer_equal_the_generate_backend_and_nothing_is_left_changed(
        desk_dir: Path, tmp_path: Path) -> None:
    import torch

    trainer = _trainer(desk_dir, tmp_path, tools=[issue_refund, lookup_order])
    tasks = make_tasks(6, 0)
    metrics = {k: list(v) for k, v in trainer._metrics["eval"].items()}
    generations, state, seen = trainer.num_generations_eval, torch.get_rng_state(), trainer.state.num_input_tokens_seen
    trainer.model.train()
    through = TrainerSampler(trainer).sample(tasks, 2, seed=0)
    assert {k: list(v) for k, v in trainer._metrics["eval"].items()} == metrics
    assert trainer.num_generations_eval == generations and not hasattr(trainer, "_sync_tool_dicts")
    assert torch.equal(torch.get_rng_state(), state) and trainer.model.training
    assert trainer.state.num_input_tokens_seen == seen
    plain = GenerateSampler(trainer.model, trainer.processing_class, settings_from_config(trainer.args),
                            tools=[issue_refund, lookup_order]).sample(tasks, 2, seed=0)
    for a, b in zip(through.samples, plain.samples, strict=True):
        assert (a.completion, a.completion_ids, a.length, a.finish_reason) == \
               (b.completion, b.completion_ids, b.length, b.finish_reason)
        assert (a.tool_calls, a.tool_failures) == (b.tool_calls, b.tool_failures)
    assert max(s.tool_calls for s in through.samples) >= 2  # the loop went round more than once
    assert 0 < sum(s.tool_failures for s in through.samples) < sum(s.tool_calls for s in through.samples)
    assert {m["content"] for s in through.samples for m in s.completion if m.get("name") == "issue_refund"} == {
        "{'error': 'refunds are paused'}"}


def test_rollout_func_is_called_with_the_prompts_and_its_fields_reach_the_reward(desk_dir: Path,
                                                                                 tmp_path: Path) -> None:
    seen: list[tuple[int, bool]] = []

    def rollout(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        seen.append((len(prompts), trainer.model.training))
        eos = trainer.processing_class.eos_token_id
        ids = trainer.processing_class("refund done")["input_ids"]
        return {"prompt_ids": [[1, 2]] * len(prompts), "completion_ids": [ids + [eos]] * len(prompts),
                "logprobs": [[0.0] * (len(ids) + 1)] * len(prompts), "ticket": [f"T{i}" for i in range(len(prompts))]}

    def reads_ticket(completions: list[Any], ticket: list[str], **kwargs: Any) -> list[float]:
        return [float(t[1:]) for t in ticket]

    trainer = _trainer(desk_dir, tmp_path, rollout_func=rollout)
    trainer.model.train()
    samples = TrainerSampler(trainer).sample(make_tasks(3, 1), 2)
    assert seen == [(6, False)] and trainer.model.training  # sampled in eval mode, train mode back
    assert [s.extra for s in samples.samples] == [{"ticket": f"T{i}"} for i in range(6)]
    assert samples.completions[0] == [{"role": "assistant", "content": "refund done"}]
    assert call_reward(reads_ticket, samples, trainer.state, ScoreSink()) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


class FakeVLLM:
    """Stands in for trl's VLLMGeneration: records the calls, answers "no refund" to every prompt."""

    def __init__(self, tokenizer: Any) -> None:
        self.ids = tokenizer("no refund")["input_ids"] + [tokenizer.eos_token_id]
        self.calls: list[tuple[int, int]] = []
        self.synced = 0

    def sync_weights(self) -> None:
        self.synced += 1

    def generate(self, prompts: list[list[int]], images: Any, num_generations: int, profiler: Any) -> tuple[Any, ...]:
        self.calls.append((len(prompts), num_generations))
        return prompts, [list(self.ids) for _ in prompts], [[[0.0]] * len(self.ids) for _ in prompts], None


def test_with_use_vllm_the_trainer_path_samples_from_the_trainers_engine(desk_dir: Path, tmp_path: Path) -> None:
    trainer = _trainer(desk_dir, tmp_path)
    engine = FakeVLLM(trainer.processing_class)
    trainer.use_vllm, trainer.vllm_mode, trainer.vllm_generation, trainer._last_loaded_step = True, "server", engine, -1
    samples = TrainerSampler(trainer).sample(make_tasks(4, 2), 3)
    assert engine.calls == [(12, 3)]  # one call, prompts in groups of k as the server mode reads them
    assert engine.synced == 1 and trainer._last_loaded_step == trainer.state.global_step
    assert samples.completions == [[{"role": "assistant", "content": "no refund"}]] * 12
    assert trainer.num_generations_eval == trainer.args.num_generations


def test_environments_are_the_samplers_own_reset_per_row_and_reach_the_reward(desk_dir: Path, tmp_path: Path) -> None:
    trainer = _trainer(desk_dir, tmp_path, environment_factory=RefundDesk, config={"top_k": 0})
    training_pool = [id(e) for e in trainer._environment_pool[None]]
    tasks = make_tasks(4, 3)
    samples = TrainerSampler(trainer).sample(tasks, 2, seed=0)
    environments = samples.environments
    assert environments is not None and len(environments) == 8
    assert not {id(e) for e in environments} & set(training_pool)
    assert [e.order_id for e in environments] == [t["order_id"] for t in tasks for _ in range(2)]
    assert trainer.environments is None  # the trainer's own batch state is back

    def refunded(completions: list[Any], environments: list[RefundDesk], **kwargs: Any) -> list[float]:
        return [float(len(e.refunded)) for e in environments]

    scores = call_reward(refunded, samples, trainer.state, ScoreSink())
    calls = [sum(1 for m in s.completion if m["role"] == "tool" and m["name"] == "issue_refund"
                 and not m["content"].startswith("{'error'")) for s in samples.samples]
    assert scores == [float(c) for c in calls]
    assert any(s.tool_calls for s in samples.samples)


def test_the_holdout_unwraps_the_model_once_per_eval_as_training_does(desk_dir: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ZeRO-3 / FSDP, trl's generation path gathers the parameters inside unwrap_model_for_generation (and
    summon_full_params): one gather around one generate call for the whole holdout, not one per forward."""
    from contextlib import contextmanager

    import trl.trainer.grpo_trainer as grpo

    entered: list[int] = []
    unwrap = grpo.unwrap_model_for_generation

    @contextmanager
    def counted(*args: Any, **kwargs: Any) -> Iterator[Any]:
        entered.append(1)
        with unwrap(*args, **kwargs) as model:
            yield model

    monkeypatch.setattr(grpo, "unwrap_model_for_generation", counted)
    trainer = _trainer(desk_dir, tmp_path)
    summoned: list[int] = []
    summon = trainer._dist.summon_full_params

    def counted_summon(*args: Any, **kwargs: Any) -> Any:
        summoned.append(1)
        return summon(*args, **kwargs)

    monkeypatch.setattr(trainer._dist, "summon_full_params", counted_summon)
    samples = TrainerSampler(trainer).sample(make_tasks(8, 4), 4)
    assert len(samples) == 32 and entered == [1] and summoned == [1]
