"""Every exported TRL row is read as conversational by TRL's own `is_conversational`, whatever the hash seed.

TRL looks at whichever supported key a row's key set yields first, so a row that mixed a prompt string with
message lists would be read differently under different PYTHONHASHSEED values (docs/trl_facts.md). Each seed
runs in its own interpreter, because the seed is fixed when Python starts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import whileai_train as wai
from whileai_train.demos.rollouts import REFUND_TOOLS, marked_rollout, refund_rollouts

CHECK = """
import ast, importlib.util, json, os, sys
from typing import Any
# TRL's own is_conversational, read from the installed trl/data_utils.py and run as written: importing
# trl.data_utils would import torch, ten times over, for one pure-Python function.
source_path = os.path.join(os.path.dirname(importlib.util.find_spec("trl").origin), "data_utils.py")
with open(source_path, encoding="utf-8") as handle:
    tree = ast.parse(handle.read())
(function,) = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "is_conversational"]
namespace = {"Any": Any}
exec(compile(ast.Module(body=[function], type_ignores=[]), source_path, "exec"), namespace)
is_conversational = namespace["is_conversational"]
count = 0
for path in sys.argv[1:]:
    keys = set()
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            row = json.loads(line)
            keys.add(tuple(sorted(row)))
            assert is_conversational(row), (path, number, sorted(row))
            count += 1
    assert len(keys) == 1, (path, keys)
print("conversational", count)
"""


def _exports(folder: Path) -> list[Path]:
    rows = list(refund_rollouts(24)) + [marked_rollout(0, end_on_tool=True), marked_rollout(1)]
    rows.append({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
                 "tools": REFUND_TOOLS})
    paths = []
    for name, kwargs in {"assistant": {}, "final": {"mask_mode": "final"}, "unroll": {"unroll": True}}.items():
        paths.append(folder / f"sft-{name}.jsonl")
        wai.export_dataset(rows, paths[-1], format="trl", system_prompt="be brief", check="warn", **kwargs)
    paths.append(folder / "dpo.jsonl")
    wai.export_preference(list(refund_rollouts(32)), paths[-1])
    paths.append(folder / "grpo.jsonl")
    wai.export_prompts(rows, paths[-1])
    return paths


def test_every_trl_row_is_conversational_under_hash_seeds_0_to_9(tmp_path):
    paths = [str(p) for p in _exports(tmp_path)]
    for seed in range(10):
        env = dict(os.environ, PYTHONHASHSEED=str(seed))
        done = subprocess.run([sys.executable, "-c", CHECK, *paths], env=env, cwd=tmp_path, capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 0, (seed, done.stderr[-2000:])
        assert done.stdout.startswith("conversational ") and int(done.stdout.split()[1]) > 50, (seed, done.stdout)


def test_the_check_would_catch_a_mixed_row(tmp_path):
    """The same check fails, under some seed, on a row that mixes a prompt string with message lists."""
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"prompt": "the ask", "messages": [{"role": "user", "content": "hi"}]}\n')
    failures = 0
    for seed in range(10):
        env = dict(os.environ, PYTHONHASHSEED=str(seed))
        done = subprocess.run([sys.executable, "-c", CHECK, str(path)], env=env, cwd=tmp_path, capture_output=True,
                              text=True, timeout=120, check=False)
        failures += done.returncode != 0
    assert 0 < failures < 10  # read one way under some seeds, the other way under others
