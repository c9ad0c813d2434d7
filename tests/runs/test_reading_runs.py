"""Reading runs back from Python: get_run follows every page of points (the real `serve`, and the local store),
list_runs filters by status and name (tags: test_run_context.py), points_frame is a pandas DataFrame."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import whileai_train as wai
from tests.helpers.serve_helpers import ServeProcess
from whileai_train.errors import ConfigError
from whileai_train.runs.config import SenderConfig

KEY = "reading-key-0123456789"
FAST = SenderConfig(flush_interval_s=0.05, finish_wait_s=60.0)
N = 12_345  # past the API's page of 10,000


def _log(run: wai.Run, n: int) -> None:
    for step in range(1, n + 1):
        run.log(step, {"loss": 1.0 / step, "lr": 1e-4})


def test_get_run_follows_every_page_of_points_from_the_real_serve_and_the_local_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ServeProcess(tmp_path / "server-home", env={"WHILEAI_SERVER_KEY": KEY}) as server:
        monkeypatch.setenv("WHILEAI_API_KEY", KEY)
        monkeypatch.setenv("WHILEAI_API_URL", server.url)
        remote = wai.run(name="far-run", config=FAST)
        assert remote.sink == "platform"
        _log(remote, N)
        remote.finish("done")
        record = wai.get_run(remote.id)
        assert record["where"] == "platform"
        assert [p["step"] for p in record["points"]] == list(range(1, N + 1))  # every page, in order, once
        frame = wai.points_frame(record)
        assert len(frame) == N and list(frame.columns[:3]) == ["step", "ts", "seq"]
        assert frame["loss"].iloc[-1] == pytest.approx(1.0 / N)

        monkeypatch.setenv("WHILEAI_MODE", "offline")  # the same key set: this one stays here
        near = wai.run(name="near-run", config=FAST)
        _log(near, N)
        near.finish("stopped", summary={"stop_reason": "test"})
        local = wai.get_run(near.id)
        assert local["where"] == "local" and len(local["points"]) == N
        assert wai.points_frame(near.id)["step"].tolist() == list(range(1, N + 1))

        monkeypatch.setenv("WHILEAI_MODE", "online")
        listed = wai.list_runs()
        assert [(r["name"], r["where"]) for r in listed] == [("near-run", "local"), ("far-run", "platform")]
        assert [r["id"] for r in wai.list_runs(status="stopped")] == [near.id]
        assert [r["id"] for r in wai.list_runs(name="FAR")] == [remote.id]
        assert [r["id"] for r in wai.list_runs(status="done", name="near")] == []
        assert len(wai.list_runs(limit=1)) == 1


def test_list_runs_and_points_frame_refuse_mistakes_with_the_fix() -> None:
    with pytest.raises(ConfigError, match="status='finished' is not one of running, done, failed, stopped"):
        wai.list_runs(status="finished")
    with pytest.raises(ConfigError, match="limit=0 must be a positive integer"):
        wai.list_runs(limit=0)
    with pytest.raises(ConfigError, match="Fix: pass a run id or a get_run record"):
        wai.points_frame(3)  # type: ignore[arg-type]
    assert wai.list_runs() == []  # no store yet, no key: nothing, and no store made
    assert not Path(os.environ["WHILEAI_HOME"], "runs.db").exists()
