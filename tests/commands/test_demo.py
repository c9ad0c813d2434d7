"""`whileai-train demo --sft` runs end to end on CPU and shows only agent turns trained."""

from __future__ import annotations

import pytest

from whileai_train.cli import main

pytestmark = pytest.mark.trainer


def test_demo_exports_trains_and_shows_what_trained(tmp_path, capsys):
    code = main(["demo", "--sft", "--out", str(tmp_path / "demo"), "--rows", "16", "--steps", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "export ok:" in out and "train with: assistant_only_loss=True" in out
    assert "trained 1 SFT steps" in out and "trained spans hold agent turns only: yes" in out
    assert (tmp_path / "demo" / "sft-trl.jsonl").exists()
    marked = out.split("what trained in example 0")[1]
    assert "»" in marked and "<tool_response>" not in "".join(part.split("«")[0] for part in marked.split("»")[1:])

