"""What the library's messages and the docs tell a user to run exists: every `whileai-train COMMAND` is a
command, every `wai.NAME` is in the package, and names from elsewhere (run_judge, data.grade, wai login) are
not offered as fixes here."""

from __future__ import annotations

import re
from pathlib import Path

import whileai_train as wai
from whileai_train.cli import _available

ROOT = Path(__file__).resolve().parents[2]


def _texts() -> dict[str, str]:
    paths = [*(ROOT / "whileai_train").rglob("*.py"), ROOT / "README.md", *(ROOT / "recipes").rglob("*.md"),
             *(ROOT / "recipes").rglob("*.py"), *(ROOT / "docs").rglob("*.md")]
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in paths}


def test_every_command_and_function_named_exists() -> None:
    commands = set(_available())
    missing = sorted({(name, f"whileai-train {cmd}") for name, text in _texts().items()
                      for cmd in re.findall(r"whileai-train ([a-z][a-z-]*)", text) if cmd not in commands}
                     | {(name, f"wai.{attr}") for name, text in _texts().items()
                        for attr in re.findall(r"\bwai\.([A-Za-z_]\w*)", text) if not hasattr(wai, attr)})
    assert missing == []


def test_no_fix_names_a_tool_from_elsewhere() -> None:
    named = sorted((name, found) for name, text in _texts().items()
                   for found in re.findall(r"run_judge|data\.grade|wai login|whileai login", text))
    assert named == []
