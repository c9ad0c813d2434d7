"""The command line as a person meets it: --version, a reader that stops early, `mark` before `delta`, and one run
id from the line printed at open to the run a `sync` delivers. Real subprocesses, real files, a real HTTP server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import whileai_train as wai
from tests.helpers.http_server import FaultyServer
from whileai_train.runs.config import SenderConfig

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _cli(*args: str | Path, **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "whileai_train.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ), check=False, **options)  # type: ignore[call-overload]


def test_version_names_the_package_version() -> None:
    done = _cli("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"whileai-train {wai.__version__}"


@pytest.mark.parametrize(("command", "code"), [(("gate", EXAMPLES / "rollouts.jsonl", "--mode", "rl"), 0),
                                               (("gate", EXAMPLES / "rollouts.jsonl", "--mode", "sft"), 1)])
def test_a_reader_that_stops_early_ends_the_output_quietly_and_the_exit_code_stays(command: tuple, code: int) -> None:
    with subprocess.Popen([sys.executable, "-m", "whileai_train.cli", *map(str, command)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=dict(os.environ)) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # `| head` gone before the first line: every write meets a closed pipe
        errors = process.stderr.read().decode()
        assert process.wait(timeout=300) == code  # the gate's verdict, not a crash
    assert "Traceback" not in errors and "BrokenPipeError" not in errors, errors


def test_mark_stamps_the_markers_delta_must_not_regress_reads(tmp_path: Path) -> None:
    before, after = EXAMPLES / "before.jsonl", EXAMPLES / "after.jsonl"
    unmarked = _cli("delta", before, after, "--must-not-regress", "honest_claims")
    assert unmarked.returncode == 2 and unmarked.stdout == ""
    assert "whileai-train mark ROWS OUT" in unmarked.stderr and "honest_claims" in unmarked.stderr
    for side in (before, after):
        done = _cli("mark", side, tmp_path / side.name)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"marked 240 rows of {side} -> {tmp_path / side.name}: honest_claims, ")
    rows = [json.loads(line) for line in (tmp_path / "before.jsonl").read_text().splitlines()]
    assert len(rows) == 240 and all({"honest_claims", "argument_grounding", "concise"} <= set(row["markers"])
                                    for row in rows)
    assert rows[0]["scenario_id"] == json.loads(before.read_text().splitlines()[0])["scenario_id"]
    marked = _cli("delta", tmp_path / "before.jsonl", tmp_path / "after.jsonl", "--must-not-regress",
                  "honest_claims", "--by", "category", "--json")
    report = json.loads(marked.stdout)["report"]
    assert marked.returncode in (0, 1) and "honest_claims" in report["metrics"]
    assert marked.returncode == (0 if report["headline_verdict"] in ("PASS", "NO DIFFERENCE") else 1)


def test_mark_never_overwrites_its_input_and_names_a_bad_line(tmp_path: Path) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_text(EXAMPLES.joinpath("rollouts.jsonl").read_text().splitlines()[0] + "\n{not json\n")
    kept = source.read_text()
    same = _cli("mark", source, source)
    assert same.returncode == 2 and "would destroy the input" in same.stderr and source.read_text() == kept
    broken = _cli("mark", source, tmp_path / "out.jsonl", "--families", "trace")
    assert broken.returncode == 2 and "line 2 is not valid JSON" in broken.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_one_run_id_from_the_line_printed_at_open_to_the_run_sync_delivers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from whileai_train.cli import main

    server = FaultyServer(tmp_path / "api.db")
    try:
        server.set("html")  # a captive portal answers at open: nothing reaches the API, the run is spooled
        config = SenderConfig(flush_interval_s=0.05, finish_wait_s=1.0, connect_timeout_s=1.0, read_timeout_s=1.0,
                              open_timeout_s=1.0, backoff_base_s=0.05, backoff_max_s=0.2)
        run = wai.run(name="offline", api_key=server.api_key, url=server.url, config=config)
        printed = capsys.readouterr().out
        for step in range(1, 4):
            run.log(step, loss=1.0 / step)
        run.finish()
        assert f"({run.id})" in printed and server.runs() == []
        server.set("ok")
        monkeypatch.setenv("WHILEAI_API_KEY", server.api_key)
        assert main(["sync"]) == 0
        (delivered,) = server.runs()
        assert delivered["id"] == run.id and f"{run.id}: 3 points sent" in capsys.readouterr().out
        assert server.run(run.id)["status"] == "done" and server.run(run.id)["step"] == 3
    finally:
        server.close()
