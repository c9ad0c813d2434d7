"""`whileai-train eval MODEL TASKS.jsonl --reward module:function [--reward ...] [--k 4] [--runs 3] -o OUT.jsonl`:
the CI step between training and `whileai-train delta` (gate -> train -> eval baseline and trained -> delta).

Samples `k` completions per task from MODEL (a folder, a PEFT adapter folder or a hub id), `runs` times, grades
them with the reward functions, writes the rows to OUT as it goes (run again to finish an interrupted one) and
prints pass_at over them. Exit codes: 0 evaluated, 2 unusable input or arguments (the rows already written stay).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["HELP", "add_arguments", "load_function", "run"]

HELP = "sample a model on tasks and grade the completions with reward functions (the rows `delta` compares)"

EXIT_OK = 0
EXIT_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from whileai_train.sampling import defaults as D

    parser.add_argument("model", help="a model folder (save_pretrained), a PEFT adapter folder, or a hub id")
    parser.add_argument("tasks", help="the tasks, a JSONL file: one row per task with a 'prompt' and the columns "
                                      "your reward functions read")
    parser.add_argument("--reward", action="append", required=True, metavar="MODULE:FUNCTION",
                        help="a reward function with GRPOTrainer's contract, as module:function or path/to/file.py:"
                             "function (repeat for several; each becomes a column, reward is their sum)")
    parser.add_argument("--k", type=int, default=D.EVAL_K, help=f"completions per task (default {D.EVAL_K})")
    parser.add_argument("--runs", type=int, default=D.EVAL_RUNS,
                        help=f"independent evaluations, stamped lineage.eval_run (default {D.EVAL_RUNS})")
    parser.add_argument("--seed", type=int, default=D.EVAL_SEED, help=f"the evaluation's seed (default {D.EVAL_SEED})")
    parser.add_argument("--max-completion-length", type=int, default=None, metavar="TOKENS",
                        help=f"token budget per completion (default {D.MAX_COMPLETION_LENGTH}, GRPOConfig's)")
    parser.add_argument("--temperature", type=float, default=None, help=f"default {D.TEMPERATURE}")
    parser.add_argument("--engine", choices=D.ENGINES, default="auto",
                        help="auto: vLLM where installed with a GPU, else transformers' generate")
    parser.add_argument("--batch-size", type=int, default=D.BATCH_SEQUENCES, help="completions per generate call")
    parser.add_argument("-o", "--output", required=True, metavar="OUT.jsonl",
                        help="where the rows go, written as the evaluation runs (an existing file is resumed)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def load_function(spec: str) -> Callable[..., Any]:
    """`module:function` or `path/to/file.py:function` as the callable it names; ConfigError with the fix."""
    from whileai_train.errors import ConfigError

    where, _, name = spec.rpartition(":")
    if not where or not name:
        raise ConfigError(f"--reward {spec!r} is not module:function. Fix: e.g. --reward my_rewards:exact_answer")
    try:
        if where.endswith(".py"):
            path = Path(where)
            loader = importlib.util.spec_from_file_location(path.stem, path)
            if loader is None or loader.loader is None:
                raise ImportError(f"no Python file at {where}")
            module = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(module)
        else:
            module = _import_from_working_directory(where)
    except (ImportError, OSError) as exc:
        raise ConfigError(f"--reward {spec!r}: cannot import {where!r} ({exc}). Fix: run from the folder that holds "
                          "it, set PYTHONPATH, or give the file's path (path/to/file.py:function)") from exc
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ConfigError(f"--reward {spec!r}: {where!r} has no function {name!r}. Fix: name a function defined there")
    return fn  # type: ignore[no-any-return]


def _import_from_working_directory(name: str) -> Any:
    """`importlib.import_module(name)` with the working directory first on the path, as `python -m` has it: an
    installed console script's sys.path[0] is its bin folder, so my_rewards.py beside the user is not found."""
    here = os.getcwd()
    if here in sys.path or "" in sys.path:
        return importlib.import_module(name)
    sys.path.insert(0, here)
    try:
        return importlib.import_module(name)
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(here)


def run(args: argparse.Namespace) -> int:
    from whileai_train.errors import WhileAIError
    from whileai_train.measure.pass_at import pass_at
    from whileai_train.rows.contract import task_key
    from whileai_train.sampling.evaluate import evaluate

    try:
        rewards = [load_function(spec) for spec in args.reward]
        rows = evaluate(args.model, args.tasks, rewards, k=args.k, runs=args.runs, seed=args.seed,
                        max_completion_length=args.max_completion_length, temperature=args.temperature,
                        engine=args.engine, batch_size=args.batch_size, output=args.output,
                        progress=False if args.no_progress else None)
    except (WhileAIError, OSError) as error:
        print(f"eval: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_INPUT
    tasks = len({task_key(row) for row in rows})
    print(f"eval: {len(rows)} rows ({tasks} tasks x k={args.k} x runs={args.runs}) from {args.model} -> {args.output}")
    print(str(pass_at(rows, k=args.k)))
    return EXIT_OK
