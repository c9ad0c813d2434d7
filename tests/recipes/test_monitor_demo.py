"""`whileai-train demo` runs the GRPO reward-monitor demo: the planted hack is named and the run stopped."""

from __future__ import annotations

import pytest

from whileai_train.cli import main
from whileai_train.runs.cost import duration_text
from whileai_train.runs.store import LocalStore

pytestmark = pytest.mark.trainer


def test_demo_command_catches_the_planted_hack(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["demo", "--steps", "15"])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 0
    assert "!!! REWARD MONITOR ALARM [" in text
    assert "REWARD HACKING SUSPECTED" in text and "training stopped" in text
    assert "!!! REWARD MONITOR ALARM [feature]" in text and "reward tracks 'word:thanks'" in text  # the hack, named
    (run,) = LocalStore().list_runs()
    assert run["name"] == "demo-grpo-monitor" and run["status"] == "stopped"
    assert f"run {run['id']}: stopped" in text
    # one duration: the demo prints the run's own, as `whileai-train show` does
    took = duration_text(LocalStore().get_run(run["id"])["summary"]["seconds"])
    assert f"run {run['id']}: stopped ({took}; the demo took " in text
    assert main(["show", run["id"]]) == 0 and f", {took}; " in capsys.readouterr().out


def test_clean_demo_at_full_length_raises_no_alarm_and_ends_done(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["demo", "--clean"])  # the full length the README runs (40 steps)
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 0
    assert "REWARD MONITOR ALARM" not in text and "NO ALARM over 9 holdout evals" in text
    (run,) = LocalStore().list_runs()
    assert run["name"] == "demo-grpo-monitor-clean" and run["status"] == "done"
    assert f"run {run['id']}: done" in text
    assert "step  40/40" in text  # it ran the whole length
