"""No point lost, no exception into training: delivery against wrong answers, a full disk, bad spool bytes, a
locked or corrupt store and an unusable home, each injected for real (a real HTTP server, real SQLite, a
real file-size limit in a child process).

Each test ends in one of two states: the points on the server (after `whileai-train sync` where the message
said to sync) equal the points logged, exactly once; or the printed message says exactly how many were lost
and why.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from tests.helpers.http_server import FaultyServer
from tests.callbacks.test_callback import lm_dataset, trainer_args
from whileai_train.errors import RunError, RunFinishedError
from whileai_train.runs.config import SenderConfig
from whileai_train.runs.credentials import Credential
from whileai_train.runs.sinks import HttpSink, RunAlreadyFinished, SendError
from whileai_train.runs.store import LocalStore

FAST = SenderConfig(flush_interval_s=0.05, finish_wait_s=10.0, connect_timeout_s=1.0, read_timeout_s=1.0,
                    open_timeout_s=1.0, backoff_base_s=0.05, backoff_max_s=0.2)
SHORT_FINISH = SenderConfig(**{**FAST.__dict__, "finish_wait_s": 0.5})


@pytest.fixture()
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    srv = FaultyServer(tmp_path / "server.db")
    monkeypatch.setenv("WHILEAI_API_KEY", srv.api_key)
    monkeypatch.setenv("WHILEAI_API_URL", srv.url)
    yield srv
    srv.close()


def spool_files(home: Path) -> list[Path]:
    return sorted((home / ".whileai" / "spool").glob("*.jsonl"))


def log_points(run: Any, n: int, start: int = 0, pause_every: int = 3) -> None:
    for step in range(start, start + n):
        run.log(step, loss=1.0 / (step + 1), lr=1e-3)
        if step % pause_every == pause_every - 1:
            time.sleep(0.06)  # a flush interval: points leave in several batches


def wait_until(condition: Callable[[], bool], what: str, limit_s: float = 20.0) -> None:
    """Poll `condition` (the background threads deliver on their own schedule); fail naming `what`."""
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


def strict_json(text: str) -> Any:
    """json.loads that refuses NaN and Infinity, as a browser's JSON.parse does."""
    def refuse(name: str) -> Any:
        raise ValueError(f"bare {name} in a JSON answer")
    return json.loads(text, parse_constant=refuse)


def sync(*extra: str) -> int:
    from whileai_train.cli import main

    return main(["sync", *extra])


def train(tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path, config: SenderConfig, steps: int = 4,
          at_step: dict[int, Callable[[], None]] | None = None) -> Any:
    """A real Trainer with WhileCallback; `at_step[k]()` runs at the end of step k. Returns the callback."""
    from transformers import Trainer, TrainerCallback

    actions = at_step or {}

    class Flip(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if state.global_step in actions:
                actions[state.global_step]()

    cb = wai.WhileCallback(name="faults", config=config)
    trainer = Trainer(model=tiny_model, args=trainer_args(tmp_path, max_steps=steps),
                      train_dataset=lm_dataset(tiny_tokenizer), callbacks=[cb, Flip()])
    with wai.track(trainer):
        trainer.train()  # must not raise, whatever the server, the disk or the store does
    return cb


# -- 1. delivery is proven, not assumed ----------------------------------------------------------------
WRONG_ANSWERS = {
    "redirect": "HTTP 302 redirect from",
    "html": "text/html",
    "wrongjson": "expected a JSON object with 'runId'",
}


@pytest.mark.trainer
@pytest.mark.parametrize("mode", sorted(WRONG_ANSWERS))
def test_a_wrong_answer_is_not_a_delivery(mode: str, server: FaultyServer, tiny_model: Any, tiny_tokenizer: Any,
                                          tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str],
                                          caplog: pytest.LogCaptureFixture) -> None:
    server.set(mode)  # a proxy, a captive portal or a misrouted URL answers every request
    with caplog.at_level(logging.WARNING):
        cb = train(tiny_model, tiny_tokenizer, tmp_path, SHORT_FINISH)
    out = capsys.readouterr().out
    assert cb.run.logged == 4 and server.runs() == []
    assert "4 points" in out and "not yet at" in out and "whileai-train sync" in out  # not "sent", not dropped
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    said = [w for w in warnings if WRONG_ANSWERS[mode] in w]
    assert len(said) == 1, warnings  # one warning, saying what came back
    if mode == "redirect":
        assert "https://moved.invalid" in said[0] and "WHILEAI_API_URL" in said[0]  # the URL to fix
    assert {r[2] for r in server.requests} == {mode}
    (spooled,) = spool_files(isolated_home)
    # sync to a server that still answers wrongly sends nothing and keeps the file
    assert sync() == 1
    assert WRONG_ANSWERS[mode] in capsys.readouterr().out and spooled.exists() and server.runs() == []
    server.set("ok")
    assert sync() == 0
    (run,) = server.runs()
    assert [p["seq"] for p in server.points(run["id"])] == [0, 1, 2, 3]
    assert server.run(run["id"])["status"] == "done" and not spool_files(isolated_home)


def test_each_route_checks_its_answer(server: FaultyServer) -> None:
    sink = HttpSink(server.url, Credential("test", server.api_key), connect_timeout_s=1.0, read_timeout_s=1.0)
    try:
        run_id = sink.open_run({"name": "shape"}, "c-shape")
        point = (0, 1, 1.0, '{"loss":1.0,"step":1,"ts":1.0,"seq":0}')
        sends = (lambda: sink.open_run({"name": "shape"}, "c-shape"), lambda: sink.send_points(run_id, [point]),
                 lambda: sink.send_note(run_id, 0, "n", 1.0), lambda: sink.finish(run_id, "done", None, None))
        for mode in ("html", "redirect", "wrongjson", "took0"):
            # a page, a redirect: no route is delivered; {"ok": true} names no run, so an open is not;
            # {"accepted": 0} to a log call says it took none of them
            refused = sends if mode in ("html", "redirect") else sends[:1] if mode == "wrongjson" else sends[1:2]
            for send in refused:
                server.fail_for(1, mode)
                with pytest.raises(SendError) as info:
                    send()
                kind = {"redirect": "redirect", "took0": "partial"}.get(mode, "not-api")
                assert info.value.retryable and info.value.kind == kind
        assert server.points(run_id) == [] and server.run(run_id)["status"] == "running"
        server.fail_for(1, "wrongjson")  # any other 2xx JSON object is an answer: delivered
        assert sink.send_points(run_id, [point]) == 1
        assert sink.send_points(run_id, [point]) == 1
        assert [p["seq"] for p in server.points(run_id)] == [0]
        sink.finish(run_id, "done", {"a": 1}, None)
        with pytest.raises(RunAlreadyFinished):  # a second finish: final, not a failure to retry
            sink.finish(run_id, "failed", None, "again")
        record = server.run(run_id)
        assert record["status"] == "done" and record["summary"] == {"a": 1}  # nothing overwritten
    finally:
        sink.close()


# -- 2. a full disk keeps the points in memory, and says what survives --------------------------------------
CHILD = textwrap.dedent(
    """
    import logging, resource, sys, time
    import whileai_train as wai
    from whileai_train.runs.config import SenderConfig

    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    limit, n = int(sys.argv[1]), int(sys.argv[2])
    config = SenderConfig(flush_interval_s=0.05, finish_wait_s=float(sys.argv[3]), connect_timeout_s=1.0,
                          read_timeout_s=1.0, open_timeout_s=1.0, backoff_base_s=0.05, backoff_max_s=0.2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # the disk is full past `limit` bytes per file
    run = wai.run(name="full-disk", config=config)
    for step in range(n):
        run.log(step, loss=1.0 / (step + 1), grad_norm=0.5, lr=1e-3)
        if step % 5 == 4:
            time.sleep(0.06)
    run.finish()
    print("LOGGED", run.logged, run.summary["points"], flush=True)
    """
)


def run_child(tmp_path: Path, server: FaultyServer, limit: int, n: int, finish_wait: float) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run([sys.executable, str(script), str(limit), str(n), str(finish_wait)], check=False, env=env,
                          capture_output=True, text=True, timeout=120)


def test_full_disk_with_the_platform_up_loses_nothing(server: FaultyServer, tmp_path: Path,
                                                      isolated_home: Path) -> None:
    done = run_child(tmp_path, server, limit=1500, n=40, finish_wait=10.0)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "LOGGED 40 40" in done.stdout
    assert "file size limit is reached" in done.stderr  # the real cause, said once
    assert done.stderr.count("cannot write the spool") == 1 and "do not survive this process exiting" in done.stderr
    (run,) = server.runs()
    assert [p["seq"] for p in server.points(run["id"])] == list(range(40))
    record = server.run(run["id"])
    assert record["status"] == "done" and record["summary"]["points"] == 40  # what was delivered


def test_full_disk_with_the_platform_down_says_how_many_are_lost(server: FaultyServer, tmp_path: Path,
                                                                 isolated_home: Path) -> None:
    server.set("error500")
    done = run_child(tmp_path, server, limit=1500, n=40, finish_wait=0.3)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("whileai: run") and "finished" in x)
    lost = int(line.split(" of the 40 points")[0].rsplit(" ", 1)[1])
    assert 0 < lost < 40 and "lost when this process exits" in line and "file size limit" in line
    server.set("ok")
    assert sync() == 0
    (run,) = server.runs()
    seqs = [p["seq"] for p in server.points(run["id"])]
    assert len(seqs) == 40 - lost == len(set(seqs))  # exactly what the message said survived
    # the finish record could not be written either: sync finishes the run "failed", saying why
    assert server.run(run["id"])["status"] == "failed"


# -- 3. JSON out is JSON ----------------------------------------------------------------------------------
def test_nan_and_infinity_become_null_with_the_key_named_once(server: FaultyServer,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    import httpx

    with caplog.at_level(logging.WARNING):
        run = wai.run(name="diverged", config=FAST)
        for step in range(6):
            run.log(step, loss=float("nan") if step >= 2 else 1.0, grad_norm=float("inf") if step == 3 else 0.5)
            time.sleep(0.06)
        run.finish(summary={"train_loss": float("nan"), "nested": {"best": float("-inf"), "ok": 1.5}})
    record = server.run(run.id)
    assert record["status"] == "done" and record["summary"]["train_loss"] is None
    assert record["summary"]["nested"] == {"best": None, "ok": 1.5}
    points = server.points(run.id)
    assert [p["loss"] for p in points] == [1.0, 1.0, None, None, None, None]
    assert [p["grad_norm"] for p in points] == [0.5, 0.5, 0.5, None, 0.5, 0.5]
    listing = httpx.get(server.url + "/runs", headers={"X-Api-Key": server.api_key}).text
    assert strict_json(listing)["runs"][0]["summary"]["train_loss"] is None
    text = caplog.text
    assert text.count("'loss'") == 1 and text.count("'grad_norm'") == 1  # each key named once
    assert "'train_loss'" in text and "'nested.best'" in text


def test_local_store_summary_has_no_bare_nan() -> None:
    run = wai.run(name="local-nan", config=FAST)
    run.log(1, loss=float("nan"))
    run.finish(summary={"train_loss": float("inf")})
    with sqlite3.connect(LocalStore().path) as db:  # the stored text itself, as any reader sees it
        summary = db.execute("SELECT summary FROM runs WHERE id = ?", (run.id,)).fetchone()[0]
        point = db.execute("SELECT data FROM points WHERE run_id = ?", (run.id,)).fetchone()[0]
    assert strict_json(summary)["train_loss"] is None and strict_json(point)["loss"] is None


# -- 4. the spool reader skips and names what it cannot read ---------------------------------------------
BAD_LINES = [
    b"\xff\xfe\x00binary junk\x00\x01",                               # 2: not UTF-8
    b'{"t":"p","p":{"seq":90,"note":"caf\xc3\xa9"}',                    # 3: fine bytes, but not JSON (cut)
    b"[1, 2, 3]",                                                       # 4: JSON, not a record
    b"42",                                                              # 5: a number
    b'{"t":"p","p":"not a point"}',                                     # 6: wrong shape
    b'{"t":"p","p":{"seq":"x"}}',                                       # 7: seq not a number
    b'{"t":"who-knows"}',                                               # 8: unknown record
    b'{"no_type":1}',                                                   # 9: no type
]


def write_spool(path: Path, client_id: str, url: str, points: range, bad: bool) -> None:
    lines = [json.dumps({"t": "open", "client_id": client_id, "url": url, "meta": {"name": client_id},
                         "pid": 999999, "host": "elsewhere"}).encode()]
    good = [json.dumps({"t": "p", "p": {"seq": s, "step": s, "loss": 0.5}}).encode() for s in points]
    if bad:
        lines += BAD_LINES + good[:2] + [b'{"t":"p","p":{"seq":91,"loss":NaN}}'] + good[2:]
        body = b"\n".join(lines) + b'\n{"t":"p","p":{"seq":99,"txt":"\xe2\x82'  # torn inside a character
    else:
        body = b"\n".join(lines + good) + b"\n"
    path.write_bytes(body)


def test_sync_skips_bad_lines_names_them_and_sends_every_file(server: FaultyServer, isolated_home: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    folder = isolated_home / ".whileai" / "spool"
    folder.mkdir(parents=True)
    write_spool(folder / "c-bad.jsonl", "c-bad", server.url, range(5), bad=True)
    write_spool(folder / "c-good.jsonl", "c-good", server.url, range(3), bad=False)
    assert sync() == 0
    out = capsys.readouterr().out
    assert "c-bad.jsonl: 9 unreadable line(s) skipped" in out
    assert "line 2: not UTF-8 text" in out and "line 4: a JSON list, not a record" in out
    assert "4 more" in out  # the rest counted, not listed
    by_name = {r["name"]: r["id"] for r in server.runs()}
    assert [p["seq"] for p in server.points(by_name["c-good"])] == [0, 1, 2]
    bad_points = server.points(by_name["c-bad"])
    assert [p["seq"] for p in bad_points] == [0, 1, 2, 3, 4, 91]
    assert bad_points[-1]["loss"] is None  # a NaN in a spool line is sent as null
    assert not spool_files(isolated_home)


def test_resume_over_a_damaged_spool_never_raises(server: FaultyServer, isolated_home: Path,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    sink = HttpSink(server.url, Credential("test", server.api_key))
    run_id = sink.open_run({"name": "resumed"}, "c-resumed")  # the first attempt opened the run, then died
    sink.close()
    spool = isolated_home / ".whileai" / "spool" / "c-resumed.jsonl"
    spool.parent.mkdir(parents=True)
    spool.write_bytes(b"\n".join([
        json.dumps({"t": "open", "client_id": "c-resumed", "url": server.url, "meta": {"name": "resumed"},
                    "pid": 999999, "host": "elsewhere"}).encode(),
        json.dumps({"t": "remote", "run_id": run_id}).encode(),
        b"\xc3\x28 not utf-8",
        json.dumps({"t": "p", "p": {"seq": 7, "step": 7, "loss": 0.1}}).encode(),
        b"\x00\x00\x00",  # torn: the kill came mid-write
    ]))
    state = {"run_id": run_id, "client_id": "c-resumed", "name": "resumed", "started": time.time()}
    with caplog.at_level(logging.WARNING):
        second = wai.run(config=FAST, resume=state)  # must not raise
        second.log(8, loss=0.05)
        second.finish()
    assert "2 unreadable line(s) skipped" in caplog.text and str(spool) in caplog.text
    assert second.id == run_id and [p["step"] for p in server.points(run_id)] == [7, 8]
    assert server.run(run_id)["status"] == "done" and not spool.exists()


# -- 2 (local half). a store locked past the finish wait: the points go to the spool, then to the store ------
def test_locked_store_at_finish_spools_and_sync_writes_it(capsys: pytest.CaptureFixture[str],
                                                          isolated_home: Path) -> None:
    run = wai.run(name="locked", config=SHORT_FINISH, total_steps=10)
    log_points(run, 3)
    wait_until(lambda: len(LocalStore().points(run.id)) == 3, "the first 3 points in the store")
    holder = sqlite3.connect(LocalStore().path, timeout=0.1, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the write lock, past the finish wait
    try:
        log_points(run, 7, start=3)
        run.note("written while locked")
        run.finish(summary={"train_loss": 0.25})
        out = capsys.readouterr().out
        assert "could not take the last records" in out and "database is locked" in out
        (spooled,) = spool_files(isolated_home)
        assert str(spooled) in out and "whileai-train sync" in out
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store = LocalStore()
    assert [p["seq"] for p in store.points(run.id)] == [0, 1, 2]
    assert sync() == 0
    record = store.get_run(run.id)
    assert [p["seq"] for p in store.points(run.id)] == list(range(10))
    assert record["status"] == "done" and record["summary"]["train_loss"] == 0.25
    assert [n["markdown"] for n in record["notes"]] == ["written while locked"]
    assert not spool_files(isolated_home)


def test_a_finished_local_run_is_final(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "runs.db")
    run_id = store.create_run({"name": "final"})
    store.finish(run_id, "done", {"loss": 0.1})
    with pytest.raises(RunFinishedError) as info:
        store.finish(run_id, "failed", None, "again")
    assert info.value.run_id == run_id and info.value.status == "done" and isinstance(info.value, RunError)
    record = store.get_run(run_id)
    assert record["status"] == "done" and record["summary"] == {"loss": 0.1} and record["error"] is None
    store.reopen(run_id)  # a resume reopens it explicitly
    store.finish(run_id, "stopped")
    assert store.get_run(run_id)["status"] == "stopped"


# -- 7. a 409 run_finished is final, not a retry ------------------------------------------------------------
def test_run_finished_answer_is_final_and_says_what_was_not_stored(server: FaultyServer, isolated_home: Path,
                                                                   capsys: pytest.CaptureFixture[str],
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        run = wai.run(name="finished-elsewhere", config=FAST)
        log_points(run, 3)
        # acknowledged to the client, not only stored: no answer is still on its way, to be missed and re-sent
        wait_until(lambda: run._sender.delivered == 3, "the first 3 points acknowledged")  # type: ignore[union-attr]
        server.set("finished")  # the platform now holds the run as finished (e.g. stopped from the page)
        log_points(run, 4, start=3)
        # the client meets the refusal while the run goes on (met during finish: the next test)
        wait_until(lambda: any("already finished" in r.getMessage() for r in caplog.records), "the refusal")
        run.finish()
    assert [p["seq"] for p in server.points(run.id)] == [0, 1, 2]
    assert sum(r[2] == "finished" for r in server.requests) == 1  # refused once, never retried
    said = [r.getMessage() for r in caplog.records if "already finished" in r.getMessage()]
    assert len(said) == 1 and "any logged later, are not stored there" in said[0]  # one warning, when it happened
    out = capsys.readouterr().out
    assert "4 points and 0 notes sent after that were not stored" in out  # the exact count, at finish
    assert "whileai-train sync" not in out and not spool_files(isolated_home)


def test_a_refusal_met_during_finish_is_said_once_by_the_finish_line(server: FaultyServer, isolated_home: Path,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    waits = SenderConfig(**{**FAST.__dict__, "backoff_base_s": 30.0, "backoff_max_s": 30.0})  # 15 s or more
    with caplog.at_level(logging.WARNING):
        run = wai.run(name="finished-at-the-end", config=waits)
        wait_until(lambda: [r["name"] for r in server.runs()] == ["finished-at-the-end"], "the run opened")
        server.set("error500")
        log_points(run, 4)
        wait_until(lambda: any(r[1].endswith("/log") for r in server.requests), "a failed send, then a long wait")
        server.set("finished")
        run.finish()  # finish tries at once, whatever the backoff, and meets the refusal
    assert sum(r[2] == "finished" for r in server.requests) == 1 and server.points(run.id) == []
    assert not [r for r in caplog.records if "already finished" in r.getMessage()]  # the finish line says it
    out = capsys.readouterr().out
    assert "already held the run as finished" in out and "4 points and 0 notes sent after that were not stored" in out
    assert not spool_files(isolated_home)


def test_finish_asked_while_a_failing_send_is_on_its_way_still_tries_at_once(
        server: FaultyServer, isolated_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """finish asks the send thread for a prompt try, whatever the backoff. Asked while a send that will fail
    is still on its way (whose backoff is then set), the try is still made: all lands, nothing is left to sync."""
    waits = SenderConfig(**{**FAST.__dict__, "backoff_base_s": 30.0, "backoff_max_s": 30.0})  # 15 s or more
    run = wai.run(name="finish during a send", config=waits)
    wait_until(lambda: [r["name"] for r in server.runs()] == ["finish during a send"], "the run opened")
    server.hang_s = 60.0
    server.set("hold")  # the next requests wait for server.release, then their connection closes unanswered
    log_points(run, 4)
    wait_until(lambda: any(r[1].endswith("/log") for r in server.requests), "a send on its way")
    server.set("ok")
    (spool,) = spool_files(isolated_home)

    def release_once_finish_asked() -> None:
        wait_until(lambda: '"t": "finish"' in spool.read_text(encoding="utf-8"), "finish asked")
        server.release.set()  # the send on its way fails only now, after finish asked for its try

    releaser = threading.Thread(target=release_once_finish_asked)
    releaser.start()
    run.finish()
    releaser.join(timeout=30)
    assert [p["seq"] for p in server.points(run.id)] == [0, 1, 2, 3] and server.run(run.id)["status"] == "done"
    assert not spool_files(isolated_home) and "sync" not in capsys.readouterr().out


def test_resumed_platform_run_is_reopened_then_finished(server: FaultyServer) -> None:
    first = wai.run(name="preempted", config=FAST)
    first.log(1, loss=1.0)
    first.finish("failed", error="preempted")
    second = wai.run(config=FAST, resume=first.state())
    second.log(2, loss=0.5)
    second.finish()
    assert second.id == first.id and server.run(first.id)["status"] == "done"
    assert [p["step"] for p in server.points(first.id)] == [1, 2]


# -- 5. a bad environment at open degrades with one warning ------------------------------------------------
def test_corrupt_store_degrades_to_memory_and_says_so(isolated_home: Path, capsys: pytest.CaptureFixture[str],
                                                      caplog: pytest.LogCaptureFixture) -> None:
    db = isolated_home / ".whileai" / "runs.db"
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not a database, it was overwritten " * 200)
    with pytest.raises(RunError) as info:
        LocalStore()
    assert str(db) in str(info.value) and "move it aside" in str(info.value)
    with caplog.at_level(logging.WARNING):
        run = wai.run(name="corrupt", config=FAST)
        log_points(run, 5)
        run.finish()
    assert run.sink == "memory" and run.status == "done"
    assert caplog.text.count("the local store cannot be used") == 1 and str(db) in caplog.text
    assert "its 5 points were held in memory only" in capsys.readouterr().out


def test_unusable_home_on_the_platform_still_delivers(server: FaultyServer, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the home folder should be")
    monkeypatch.setenv("WHILEAI_HOME", str(blocker / "whileai"))
    with caplog.at_level(logging.WARNING):
        run = wai.run(name="no-home", config=FAST)
        log_points(run, 6)
        run.finish()
    assert [p["seq"] for p in server.points(run.id)] == list(range(6))
    assert server.run(run.id)["status"] == "done"
    assert caplog.text.count("cannot be created") == 1 and "set WHILEAI_HOME to a writable folder" in caplog.text


def test_unusable_home_locally_runs_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("WHILEAI_HOME", str(blocker / "whileai"))
    with wai.run(name="no-home-local", config=FAST) as run:
        log_points(run, 4)
    assert run.status == "done" and run.sink == "memory"
    assert "its 4 points were held in memory only" in capsys.readouterr().out


def test_non_ascii_key_in_the_credentials_file_goes_local_with_a_warning(isolated_home: Path,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    path = isolated_home / ".whileai" / "credentials.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"api_key": "sk-\u2014zq81\u201d"}), encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        run = wai.run(name="bad-key", config=FAST)
        run.log(1, loss=1.0)
        run.finish()
    assert run.sink == "local" and "non-ASCII" in caplog.text and str(path) in caplog.text
    assert "zq81" not in caplog.text  # the key is never echoed
    with pytest.raises(RunError, match="non-ASCII"):  # a key passed in code is a mistake in code: it raises
        wai.run(name="bad-key", api_key="sk-caf\u00e9")


def test_store_locked_at_open_is_opened_by_the_sender_later(caplog: pytest.LogCaptureFixture) -> None:
    LocalStore().close()  # the database exists; another process now holds its write lock
    holder = sqlite3.connect(LocalStore().path, timeout=0.1, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with caplog.at_level(logging.WARNING):
            run = wai.run(name="locked-at-open", config=SHORT_FINISH)  # must not raise
            log_points(run, 4)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    log_points(run, 2, start=4)
    run.finish()
    assert "could not open the run" in caplog.text and "database is locked" in caplog.text
    (record,) = LocalStore().list_runs()
    assert record["name"] == "locked-at-open" and record["status"] == "done"
    assert [p["seq"] for p in LocalStore().points(record["id"])] == list(range(6))


@pytest.mark.parametrize("code, words", [(errno.ENOSPC, "the disk is full"), (errno.EROFS, "read-only"),
                                         (errno.EFBIG, "file size limit"), (errno.EDQUOT, "quota")])
def test_os_errors_are_said_as_their_cause(code: int, words: str) -> None:
    from whileai_train.runs.sender import os_cause

    assert words in os_cause(OSError(code, os.strerror(code)))
