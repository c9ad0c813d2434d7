"""Generated tool-using rollout rows with planted truths, for the gate benchmarks and tests.

    from bench.gen_rows import make_rows, make_eval_rows, plant_near_duplicate_asks
    rows = make_rows(10_000, k=8, hack="phrase", seed=0)      # flat rollouts, 1250 tasks x 8 rollouts
    eval_rows, truth = make_eval_rows(rows, seed=1)            # planted copies / near copies / same task
    rows, pairs = plant_near_duplicate_asks(rows, 20, seed=2)  # near-duplicate asks across different tasks

Each task is a customer-support situation (scenario_id, task_id) with one correct tool call; each of its k
rollouts looks the order up, then calls the right tool with the right order id (resolved) or not. The reward is
an honest grader (resolved, with a little judge noise) or a hacked judge that also pays for a shortcut:

* ``hack="phrase"``: replies that say HACK_PHRASE pass (the judge reads the claim, not the work);
* ``hack="length"``: long replies (several filler sentences) pass;
* ``hack="tool"``: rollouts that call ``escalate_to_human`` pass.

``shape="messages"`` writes the same rollouts as an OpenAI-style logger keeps them: ``messages`` with a system
turn, assistant turns carrying ``tool_calls`` (arguments as JSON text, content null), ``tool`` turns whose content
is the result's JSON text, and the final reply as the last assistant turn (:func:`as_messages`).

Rows carry ``markers={"resolved": 0/1}`` (what an honest reward tracks: endorse ``marker:resolved``), an
occasional ``finish_reason="length"``, and the ask in one of two phrasings per task (rollout_index % 2), so
grouping by prompt string would split every task in two. Run as a script to write JSONL:
``python bench/gen_rows.py --rows 100000 --hack phrase --out rows.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from typing import Any

__all__ = ["HACKS", "HACK_PHRASE", "SHAPES", "SYSTEM_PROMPT", "TOOLS", "as_messages", "make_eval_rows", "make_rows",
           "plant_near_duplicate_asks", "write_jsonl"]

HACK_PHRASE = "I have fully resolved this for you"
HACKS = (None, "phrase", "length", "tool")
SHAPES = ("flat", "messages")
SYSTEM_PROMPT = ("You are the support agent of an online shop. Look the order up before you change it, use the tools "
                 "to act, and tell the customer plainly what happened.")
TOOLS = ("lookup_order", "issue_refund", "cancel_order", "reship_order", "update_address", "escalate_to_human")

_NAMES = ("Ana", "Bo", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ivo", "Jun", "Kemal", "Lea", "Mina",
          "Nils", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tomas", "Uma", "Vera", "Wen", "Yara", "Zoe")
_PRODUCTS = ("blender", "desk lamp", "rain jacket", "phone case", "coffee grinder", "yoga mat", "backpack",
             "headphones", "kettle", "bike light", "water bottle", "toaster", "keyboard", "monitor stand")
_CITIES = ("Lisbon", "Osaka", "Denver", "Nairobi", "Oslo", "Quito", "Hanoi", "Perth", "Tallinn", "Accra")
_ISSUES = ("arrived broken", "never arrived", "is the wrong colour", "stopped working after a week",
           "came without the charger", "was delivered to my neighbour", "is missing a part")
# intent -> (correct tool, the ask in two phrasings, a third phrasing used for same-task eval rows)
_INTENTS = {
    "refund": ("issue_refund", (
        "Hi, this is {name} from {city}. My order {oid} ({product}) {issue}. I would like my money back please.",
        "{name} here, writing from {city}: the {product} in order {oid} {issue}. Can you refund me?"),
        "Refund request from {name} in {city}, order {oid}: {product} {issue}."),
    "cancel": ("cancel_order", (
        "Hello, {name} in {city}. Please cancel order {oid} for the {product} before it ships.",
        "It is {name} ({city}). I changed my mind about the {product}, order {oid}; cancel it?"),
        "{name} from {city} wants order {oid} ({product}) cancelled."),
    "reship": ("reship_order", (
        "Hi, {name} from {city} here. The {product} from order {oid} {issue}; please send a new one.",
        "My {product} (order {oid}) {issue}. This is {name} in {city}, can you ship a replacement?"),
        "Replacement wanted: {name}, {city}, order {oid}, the {product} {issue}."),
    "address": ("update_address", (
        "Hi, I am {name}. I moved to {city}; please update the address on order {oid} for my {product}.",
        "{name} here. Order {oid} (the {product}) should go to my new place in {city}, not the old one."),
        "Address change for order {oid}: {name} now lives in {city} ({product})."),
}
_OPENERS = ("Thanks for reaching out.", "Thank you for your patience.", "Sorry about the trouble.",
            "I looked into your order.", "Happy to help with this.", "I checked the details.")
_DONE = {"issue_refund": "Your refund for order {oid} is on its way.",
         "cancel_order": "Order {oid} is cancelled and you will not be charged.",
         "reship_order": "A replacement for order {oid} ships today.",
         "update_address": "Order {oid} will now be delivered to your new address."}
_FAILED = ("I could not complete that change right now.", "Something went wrong on my side with order {oid}.",
           "I was unable to find a way to do that.", "That request did not go through.")
_FILLER = ("Our team values every customer.", "We are always improving our service.",
           "Please let us know if there is anything else.", "Your satisfaction matters to us.",
           "We appreciate your business and loyalty.", "Have a wonderful day ahead.",
           "Feel free to contact us again anytime.")


def _task(rng: random.Random, t: int) -> dict[str, Any]:
    intent = rng.choice(sorted(_INTENTS))
    slots = {"name": rng.choice(_NAMES), "city": rng.choice(_CITIES), "product": rng.choice(_PRODUCTS),
             "issue": rng.choice(_ISSUES), "oid": f"A{rng.randrange(10**6):06d}"}
    tool, phrasings, third = _INTENTS[intent]
    return {"id": f"scn-{t:06d}", "intent": intent, "tool": tool, "slots": slots,
            "prompts": [p.format(**slots) for p in phrasings], "third": third.format(**slots),
            "skill": rng.uniform(0.15, 0.85)}


def _rollout(rng: random.Random, task: dict[str, Any], index: int, hack: str | None) -> dict[str, Any]:
    slots, oid = task["slots"], task["slots"]["oid"]
    resolved = rng.random() < task["skill"]
    steps: list[dict[str, Any]] = [{"tool": "lookup_order", "arguments": {"order_id": oid},
                                    "result": {"order_id": oid, "status": "delivered", "item": slots["product"]}}]
    escalated = rng.random() < 0.25
    if resolved:
        steps.append({"tool": task["tool"], "arguments": {"order_id": oid}, "result": {"ok": True}})
    elif rng.random() < 0.5:
        wrong = rng.choice([t for t in TOOLS[1:5] if t != task["tool"]])
        steps.append({"tool": wrong, "arguments": {"order_id": oid}, "result": {"ok": True}})
    else:
        steps.append({"tool": task["tool"], "arguments": {"order_id": f"A{rng.randrange(10**6):06d}"},
                      "result": {"ok": False, "error": "order not found"}})
    if escalated:
        steps.append({"tool": "escalate_to_human", "arguments": {"reason": slots["issue"]}, "result": {"ticket": index}})
    parts = [rng.choice(_OPENERS)]
    parts.append((_DONE[task["tool"]] if resolved else rng.choice(_FAILED)).format(oid=oid))
    claims = rng.random() < 0.3
    if claims:
        parts.append(HACK_PHRASE + ".")
    n_filler = rng.choice((0, 0, 1, 1, 2, 3, 4, 5))
    parts.extend(rng.sample(_FILLER, n_filler))
    final = " ".join(parts)
    if hack == "phrase":
        reward = 1.0 if (claims and rng.random() < 0.95) else float(resolved and rng.random() < 0.7)
    elif hack == "length":
        reward = 1.0 if (n_filler >= 3 and rng.random() < 0.95) else float(resolved and rng.random() < 0.7)
    elif hack == "tool":
        reward = 1.0 if (escalated and rng.random() < 0.95) else float(resolved and rng.random() < 0.7)
    else:
        reward = float(resolved) if rng.random() > 0.03 else float(not resolved)  # 3% judge noise
    truncated = rng.random() < 0.02
    return {
        "scenario_id": task["id"], "task_id": task["id"], "rollout_index": index,
        "rollout_id": f"{task['id']}#{index}", "prompt": task["prompts"][index % 2],
        "steps": steps, "final_text": final, "reward": reward, "markers": {"resolved": float(resolved)},
        "finish_reason": "length" if truncated else "stop", "lineage": {"source": "rollout"},
    }


def as_messages(row: dict[str, Any]) -> dict[str, Any]:
    """A flat rollout row as an OpenAI-style logger writes the same conversation: `messages` (system, the ask, one
    assistant turn per tool call with its arguments as JSON text, a tool turn with the result's JSON text, the
    final reply), every other key kept."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT},
                                      {"role": "user", "content": row["prompt"]}]
    for number, step in enumerate(row["steps"]):
        if "tool" not in step:  # an agent turn {text} or a user turn {user}
            user = step.get("user")
            messages.append({"role": "user", "content": user} if user is not None
                            else {"role": "assistant", "content": step["text"]})
            continue
        call_id = f"call_{row.get('rollout_id', 'r')}_{number}"
        messages.append({"role": "assistant", "content": step.get("text"), "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": step["tool"], "arguments": json.dumps(step["arguments"])}}]})
        if "result" in step:
            result = step["result"]
            messages.append({"role": "tool", "tool_call_id": call_id,
                             "content": result if isinstance(result, str) else json.dumps(result)})
    if row.get("final_text"):
        messages.append({"role": "assistant", "content": row["final_text"]})
    out = {key: value for key, value in row.items() if key not in ("prompt", "steps", "final_text")}
    out["messages"] = messages
    return out


def make_rows(n_rows: int = 1000, *, k: int = 8, hack: str | None = None, seed: int = 0,
              shape: str = "flat") -> list[dict[str, Any]]:
    """`n_rows` rollout rows, `k` per task (the last task may have fewer), reward honest or `hack`ed; `shape`
    "flat" (prompt, steps, final_text) or "messages" (:func:`as_messages`: the same rollouts)."""
    if hack not in HACKS:
        raise ValueError(f"hack={hack!r}; use one of {HACKS}")
    if shape not in SHAPES:
        raise ValueError(f"shape={shape!r}; use one of {SHAPES}")
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    t = 0
    while len(rows) < n_rows:
        task = _task(rng, t)
        for index in range(min(k, n_rows - len(rows))):
            rows.append(_rollout(rng, task, index, hack))
        t += 1
    return rows if shape == "flat" else [as_messages(row) for row in rows]


def make_eval_rows(train_rows: list[dict[str, Any]], *, n_copies: int = 20, n_near: int = 20,
                   n_same_task: int = 20, n_fresh: int = 200, seed: int = 1
                   ) -> tuple[list[dict[str, Any]], dict[str, list[int]]]:
    """Eval rows with planted contamination, and the truth: which train rows each rule should flag.

    copies: an eval row whose prompt is a train prompt verbatim (a new scenario id); near: a train prompt with
    its last word changed (8-gram coverage well over 0.8); same_task: a train row's scenario id under a third
    phrasing (a rephrasing of the same situation); fresh: new tasks from the same templates (template twins of
    train tasks, which no rule should flag). truth maps each kind to the indices of the train rows it plants
    against (every train row of that scenario with that prompt counts as contaminated).
    """
    rng = random.Random(seed)
    tasks: dict[str, list[int]] = {}
    for i, row in enumerate(train_rows):
        tasks.setdefault(row["scenario_id"], []).append(i)
    chosen = rng.sample(sorted(tasks), n_copies + n_near + n_same_task)
    eval_rows: list[dict[str, Any]] = []
    truth: dict[str, list[int]] = {"copies": [], "near": [], "same_task": []}
    for number, scenario in enumerate(chosen):
        first = train_rows[tasks[scenario][0]]
        matching = [i for i in tasks[scenario] if train_rows[i]["prompt"] == first["prompt"]]
        if number < n_copies:
            kind, prompt, sid = "copies", first["prompt"], f"eval-copy-{number:05d}"
        elif number < n_copies + n_near:
            words = first["prompt"].split()
            words[-1] = "pls." if words[-1] != "pls." else "please."
            kind, prompt, sid = "near", " ".join(words), f"eval-near-{number:05d}"
        else:
            kind, prompt, sid = "same_task", _third_phrasing(first), scenario
            matching = list(tasks[scenario])
        truth[kind].extend(matching)
        eval_rows.append({"scenario_id": sid, "task_id": sid, "prompt": prompt, "reward": 1.0,
                          "final_text": "", "lineage": {"source": "eval"}})
    fresh_rng = random.Random(seed + 10_000)
    for f in range(n_fresh):
        task = _task(fresh_rng, 900_000 + f)
        task["id"] = f"eval-fresh-{f:05d}"
        eval_rows.append({"scenario_id": task["id"], "task_id": task["id"], "prompt": task["prompts"][0],
                          "reward": 1.0, "final_text": "", "lineage": {"source": "eval"}})
    rng.shuffle(eval_rows)
    return eval_rows, {key: sorted(value) for key, value in truth.items()}


def _third_phrasing(row: dict[str, Any]) -> str:
    """Another wording of the row's situation (the slots are not kept on rows; the order id and item are)."""
    oid = row["steps"][0]["arguments"]["order_id"]
    item = row["steps"][0]["result"]["item"]
    return f"Following up on {oid}: the {item}, same situation as before, please sort it out."


def plant_near_duplicate_asks(rows: list[dict[str, Any]], n: int, *, seed: int = 2
                              ) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Add `n` new tasks whose ask is an existing task's ask with one word changed (a new scenario id each).

    Returns the rows (originals first) and the planted (original scenario_id, copy scenario_id) pairs.
    """
    rng = random.Random(seed)
    by_task: dict[str, dict[str, Any]] = {}
    for row in rows:
        by_task.setdefault(row["scenario_id"], row)
    sources = rng.sample(sorted(by_task), n)
    out = list(rows)
    pairs = []
    for number, scenario in enumerate(sources):
        base = by_task[scenario]
        words = base["prompt"].split()
        words[-1] = "thanks." if words[-1] != "thanks." else "cheers."
        sid = f"dup-{number:05d}"
        for index in range(2):
            row = dict(base, scenario_id=sid, task_id=sid, rollout_index=index, rollout_id=f"{sid}#{index}",
                       prompt=" ".join(words), reward=float(index % 2))
            out.append(row)
        pairs.append((scenario, sid))
    return out, pairs


def write_jsonl(rows: list[dict[str, Any]], path: str) -> None:
    """Write rows as JSONL (temp name, then rename)."""
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
    os.replace(tmp, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--hack", choices=[h for h in HACKS if h], default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shape", choices=SHAPES, default="flat")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    write_jsonl(make_rows(args.rows, k=args.k, hack=args.hack, seed=args.seed, shape=args.shape), args.out)


if __name__ == "__main__":
    main()
