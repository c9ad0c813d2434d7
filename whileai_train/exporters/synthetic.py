"""Generated tool-using rollouts (a refund desk), for the demo, the recipes, the tests and the benchmark.

Rows are flat rollout rows of the product text (``prompt``, ``steps``, ``final_text``, ``task_id``,
``rollout_index``, ``reward``, ``privileged``) and deterministic given `seed`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

__all__ = ["REFUND_TOOLS", "refund_rollouts"]

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
    """`n` rollouts over `tasks` tasks: lookup then refund (pass) or a wrong refund / no refund (fail)."""
    rng = random.Random(seed)
    for i in range(n):
        task = (i // rollouts_per_task) % tasks
        order = f"A{100 + task}"
        amount = 5 + task
        passed = rng.random() < 0.5
        steps: list[dict[str, Any]] = [{
            "tool": "lookup", "arguments": {"order_id": order},
            "result": {"order_id": order, "status": "paid", "amount": amount},
        }]
        if rng.random() < 0.25:
            steps.append({"user": "please hurry"})
        if passed:
            steps.append({"tool": "refund", "arguments": {"order_id": order, "amount": amount}, "result": "ok"})
            final = f"Refunded order {order}: {amount} dollars."
        else:
            steps.append({"tool": "refund", "arguments": {"order_id": f"A{rng.randint(0, 99)}", "amount": amount},
                          "result": "error: order not found"})
            final = "Sorry, the refund failed."
        yield {
            "prompt": f"Please refund order {order}.",
            "steps": steps,
            "final_text": final,
            "task_id": f"refund-{task}",
            "rollout_index": i % rollouts_per_task,
            "reward": 1.0 if passed else 0.0,
            "privileged": {"fraud_note": f"internal risk code RC-{task:04d}"},
            "finish_reason": "stop",
        }
