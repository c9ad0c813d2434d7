"""Tools and environments for sampled completions, as TRL 1.16's GRPOTrainer runs them.

- An environment (`environment_factory=`) is built once per slot and reset per prompt with the prompt's row as
  keywords; what `reset` returns is appended to the prompt's last message. Its public methods (not `reset`,
  not `get_reward`, not `_private`) are tools. A factory or a reset that raises costs that completion its
  environment: a warning, its tool calls then fail as unknown tools, and the sampling goes on.
- A tool call runs `tool(**arguments)`; an exception, an unknown name or a call that is not a function call is a
  failed call whose result is ``{"error": "..."}``; a result is passed on as is when it is a list of content
  parts, else as its `str()`. The result becomes a ``{"role": "tool", "name", "content"}`` message.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from whileai_train.sampling.rewards import run_coroutine

__all__ = ["EnvironmentPool", "Slot", "ToolBox", "environment_methods", "factories_of", "reset_environments",
           "run_tool_calls", "with_observation"]

_NOT_TOOLS = ("reset", "get_reward")


def factories_of(environment_factory: Any) -> dict[Any, Callable[[], Any]] | None:
    """environment_factory= as TRL normalises it: {None: factory} for one factory, the dict as given for several
    (each row then names its environment in an `environment` column)."""
    if environment_factory is None:
        return None
    if isinstance(environment_factory, Mapping):
        return dict(environment_factory)
    return {None: environment_factory}


def environment_methods(environment: Any) -> list[Callable[..., Any]]:
    """An environment's tools: its class's public functions other than reset and get_reward, bound to it."""
    return [getattr(environment, name) for name, _ in inspect.getmembers(type(environment), inspect.isfunction)
            if name not in _NOT_TOOLS and not name.startswith("_")]


def with_observation(prompt: Any, observation: Any) -> Any:
    """The prompt with an environment's reset text appended to its last message (TRL's rule: text and content
    parts are matched to each other's form); a new list, the row's prompt is left as it was."""
    if observation is None:
        return prompt
    if isinstance(prompt, str):
        return prompt + (observation if isinstance(observation, str) else str(observation))
    last = prompt[-1]
    content = last["content"]
    if isinstance(observation, list) and isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if isinstance(observation, str) and isinstance(content, list):
        observation = [{"type": "text", "text": observation}]
    return [*prompt[:-1], {**last, "content": content + observation}]


@dataclass
class Slot:
    """One completion's environment: the instance (None when it could not be built or reset) and why not."""

    environment: Any = None
    error: str | None = None


@dataclass
class EnvironmentPool:
    """Environments per factory name, built once and reused: the n-th completion of a call that uses a factory
    gets its n-th instance, built the first time it is needed (TRL's "construct once, reset often")."""

    factories: dict[Any, Callable[[], Any]]
    pools: dict[Any, list[Slot]] = field(default_factory=dict)
    # whether the factories are named ({name: factory}), each row naming its own in its `environment` column
    named: bool = field(init=False)

    def __post_init__(self) -> None:
        self.named = set(self.factories) != {None}

    def name_of(self, row: Mapping[str, Any]) -> Any:
        """The factory a row uses: its `environment` column when the factories are named, else the one (None)."""
        return row.get("environment") if self.named else None

    def take(self, rows: Sequence[Mapping[str, Any]]) -> list[Slot]:
        """One reset environment per row (rows repeated k times come in k times), in order."""
        cursor: dict[Any, int] = {}
        slots: list[Slot] = []
        for row in rows:
            name = self.name_of(row)
            if name not in self.factories:
                slots.append(Slot(None, f"the row names environment {name!r}, which is not among "
                                        f"{list(self.factories)}"))
                continue
            pool = self.pools.setdefault(name, [])
            index = cursor.get(name, 0)
            cursor[name] = index + 1
            if index == len(pool):
                pool.append(self._build(name))
            slot = pool[index]
            if slot.environment is None:
                pool[index] = slot = self._build(name)  # a failed build is tried again on the next call
            slots.append(slot)
        return slots

    def _build(self, name: Any) -> Slot:
        try:
            return Slot(self.factories[name]())
        except Exception as exc:  # noqa: BLE001  (a completion without its environment, never a crash)
            return Slot(None, f"environment_factory raised {type(exc).__name__}: {exc}")

    @staticmethod
    def reset(slot: Slot, row: Mapping[str, Any], multi: bool) -> tuple[Slot, Any]:
        """Reset the slot's environment with the row as keywords (without the control field `environment` when
        there are several); the observation, or the slot marked failed when reset raised."""
        if slot.environment is None:
            return slot, None
        kwargs = {k: v for k, v in row.items() if k != "environment"} if multi else dict(row)
        try:
            return slot, slot.environment.reset(**kwargs)
        except Exception as exc:  # noqa: BLE001
            return Slot(None, f"environment reset raised {type(exc).__name__}: {exc}"), None


def reset_environments(pool: EnvironmentPool | None, rows: Sequence[Mapping[str, Any]], warnings: list[str]
                       ) -> tuple[list[Slot], list[Any]]:
    """One environment per row, reset with the row, and each row's prompt with the reset text appended. What could
    not be built or reset is said once in `warnings`; that row goes on without its environment."""
    if pool is None:
        return [Slot() for _ in rows], [row["prompt"] for row in rows]
    slots: list[Slot] = []
    prompts: list[Any] = []
    for slot, row in zip(pool.take(rows), rows, strict=True):
        slot, observation = EnvironmentPool.reset(slot, row, pool.named)
        if slot.error is not None:
            warnings.append(f"environment: {slot.error}")
        slots.append(slot)
        prompts.append(with_observation(row.get("prompt", [{"role": "user", "content": ""}]), observation))
    return slots, prompts


@dataclass
class ToolBox:
    """The tools one completion may call, by name: sync and async apart, as TRL keeps them."""

    sync: dict[str, Callable[..., Any]]
    asynchronous: dict[str, Callable[..., Any]]

    @classmethod
    def of(cls, tools: Sequence[Callable[..., Any]]) -> ToolBox:
        sync: dict[str, Callable[..., Any]] = {}
        asynchronous: dict[str, Callable[..., Any]] = {}
        for tool in tools:
            (asynchronous if inspect.iscoroutinefunction(tool) else sync)[tool.__name__] = tool
        return cls(sync, asynchronous)


def _content(result: Any) -> Any:
    return result if isinstance(result, list) else str(result)


def run_tool_calls(calls: Sequence[Mapping[str, Any]], box: ToolBox) -> tuple[list[dict[str, Any]], int]:
    """Run one assistant turn's tool calls; the tool messages in call order (sync results first, then async
    ones, as TRL appends them) and how many calls failed."""
    failures = 0
    results: list[tuple[str, Any]] = []
    pending: list[tuple[str, Any]] = []
    for call in calls:
        if call.get("type") != "function":
            failures += 1
            results.append((str(call.get("name", "unknown")),
                            {"error": f"Unsupported tool call type: {call.get('type')}"}))
            continue
        function = call["function"]
        name = function["name"]
        try:
            if name in box.sync:
                results.append((name, box.sync[name](**function["arguments"])))
            elif name in box.asynchronous:
                pending.append((name, box.asynchronous[name](**function["arguments"])))
            else:
                raise ValueError(f"Tool {name} not found.")
        except Exception as exc:  # noqa: BLE001  (a failed call is a result the policy sees, as in training)
            failures += 1
            results.append((name, {"error": str(exc)}))
    if pending:
        async def gather() -> list[Any]:
            return list(await asyncio.gather(*(coro for _, coro in pending), return_exceptions=True))

        for (name, _), result in zip(pending, run_coroutine(gather()), strict=True):
            if isinstance(result, Exception):
                failures += 1
                result = {"error": str(result)}
            results.append((name, result))
    return [{"role": "tool", "name": name, "content": _content(result)} for name, result in results], failures
