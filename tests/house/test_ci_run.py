""".ci/run runs exactly the README's test command, then the tests that train again on torch's portable kernels
(ATEN_CPU_CAPABILITY=default), so an assertion that holds only on this CPU's float kernels fails on CI first."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readme_command_then_the_training_tests_on_the_portable_kernels() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = readme.split("Run the tests:")[1].strip().splitlines()[0].strip()
    assert command.endswith("python -m pytest")
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.strip().startswith("#")]
    assert command in lines
    again = lines[lines.index(command) + 1:]
    assert again == ['ATEN_CPU_CAPABILITY=default python -m pytest -m "trainer or distributed"']
    markers = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'"trainer:', markers) and re.search(r'"distributed:', markers)  # the markers it selects
