"""What batching buys `evaluate`: completions per second at k=4 over 64 prompts, against a plain loop that calls
`model.generate` one prompt at a time on the same model, both in this run, printed as a ratio. Target >= 3x on CPU.

Both arms sample with the same settings and budget (`--tokens` new tokens, the same GenerationConfig, left padding
in the batched arm) and print the new tokens per completion they sampled, so the work is seen to be the same; the
loop arm is the loop a user writes first: for each prompt, for each of k tries, generate. The
arms alternate (`--rounds` each) so machine load hits both; each is timed in CPU seconds of this process
(time.process_time, all its threads) and in wall seconds. On a GPU machine with vLLM installed, `--vllm` adds the
same count through engine="vllm" (its own process-wide engine) beside the two.

    python bench/evaluate.py [--prompts 64] [--k 4] [--tokens 16] [--rounds 3] [--hidden 128] [--layers 2]
                             [--threads 1] [--vllm]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET = 3.0


def _model(hidden: int, layers: int) -> tuple[Any, Any, str]:
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

    tokenizer = build_tiny_tokenizer()
    model = build_tiny_model(tokenizer, hidden_size=hidden, layers=layers)
    folder = tempfile.mkdtemp(prefix="bench-evaluate-")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return model, tokenizer, folder


def zero(completions: list[Any], **kwargs: Any) -> list[float]:
    return [0.0] * len(completions)


def batched(model: Any, tokenizer: Any, tasks: list[dict[str, Any]], k: int, tokens: int) -> tuple[int, int]:
    import whileai_train as wai

    rows = wai.evaluate(model, tasks, zero, tokenizer=tokenizer, k=k, max_completion_length=tokens, progress=False)
    return len(rows), sum(row["completion_tokens"] for row in rows)


def one_at_a_time(model: Any, tokenizer: Any, tasks: list[dict[str, Any]], k: int, tokens: int) -> tuple[int, int]:
    import torch
    from transformers import GenerationConfig

    from whileai_train.sampling.generate import stop_ids

    config = GenerationConfig(max_new_tokens=tokens, do_sample=True, temperature=1.0, top_p=1.0, top_k=0,
                              pad_token_id=tokenizer.pad_token_id, eos_token_id=stop_ids(model, tokenizer))
    done = new_tokens = 0
    stops = set(config.eos_token_id)
    model.eval()
    with torch.no_grad():
        for task in tasks:
            ids = tokenizer(task["prompt"], return_tensors="pt")
            for _ in range(k):
                out = model.generate(**ids, generation_config=config)[0, ids["input_ids"].shape[1]:].tolist()
                cut = next((j for j, t in enumerate(out) if t in stops), None)
                new_tokens += len(out) if cut is None else cut + 1
                done += 1
    return done, new_tokens


def _timed(fn: Any, *args: Any) -> tuple[float, float, tuple[int, int]]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args)
    return time.process_time() - cpu, time.perf_counter() - wall, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: a loaded machine's cores are shared)")
    parser.add_argument("--vllm", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    from transformers.utils import logging as hf_logging

    from whileai_train.demos.grpo_monitor import make_tasks

    hf_logging.set_verbosity_error()
    torch.set_num_threads(args.threads)
    model, tokenizer, folder = _model(args.hidden, args.layers)
    tasks = (make_tasks(66, 0) * 2)[: args.prompts]
    for i, task in enumerate(tasks):
        task["task_id"] = f"t{i}"
    print(f"evaluate: {args.prompts} prompts x k={args.k}, {args.tokens} new tokens, tiny Qwen2 "
          f"(hidden {args.hidden}, {args.layers} layers), {torch.get_num_threads()} torch threads, "
          f"load average {os.getloadavg()[0]:.1f}")
    cpu: dict[str, list[float]] = {"batched": [], "loop": []}
    wall: dict[str, list[float]] = {"batched": [], "loop": []}
    tokens: dict[str, list[int]] = {"batched": [], "loop": []}
    count = args.prompts * args.k
    for _ in range(args.rounds):
        for name, fn in (("batched", batched), ("loop", one_at_a_time)):
            c, w, (n, new) = _timed(fn, model, tokenizer, tasks, args.k, args.tokens)
            assert n == count, (name, n)
            cpu[name].append(c)
            wall[name].append(w)
            tokens[name].append(new)
    rates = {name: count / statistics.median(cpu[name]) for name in cpu}
    wall_rates = {name: count / statistics.median(wall[name]) for name in wall}
    for name in ("loop", "batched"):
        print(f"  {name:8s} {rates[name]:8.1f} completions per CPU second   {wall_rates[name]:8.1f} per wall second"
              f"   {statistics.mean(tokens[name]) / count:5.1f} new tokens per completion   (median of {args.rounds})")
    ratio, wall_ratio = rates["batched"] / rates["loop"], wall_rates["batched"] / wall_rates["loop"]
    print(f"batched / one at a time: {ratio:.1f}x per CPU second, {wall_ratio:.1f}x per wall second "
          f"(target >= {TARGET:.0f}x): {'ok' if ratio >= TARGET else 'BELOW TARGET'}")
    if args.vllm:
        import whileai_train as wai

        started = time.perf_counter()
        rows = wai.evaluate(folder, tasks, zero, k=args.k, max_completion_length=args.tokens, engine="vllm",
                            progress=False)
        seconds = time.perf_counter() - started
        print(f"  vllm     {len(rows) / seconds:8.1f} completions per wall second (engine start included); "
              f"{(len(rows) / seconds) / wall_rates['batched']:.1f}x the batched generate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
