"""The measurement on the run record: run.holdout / run.delta on a live run (they survive finish), attach_holdout
/ attach_delta on a finished one, get_run reading it back, from the local SQLite store and from a real HTTP
server (`whileai-train serve`) whose PATCH /runs/{id} merges {"summary": {...}} into the run's summary, and
each of those calls ending by its deadline against a platform that answers a byte a second."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.helpers.serve_helpers import ServeProcess

import whileai_train as wai
from whileai_train.errors import ConfigError, RunError
from whileai_train.runs.config import SenderConfig
from whileai_train.runs.store import LocalStore

FAST = SenderConfig(flush_interval_s=0.05, finish_wait_s=10.0, connect_timeout_s=1.0, read_timeout_s=2.0,
                    open_timeout_s=2.0, backoff_base_s=0.05, backoff_max_s=0.2)
KEY = "test-key-0123456789"
SLACK_S = 3.0  # on top of a stated bound: a loaded machine may be late, not a minute late


def _eval(shift: float, seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    p = np.random.default_rng(0).uniform(0.2, 0.6, 60)
    return [{"scenario_id": f"t{t}", "reward": float(rng.random() < p[t] + shift)} for t in range(60) for _ in range(4)]


BEFORE, AFTER = _eval(0.0, 1), _eval(0.3, 2)


def test_attach_holdout_numbers_and_rows_on_a_finished_local_run() -> None:
    with wai.run(name="sft", total_steps=2) as run:
        run.log(0, loss=1.0)
        run.log(1, loss=0.5)
    block = wai.attach_holdout(run.id, 0.42, 0.58)
    record = wai.get_run(run.id)
    assert record["where"] == "local" and record["status"] == "done"
    assert record["summary"]["holdout"] == block
    assert block["before"]["pass_rate"] == 0.42 and block["after"]["pass_rate"] == 0.58
    assert block["ci95"] is None and block["verdict"] is None and "two numbers" in block["note"]
    assert "cost_basis" in record["summary"] and record["summary"]["points"] == 2  # merged, not replaced
    assert [p["loss"] for p in record["points"]] == [1.0, 0.5]
    measured = wai.attach_holdout(run.id, before=BEFORE, after=AFTER)
    again = wai.get_run(run.id)["summary"]["holdout"]
    report = wai.delta_report(BEFORE, AFTER)
    assert again == measured and measured["verdict"] == report.verdict == "moved_unreplicated"
    assert measured["before"] == {"pass_rate": report.before, "n_tasks": 60, "k": 4, "ci95": list(report.before_ci95)}
    assert measured["headline_verdict"] == "PASS"
    loss = wai.attach_holdout(run.id, 1.9, 1.4, metric="loss")
    assert loss["before"]["loss"] == 1.9 and loss["delta"] == pytest.approx(-0.5)
    with pytest.raises(ConfigError, match="58% is 0.58"):
        wai.attach_holdout(run.id, 42, 58)


def test_attach_delta_keeps_the_whole_report_on_the_run() -> None:
    with wai.run(name="grpo") as run:
        pass
    report = wai.delta_report(BEFORE, AFTER, seed=3)
    block = wai.attach_delta(run.id, report)
    summary = wai.get_run(run.id)["summary"]
    assert summary["delta"] == json.loads(json.dumps(report.model_dump(mode="json")))
    assert summary["holdout"] == block and block["ci95"] == list(report.target_ci95)
    measured = wai.attach_delta(run.id, BEFORE, AFTER, seed=3)
    assert measured == block


def test_run_holdout_and_delta_called_while_running_survive_finish() -> None:
    with wai.run(name="live") as run:
        run.log(0, loss=1.0)
        block = run.holdout(BEFORE, AFTER)
        assert run.holdout_summary == block
        mid = LocalStore().get_run(run.id)
        assert mid is not None and mid["summary"]["holdout"] == block  # written at once, not only at finish
    summary = wai.get_run(run.id)["summary"]
    assert summary["holdout"] == block and summary["delta"]["verdict"] == "moved_unreplicated"
    assert run.summary is not None and run.summary["holdout"] == block and "cost_usd" in summary
    after_finish = run.delta(wai.delta_report(BEFORE, AFTER, must_not_regress=()))
    assert wai.get_run(run.id)["summary"]["holdout"] == after_finish


def test_get_run_of_an_unknown_id_without_a_key_is_a_run_error() -> None:
    with pytest.raises(RunError, match="no run 'run-nope'.*no platform key"):
        wai.get_run("run-nope")


# --------------------------------------------------------------------------------------------- the platform


@pytest.fixture()
def platform(tmp_path: Path) -> Any:
    """`whileai-train serve --api-key` in its own process: the runs API with PATCH /runs/{id}."""
    home = tmp_path / "platform"
    with ServeProcess(home, "--api-key", KEY) as server:
        store = LocalStore(home / "runs.db")
        yield server.url, store
        store.close()


def test_platform_run_attach_and_get_run_over_http(platform: Any) -> None:
    url, store = platform
    with wai.run(name="hosted", api_key=KEY, url=url, config=FAST) as run:
        run.log(0, loss=0.9)
        live = run.holdout(0.5, 0.6)
    assert store.get_run(run.id)["summary"]["holdout"] == live  # carried by the finish summary
    block = wai.attach_delta(run.id, BEFORE, AFTER, api_key=KEY, url=url)
    record = wai.get_run(run.id, api_key=KEY, url=url)
    assert record["where"] == "platform" and record["status"] == "done"
    assert record["summary"]["holdout"] == block and record["summary"]["delta"]["headline_verdict"] == "PASS"
    assert [p["loss"] for p in record["points"]] == [0.9]
    after = run.holdout(0.5, 0.7)  # a finished platform run: PATCHed at once
    assert store.get_run(run.id)["summary"]["holdout"] == after
    with pytest.raises(RunError, match="401"):
        wai.attach_holdout(run.id, 0.5, 0.6, api_key="wrong-key-000000", url=url)
    with pytest.raises(RunError, match="no run 'run-missing'"):
        wai.get_run("run-missing", api_key=KEY, url=url)


def test_refresh_reads_a_local_run_back_after_another_process_measured_it() -> None:
    with wai.run(name="sft", total_steps=1) as run:
        run.log(0, loss=1.0)
    assert run.holdout_summary is None
    block = wai.attach_delta(run.id, BEFORE, AFTER)  # as a later eval job would, by id
    record = run.refresh()
    assert record["status"] == "done" and run.holdout_summary == block
    assert run.summary is not None and run.summary["delta"]["headline_verdict"] == "PASS"
    assert run.summary["points"] == 1  # the finish summary is still there


def test_refresh_of_a_hosted_run_whose_platform_kept_two_numbers(platform: Any) -> None:
    import httpx

    url, _ = platform
    with wai.run(name="hosted", api_key=KEY, url=url, config=FAST) as run:
        run.log(0, loss=0.9)
    # the platform's own trainer reports the held-out pass rates as two bare numbers
    answer = httpx.patch(f"{url}/runs/{run.id}", headers={"X-Api-Key": KEY},
                         json={"summary": {"holdout": {"metric": "pass_rate", "before": 0.58, "after": 0.66}}})
    assert answer.status_code == 200
    record = run.refresh()
    block = run.holdout_summary
    assert record["where"] == "platform" and block is not None and run.summary is not None
    assert block["before"] == {"pass_rate": 0.58, "n_tasks": None, "k": None, "ci95": None}
    assert block["after"]["pass_rate"] == 0.66 and block["delta"] == pytest.approx(0.08)
    assert block["ci95"] is None and block["verdict"] is None and "platform returned two numbers" in block["note"]
    assert run.summary["holdout"] == block and run.summary["points"] == 1


def test_refresh_names_what_a_lying_platform_answered(tmp_path: Path) -> None:
    from tests.helpers.http_server import FaultyServer

    server = FaultyServer(tmp_path / "server.db")
    try:
        with wai.run(name="hosted", api_key=server.api_key, url=server.url, config=FAST) as run:
            run.log(0, loss=0.9)
        server.fail_for(1, "html")
        with pytest.raises(RunError, match="not JSON"):
            run.refresh()
        server.fail_for(1, "redirect")
        with pytest.raises(RunError, match="redirected .* never followed"):
            run.refresh()
        assert run.refresh()["status"] == "done"  # the next answer is the API's
    finally:
        server.close()


def test_a_platform_that_is_down_is_a_run_error_from_attach_and_a_warning_from_run_holdout(
        platform: Any, caplog: pytest.LogCaptureFixture) -> None:
    url, _ = platform
    with wai.run(name="hosted", api_key=KEY, url=url, config=FAST) as run:
        pass
    dead = "http://127.0.0.1:9"  # discard port: nothing listens
    with pytest.raises(RunError, match="did not reach the platform"):
        wai.attach_holdout(run.id, 0.5, 0.6, api_key=KEY, url=dead)
    run._sender.sink.where = dead  # type: ignore[union-attr]
    with caplog.at_level("WARNING", logger="whileai_train.runs"):
        block = run.holdout(0.5, 0.6)
    assert run.holdout_summary == block and "could not store holdout" in caplog.text


def test_reading_a_run_back_ends_within_its_deadline_while_the_platform_drips(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """get_run, attach_holdout, attach_delta and run.refresh() against a platform that answers a byte a second
    (each byte well inside the read timeout): each call ends by its request deadline with a RunError saying so,
    not when the last byte comes minutes later; run.holdout on a finished run warns within it."""
    from tests.helpers.http_server import FaultyServer

    server = FaultyServer(tmp_path / "server.db")
    monkeypatch.setenv("WHILEAI_REQUEST_DEADLINE_S", "2")  # get_run and attach_*: the environment's deadline
    report = wai.delta_report(BEFORE, AFTER, seed=3)
    try:
        # run.refresh() and run.holdout: the run's own config
        with wai.run(name="hosted", api_key=server.api_key, url=server.url,
                     config=SenderConfig(**{**FAST.__dict__, "request_deadline_s": 2.0})) as run:
            run.log(0, loss=0.9)
        server.set("drip")
        where = {"api_key": server.api_key, "url": server.url}
        read_backs: dict[str, Callable[[], object]] = {
            "get_run": lambda: wai.get_run(run.id, **where),
            "attach_holdout": lambda: wai.attach_holdout(run.id, 0.5, 0.6, **where),
            "attach_delta": lambda: wai.attach_delta(run.id, report, **where),
            "run.refresh": run.refresh,
        }
        for name, read_back in read_backs.items():
            began = time.monotonic()
            with pytest.raises(RunError, match="no whole answer from .* within 2 s"):
                read_back()
            assert time.monotonic() - began <= 2.0 + SLACK_S, name
        began = time.monotonic()
        with caplog.at_level("WARNING", logger="whileai_train.runs"):
            block = run.holdout(0.5, 0.7)  # a finished platform run: PATCHed at once
        assert time.monotonic() - began <= 2.0 + SLACK_S
        assert run.holdout_summary == block and "could not store holdout" in caplog.text and "within 2 s" in caplog.text
        server.set("ok")
        assert wai.get_run(run.id, **where)["status"] == "done"
    finally:
        server.close()


def test_show_prints_the_holdout_line_and_the_delta_report(capsys: pytest.CaptureFixture[str]) -> None:
    from whileai_train.cli import main

    with wai.run(name="shown") as run:
        run.log(0, loss=1.0)
    report = wai.delta_report(BEFORE, AFTER, seed=3)
    block = wai.attach_delta(run.id, report)
    capsys.readouterr()
    assert main(["show", run.id]) == 0
    out = capsys.readouterr().out
    before, after = block["before"], block["after"]
    expected = (f"holdout: {report.headline_verdict}: {report.verdict} - pass_rate {before['pass_rate']:.4g} "
                f"[{before['ci95'][0]:.4g}, {before['ci95'][1]:.4g}] ({before['n_tasks']} tasks, k={before['k']}) -> "
                f"{after['pass_rate']:.4g} [{after['ci95'][0]:.4g}, {after['ci95'][1]:.4g}] "
                f"({after['n_tasks']} tasks, k={after['k']}), delta {block['delta']:+.4g} "
                f"[{block['ci95'][0]:.4g}, {block['ci95'][1]:.4g}]")
    assert expected in out.splitlines()
    first = wai.format_delta_report(report).splitlines()[0]
    assert "delta: " + first in out.splitlines()
    assert "'metrics'" not in out  # the report is printed as a report, not as its dict
