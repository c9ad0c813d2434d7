"""recipes/06-notebook/monitor.ipynb executed headless (nbclient, an ipykernel): no cell fails, the report cells
hold the rendered reports (text/markdown, verdict first), the long calls show a progress bar, and the monitor's
alarm line is in the training cell's output. The test extra installs ipywidgets (the notebook recipe tells users to):
the bars are widgets then; a second, short notebook with ipywidgets hidden shows the text bars on stderr."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import ipywidgets  # noqa: F401  (the test extra's: the bars below are widgets)
import nbformat
import pytest
from nbclient import NotebookClient

import whileai_train as wai
from whileai_train.demos.rollouts import refund_rollouts
from whileai_train.runs.store import LocalStore

pytestmark = pytest.mark.trainer
ROOT = Path(__file__).resolve().parents[2]


def _outputs(cell: Any, kind: str) -> str:
    """The text of a cell's outputs of one kind: "stdout", "stderr" or a MIME type such as "text/markdown"."""
    texts = []
    for output in cell.outputs:
        if output.output_type == "stream" and output.name == kind:
            texts.append(output.text)
        elif output.output_type in ("execute_result", "display_data") and kind in output.data:
            texts.append(output.data[kind])
    return "".join(texts)


def _bars(cell: Any) -> list[str]:
    """The text of each widget progress bar a cell displayed (tqdm.auto with ipywidgets: a display_data whose
    text/plain reads like the terminal bar)."""
    return [output.data["text/plain"] for output in cell.outputs if output.output_type == "display_data"
            and "application/vnd.jupyter.widget-view+json" in output.data]


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

    first = nb.cells[[c.cell_type for c in nb.cells].index("code")]
    assert first.outputs == []  # the imports and seeds show nothing (no `<torch._C.Generator ...>`)

    gate = _cell(nb, "wai.publish_gate(rows)")
    verdict = str(wai.publish_gate(rows, progress=False)).splitlines()[0]
    assert _outputs(gate, "text/markdown").startswith(f"**{verdict}**")
    assert any(bar.startswith("publish_gate: rewards and asks") for bar in _bars(gate))  # a 20,000-row pass

    train = _cell(nb, "trainer.train()")
    # what holds on any CPU: the feature alarm names the planted word; which alarms join it and at which eval
    # follow the float trajectory (kernels differ by CPU), so neither is pinned
    assert "!!! REWARD MONITOR ALARM [feature] at step " in _outputs(train, "stderr")
    assert "reward tracks 'word:thanks'" in _outputs(train, "stderr")
    report = _cell(nb, "format_hack_monitor")
    verdict = _outputs(report, "stdout").splitlines()[0]
    assert verdict.startswith("REWARD HACKING SUSPECTED: ") and verdict.endswith("; training stopped")
    assert "feature at step " in verdict

    delta = _cell(nb, "wai.delta_report(before, after)")
    after = list(refund_rollouts(20_000, tasks=2_000, seed=1))
    verdict = str(wai.delta_report(rows, after, progress=False)).splitlines()[0]
    assert _outputs(delta, "text/markdown").startswith(f"**{verdict}**")
    assert any(bar.startswith("delta_report: rewards and asks") for bar in _bars(delta))

    (run,) = LocalStore().list_runs()
    assert run["name"] == "notebook-grpo" and run["status"] == "stopped"

    steps = [p["step"] for p in LocalStore().points(run["id"]) if "loss" in p]
    assert steps and max(steps) < 20  # stopped before its last step (max_steps=20)


def test_without_ipywidgets_the_bars_are_text_on_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other half of "a widget with ipywidgets installed, else text": the kernel's ipywidgets is hidden (a
    module on its path that cannot be imported), and the same gate cell prints its bars on stderr."""
    hide = tmp_path / "hide"
    (hide / "ipywidgets").mkdir(parents=True)
    (hide / "ipywidgets" / "__init__.py").write_text("raise ImportError('hidden by the test')\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", f"{hide}{os.pathsep}{ROOT}")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import whileai_train as wai\n"
                                          "from whileai_train.demos.rollouts import refund_rollouts\n"
                                          "gate = wai.publish_gate(list(refund_rollouts(20_000, tasks=2_000, seed=0)))")]
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    (cell,) = nb.cells
    assert _bars(cell) == []
    assert "publish_gate: rewards and asks" in _outputs(cell, "stderr")
