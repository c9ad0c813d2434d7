"""A property of delivery: whatever sequence of answers the platform gives (success, 500, 429, a redirect, a
2xx HTML page, a JSON answer with other keys, a log answer that took none, a dropped connection, a hang, an
answer dripped a byte at a time), the points on it after
`whileai-train sync` are the points logged, each exactly once, in one run, finished as the code said.

Real HTTP server, real spool, real `sync`; timings shortened so each example takes about a second.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import whileai_train as wai
from tests.helpers.http_server import FaultyServer
from whileai_train.runs.config import SenderConfig

ANSWERS = ("ok", "error500", "r429", "redirect", "html", "otherjson", "took0", "drop", "hang", "drip")

QUICK = SenderConfig(flush_interval_s=0.05, finish_wait_s=1.0, connect_timeout_s=0.5, read_timeout_s=0.3,
                     request_deadline_s=0.5, open_timeout_s=0.3, backoff_base_s=0.02, backoff_max_s=0.1,
                     retry_after_max_s=0.2)


@pytest.fixture()
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    srv = FaultyServer(tmp_path / "server.db")
    srv.hang_s = 0.5  # > read_timeout_s: the client gives up first
    srv.drip_s = 0.2  # each byte inside read_timeout_s: only the request's deadline ends it
    srv.retry_after = "1"  # honoured up to retry_after_max_s
    monkeypatch.setenv("WHILEAI_API_KEY", srv.api_key)
    monkeypatch.setenv("WHILEAI_API_URL", srv.url)
    yield srv
    srv.close()


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(answers=st.lists(st.sampled_from(ANSWERS), max_size=10), bursts=st.lists(st.integers(1, 6), min_size=1,
                                                                               max_size=3))
def test_points_after_sync_equal_points_logged_exactly_once(server: FaultyServer, isolated_home: Path,
                                                            answers: list[str], bursts: list[int]) -> None:
    from whileai_train.cli import main

    server.script(answers)  # the next len(answers) requests get these answers, one each; then success
    name = f"prop-{time.monotonic_ns()}"
    run = wai.run(name=name, config=QUICK)
    step = 0
    for size in bursts:
        for _ in range(size):
            run.log(step, loss=1.0 / (step + 1))
            step += 1
        time.sleep(0.06)  # a flush interval between bursts: several batches, several answers
    run.note("a note travels the same road")
    run.finish()
    server.script([])
    assert main(["sync"]) == 0
    runs = [r for r in server.runs() if r["name"] == name]
    assert len(runs) == 1  # one run, however often POST /runs was retried
    record = server.run(runs[0]["id"])
    assert [p["seq"] for p in server.points(runs[0]["id"])] == list(range(step))
    assert record["status"] == "done" and [n["markdown"] for n in record["notes"]] == ["a note travels the same road"]
    assert not list((isolated_home / ".whileai" / "spool").glob("*.jsonl"))
