"""The generate backend of the sampler (sampling/generate.py) on the tiny model warmed up to call tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from whileai_train.demos.refund_desk import RefundDesk, issue_refund, lookup_order, make_tasks
from whileai_train.rows.contract import agent_parts, tool_failed
from whileai_train.sampling.generate import GenerateSampler
from whileai_train.sampling.samples import (
    FINISH_LENGTH,
    FINISH_STOP,
    FINISH_TOOL_CALLS,
    GenerationSettings,
    settings_from_config,
    trajectory_row,
)

# the first test here may build the session's warmed-up desk model (conftest.desk_dir, ~100 CPU seconds): a
# generous deadline for a loaded machine
pytestmark = [pytest.mark.trainer, pytest.mark.timeout(1800), pytest.mark.usefixtures("one_thread")]


def _settings(**overrides: Any) -> GenerationSettings:
    from types import SimpleNamespace

    return settings_from_config(SimpleNamespace(**{"max_completion_length": 96, **overrides}))


def _desk(desk_dir: Path) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(desk_dir), AutoTokenizer.from_pretrained(desk_dir)


def test_tools_run_results_come_back_and_lengths_count_model_tokens(desk_dir: Path) -> None:
    model, tokenizer = _desk(desk_dir)
    sampler = GenerateSampler(model, tokenizer, _settings(), tools=[issue_refund, lookup_order])
    out = sampler.sample(make_tasks(8, 0), 2, seed=0)
    assert len(out) == 16 and [(s.row_index, s.repeat) for s in out.samples][:4] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    called = [s for s in out.samples if s.tool_calls]
    assert len(called) >= 12  # the warmed-up desk looks orders up
    for s in called:
        first = s.completion[0]
        assert first["role"] == "assistant" and first["tool_calls"][0]["function"]["name"] in ("lookup_order",
                                                                                            "issue_refund")
        results = [m for m in s.completion if m["role"] == "tool"]
        assert len(results) == s.tool_calls  # a last turn whose results did not fit the budget is not counted
        for message, call in zip(results, _calls(s.completion), strict=False):
            expected = _run(call)
            assert message == {"role": "tool", "name": call["name"], "content": expected}
        assert s.tool_failures == sum(tool_failed(m["content"]) for m in results)
        assert s.length < len(s.completion_ids)  # the tool results' tokens are not the model's
        row = trajectory_row(s.prompt, s.completion)
        assert [name for name, _ in agent_parts(row).calls] == [c["name"] for c in _calls(s.completion)]
    tokens = tokenizer.decode(called[0].completion_ids)
    assert "<tool_response>" in tokens and called[0].completion[1]["content"] in tokens


def _calls(completion: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c["function"] for m in completion if m["role"] == "assistant" for c in m.get("tool_calls") or ()]


def _run(call: dict[str, Any]) -> str:
    tool = {"lookup_order": lookup_order, "issue_refund": issue_refund}[call["name"]]
    try:
        return str(tool(**call["arguments"]))
    except Exception as exc:  # noqa: BLE001
        return str({"error": str(exc)})


def test_a_tool_that_raises_is_a_failed_call_in_the_trajectory(desk_dir: Path) -> None:
    def lookup_order(order_id: str) -> str:
        """Look up an order.

        Args:
            order_id: the order id
        """
        raise ConnectionError("the order service is down")

    model, tokenizer = _desk(desk_dir)
    out = GenerateSampler(model, tokenizer, _settings(max_tool_calling_iterations=1),
                          tools=[issue_refund, lookup_order]).sample(make_tasks(6, 1), 2, seed=1)
    called = [s for s in out.samples if s.tool_calls]
    assert called and all(s.tool_failures == s.tool_calls for s in called)  # the desk calls lookup_order first
    contents = {m["content"] for s in called for m in s.completion if m["role"] == "tool"}
    assert contents == {"{'error': 'the order service is down'}"} and all(tool_failed(c) for c in contents)
    assert all(agent_parts(trajectory_row(s.prompt, s.completion)).errors == s.tool_failures for s in called)


def test_same_seed_same_completions_and_the_callers_random_stream_is_untouched(desk_dir: Path) -> None:
    import torch

    model, tokenizer = _desk(desk_dir)
    model.train()
    sampler = GenerateSampler(model, tokenizer, _settings(), tools=[issue_refund, lookup_order])
    tasks = make_tasks(6, 2)
    state = torch.get_rng_state()
    first = sampler.sample(tasks, 3, seed=7)
    assert torch.equal(torch.get_rng_state(), state) and model.training
    again = sampler.sample(tasks, 3, seed=7)
    other = sampler.sample(tasks, 3, seed=8)
    assert first.completions == again.completions and first.completion_ids == again.completion_ids
    assert first.completion_ids != other.completion_ids
    assert tokenizer.__dict__.get("response_template") is None  # the schema went on the sampler's copy


def test_no_tool_loop_iteration_leaves_the_call_unrun_and_says_so(desk_dir: Path) -> None:
    model, tokenizer = _desk(desk_dir)
    out = GenerateSampler(model, tokenizer, _settings(max_tool_calling_iterations=0),
                          tools=[issue_refund, lookup_order]).sample(make_tasks(6, 3), 2, seed=0)
    stopped = [s for s in out.samples if s.completion[-1].get("tool_calls")]
    assert stopped and all(s.finish_reason == FINISH_TOOL_CALLS and s.tool_calls == 0 for s in stopped)
    assert all(s.length == len(s.completion_ids) for s in out.samples)


def test_a_result_past_the_token_budget_is_dropped_and_the_completion_ends_on_its_call(desk_dir: Path) -> None:
    def lookup_order(order_id: str) -> str:
        """Look up an order.

        Args:
            order_id: the order id
        """
        return "paid " * 200

    model, tokenizer = _desk(desk_dir)
    out = GenerateSampler(model, tokenizer, _settings(max_completion_length=60),
                          tools=[issue_refund, lookup_order]).sample(make_tasks(4, 4), 2, seed=0)
    ended = [s for s in out.samples if s.finish_reason == FINISH_TOOL_CALLS]
    assert ended and all(s.tool_calls == 0 and not any(m["role"] == "tool" for m in s.completion) for s in ended)
    assert all(len(s.completion_ids) <= 60 for s in out.samples)


def test_text_prompts_give_text_completions_ending_as_trl_counts(tiny_model: Any, tiny_tokenizer: Any) -> None:
    rows = [{"prompt": f"what is {w} plus one ?", "answer": w} for w in ("one", "two", "three")]
    out = GenerateSampler(tiny_model, tiny_tokenizer, _settings(max_completion_length=5)).sample(rows, 4, seed=0)
    assert all(isinstance(c, str) for c in out.completions)
    for s in out.samples:
        assert s.length == len(s.completion_ids) <= 5 and s.tool_calls == 0
        ended = s.completion_ids[-1] == tiny_tokenizer.eos_token_id
        assert s.finish_reason == (FINISH_STOP if ended else FINISH_LENGTH)
    assert {s.finish_reason for s in out.samples} == {FINISH_LENGTH}  # an untrained model rambles to the budget


def test_environments_are_reset_per_prompt_and_one_that_cannot_be_built_costs_only_its_completion(
        desk_dir: Path) -> None:
    built: list[RefundDesk] = []

    class Fragile(RefundDesk):
        def reset(self, **row: Any) -> str | None:
            super().reset(**row)
            if row["order_id"] == broken:
                raise RuntimeError("the desk for this order is closed")
            return " (ticket open)"

    def factory() -> RefundDesk:
        desk = Fragile()
        built.append(desk)
        return desk

    tasks = make_tasks(4, 5)
    broken = tasks[1]["order_id"]
    model, tokenizer = _desk(desk_dir)
    sampler = GenerateSampler(model, tokenizer, _settings(), environment_factory=factory)
    out = sampler.sample(tasks, 2, seed=0)
    assert len(built) == 8  # one per completion, built once
    assert out.warnings == ["environment: environment reset raised RuntimeError: the desk for this order is closed"]
    for s in out.samples:
        failed = s.row_index == 1
        assert (s.environment is None) == failed and (s.environment_error is not None) == failed
        if not failed:
            assert s.prompt[-1]["content"].endswith("(ticket open)") and s.environment.order_id == tasks[
                s.row_index]["order_id"]
        results = [m for m in s.completion if m["role"] == "tool"]
        if failed and results:
            assert all(m["content"].startswith("{'error': 'Tool ") for m in results)
    assert out.environments is not None and out.environments.count(None) == 2
    sampler.sample(tasks, 2, seed=0)
    assert len(built) == 8  # reused, reset again
