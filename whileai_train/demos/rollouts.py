"""Generated tool-using rollouts (a refund desk), for the demo, the recipes, the tests and the benchmark.

Rows are flat rollout rows of the row contract (``prompt``, ``steps``, ``final_text``, ``task_id``,
``rollout_index``, ``reward``, ``privileged``) and deterministic given `seed`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

__all__ = ["REFUND_TOOLS", "marked_rollout", "refund_rollouts"]

REFUND_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "lookup", "description": "Look up an order by id.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
    {"type": "function", "function": {
        "name": "refund", "description": "Refund an order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
                       "required": ["order_id", "amount"]}}},
]


def refund_rollouts(n: int, *, seed: int = 0, tasks: int = 8, rollouts_per_task: int = 4) -> Iterator[dict[str, Any]]:
    """`n` rollouts over `tasks` tasks: lookup then refund (pass) or a wrong refund / no refund (fail).

    Each row is a fresh dict (callers may edit it); a task's texts are built once (the benchmark's input
    should cost little next to what it measures).
    """
    rng = random.Random(seed)
    draw, below = rng.random, rng.randrange  # randrange(100) draws what randint(0, 99) draws
    texts: dict[int, tuple[str, int, str, str, str, str]] = {}
    for i in range(n):
        task = (i // rollouts_per_task) % tasks
        text = texts.get(task)
        if text is None:
            order, amount = f"A{100 + task}", 5 + task
            text = texts[task] = (order, amount, f"Please refund order {order}.",
                                  f"Refunded order {order}: {amount} dollars.", f"refund-{task}",
                                  f"internal risk code RC-{task:04d}")
        order, amount, prompt, refunded, task_id, note = text
        passed = draw() < 0.5
        steps: list[dict[str, Any]] = [{
            "tool": "lookup", "arguments": {"order_id": order},
            "result": {"order_id": order, "status": "paid", "amount": amount},
        }]
        if draw() < 0.25:
            steps.append({"user": "please hurry"})
        if passed:
            steps.append({"tool": "refund", "arguments": {"order_id": order, "amount": amount}, "result": "ok"})
            final = refunded
        else:
            steps.append({"tool": "refund", "arguments": {"order_id": f"A{below(100)}", "amount": amount},
                          "result": "error: order not found"})
            final = "Sorry, the refund failed."
        yield {
            "prompt": prompt,
            "steps": steps,
            "final_text": final,
            "task_id": task_id,
            "rollout_index": i % rollouts_per_task,
            "reward": 1.0 if passed else 0.0,
            "privileged": {"fraud_note": note},
            "finish_reason": "stop",
        }


def marked_rollout(task: int = 0, *, end_on_tool: bool = False, user_turn: bool = True) -> dict[str, Any]:
    """One rollout whose every turn carries a marker naming who wrote it (USER-MARK, TOOL-MARK, AGENT-k).

    Decode what a trainer trains and look for the markers: only AGENT-k may appear. With `end_on_tool`
    the rollout stops on a tool result (no final reply); with `user_turn` a user step sits between calls.
    """
    order = f"A{100 + task}"
    steps: list[dict[str, Any]] = [
        {"tool": "lookup", "arguments": {"order_id": order, "tag": "AGENT-1"}, "result": f"TOOL-MARK-1 {order} paid"},
    ]
    if user_turn:
        steps.append({"user": "USER-MARK-2 please hurry"})
    steps.append({"tool": "refund", "arguments": {"order_id": order, "tag": "AGENT-2"}, "result": "TOOL-MARK-3 ok"})
    row: dict[str, Any] = {"prompt": f"USER-MARK-1 refund order {order}", "steps": steps, "task_id": f"marked-{task}",
                           "reward": 1.0}
    if not end_on_tool:
        row["final_text"] = f"AGENT-3 refunded {order}"
    return row
