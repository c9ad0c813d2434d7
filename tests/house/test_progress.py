"""Progress bars for long calls (whileai_train/progress.py): tqdm's bar where someone watches and the rows are
many, none with progress=False, none where no one watches (a pipe, a CI log) unless progress=True."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train import progress as progress_module
from whileai_train.demos.rollouts import refund_rollouts


class Terminal:
    """stderr as a terminal shows it: isatty() is True, and what tqdm writes is kept."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


def _terminal(monkeypatch: pytest.MonkeyPatch) -> Terminal:
    """Called in the test body: pytest's own capture replaces sys.stderr after fixtures are set up."""
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    return screen


def _rows(n: int) -> list[dict[str, Any]]:
    return list(refund_rollouts(n, tasks=max(1, n // 8)))


def test_a_large_gate_in_a_terminal_shows_a_bar_per_row_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _terminal(monkeypatch)
    monkeypatch.setattr(progress_module, "MIN_ITEMS", 200)
    wai.hack_scan(_rows(400))
    assert "hack_scan: trajectories" in terminal.text and "hack_scan: features" in terminal.text
    assert "0/400" in terminal.text  # the bar knows the total


def test_small_inputs_and_progress_false_show_none(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    terminal = _terminal(monkeypatch)
    rows = _rows(400)
    wai.hack_scan(rows)  # under MIN_ITEMS: auto shows no bar
    monkeypatch.setattr(progress_module, "MIN_ITEMS", 200)
    wai.hack_scan(rows, progress=False)
    wai.publish_gate(rows, progress=False)
    wai.export_dataset(rows, tmp_path / "sft.jsonl", check="warn", progress=False)
    wai.delta_report(rows, rows, progress=False)
    assert terminal.text == ""


def test_no_one_watching_no_bar_unless_asked(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    monkeypatch.setattr(progress_module, "MIN_ITEMS", 200)
    rows = _rows(400)
    wai.export_dataset(rows, tmp_path / "a.jsonl", check="warn")  # stderr is pytest's capture, not a terminal
    assert capsys.readouterr().err == ""
    wai.export_dataset(rows, tmp_path / "b.jsonl", check="warn", progress=True)
    wai.delta_report(rows, rows, progress=True)
    err = capsys.readouterr().err
    assert "export: rows" in err and "delta_report: rewards and asks" in err


def test_progress_bar_for_a_loop_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _terminal(monkeypatch)
    assert list(progress_module.progress_bar(range(3), desc="holdout batches", progress=True, unit="batches")) \
        == [0, 1, 2]
    assert "holdout batches" in terminal.text and "0/3" in terminal.text
    terminal.text = ""
    assert list(progress_module.progress_bar(range(3), desc="quiet", progress=False)) == [0, 1, 2]
    assert list(progress_module.progress_bar(range(3), desc="small")) == [0, 1, 2]  # auto: under MIN_ITEMS
    assert terminal.text == ""


def test_the_signatures_say_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    import inspect

    for fn in (wai.hack_scan, wai.publish_gate, wai.decontaminate, wai.export_dataset, wai.training_rows,
               wai.export_preference, wai.export_prompts, wai.delta_report):
        parameter = inspect.signature(fn).parameters["progress"]
        assert parameter.default is None and parameter.kind is inspect.Parameter.KEYWORD_ONLY, fn.__name__
