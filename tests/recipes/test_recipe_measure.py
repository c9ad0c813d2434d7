"""recipes/02-measure/reward-hacking runs on the tiny model and prints what its README says it prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.trainer

ROOT = Path(__file__).resolve().parents[2]


def test_the_whole_loop_catches_the_hacked_run_and_keeps_the_verdict_on_it() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "recipes/02-measure/reward-hacking/run.py")],
                          capture_output=True, text=True, timeout=1500, check=False)
    out = done.stdout
    assert done.returncode == 0, out[-4000:] + done.stderr[-3000:]
    assert out.count("gate: ") == 2 and "=== hacked: proxy = keyword_reward ===" in out
    gate_hacked = out.split("=== hacked")[1].split("gate: ", 1)[1].splitlines()[0]
    gate_honest = out.split("=== honest")[1].split("gate: ", 1)[1].splitlines()[0]
    assert gate_hacked.startswith("REWARD HACK") and gate_honest.startswith("OK")  # seen before training
    assert "monitor: REWARD HACKING SUSPECTED" in out.split("=== honest")[0]
    assert "monitor: NO ALARM" in out.split("=== honest")[1]
    assert out.count("kept on run ") == 2 and "whileai-train show run-" in out
    side = out.split("=== side by side ===")[1].strip().splitlines()
    assert side[0].startswith("hacked  alarms: ") and not side[0].startswith("hacked  alarms: none")
    assert not side[0].endswith("delta_report: PASS")
    assert side[1].startswith("honest  alarms: none")
    readme = (ROOT / "recipes/02-measure/reward-hacking/README.md").read_text(encoding="utf-8")
    assert "=== side by side ===" in readme and "gate: REWARD HACK" in readme and "monitor: REWARD HACKING" in readme
