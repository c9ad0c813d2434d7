"""`whileai-train serve` keeps every point it says it took, and bounds each run whatever the number of
requests (a real server process, real SQLite): writers with and without seq on one run lose nothing, and so
do notes (a PATCH note between a live client's notes takes none of their numbers); metric names, notes and the stored summary are capped per run (409 naming the cap); the runs list carries a digest
of each summary; alarm/x = 0 is no alarm; server-numbered seqs stay within 2^53 - 1."""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.serve_helpers import ServeProcess, call

import whileai_train as wai
from whileai_train.alarm_event import AlarmEvent
from whileai_train.runs.config import SenderConfig
from whileai_train.runs.defaults import MAX_SEQ
from whileai_train.runs.spool import Spool, read_spool
from whileai_train.runs.store import LocalStore
from whileai_train.server.defaults import MAX_METRICS_PER_RUN, MAX_NOTES_PER_RUN, MAX_SUMMARY_BYTES


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with ServeProcess(tmp_path_factory.mktemp("serve-caps")) as process:
        yield process


class Client:
    """One kept-alive connection; post/patch return (status, JSON)."""

    def __init__(self, server: ServeProcess) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)

    def send(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        self.connection.request(method, path, body=None if body is None else json.dumps(body),
                                headers={"Content-Type": "application/json"})
        response = self.connection.getresponse()
        return response.status, json.loads(response.read())

    def close(self) -> None:
        self.connection.close()


def test_writers_with_and_without_seq_on_one_run_lose_nothing(server: ServeProcess) -> None:
    run_id = call(server.url + "/runs", "POST", {"name": "four writers"})[1]["runId"]
    per_writer, batch = 2500, 500
    taken: dict[int, list[int]] = {w: [] for w in range(4)}  # the points each writer was told were taken
    refusals: list[dict[str, Any]] = []

    def write(writer: int) -> None:
        client = Client(server)
        numbered = writer < 2
        for start in range(0, per_writer, batch):
            points = [{"step": i, "writer": writer, "i": i, **({"seq": writer * per_writer + i} if numbered else {})}
                      for i in range(start, start + batch)]
            status, answer = client.send("POST", f"/runs/{run_id}/log", {"points": points})
            if status == 200:
                assert answer["accepted"] == batch
                taken[writer] += [p["i"] for p in points]
            else:
                assert status == 409, answer
                refusals.append(answer)
        client.close()

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    store = LocalStore(Path(re.search(r"serving (.+) at ", server.first_line).group(1)))  # type: ignore[union-attr]
    stored = store.points(run_id)
    store.close()
    assert sorted((p["writer"], p["i"]) for p in stored) == sorted((w, i) for w, items in taken.items() for i in items)
    assert len({p["seq"] for p in stored}) == len(stored)
    assert refusals and {r["code"] for r in refusals} == {"seq_mixed"}  # the other kind was told, not dropped
    assert all("Fix:" in r["error"] for r in refusals)


def wait_until(condition: Callable[[], bool], what: str, limit_s: float = 20.0) -> None:
    """Poll `condition` (the client's send thread delivers on its own schedule); fail naming `what`."""
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


def test_a_note_without_a_seq_takes_no_number_a_client_will_use(server: ServeProcess, isolated_home: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A live wai.run client numbers its notes 0, 1, ...; a note PATCHed in between (the page, a script) has
    no number of its own. All three are kept, in the order they came, and a re-send is still stored once."""
    config = SenderConfig(flush_interval_s=0.05, finish_wait_s=10.0, open_timeout_s=5.0, backoff_base_s=0.05,
                          backoff_max_s=0.2)
    run = wai.run(name="noted while running", api_key="any-key-0123456789", url=server.url, config=config)
    assert "goes to" in capsys.readouterr().out

    def notes() -> list[str]:
        return [n["markdown"] for n in call(f"{server.url}/runs/{run.id}")[1]["notes"]]

    run.note("first, from the client")
    wait_until(lambda: notes() == ["first, from the client"], "the client's first note on the server")
    status, _ = call(f"{server.url}/runs/{run.id}", "PATCH", {"note": "a late remark, PATCHed"})
    assert status == 200
    run.note("second, from the client")
    wait_until(lambda: len(notes()) == 3, "the client's second note on the server")
    # the client's second note (its seq 1) sent again, as after a lost answer: stored once
    resent = {"seq": 1, "markdown": "second, from the client"}
    assert call(f"{server.url}/runs/{run.id}/notes", "POST", resent) == (200, {"new": False})
    run.finish()
    assert run.status == "done" and capsys.readouterr().out == ""  # finish had nothing left over to report
    assert notes() == ["first, from the client", "a late remark, PATCHed", "second, from the client"]


def test_metric_names_are_capped_per_run(server: ServeProcess) -> None:
    client = Client(server)
    run_id = client.send("POST", "/runs", {"name": "wide"})[1]["runId"]
    per_call = 400
    for call_index in range(MAX_METRICS_PER_RUN // per_call):
        names = {f"m{call_index}_{k}": 1.0 for k in range(per_call)}
        assert client.send("POST", f"/runs/{run_id}/log", {"points": [{"seq": call_index, **names}]})[0] == 200
    status, answer = client.send("POST", f"/runs/{run_id}/log",
                                 {"points": [{"seq": 99, **{f"late_{k}": 1.0 for k in range(per_call)}}]})
    assert status == 409 and answer["code"] == "too_many_metrics" and str(MAX_METRICS_PER_RUN) in answer["error"]
    # names the run already has are still taken
    status, _ = client.send("POST", f"/runs/{run_id}/log", {"points": [{"seq": 100, "m0_0": 2.0, "m1_5": 3.0}]})
    assert status == 200
    client.close()


def test_the_summary_is_capped_per_run_and_the_list_carries_a_digest(server: ServeProcess) -> None:
    client = Client(server)
    run_id = client.send("POST", "/runs", {"name": "big summary"})[1]["runId"]
    block = "x" * (MAX_SUMMARY_BYTES // 4)
    answers = [client.send("PATCH", f"/runs/{run_id}", {"summary": {f"part{i}": block, "cost_usd": 0.5}})
               for i in range(10)]
    statuses = [status for status, _ in answers]
    assert statuses[:3] == [200, 200, 200] and set(statuses[3:]) == {409}
    assert {a["code"] for s, a in answers if s == 409} == {"summary_too_large"}
    assert str(MAX_SUMMARY_BYTES) in answers[-1][1]["error"]
    status, record = client.send("GET", f"/runs/{run_id}")
    assert status == 200 and sorted(record["summary"]) == ["cost_usd", "part0", "part1", "part2"]
    assert record["summary"]["part2"] == block  # GET /runs/{id}: the whole summary
    status, listing = client.send("GET", "/runs?limit=1000")
    (row,) = [r for r in listing["runs"] if r["id"] == run_id]
    assert row["summary"]["cost_usd"] == 0.5 and row["summary"]["part0"] == block[:200] + "…"
    client.send("PATCH", f"/runs/{run_id}", {"holdout": {"before": 0.4, "after": 0.6}})
    assert "holdout" not in [r for r in client.send("GET", "/runs?limit=1000")[1]["runs"] if r["id"] == run_id][0]["summary"]
    client.close()


def test_notes_are_capped_per_run(server: ServeProcess) -> None:
    client = Client(server)
    run_id = client.send("POST", "/runs", {"name": "chatty"})[1]["runId"]
    for seq in range(MAX_NOTES_PER_RUN):
        assert client.send("POST", f"/runs/{run_id}/notes", {"seq": seq, "markdown": f"note {seq}"})[0] == 200
    assert client.send("POST", f"/runs/{run_id}/notes", {"seq": 0, "markdown": "note 0"}) == (200, {"new": False})
    status, answer = client.send("POST", f"/runs/{run_id}/notes", {"seq": MAX_NOTES_PER_RUN, "markdown": "one more"})
    assert status == 409 and answer["code"] == "too_many_notes" and str(MAX_NOTES_PER_RUN) in answer["error"]
    status, answer = client.send("PATCH", f"/runs/{run_id}", {"note": "late"})
    assert status == 409 and answer["code"] == "too_many_notes"
    assert len(client.send("GET", f"/runs/{run_id}")[1]["notes"]) == MAX_NOTES_PER_RUN
    client.close()


def test_an_alarm_is_the_event_a_note_carries_never_a_point_key(server: ServeProcess) -> None:
    client = Client(server)
    run_id = client.send("POST", "/runs", {"name": "alarms"})[1]["runId"]
    points = [{"seq": 0, "step": 1, "alarm/divergence": 0.0, "alarm/length": None},
              {"seq": 1, "step": 2, "alarm/divergence": 1.0, "alarm/length": 0},
              {"seq": 2, "step": 3, "alarm/drift": 1.0}]
    assert client.send("POST", f"/runs/{run_id}/log", {"points": points})[0] == 200
    event = {"name": "divergence", "step": 2, "message": "proxy up, gold flat", "evidence": {"proxy_delta": 0.3}}
    assert client.send("POST", f"/runs/{run_id}/notes", {"seq": 0, "markdown": "**Alarm: divergence**",
                                                           "alarm": event})[0] == 200
    status, refused = client.send("POST", f"/runs/{run_id}/notes", {"seq": 1, "markdown": "x",
                                                                      "alarm": {**event, "step": "2"}})
    assert status == 400 and "step" in refused["error"]
    record = client.send("GET", f"/runs/{run_id}")[1]
    assert record["alarms"] == [event]
    (row,) = [r for r in client.send("GET", "/runs?limit=1000")[1]["runs"] if r["id"] == run_id]
    assert row["alarm_count"] == 1
    client.close()


def test_a_live_runs_alarm_reaches_the_platform_as_the_same_event(server: ServeProcess, isolated_home: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """run.alarm: the point alarm/<name> = 1 (its curve) and the note that carries the typed event, through the
    sender and the spool; the spool's note line reads back as the same event (what `sync` sends later)."""
    config = SenderConfig(flush_interval_s=0.05, finish_wait_s=10.0, open_timeout_s=5.0, backoff_base_s=0.05,
                          backoff_max_s=0.2)
    run = wai.run(name="alarmed", api_key="any-key-0123456789", url=server.url, config=config)
    event = AlarmEvent(name="feature", step=4, message="reward tracks 'length', not an endorsed feature",
                       evidence={"top_feature": "length", "rho": 0.91, "gold_ci95": [-0.1, 0.02]})
    run.log(3, loss=1.0)
    run.alarm(event)
    run.finish()
    assert run.status == "done" and "goes to" in capsys.readouterr().out
    record = call(f"{server.url}/runs/{run.id}")[1]
    assert [AlarmEvent.model_validate(a) for a in record["alarms"]] == [event]
    assert record["alarm_count"] == 1 and [n["markdown"] for n in record["notes"]] == [event.note_markdown]
    points = call(f"{server.url}/runs/{run.id}/points")[1]["points"]
    assert [p["step"] for p in points if p.get("alarm/feature") == 1.0] == [4]
    spool = Spool(isolated_home / "spooled.jsonl")
    spool.write_lines(['{"t":"open","client_id":"c","url":"u","meta":{}}', Spool.note_line(0, "n", 1.0, event)])
    spool.close()
    assert read_spool(spool.path).notes == {0: ("n", 1.0, event)}


def test_server_numbers_stay_within_2_53(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "runs.db")
    run_id = store.create_run({"name": "near the end"})
    # a run written by an earlier version: a client's point at the last exact number, no numbering recorded
    store._connect().execute("INSERT INTO points (run_id, seq, step, ts, data) VALUES (?, ?, 1, 1.0, ?)",
                             (run_id, MAX_SEQ, json.dumps({"seq": MAX_SEQ, "step": 1})))
    store.close()
    with ServeProcess(tmp_path) as process:
        status, answer = call(f"{process.url}/runs/{run_id}/log", "POST", {"points": [{"step": 2, "loss": 0.5}]})
        assert status == 409 and answer["code"] == "seq_exhausted" and str(MAX_SEQ) in answer["error"]
        status, answer = call(f"{process.url}/runs/{run_id}/log", "POST", {"points": [{"seq": MAX_SEQ + 1}]})
        assert status == 400 and answer["field"] == "points[0].seq"
        assert call(f"{process.url}/runs/{run_id}")[1]["points_count"] == 1
