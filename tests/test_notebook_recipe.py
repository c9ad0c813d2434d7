"""recipes/06-notebook/monitor.ipynb executed headless (nbclient, an ipykernel): no cell fails, the report cells
hold the rendered reports (text/markdown, verdict first), the long calls show a progress bar, and the monitor's
alarm line is in the training cell's output."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

import whileai_train as wai
from whileai_train.exporters.synthetic import refund_rollouts
from whileai_train.runs.store import LocalStore

pytestmark = pytest.mark.trainer
ROOT = Path(__file__).resolve().parents[1]


def _outputs(cell: Any, kind: str) -> str:
    """The text of a cell's outputs of one kind: "stdout", "stderr" or a MIME type such as "text/markdown"."""
    texts = []
    for output in cell.outputs:
        if output.output_type == "stream" and output.name == kind:
            texts.append(output.text)
        elif output.output_type in ("execute_result", "display_data") and kind in output.data:
            texts.append(output.data[kind])
    return "".join(texts)


def _cell(nb: Any, needle: str) -> Any:
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and needle in c.source]
    return cell


def test_the_notebook_runs_headless_with_rendered_reports_bars_and_the_alarm_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(ROOT / "recipes" / "06-notebook" / "monitor.ipynb", tmp_path / "monitor.ipynb")
    nb = nbformat.read(tmp_path / "monitor.ipynb", as_version=4)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the kernel is another process: it imports this checkout
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    rows = list(refund_rollouts(20_000, tasks=2_000, seed=0))

    gate = _cell(nb, "wai.publish_gate(rows)")
    verdict = str(wai.publish_gate(rows, progress=False)).splitlines()[0]
    assert _outputs(gate, "text/markdown").startswith(f"**{verdict}**")
    assert "publish_gate: rewards and asks" in _outputs(gate, "stderr")  # the progress bar of a 20,000-row pass

    train = _cell(nb, "trainer.train()")
    assert "!!! REWARD MONITOR ALARM [feature] at step 5: reward tracks 'word:thanks'" in _outputs(train, "stderr")
    report = _cell(nb, "format_hack_monitor")
    assert _outputs(report, "stdout").startswith("REWARD HACKING SUSPECTED: 1 alarm (feature at step 5)")

    delta = _cell(nb, "wai.delta_report(before, after)")
    after = list(refund_rollouts(20_000, tasks=2_000, seed=1))
    verdict = str(wai.delta_report(rows, after, progress=False)).splitlines()[0]
    assert _outputs(delta, "text/markdown").startswith(f"**{verdict}**")
    assert "delta_report: rewards and asks" in _outputs(delta, "stderr")

    (run,) = LocalStore().list_runs()
    assert run["name"] == "notebook-grpo" and run["status"] == "stopped"

