"""monitor.wrap: TRL sees the same function (name, sync/async, keywords); the monitor sees each completion."""

from __future__ import annotations

import asyncio
import functools
import inspect
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.callbacks.reward_wrap import RewardRecorder, rows_of_records, wrap_reward
from whileai_train.errors import ConfigError


def keyword_reward(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float]:
    return [1.0 if "yes" in c else 0.0 for c in completions]


async def async_reward(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float]:
    await asyncio.sleep(0)
    return [float(len(c)) for c in completions]


class ClassReward:
    def __call__(self, prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float]:
        return [0.5] * len(completions)


class AsyncClassReward:
    async def __call__(self, prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float]:
        return [0.25] * len(completions)


def _trl_kwargs(**extra: Any) -> dict[str, Any]:
    """The keywords GRPOTrainer passes (docs/trl_facts.md): prompts, completions, completion_ids, columns,
    state, hooks."""
    class State:
        global_step = 3

    logged: dict[str, list[Any]] = {}
    return dict(prompts=["p1", "p1", "p2", "p2"], completions=["yes", "no", "yes yes", "maybe"],
                completion_ids=[[1, 2], [3], [4, 5, 6], [7]], task_id=["t1", "t1", "t2", "t2"],
                answer=["a", "a", "b", "b"], trainer_state=State(),
                log_extra=lambda column, values: logged.setdefault(column, values),
                log_metric=lambda name, value: logged.setdefault(name, value), **extra)


def test_sync_stays_sync_and_keeps_its_name() -> None:
    m = wai.monitor()
    wrapped = m.wrap(keyword_reward)
    assert wrapped.__name__ == "keyword_reward"
    assert not inspect.iscoroutinefunction(wrapped)
    assert wrapped(**_trl_kwargs()) == [1.0, 0.0, 1.0, 0.0]


def test_async_stays_async_and_is_awaited() -> None:
    from trl.trainer.utils import get_callable_name, is_async_callable

    m = wai.monitor()
    wrapped = m.wrap(async_reward)
    assert inspect.iscoroutinefunction(wrapped) and is_async_callable(wrapped)
    assert get_callable_name(wrapped) == "async_reward"
    assert asyncio.run(wrapped(**_trl_kwargs())) == [3.0, 2.0, 7.0, 5.0]
    records = m.recorder.drain()
    assert [r.reward for r in records] == [3.0, 2.0, 7.0, 5.0]


def test_callable_instances_and_partials_keep_trl_names() -> None:
    from trl.trainer.utils import get_callable_name, is_async_callable

    rec = RewardRecorder()
    for fn, name, is_async in [(ClassReward(), "ClassReward", False), (AsyncClassReward(), "AsyncClassReward", True),
                               (functools.partial(keyword_reward), "keyword_reward", False)]:
        wrapped = wrap_reward(fn, rec)
        assert get_callable_name(wrapped) == get_callable_name(fn) == name
        assert is_async_callable(wrapped) is is_async


def test_every_keyword_goes_through() -> None:
    seen: dict[str, Any] = {}

    def spy(**kwargs: Any) -> list[float]:
        seen.update(kwargs)
        kwargs["log_metric"]("spy/called", 1.0)
        return [0.0] * len(kwargs["completions"])

    kwargs = _trl_kwargs(environments=None)
    wai.monitor().wrap(spy)(**kwargs)
    assert set(seen) == set(kwargs)
    assert all(seen[key] is kwargs[key] for key in kwargs)


def test_records_reward_length_in_tokens_and_ask() -> None:
    m = wai.monitor()
    m.wrap(keyword_reward)(**_trl_kwargs())
    records = m.recorder.drain()
    assert [(r.ask, r.completion, r.reward, r.length) for r in records] == [
        ("t1", "yes", 1.0, 2), ("t1", "no", 0.0, 1), ("t2", "yes yes", 1.0, 3), ("t2", "maybe", 0.0, 1)]
    assert m.recorder.drain() == []  # drained once


def test_the_prompt_is_the_ask_without_an_id_column_and_chat_completions_stay_trajectories() -> None:
    m = wai.monitor()
    prompts = [[{"role": "user", "content": "refund A1"}]] * 2
    completions = [
        [{"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "issue_refund", "arguments": {"order_id": "A1"}}}]},
         {"role": "tool", "name": "issue_refund", "content": "{'error': 'order A1 is not refundable'}"},
         {"role": "assistant", "content": "sorry"}],
        [{"role": "assistant", "content": "no refund"}]]
    m.wrap(ClassReward())(prompts=prompts, completions=completions, completion_ids=[[1], [2, 3]])
    records = m.recorder.drain()
    assert records[0].ask == records[1].ask and "refund A1" in records[0].ask
    assert [r.completion for r in records] == completions
    rows = rows_of_records(records)
    assert rows[0]["messages"] == prompts[0] + completions[0] and rows[0]["final_text"] == "sorry"
    from whileai_train.rows.contract import agent_parts

    parts = agent_parts(rows[0])
    assert [name for name, _ in parts.calls] == ["issue_refund"] and parts.errors == 1  # TRL's failed call


def test_none_rewards_are_skipped_and_the_buffer_is_bounded() -> None:
    rec = RewardRecorder(maxlen=2)

    def some_none(completions: list[Any], **kwargs: Any) -> list[float | None]:
        return [None, 1.0]

    wrapped = wrap_reward(some_none, rec)
    for _ in range(40):
        wrapped(prompts=["a", "b"], completions=["x", "y"], completion_ids=[[1], [2]])
    records = rec.drain()
    assert all(r.reward == 1.0 for r in records)
    assert len(records) == 16  # at most maxlen x 8 calls are held between drains


def test_a_recording_failure_never_breaks_the_reward(caplog: pytest.LogCaptureFixture) -> None:
    """The failure is logged once, never raised as a warning: under warnings-as-errors (as this suite runs, and
    as `python -W error` runs) a warning from inside the reward call would reach the training loop."""
    rec = RewardRecorder()

    def bad_len(completions: list[Any], **kwargs: Any) -> Any:
        return 5  # not a list: TRL would refuse it, the wrapper must not be the one that raises

    wrapped = wrap_reward(bad_len, rec)
    with caplog.at_level("WARNING", logger="whileai_train.callbacks"):
        for _ in range(3):
            assert wrapped(prompts=["a"], completions=["x"], completion_ids=[[1]]) == 5
    said = [r.getMessage() for r in caplog.records if "could not record" in r.getMessage()]
    assert len(said) == 1 and "training goes on" in said[0]


def test_rows_of_records_sum_weighted_functions_per_completion() -> None:
    m = wai.monitor()
    kwargs = _trl_kwargs()
    m.wrap(keyword_reward)(**kwargs)
    m.wrap(ClassReward())(**kwargs)
    rows = rows_of_records(m.recorder.drain(), {"keyword_reward": 2.0, "ClassReward": 1.0})
    assert [row["reward"] for row in rows] == [2.5, 0.5, 2.5, 0.5]
    assert rows[0] == {"prompt": "p1", "steps": [], "final_text": "yes", "reward": 2.5, "scenario_id": "t1"}


def test_wrap_refuses_a_non_callable() -> None:
    with pytest.raises(ConfigError, match="not a reward function"):
        wai.monitor().wrap("keyword_reward")  # type: ignore[arg-type]
