"""A preempted attempt leaves its run open (runs/preemption.py, Run.interrupt, Run.flush): the SIGTERM handler is
there only while a run is open and hands the signal on to whatever handled it before; a run state saved at a
checkpoint makes the resumed attempt number its points as the first one did."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from tests.helpers.http_server import FaultyServer
from whileai_train.runs.config import SenderConfig
from whileai_train.runs.sinks import MemorySink

FAST = SenderConfig(flush_interval_s=0.05, finish_wait_s=5.0)


@pytest.fixture()
def sigterm_as_found() -> Iterator[None]:
    found = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, found)


def test_sigterm_handler_only_while_a_run_is_open_and_the_found_one_is_put_back(sigterm_as_found: None) -> None:
    def mine(signum: int, frame: Any) -> None:
        raise AssertionError("not called in this test")

    signal.signal(signal.SIGTERM, mine)
    run = wai.run(name="a", sink=MemorySink(), config=FAST)
    assert signal.getsignal(signal.SIGTERM) is not mine
    run.finish()
    assert signal.getsignal(signal.SIGTERM) is mine  # the process is as it was found


def test_an_ignored_sigterm_stays_ignored(sigterm_as_found: None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    run = wai.run(name="a", sink=MemorySink(), config=FAST)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    run.finish()


def test_sigterm_interrupts_open_runs_then_calls_the_handler_found(sigterm_as_found: None, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, frame: calls.append(signum))
    server = FaultyServer(tmp_path / "api.db")
    try:
        monkeypatch.setenv("WHILEAI_API_URL", server.url)
        monkeypatch.setenv("WHILEAI_API_KEY", server.api_key)
        run = wai.run(name="preempted", config=FAST)
        for step in range(1, 4):
            run.log(step, loss=1.0 / step)
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs in this (main) thread before the next line
        assert calls == [signal.SIGTERM]
        assert run.status == "interrupted" and server.run(run.id)["status"] == "running"  # open, not failed
        assert [p["step"] for p in server.points(run.id)] == [1, 2, 3]  # flushed before going
        (note,) = [n["markdown"] for n in server.run(run.id)["notes"]]
        assert note.startswith("Attempt interrupted (SIGTERM)")
        assert f"run {run.id} interrupted (SIGTERM)" in capsys.readouterr().out
        spool = Path(os.environ["WHILEAI_HOME"]) / "spool"
        assert list(spool.glob("*")) == []  # nothing owed: no spool left for `sync` to finish "failed"
        run.log(4, loss=0.1)  # an interrupted handle logs nothing more
        run.finish("failed", error="too late")
        assert server.run(run.id)["status"] == "running" and len(server.points(run.id)) == 3
    finally:
        server.close()


def test_state_at_a_checkpoint_numbers_the_resumed_points_as_the_first_attempt_did() -> None:
    sink = MemorySink(durable=False)
    first = wai.run(name="long", sink=sink, config=FAST)
    first.log(1, loss=1.0)
    first.log(2, loss=0.9)
    saved = json.loads(json.dumps(first.state()))  # as trainer_state.json keeps it, at checkpoint 2
    first.log(3, loss=0.8)  # the first attempt goes on past the checkpoint, and its points are sent
    assert first.flush(wait_s=5.0) == 0
    first.interrupt("preempted")
    second = wai.run(name="ignored", sink=sink, config=FAST, resume=saved)
    second.log(3, loss=0.8)  # the resumed attempt logs step 3 again
    second.log(4, loss=0.7)
    second.finish()
    assert second.id == first.id and sink.runs[first.id]["status"] == "done"
    assert [p["step"] for _, p in sorted(sink.points[first.id].items())] == [1, 2, 3, 4]  # step 3 once
