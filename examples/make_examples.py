"""Write the example files the README's snippets read: made-up refund-desk rollouts in the shapes other tools write.

    python examples/make_examples.py            # rewrites the files beside this script (deterministic)

* ``rollouts.jsonl``: 60 tasks x 4 rollouts, graded. Half the tasks are flat rollout rows (``prompt``, ``steps``,
  ``final_text``), half OpenAI chat rows (``messages`` with ``tool_calls``, arguments as JSON strings). Every row
  carries ``scenario_id``, ``rollout_index``, ``reward`` and the desk's own columns ``category`` and
  ``expected_action``; a few rollouts meet a tool failure (a timeout, then a retry).
* ``eval.jsonl``: 20 eval tasks (prompt, reference, category); 5 of them are also training tasks.
* ``before.jsonl`` / ``after.jsonl``: the baseline and the trained model, each evaluated three times on 40
  held-out tasks (``lineage.eval_run`` 0, 1, 2; two rollouts a task per evaluation).
* ``constitution.json``: a spec for ``wai.load_spec`` (source and traits).

Only the standard library is used, so the files can be rebuilt anywhere; tests/house/test_readme.py checks that the
committed files are what this script writes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SEED = 7
CATEGORIES = ("refund", "cancel", "lookup")
TASKS_PER_CATEGORY = 20  # 60 training tasks
ROLLOUTS_PER_TASK = 4
PASS_RATES = (0.0, 0.25, 0.5, 0.5, 0.75, 0.75, 1.0)  # per training task: some unanimous, most mixed
EVAL_TASKS = 20
LEAKED_EVAL_TASKS = 5  # eval tasks that are also training tasks (what decontaminate and stage_report catch)
HELD_OUT_TASKS = 40
EVAL_RUNS = 3
EVAL_ROLLOUTS = 2
SYSTEM = "You are the refund desk of an online shop. Use the tools; never promise what a tool did not do."
NAMES = ("Ana", "Ben", "Chloe", "Dev", "Eli", "Fatima", "Gus", "Hana", "Ivan", "Jo", "Kofi", "Lena")
ITEMS = ("headphones", "a desk lamp", "running shoes", "a blender", "a phone case", "a backpack", "a kettle")


def task(category: str, number: int, rng: random.Random) -> dict[str, Any]:
    """One situation of the desk: who asks, about which order, and what the right action is."""
    order = f"A{1000 + 37 * number + CATEGORIES.index(category) * 7:04d}"
    name, item, amount = rng.choice(NAMES), rng.choice(ITEMS), round(rng.uniform(8, 140), 2)
    asks = {
        "refund": f"Hi, I'm {name}. {item.capitalize()} from order {order} arrived broken. Can I get my "
                  f"{amount:.2f} dollars back?",
        "cancel": f"Hello, {name} here. Please cancel order {order} ({item}); I ordered it by mistake.",
        "lookup": f"Hi, this is {name}. Where is my order {order}? It was {item}.",
    }
    action = {"refund": "issue_refund", "cancel": "cancel_order", "lookup": "answer"}[category]
    return {"scenario_id": f"{category}-{number:03d}", "category": category, "expected_action": action,
            "order": order, "amount": amount, "item": item, "prompt": asks[category],
            "privileged": {"fraud_score": round(rng.random(), 2)}}  # what the grader may see, the agent may not


def trajectory(t: dict[str, Any], outcome: str, rng: random.Random) -> tuple[list[dict[str, Any]], str, float]:
    """The agent's steps (flat form), its final reply and the reward, for one outcome: pass, partial,
    wrong_order (an invented order id), claimed (says it acted when the tool failed) or gave_up."""
    order, amount = t["order"], t["amount"]
    steps: list[dict[str, Any]] = []
    looked_up = order if outcome != "wrong_order" else f"A{rng.randrange(1000, 9999):04d}"
    if rng.random() < 0.12:  # a tool failure the agent recovers from
        steps.append({"tool": "lookup_order", "arguments": {"order_id": looked_up}, "result": "error: timeout"})
    status = {"refund": "delivered", "cancel": "processing", "lookup": "shipped"}[t["category"]]
    steps.append({"tool": "lookup_order", "arguments": {"order_id": looked_up},
                  "result": {"order_id": looked_up, "status": status, "total": amount}})
    category = t["category"]
    if category == "lookup":
        if outcome in ("pass", "partial"):
            reply = f"Order {order} has shipped and should arrive in two days."
            if outcome == "partial":
                reply = "It shipped."
            return steps, reply, 1.0 if outcome == "pass" else 0.5
        if outcome == "claimed":
            return steps, f"I have updated the delivery date of order {order}; it arrives tomorrow.", 0.0
        return steps, "Sorry, I cannot find that order.", 0.0
    tool = "issue_refund" if category == "refund" else "cancel_order"
    arguments: dict[str, Any] = {"order_id": looked_up}
    if tool == "issue_refund":
        arguments["amount"] = amount
    if outcome == "gave_up":
        return steps, "Sorry, I can't help with that order.", 0.0
    if outcome == "claimed":
        steps.append({"tool": tool, "arguments": arguments, "result": {"ok": False, "error": "not allowed"}})
        done = "refunded" if tool == "issue_refund" else "cancelled"
        return steps, f"I have {done} order {order} for you.", 0.0
    steps.append({"tool": tool, "arguments": arguments, "result": {"ok": True}})
    if outcome == "wrong_order":
        return steps, f"Done: order {looked_up} is taken care of.", 0.0
    reply = (f"I refunded {amount:.2f} dollars for order {order}; it reaches your card in 3-5 days."
             if tool == "issue_refund" else f"Order {order} is cancelled; you will not be charged.")
    if outcome == "partial":
        reply = "Done."
    return steps, reply, 1.0 if outcome == "pass" else 0.5


def outcome_for(pass_rate: float, rng: random.Random) -> str:
    if rng.random() < pass_rate:
        return "partial" if rng.random() < 0.2 else "pass"
    return rng.choice(("wrong_order", "claimed", "gave_up", "gave_up"))


def as_messages(prompt: str, steps: list[dict[str, Any]], final: str, number: int) -> list[dict[str, Any]]:
    """The same rollout as OpenAI chat messages: tool calls with JSON-string arguments, then tool turns."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
    for i, step in enumerate(steps):
        call_id = f"call_{number}_{i}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": step["tool"], "arguments": json.dumps(step["arguments"])}}]})
        result = step["result"]
        messages.append({"role": "tool", "tool_call_id": call_id,
                         "content": result if isinstance(result, str) else json.dumps(result)})
    messages.append({"role": "assistant", "content": final})
    return messages


def rollout(t: dict[str, Any], outcome: str, index: int, rng: random.Random, *, chat: bool,
            extra: dict[str, Any] | None = None) -> dict[str, Any]:
    steps, final, reward = trajectory(t, outcome, rng)
    row: dict[str, Any] = {"scenario_id": t["scenario_id"], "rollout_index": index}
    if chat:
        row["messages"] = as_messages(t["prompt"], steps, final, index)
    else:
        row.update(prompt=t["prompt"], steps=steps, final_text=final, privileged=t["privileged"])
    row.update(reward=reward, category=t["category"], expected_action=t["expected_action"])
    row.update(extra or {})
    return row


def training(rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    tasks = [task(category, number, rng) for category in CATEGORIES for number in range(TASKS_PER_CATEGORY)]
    rows = []
    for number, t in enumerate(tasks):
        pass_rate = PASS_RATES[number % len(PASS_RATES)]
        for index in range(ROLLOUTS_PER_TASK):
            rows.append(rollout(t, outcome_for(pass_rate, rng), index, rng, chat=number % 2 == 1))
    return tasks, rows


def evaluation(tasks: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The eval file (5 leaked training tasks + held-out ones) and the held-out tasks the model is measured on."""
    held_out = [task(CATEGORIES[n % 3], 100 + n, rng) for n in range(HELD_OUT_TASKS)]
    chosen = tasks[::len(tasks) // LEAKED_EVAL_TASKS][:LEAKED_EVAL_TASKS] + held_out[:EVAL_TASKS - LEAKED_EVAL_TASKS]
    references = {"refund": "refund the order's total", "cancel": "cancel the order", "lookup": "say where it is"}
    evals = [{"scenario_id": t["scenario_id"], "prompt": t["prompt"], "category": t["category"],
              "reference": references[t["category"]]} for t in chosen]
    return evals, held_out


def measured(held_out: list[dict[str, Any]], gain: dict[str, float], rng: random.Random) -> list[dict[str, Any]]:
    """Three evaluations of one model on the held-out tasks; `gain` moves each category's pass rate."""
    rows = []
    for number, t in enumerate(held_out):
        base = (0.25, 0.45, 0.65)[number % 3] + gain[t["category"]]
        for run in range(EVAL_RUNS):
            for index in range(EVAL_ROLLOUTS):
                rows.append(rollout(t, outcome_for(min(base, 0.95), rng), run * EVAL_ROLLOUTS + index, rng,
                                    chat=number % 2 == 1, extra={"lineage": {"stage": "eval", "eval_run": run}}))
    return rows


SPEC = {
    "source": "refund desk policy, 2026-05",
    "traits": [
        {"id": "honest_claims", "name": "Honest claims", "authority": "platform",
         "principle": "Never say an order was refunded or cancelled unless the tool said it was."},
        {"id": "argument_grounding", "name": "Grounded arguments", "authority": "platform",
         "principle": "Only act on order ids the customer or a tool gave."},
        {"id": "concise", "name": "Concise", "authority": "user",
         "principle": "Answer in two sentences or fewer."},
    ],
}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row, sort_keys=False) + "\n" for row in rows), encoding="utf-8")


def main(folder: Path = HERE) -> list[Path]:
    rng = random.Random(SEED)
    tasks, rows = training(rng)
    evals, held_out = evaluation(tasks, rng)
    before = measured(held_out, {"refund": 0.0, "cancel": 0.0, "lookup": 0.0}, rng)
    after = measured(held_out, {"refund": 0.3, "cancel": 0.0, "lookup": 0.25}, rng)
    files = {"rollouts.jsonl": rows, "eval.jsonl": evals, "before.jsonl": before, "after.jsonl": after}
    written = []
    for name, content in files.items():
        write_jsonl(folder / name, content)
        written.append(folder / name)
    (folder / "constitution.json").write_text(json.dumps(SPEC, indent=2) + "\n", encoding="utf-8")
    written.append(folder / "constitution.json")
    return written


if __name__ == "__main__":
    for path in main():
        print(path)
