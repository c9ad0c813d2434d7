"""The client against platforms that are slow on purpose or answer in their own words (a real HTTP server):
`wai.run()` returns within its bound while the platform drips its answer a byte a second, each send and
a whole `sync` end within their deadlines, an answer that took fewer points than were sent is a warning
naming how many (the points stay in the spool), and any 2xx JSON object is a delivery."""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from tests.helpers.http_server import FaultyServer
from whileai_train.runs.config import SenderConfig
from whileai_train.runs.credentials import Credential
from whileai_train.runs.sinks import HttpSink, SendError

QUICK = SenderConfig(flush_interval_s=0.05, finish_wait_s=2.0, connect_timeout_s=1.0, read_timeout_s=1.5,
                     request_deadline_s=2.0, open_timeout_s=1.0, backoff_base_s=0.05, backoff_max_s=0.2)
SLACK_S = 3.0  # on top of a stated bound: a loaded machine may be late, not a minute late


@pytest.fixture()
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    srv = FaultyServer(tmp_path / "server.db")
    srv.drip_s = 1.0  # every answer takes minutes; each byte comes well inside read_timeout_s
    monkeypatch.setenv("WHILEAI_API_KEY", srv.api_key)
    monkeypatch.setenv("WHILEAI_API_URL", srv.url)
    yield srv
    srv.close()


def spool_files(home: Path) -> list[Path]:
    return sorted((home / ".whileai" / "spool").glob("*.jsonl"))


def sync(monkeypatch: pytest.MonkeyPatch, **env: float) -> int:
    from whileai_train.cli import main

    for name, value in env.items():
        monkeypatch.setenv(f"WHILEAI_{name.upper()}", str(value))
    return main(["sync"])


def test_run_returns_within_its_bound_while_the_platform_drips(server: FaultyServer, isolated_home: Path,
                                                                capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import torch  # noqa: F401  (loaded in any training script; run() reads the GPU from it, not timed here)

    server.set("drip")
    began = time.monotonic()
    run = wai.run(name="dripped", config=QUICK)
    assert time.monotonic() - began <= QUICK.open_timeout_s + SLACK_S
    assert run.id == run.client_id  # the platform has not named it yet; the send thread goes on trying
    for step in range(6):
        run.log(step, loss=1.0 / (step + 1))
    began = time.monotonic()
    run.finish()
    assert time.monotonic() - began <= QUICK.finish_wait_s + SLACK_S
    assert "6 points not yet at" in capsys.readouterr().out
    (spooled,) = spool_files(isolated_home)
    # a whole sync against the same platform ends within its deadline and keeps the file
    began = time.monotonic()
    assert sync(monkeypatch, sync_deadline_s=3.0, request_deadline_s=2.0) == 1
    assert time.monotonic() - began <= 3.0 + SLACK_S
    assert "deadline" in capsys.readouterr().out and spooled.exists()
    server.set("ok")
    assert sync(monkeypatch) == 0
    (stored,) = [r for r in server.runs() if r["name"] == "dripped"]
    assert [p["seq"] for p in server.points(stored["id"])] == list(range(6))
    assert server.run(stored["id"])["status"] == "done" and not spool_files(isolated_home)


def test_each_send_ends_within_its_deadline(server: FaultyServer) -> None:
    sink = HttpSink(server.url, Credential("test", server.api_key), connect_timeout_s=1.0, read_timeout_s=1.5,
                    deadline_s=2.0)
    try:
        run_id = sink.open_run({"name": "deadline"}, "c-deadline")
        server.set("drip")
        for send in (lambda: sink.open_run({"name": "deadline"}, "c-deadline"),
                     lambda: sink.send_points(run_id, [(0, 1, 1.0, '{"loss":1.0,"step":1,"ts":1.0,"seq":0}')]),
                     lambda: sink.finish(run_id, "done", None, None)):
            began = time.monotonic()
            with pytest.raises(SendError, match="within its deadline"):
                send()
            assert time.monotonic() - began <= 2.0 + SLACK_S
    finally:
        sink.close()


def test_an_answer_that_took_fewer_points_is_warned_and_the_points_kept(
        server: FaultyServer, isolated_home: Path, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    server.set("took0")  # every log call: {"accepted": 0, "new": 0}, nothing stored
    with caplog.at_level(logging.WARNING):
        run = wai.run(name="took none", config=QUICK)
        for step in range(10):
            run.log(step, loss=0.5)
        run.finish()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "took 0 of the" in r.getMessage()]
    assert len(warnings) == 1 and "10 points sent" in warnings[0] and "stay in the spool" in warnings[0]
    assert "10 points not yet at" in capsys.readouterr().out
    (run_id,) = [r["id"] for r in server.runs()]
    assert server.points(run_id) == [] and server.run(run_id)["status"] == "running"
    assert sync(monkeypatch) == 1  # still taking none: the file stays
    assert "took 0 of the 10 points" in capsys.readouterr().out and spool_files(isolated_home)
    server.set("ok")
    assert sync(monkeypatch) == 0
    assert [p["seq"] for p in server.points(run_id)] == list(range(10))
    assert server.run(run_id)["status"] == "done"


def test_sync_delivers_to_a_platform_that_answers_ok_true(server: FaultyServer, isolated_home: Path,
                                                          capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    server.set("error500")  # down for the whole run: everything waits in the spool
    run = wai.run(name="elsewhere", config=replace(QUICK, finish_wait_s=0.5))
    for step in range(7):
        run.log(step, loss=0.25)
    run.note("kept for later")
    run.finish()
    assert server.runs() == [] and spool_files(isolated_home)
    server.set("otherjson")  # opens answer {"id": ..., "ok": true}; log, notes and finish answer {"ok": true}
    assert sync(monkeypatch) == 0
    out = capsys.readouterr().out
    assert "7 points sent" in out and not spool_files(isolated_home)
    (stored,) = server.runs()
    record = server.run(stored["id"])
    assert [p["seq"] for p in server.points(stored["id"])] == list(range(7))
    assert record["status"] == "done" and [n["markdown"] for n in record["notes"]] == ["kept for later"]


def test_the_transport_takes_the_proxy_the_environment_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from whileai_train.runs.deadline import DeadlineTransport

    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                 "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert DeadlineTransport("https://api.example.com").proxy is None
    monkeypatch.setenv("HTTPS_PROXY", "http://user:pw@proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,.corp.example")
    assert DeadlineTransport("https://api.example.com").proxy == "http://user:pw@proxy.internal:3128"
    assert DeadlineTransport("https://runs.corp.example").proxy is None
    assert DeadlineTransport("http://api.example.com").proxy is None  # HTTPS_PROXY is for https URLs only
    monkeypatch.setenv("NO_PROXY", "*")
    assert DeadlineTransport("https://api.example.com").proxy is None
