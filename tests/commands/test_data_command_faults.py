"""`whileai-train gate` and `export` on hostile files: binary, non-UTF-8, a torn character, a broken parquet.
Each is an InputError naming the file and the line, exit 2 (a refusal stays exit 1); the export's output
follows the umask and never overwrites its own input."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from whileai_train.cli import main
from whileai_train.demos.rollouts import refund_rollouts
from whileai_train.errors import InputError, RowError
from whileai_train.rows.files import read_rows

GOOD = json.dumps({"scenario_id": "a", "prompt": "cancel order 7", "final_text": "done", "reward": 1.0})


@pytest.fixture()
def rows_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    passing = [row for row in refund_rollouts(16) if row["reward"] >= 0.5]  # SFT refuses failing rows
    path.write_text("".join(json.dumps(row) + "\n" for row in passing), encoding="utf-8")
    return path


BAD_FILES = {
    "png": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "line 1 is not UTF-8 text"),
    "binary": ((GOOD + "\n").encode() + b"\x00\x00\x01\x02abc\n", "line 2 holds NUL bytes"),
    "latin1": ((GOOD + "\n" + '{"prompt": "caf\xe9"}\n').encode("latin-1"), "line 2 is not UTF-8 text"),
    "torn": ((GOOD + "\n").encode() + b'{"prompt": "\xe2\x82', "line 2 is not UTF-8 text"),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_read_rows_names_the_file_and_line(kind: str, tmp_path: Path) -> None:
    data, said = BAD_FILES[kind]
    path = tmp_path / f"{kind}.jsonl"
    path.write_bytes(data)
    with pytest.raises(RowError) as info:
        read_rows(path)
    assert str(path) in str(info.value) and said in str(info.value) and "Fix:" in str(info.value)


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_gate_and_export_exit_2_on_bad_bytes(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, said = BAD_FILES[kind]
    path = tmp_path / f"{kind}.jsonl"
    path.write_bytes(data)
    assert main(["gate", str(path), "--mode", "sft"]) == 2
    captured = capsys.readouterr()
    assert str(path) in captured.out and said in captured.out
    assert main(["export", str(path), str(tmp_path / "out.jsonl")]) == 2
    assert said in capsys.readouterr().err and not (tmp_path / "out.jsonl").exists()


def test_gate_on_a_binary_file_is_exit_2_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "model.bin"
    path.write_bytes(bytes(range(256)) * 64)
    done = subprocess.run([sys.executable, "-m", "whileai_train.cli", "gate", str(path), "--mode", "rl"],
                          capture_output=True, text=True, timeout=300, check=False, env=dict(os.environ))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and str(path) in done.stdout and "gate: not checked (exit 2)" in done.stderr


def test_a_broken_parquet_is_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "completions"
    folder.mkdir()
    broken = folder / "completions_00001.parquet"
    broken.write_bytes(b"PAR1" + b"\x00not really parquet\xff" * 10 + b"PAR1")
    for source in (broken, folder):
        with pytest.raises(InputError) as info:
            read_rows(source)
        assert str(broken) in str(info.value) and "not a readable parquet file" in str(info.value)
    assert main(["gate", str(folder), "--mode", "rl"]) == 2
    assert str(broken) in capsys.readouterr().out


def test_a_refusal_stays_exit_1(tmp_path: Path) -> None:
    rows = [{"scenario_id": t, "prompt": f"ask {t}", "final_text": "x", "reward": r}
            for t, r in (("easy", 1.0), ("hard", 0.0)) for _ in range(4)]
    path = tmp_path / "unanimous.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["gate", str(path), "--mode", "rl", "--no-scan"]) == 1


def test_export_refuses_to_overwrite_its_input(rows_file: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    before = rows_file.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(rows_file)
    for out in (rows_file, link, tmp_path / "." / rows_file.name):
        assert main(["export", str(rows_file), str(out)]) == 2
        assert "would destroy the input" in capsys.readouterr().err
    assert rows_file.read_bytes() == before
    tools = tmp_path / "tools.json"
    tools.write_text("[]")
    assert main(["export", str(rows_file), str(tools), "--tools", str(tools)]) == 2
    assert tools.read_text() == "[]"


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_exported_file_follows_the_umask(mask: int, mode: int, rows_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    old = os.umask(mask)
    try:
        assert main(["export", str(rows_file), str(out)]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == mode


def test_a_non_utf8_tools_file_is_exit_2(rows_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = tmp_path / "tools.json"
    tools.write_bytes(b'[{"name": "caf\xe9"}]')
    assert main(["export", str(rows_file), str(tmp_path / "o.jsonl"), "--tools", str(tools)]) == 2
    err = capsys.readouterr().err
    assert str(tools) in err and "not UTF-8" in err
