"""The Run API, cost, credentials, the local store, the spool and the HTTP API, without a trainer."""

from __future__ import annotations

import json
import logging
import os
import stat
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

import whileai_train as wai
from tests.helpers.http_server import FaultyServer
from whileai_train.errors import ConfigError, RunError
from whileai_train.runs.config import SenderConfig
from whileai_train.runs.cost import CostMeter, gpu_kind
from whileai_train.runs.credentials import credentials_path, resolve_credential, save_key
from whileai_train.runs.sinks import MemorySink
from whileai_train.runs.spool import read_spool
from whileai_train.runs.store import LocalStore

FAST = SenderConfig(flush_interval_s=0.05, finish_wait_s=10.0, connect_timeout_s=1.0, read_timeout_s=1.0,
                    open_timeout_s=1.0, backoff_base_s=0.05, backoff_max_s=0.2)


# -- cost ----------------------------------------------------------------------------------------------
def test_cost_formula_and_wording() -> None:
    meter = CostMeter.for_job(gpu="A10G", gpu_count=1)
    assert meter.cost_usd(56) == round(56 / 3600 * 1.10, 2) == 0.02
    assert meter.basis == "estimate: A10G at $1.10/h, modal.com/pricing 2026-09-20"
    assert meter.line(56) == "about $0.02 (A10G, 56.0 s, estimate)"
    assert meter.line(312.4) == "about $0.10 (A10G, 312 s, estimate)"
    two = CostMeter.for_job(gpu="H100", gpu_count=2)
    assert two.cost_usd(3600) == 7.90 and two.basis.startswith("estimate: 2 x H100 at $3.95/h")
    assert two.summary(1800)["cost_usd"] == 3.95 and two.summary(1800)["gpu_count"] == 2


def test_unknown_gpu_has_no_cost_unless_rate_given() -> None:
    unknown = CostMeter.for_job(gpu="NVIDIA H200", gpu_count=1)
    assert unknown.cost_usd(3600) is None
    assert "not in the price table" in unknown.basis and "rate=" in unknown.basis
    priced = CostMeter.for_job(gpu="NVIDIA H200", gpu_count=1, rate=4.5)
    assert priced.cost_usd(3600) == 4.5 and priced.basis == "estimate: NVIDIA H200 at $4.50/h, rate= given"
    cpu = CostMeter.for_job()  # this machine has no GPU
    assert (cpu.gpu, cpu.gpu_count, cpu.cost_usd(100)) == ("cpu", 0, None)


@pytest.mark.parametrize("name, key", [
    ("NVIDIA A10G", "A10G"), ("NVIDIA A100-SXM4-80GB", "A100"), ("NVIDIA H100 80GB HBM3", "H100"),
    ("Tesla T4", "T4"), ("NVIDIA L40S", "L40S"), ("NVIDIA A10", None), ("NVIDIA L4", None), ("NVIDIA H200", None),
])
def test_gpu_names_match_the_table(name: str, key: str | None) -> None:
    assert gpu_kind(name) == key


def test_price_table_is_the_product_texts() -> None:
    assert wai.GPU_USD_PER_HOUR == {"A10G": 1.10, "L40S": 1.95, "H100": 3.95, "A100": 2.50, "T4": 0.59}


# -- credentials ---------------------------------------------------------------------------------------
def test_credential_order_and_file_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_credential() is None
    path = save_key("sk-file-0001")
    assert path == credentials_path() and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert resolve_credential().source == str(path)
    monkeypatch.setenv("WHILEAI_API_KEY", "sk-env-0002")
    assert resolve_credential().key == "sk-env-0002"
    monkeypatch.setenv("WHILEAI_DELEGATED_CREDENTIAL", "sk-delegated-0003")
    assert resolve_credential().source == "WHILEAI_DELEGATED_CREDENTIAL"
    cred = resolve_credential("sk-arg-0004")
    assert cred.source == "the api_key argument" and cred.key == "sk-arg-0004"
    assert "sk-arg-0004" not in repr(cred) + str(cred)


def test_credentials_file_stays_0600_under_a_wide_umask() -> None:
    old = os.umask(0)
    try:
        path = save_key("sk-umask-0005")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_bad_key_is_refused_without_echoing_it() -> None:
    with pytest.raises(RunError) as info:
        resolve_credential("sk bad\nkey")
    assert "sk bad" not in str(info.value)


# -- the Run --------------------------------------------------------------------------------------------
def test_run_to_local_store_keeps_numbers_only(capsys: pytest.CaptureFixture[str]) -> None:
    run = wai.run(name="unit", total_steps=4, config=FAST)
    assert "goes to the local store" in capsys.readouterr().out
    run.log(1, loss=np.float32(0.5), lr=1e-3, text="dropped", nan=float("nan"), flag=True)
    run.log(2, loss=0.25)
    run.progress(2, 4)
    run.note("lr warmup changed")
    run.finish("done", summary={"holdout": 0.58})
    store = LocalStore()
    record = store.get_run(run.id, last_points=5)
    assert record["status"] == "done" and record["step"] == 2 and record["total_steps"] == 4
    first, second = record["points"]
    assert first["loss"] == 0.5 and first["lr"] == 1e-3 and first["nan"] is None
    assert "text" not in first and "flag" not in first and second["seq"] == 1
    assert record["notes"][0]["markdown"] == "lr warmup changed"
    assert record["summary"]["holdout"] == 0.58 and record["summary"]["points"] == 2
    assert repr(run).startswith(f"Run(id={run.id!r}, name='unit', status='done'")


def test_log_takes_a_mapping_which_it_copies(caplog: pytest.LogCaptureFixture) -> None:
    run = wai.run(name="mapping", config=FAST)
    metrics = {"loss": 1.0, "lr": 0.1}
    run.log(0, metrics)
    metrics["loss"] = 99.0  # the caller reuses its dict: the point already logged must not change
    run.log(1, metrics, grad_norm=2.0)  # keywords are added to the mapping's values
    with caplog.at_level(logging.WARNING):
        run.log(2, 0.5)  # type: ignore[arg-type]  # not a mapping: dropped with one warning, never raised
        run.log(3, [1, 2])  # type: ignore[arg-type]
    assert caplog.text.count("takes a mapping") == 1
    run.finish("done")
    first, second = LocalStore().get_run(run.id, last_points=5)["points"]
    assert (first["step"], first["loss"], first["lr"]) == (0, 1.0, 0.1) and "grad_norm" not in first
    assert (second["step"], second["loss"], second["grad_norm"]) == (1, 99.0, 2.0)
    assert metrics == {"loss": 99.0, "lr": 0.1}  # the caller's dict is left as it was


def test_context_manager_finishes_failed_with_the_error() -> None:
    with pytest.raises(ValueError, match="bad batch"), wai.run(name="ctx", config=FAST) as run:
        run.log(0, loss=1.0)
        raise ValueError("bad batch")
    record = LocalStore().get_run(run.id)
    assert record["status"] == "failed" and record["error"] == "ValueError: bad batch"
    with wai.run(name="ok", config=FAST) as ok:
        ok.log(0, loss=1.0)
    assert LocalStore().get_run(ok.id)["status"] == "done"


def test_the_process_hooks_are_put_back_when_the_last_run_closes() -> None:
    """A run records the error that ends the process (sys.excepthook) and leaves a preempted attempt open
    (SIGTERM) only while it is open: the last run to close puts both back as it found them."""
    import signal
    import sys

    hook_before, sigterm_before = sys.excepthook, signal.getsignal(signal.SIGTERM)
    first = wai.run(name="hooks-a", config=FAST)
    assert sys.excepthook is not hook_before and signal.getsignal(signal.SIGTERM) is not sigterm_before
    second = wai.run(name="hooks-b", config=FAST)
    first.finish()
    assert sys.excepthook is not hook_before  # one run is still open
    second.finish()
    assert sys.excepthook is hook_before and signal.getsignal(signal.SIGTERM) is sigterm_before
    with wai.run(name="hooks-c", config=FAST):
        assert sys.excepthook is not hook_before
    assert sys.excepthook is hook_before


def test_a_run_let_go_unfinished_puts_the_hooks_back() -> None:
    """A run its user drops without finishing it (a monitor built and never trained) can no longer be finished at
    exit: the hooks it installed go back as when it closes, and the next run installs them afresh."""
    import gc
    import signal
    import sys

    hook_before, sigterm_before = sys.excepthook, signal.getsignal(signal.SIGTERM)
    dropped = wai.run(name="hooks-dropped", config=FAST)
    sender = dropped._sender
    assert sys.excepthook is not hook_before and signal.getsignal(signal.SIGTERM) is not sigterm_before
    del dropped
    gc.collect()
    try:
        assert sys.excepthook is hook_before and signal.getsignal(signal.SIGTERM) is sigterm_before
    finally:
        assert sender is not None
        sender.finish("stopped", {}, None, 5.0)  # the send thread this test started ends here
    with wai.run(name="hooks-after-drop", config=FAST):
        assert sys.excepthook is not hook_before
    assert sys.excepthook is hook_before and signal.getsignal(signal.SIGTERM) is sigterm_before

def test_an_interrupted_run_puts_the_hooks_back_and_a_hook_set_over_ours_does_not_disarm_the_next_run() -> None:
    """The last run to close by an interruption puts the hooks back as finish does. A hook the user set over ours
    while a run was open is theirs and stays; once they put theirs away, the next run records the process's
    error again (its own hook is installed, and put back when it closes)."""
    import signal
    import sys

    hook_before, sigterm_before = sys.excepthook, signal.getsignal(signal.SIGTERM)
    preempted = wai.run(name="hooks-interrupted", config=FAST)
    preempted.interrupt("preempted")
    assert sys.excepthook is hook_before and signal.getsignal(signal.SIGTERM) is sigterm_before

    def theirs(*args: object) -> None:
        hook_before(*args)  # type: ignore[arg-type]

    replaced = wai.run(name="hooks-replaced", config=FAST)
    sys.excepthook = theirs
    try:
        replaced.finish()
        assert sys.excepthook is theirs  # not ours to put back
    finally:
        sys.excepthook = hook_before
    with wai.run(name="hooks-again", config=FAST):
        assert sys.excepthook is not hook_before
    assert sys.excepthook is hook_before and signal.getsignal(signal.SIGTERM) is sigterm_before


def test_log_after_finish_warns_once_and_never_raises(caplog: pytest.LogCaptureFixture) -> None:
    run = wai.run(name="late", config=FAST)
    run.finish("stopped", summary={"stop_reason": "manual"})
    with caplog.at_level(logging.WARNING):
        run.log(5, loss=1.0)
        run.log(6, loss=1.0)
        run.note("too late")
    assert caplog.text.count("already stopped") == 1
    assert LocalStore().get_run(run.id)["points_count"] == 0
    with pytest.raises(ConfigError):
        run.finish("finished")  # a wrong status word is a configuration mistake


def test_non_zero_rank_records_nothing(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RANK", "1")
    run = wai.run(name="rank1", config=FAST)
    run.log(0, loss=1.0)
    run.finish()
    assert run.id is None and run.sink == "disabled" and capsys.readouterr().out == ""
    assert not (Path(os.environ["WHILEAI_HOME"]) / "runs.db").exists()


def test_memory_sink_batches_at_most_500_per_call() -> None:
    sink = MemorySink(durable=True)
    sizes: list[int] = []
    original = sink.send_points
    sink.send_points = lambda run_id, points, progress=None: (sizes.append(len(points)),  # type: ignore[method-assign]
                                                               original(run_id, points, progress))[1]
    run = wai.run(name="many", sink=sink, config=FAST)
    for step in range(1234):
        run.log(step, loss=float(step))
    run.finish()
    assert max(sizes) <= 500 and sum(sizes) == 1234
    assert sorted(sink.points[run.id]) == list(range(1234))
    assert sink.runs[run.id]["status"] == "done"


def test_sender_config_is_checked() -> None:
    with pytest.raises(ConfigError, match="flush_interval_s"):
        SenderConfig(flush_interval_s=5.0)
    with pytest.raises(ConfigError, match="max_points_per_call"):
        SenderConfig(max_points_per_call=501)
    with pytest.raises(ConfigError, match="url"):
        wai.run(name="x", api_key="sk-1", url="ftp://nowhere")


# -- store and spool --------------------------------------------------------------------------------------
def test_store_deduplicates_points_and_client_ids(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "s.db")
    rid = store.create_run({"name": "a"}, client_id="c-1")
    assert store.create_run({"name": "a"}, client_id="c-1") == rid
    pts = [{"seq": i, "step": i, "ts": 0.0, "loss": 1.0} for i in range(3)]
    assert store.add_points(rid, pts) == 3 and store.add_points(rid, pts) == 0
    assert len(store.points(rid)) == 3
    assert json.loads(json.dumps(store.get_run(rid)))["points_count"] == 3
    with open(store.path, "rb") as f:
        assert f.read(16).startswith(b"SQLite format 3")
    assert store._connect().execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_spool_ignores_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "c-x.jsonl"
    path.write_text('{"t":"open","client_id":"c-x","url":"http://h","meta":{"name":"n"}}\n'
                    '{"t":"p","p":{"seq":0,"step":1,"loss":1.0}}\n{"t":"p","p":{"seq":1,"step":2,"loss":0.5}}\n'
                    '{"t":"acked","through":0}\n{"t":"p","p":{"seq":2,"st')
    state = read_spool(path)
    assert list(state.points) == [1] and state.client_id == "c-x" and state.meta == {"name": "n"}


# -- the HTTP API -----------------------------------------------------------------------------------------
def test_http_api_contract(tmp_path: Path) -> None:
    server = FaultyServer(tmp_path / "api.db")
    try:
        headers = {"X-Api-Key": server.api_key}
        with httpx.Client(base_url=server.url, headers=headers, timeout=5) as client:
            assert httpx.post(server.url + "/runs", json={"name": "x"}).status_code == 401
            rid = client.post("/runs", json={"name": "x", "total_steps": 10}).json()["runId"]
            body = {"points": [{"seq": 0, "step": 1, "loss": 1.0}], "progress": {"step": 1, "total": 10}}
            assert client.post(f"/runs/{rid}/log", json=body).json() == {"accepted": 1, "new": 1}
            assert client.post(f"/runs/{rid}/log", json=body).json() == {"accepted": 1, "new": 0}
            too_many = {"points": [{"seq": i} for i in range(501)]}
            assert client.post(f"/runs/{rid}/log", json=too_many).status_code == 400
            # a point without seq is stored, numbered in arrival order (the product text's plain-HTTP body), in a
            # run numbered that way; in this run, numbered by its client, it is refused rather than collide
            plain = client.post("/runs", json={"name": "plain"}).json()["runId"]
            assert client.post(f"/runs/{plain}/log", json={"points": [{"step": 1}]}).json() == {"accepted": 1, "new": 1}
            assert client.post(f"/runs/{rid}/log", json={"points": [{"step": 1}]}).status_code == 409
            assert client.post(f"/runs/{rid}/finish", json={"status": "nope"}).status_code == 400
            assert client.post(f"/runs/{rid}/finish", json={"status": "done", "summary": {"a": 1}}).status_code == 200
            record = client.get(f"/runs/{rid}").json()
            assert record["status"] == "done" and record["step"] == 1 and record["points_count"] == 1
            assert client.get("/runs/run-nope").status_code == 404
    finally:
        server.close()


def test_platform_run_line_names_the_key_source_not_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    server = FaultyServer(tmp_path / "api.db")
    try:
        monkeypatch.setenv("WHILEAI_API_URL", server.url)
        run = wai.run(name="p", api_key=server.api_key, config=FAST)
        out = capsys.readouterr().out
        assert f"goes to {server.url} (key from the api_key argument)" in out and server.api_key not in out
        for i in range(5):
            run.log(i, loss=1.0)
        time.sleep(0.2)
        run.finish()
        assert len(server.points(run.id)) == 5 and server.run(run.id)["status"] == "done"
    finally:
        server.close()


def test_a_loop_of_your_own_moves_the_step_with_log_and_prints_where_it_is(
        capsys: pytest.CaptureFixture[str]) -> None:
    from whileai_train.cli import main

    with wai.run(name="x", total_steps=20, config=FAST) as run:
        assert run.step == 0 and run.total_steps == 20
        for step in range(1, 21):
            run.log(step, loss=1.0 / step)
        assert run.step == 20
        assert str(run).startswith(f"run x ({run.id}): running at step 20/20, to the local store ")
    assert repr(run) == f"Run(id={run.id!r}, name='x', status='done', step='20/20', sink='local')"
    text = str(run)
    assert text.startswith(f"run x ({run.id}): done at step 20/20, to the local store ")
    assert text.endswith("; " + run.meter.line(run.seconds)) and f"{run.seconds:.1f} s" in text
    record = LocalStore().get_run(run.id)
    assert record["step"] == 20 and record["total_steps"] == 20
    capsys.readouterr()
    assert main(["runs"]) == 0 and "20/20" in capsys.readouterr().out
    assert main(["show", run.id]) == 0
    shown = capsys.readouterr().out
    assert f"{run.id} 'x': done at step 20/20" in shown
    assert f"{record['summary']['seconds']:.1f} s;" in shown  # one duration: show and print(run) agree
    late = wai.run(name="numpy", config=FAST)
    late.log(np.int64(7), loss=0.1)
    late.log(3, loss=0.2)  # an earlier step logged late does not move the run back
    assert late.step == 7 and late.total_steps is None and "at step 7," in str(late)
    late.finish()


def test_a_loop_of_your_own_moves_the_step_the_http_api_serves(tmp_path: Path) -> None:
    server = FaultyServer(tmp_path / "api.db")
    try:
        with wai.run(name="x", total_steps=20, api_key=server.api_key, url=server.url, config=FAST) as run:
            for step in range(1, 21):
                run.log(step, loss=1.0 / step)
        record = httpx.get(f"{server.url}/runs/{run.id}", headers={"X-Api-Key": server.api_key}, timeout=5).json()
        assert (record["status"], record["step"], record["total_steps"]) == ("done", 20, 20)
        assert str(run).startswith(f"run x ({run.id}): done at step 20/20, to the platform {server.url}")
    finally:
        server.close()


def test_runs_and_show_commands(capsys: pytest.CaptureFixture[str]) -> None:
    from whileai_train.cli import main

    assert main(["runs"]) == 0 and "no local runs yet" in capsys.readouterr().out
    run = wai.run(name="shown", total_steps=2, config=FAST, gpu="A10G", gpu_count=1)
    run.log(1, loss=0.75)
    run.note("first try")
    run.finish("stopped", summary={"stop_reason": "alarm"})
    capsys.readouterr()
    assert main(["runs"]) == 0
    listing = capsys.readouterr().out
    assert run.id in listing and "stopped" in listing and "shown" in listing
    assert main(["show", run.id]) == 0
    shown = capsys.readouterr().out
    assert f"{run.id} 'shown': stopped" in shown and "stopped: alarm" in shown and "loss=0.75" in shown
    assert "estimate: A10G at $1.10/h, modal.com/pricing 2026-09-20" in shown and "note 0: first try" in shown
    assert main(["show", "run-missing"]) == 1


def _server_without(route: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FaultyServer:
    """The fault-injecting server, answering 404 to POST .../<route> (a platform that lacks that route)."""
    import tests.helpers.http_server as http_server

    server = FaultyServer(tmp_path / "api.db")
    original = http_server.handle

    def refusing(api: object, method: str, path: str, headers: dict[str, str],
                 body: bytes) -> tuple[int, dict[str, object]]:
        if path.endswith(f"/{route}"):
            return 404, {"error": "no such route"}
        return original(api, method, path, headers, body)

    monkeypatch.setattr(http_server, "handle", refusing)
    monkeypatch.setenv("WHILEAI_API_URL", server.url)
    return server


def test_a_server_without_notes_still_gets_points_and_finish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    server = _server_without("notes", tmp_path, monkeypatch)
    try:
        with caplog.at_level(logging.WARNING):
            run = wai.run(name="p", api_key=server.api_key, config=FAST)
            run.note("one")
            for i in range(3):
                run.log(i, loss=1.0)
            run.finish()
        assert len(server.points(run.id)) == 3 and server.run(run.id)["status"] == "done"
        assert "does not take run notes" in caplog.text
    finally:
        server.close()


def test_platform_run_resumed_from_state_continues_the_same_run(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    server = FaultyServer(tmp_path / "api.db")
    try:
        monkeypatch.setenv("WHILEAI_API_URL", server.url)
        monkeypatch.setenv("WHILEAI_API_KEY", server.api_key)
        first = wai.run(name="long", total_steps=4, config=FAST)
        first.log(1, loss=1.0)
        first.log(2, loss=0.9)
        saved = json.loads(json.dumps(first.state()))  # as a checkpoint keeps it
        assert server.api_key not in json.dumps(saved)
        first.finish("failed", error="preempted")
        second = wai.run(name="ignored", config=FAST, resume=saved)
        second.log(3, loss=0.8)
        second.log(4, loss=0.7)
        second.finish()
        assert second.id == first.id and len(server.runs()) == 1
        points = server.points(first.id)
        assert [p["step"] for p in points] == [1, 2, 3, 4] and len({p["seq"] for p in points}) == 4
        assert server.run(first.id)["status"] == "done" and server.run(first.id)["name"] == "long"
    finally:
        server.close()


def test_finish_never_overtakes_the_last_points() -> None:
    """The send thread must not send the finish while a flush it has not seen is still owed (a race once
    seen with dropped connections): many short runs, each finishing right after its last log."""
    for attempt in range(30):
        sink = MemorySink(durable=False)
        run = wai.run(name=f"race-{attempt}", sink=sink, config=FAST)
        for step in range(20):
            run.log(step, loss=1.0)
            if step % 7 == 0:
                time.sleep(0.01)
        run.finish()
        assert sorted(sink.points[run.id]) == list(range(20)), attempt
        assert sink.runs[run.id]["status"] == "done"


def test_a_running_run_of_a_live_process_is_left_alone_and_a_dead_ones_is_finished(tmp_path) -> None:
    import subprocess
    import sys

    from whileai_train.runs.run_ids import this_process
    from whileai_train.runs.store import LocalStore

    store = LocalStore(tmp_path / "runs.db")
    mine = store.create_run({"name": "alive"}, owner=this_process())
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True)
    host = this_process().rpartition(":")[0]
    dead = store.create_run({"name": "killed"}, owner=f"{host}:{finished.stdout.strip()}")
    elsewhere = store.create_run({"name": "other host"}, owner="some-other-host:1")
    unowned = store.create_run({"name": "via the HTTP API"})
    statuses = {run["name"]: run["status"] for run in store.list_runs()}
    assert statuses == {"alive": "running", "killed": "failed", "other host": "running",
                        "via the HTTP API": "running"}
    assert "ended without finishing" in store.get_run(dead)["error"]
    assert store.get_run(mine)["error"] is None and store.get_run(elsewhere)["status"] == "running"
    assert store.get_run(unowned)["status"] == "running"


@pytest.mark.parametrize("metrics, expected", [
    ({"loss": 0.5, "lr": 1e-05, "k": 3}, {"loss": 0.5, "lr": 1e-05, "k": 3}),  # plain: the orjson path
    ({"nan": float("nan"), "inf": float("-inf"), "x": 1e16}, {"nan": None, "inf": None, "x": 1e16}),
    ({"big": 10**30, "flag": True, "text": "x", "np": np.float32(0.25)}, {"big": 10**30, "np": 0.25}),
    ({1: 2.0, "ok": 1.0}, {"1": 2.0, "ok": 1.0}),  # a non-str key: the general path names it as a string
    ({"step": 99, "seq": 99, "ts": 99.0, "loss": 1.0}, {"loss": 1.0}),  # reserved keys are the run's own
    ({}, {}),
])
def test_encoded_point_keeps_numbers_and_reserves_step_ts_seq(metrics: dict, expected: dict) -> None:
    from whileai_train.runs.sender import encode_point

    seq, step, ts, text = encode_point((np.int64(7), 123.25, 3, metrics))
    assert (seq, step, ts) == (3, 7, 123.25)
    assert json.loads(text) == {**expected, "step": 7, "ts": 123.25, "seq": 3}
    meter = CostMeter.for_job(gpu="A10G", gpu_count=2)
    _, _, _, with_cost = encode_point((7, 3600.0 + 100.0, 3, metrics), meter, started=100.0)
    assert json.loads(with_cost)["cost_usd"] == 2.2  # 2 GPUs x 1 h x $1.10


def test_a_server_without_the_completions_route_says_so_by_count_and_keeps_points_and_notes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from whileai_train.runs.completions import completions_note

    server = _server_without("completions", tmp_path, monkeypatch)
    try:
        with caplog.at_level(logging.WARNING):
            run = wai.run(name="p", api_key=server.api_key, config=FAST)
            run.note(completions_note(5, [{"prompt": "a ?", "completion": "b", "proxy": 1.0, "gold": 0.0}] * 3))
            run.note("words")
            for i in range(3):
                run.log(i, loss=1.0)
            run.finish()
        assert len(server.points(run.id)) == 3 and server.run(run.id)["status"] == "done"
        assert [n["markdown"] for n in server.run(run.id)["notes"]] == ["words"]
        assert "does not take holdout completions" in caplog.text and "the 3 of step 5" in caplog.text
        assert "does not take run notes" not in caplog.text
    finally:
        server.close()
