"""`whileai-train demo` and the SFT export recipe run end to end on CPU and show only agent turns trained."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from whileai_train.cli import main

pytestmark = pytest.mark.trainer
ROOT = Path(__file__).resolve().parents[1]


def test_demo_exports_trains_and_shows_what_trained(tmp_path, capsys):
    code = main(["demo", "--sft", "--out", str(tmp_path / "demo"), "--rows", "16", "--steps", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "export ok:" in out and "train with: assistant_only_loss=True" in out
    assert "trained 1 SFT steps" in out and "trained spans hold agent turns only: yes" in out
    assert (tmp_path / "demo" / "sft-trl.jsonl").exists()
    marked = out.split("what trained in example 0")[1]
    assert "»" in marked and "<tool_response>" not in "".join(part.split("«")[0] for part in marked.split("»")[1:])


def test_recipe_script_runs(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "recipes/01-export/sft-tiny/run.py"), "--out", str(tmp_path),
                           "--steps", "1", "--mode", "unroll"], capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "export ok:" in done.stdout and "trained spans of example 0 (unroll)" in done.stdout
    spans = done.stdout.split("trained spans of example 0 (unroll):")[1]
    assert "tool_response" not in spans and "<|im_start|>user" not in spans
