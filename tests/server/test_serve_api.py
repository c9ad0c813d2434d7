"""The runs API as `whileai-train serve` answers it (a real uvicorn process over a real SQLite store):
the platform's routes, seq-less points, finished runs final, PATCH, paging, caps and malformed values."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.serve_helpers import ServeProcess, call

from whileai_train.runs.store import LocalStore


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    home = tmp_path_factory.mktemp("serve-api")
    with ServeProcess(home) as process:
        yield process


def _open(server: ServeProcess, name: str = "r", **extra: Any) -> str:
    status, body = call(server.url + "/runs", "POST", {"name": name, "total_steps": 10, **extra})
    assert status == 200, body
    return str(body["runId"])


def _raw(server: ServeProcess, payload: bytes) -> bytes:
    """Send raw bytes on one connection; everything the server answered before closing or going quiet."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(payload)
        chunks = []
        try:
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                chunks.append(data)
        except TimeoutError:
            pass
    return b"".join(chunks)


def test_client_routes_answer_as_before(server: ServeProcess) -> None:
    run_id = _open(server, client_run_id="client-1")
    assert _open(server, client_run_id="client-1") == run_id  # a re-sent open is the same run
    body = {"points": [{"seq": i, "step": i + 1, "ts": 1.5, "loss": 1.0 / (i + 1)} for i in range(3)],
            "progress": {"step": 3, "total": 10}}
    assert call(f"{server.url}/runs/{run_id}/log", "POST", body) == (200, {"accepted": 3, "new": 3})
    assert call(f"{server.url}/runs/{run_id}/log", "POST", body) == (200, {"accepted": 3, "new": 0})
    assert call(f"{server.url}/runs/{run_id}/notes", "POST", {"seq": 0, "markdown": "hi", "ts": 2.0}) == \
        (200, {"new": True})
    assert call(f"{server.url}/runs/{run_id}/finish", "POST", {"status": "done", "summary": {"cost_usd": 0.5}}) == \
        (200, {"status": "done"})
    status, record = call(f"{server.url}/runs/{run_id}")
    assert status == 200 and record["status"] == "done" and record["step"] == 3 and record["points_count"] == 3
    assert record["summary"] == {"cost_usd": 0.5} and record["notes"][0]["markdown"] == "hi"
    assert record["last_loss"] == pytest.approx(1 / 3)


def test_points_without_seq_are_stored_in_arrival_order(server: ServeProcess) -> None:
    run_id = _open(server)
    for first in (1, 3, 5):
        body = {"points": [{"step": first, "loss": 0.1 * first}, {"step": first + 1, "loss": 0.1 * (first + 1)}]}
        assert call(f"{server.url}/runs/{run_id}/log", "POST", body) == (200, {"accepted": 2, "new": 2})
    page = call(f"{server.url}/runs/{run_id}/points")[1]
    assert [p["step"] for p in page["points"]] == [1, 2, 3, 4, 5, 6]
    assert [p["seq"] for p in page["points"]] == [0, 1, 2, 3, 4, 5]


def test_a_finished_run_is_final(server: ServeProcess) -> None:
    run_id = _open(server)
    assert call(f"{server.url}/runs/{run_id}/finish", "POST",
                {"status": "stopped", "summary": {"stop_reason": "first"}})[0] == 200
    for path, body in (("finish", {"status": "done", "summary": {"stop_reason": "second"}}),
                       ("log", {"points": [{"step": 1, "loss": 1.0}]}),
                       ("notes", {"markdown": "late"})):
        status, answer = call(f"{server.url}/runs/{run_id}/{path}", "POST", body)
        assert status == 409 and answer["code"] == "run_finished" and "final" in answer["error"], (path, answer)
    status, record = call(f"{server.url}/runs/{run_id}")
    assert (record["status"], record["stop_reason"], record["points_count"], record["notes"]) == \
        ("stopped", "first", 0, [])


def test_a_resumed_open_reopens_the_clients_finished_run(server: ServeProcess) -> None:
    """The client's checkpoint resume (POST /runs with resume) is the one way a finished run continues."""
    body = {"name": "r", "client_run_id": "resume-1"}
    run_id = call(f"{server.url}/runs", "POST", body)[1]["runId"]
    assert call(f"{server.url}/runs/{run_id}/finish", "POST", {"status": "failed", "error": "killed"})[0] == 200
    assert call(f"{server.url}/runs", "POST", body)[1]["runId"] == run_id  # a re-sent open does not reopen
    assert call(f"{server.url}/runs/{run_id}")[1]["status"] == "failed"
    status, answer = call(f"{server.url}/runs", "POST", {**body, "resume": True})
    assert (status, answer["runId"]) == (200, run_id)
    assert call(f"{server.url}/runs/{run_id}/log", "POST", {"points": [{"step": 2, "loss": 0.5}]})[1]["accepted"] == 1
    assert call(f"{server.url}/runs/{run_id}/finish", "POST", {"status": "done"})[0] == 200
    status, record = call(f"{server.url}/runs/{run_id}")
    assert (record["status"], record["points_count"]) == ("done", 1)


def test_patch_merges_late_results_after_finish(server: ServeProcess) -> None:
    run_id = _open(server)
    call(f"{server.url}/runs/{run_id}/finish", "POST", {"status": "done", "summary": {"cost_usd": 0.1}})
    status, record = call(f"{server.url}/runs/{run_id}", "PATCH",
                          {"holdout": {"before": 0.41, "after": 0.58}, "delta": {"verdict": "moved"},
                           "note": "measured after training"})
    assert status == 200, record
    assert record["summary"] == {"cost_usd": 0.1, "holdout": {"before": 0.41, "after": 0.58},
                                 "delta": {"verdict": "moved"}}
    assert [n["markdown"] for n in record["notes"]] == ["measured after training"]
    assert record["status"] == "done"


def test_note_cap_is_8192_characters(server: ServeProcess) -> None:
    run_id = _open(server)
    assert call(f"{server.url}/runs/{run_id}/notes", "POST", {"markdown": "x" * 8192})[0] == 200
    status, answer = call(f"{server.url}/runs/{run_id}/notes", "POST", {"markdown": "x" * 8193})
    assert status == 400 and answer["field"] == "markdown" and "8192" in answer["error"]


def test_point_count_cap_names_the_field(server: ServeProcess) -> None:
    run_id = _open(server)
    status, answer = call(f"{server.url}/runs/{run_id}/log", "POST", {"points": [{"step": 1}] * 501})
    assert status == 400 and answer["field"] == "points" and "500" in answer["error"]


def test_points_read_a_page_at_a_time(server: ServeProcess) -> None:
    run_id = _open(server)
    call(f"{server.url}/runs/{run_id}/log", "POST", {"points": [{"seq": i, "step": i} for i in range(25)]})
    seen, cursor = [], None
    while True:
        query = "?limit=10" + (f"&after_seq={cursor}" if cursor is not None else "")
        status, page = call(f"{server.url}/runs/{run_id}/points{query}")
        assert status == 200 and page["points_count"] == 25
        seen += [p["seq"] for p in page["points"]]
        cursor = page["next_after_seq"]
        if cursor is None:
            break
    assert seen == list(range(25))
    assert [p["seq"] for p in call(f"{server.url}/runs/{run_id}/points?after_seq=20")[1]["points"]] == [21, 22, 23, 24]


def test_runs_filter_by_status_and_name(server: ServeProcess) -> None:
    a, b = _open(server, "Filter-Alpha"), _open(server, "filter-beta")
    call(f"{server.url}/runs/{b}/finish", "POST", {"status": "failed", "error": "boom"})
    names = {r["id"] for r in call(f"{server.url}/runs?q=FILTER-")[1]["runs"]}
    assert names == {a, b}
    failed = call(f"{server.url}/runs?q=filter-&status=failed")[1]["runs"]
    assert [(r["id"], r["error"]) for r in failed] == [(b, "boom")]
    assert call(f"{server.url}/runs?status=bogus")[0] == 400


@pytest.mark.parametrize(("raw", "field"), [
    (b'{"points": [{"step": 123456789012345678901234567890}]}', "points[0].step"),
    (b'{"points": [{"step": 1, "loss": {"a": 1}}]}', "points[0].loss"),
    (b'{"points": [{"step": 1, "loss": "0.5"}]}', "points[0].loss"),
    (b'{"points": [{"step": 1, "loss": true}]}', "points[0].loss"),
    (b'{"points": [{"step": 1, "note\\ud800": 1.0}]}', "points[0].note\ud800"),
    (b'{"points": {"step": 1}}', "points"),
    (b'{"points": [' + b"[" * 200 + b"]" * 200 + b"]}", "points" + "[0]" * 32),
    (b'{"points": [' + b"[" * 100000 + b"]" * 100000 + b"]}", "body"),
    (b"\xff\xfe not utf-8", "body"),
    (b"{not json", "body"),
    (b"[1, 2]", "body"),
])
def test_malformed_values_get_a_4xx_naming_the_field(server: ServeProcess, raw: bytes, field: str) -> None:
    run_id = _open(server)
    status, answer = call(f"{server.url}/runs/{run_id}/log", "POST", raw=raw)
    assert 400 <= status < 500, answer
    assert answer["field"] == field, answer
    assert call(f"{server.url}/runs/{run_id}")[1]["points_count"] == 0


def test_lone_surrogate_in_a_name_is_refused(server: ServeProcess) -> None:
    status, answer = call(server.url + "/runs", "POST", raw=b'{"name": "bad \\udc80 name"}')
    assert status == 400 and answer["field"] == "name" and answer["code"] == "lone_surrogate"


def test_nan_is_read_as_null_and_never_served(server: ServeProcess, tmp_path: Path) -> None:
    run_id = _open(server)
    raw = b'{"points": [{"seq": 0, "step": 1, "loss": NaN, "lr": Infinity, "kl": -Infinity, "x": 1.0}]}'
    assert call(f"{server.url}/runs/{run_id}/log", "POST", raw=raw)[0] == 200
    text = _text(f"{server.url}/runs/{run_id}/points")
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["points"][0] == {"seq": 0, "step": 1, "ts": None, "loss": None, "lr": None,
                                              "kl": None, "x": 1.0}


def _text(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


def test_nan_in_an_older_store_is_served_as_null(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "runs.db")
    run_id = store.create_run({"name": "old"})
    conn = store._connect()  # an older version wrote NaN straight into the JSON text
    conn.execute("INSERT INTO points (run_id, seq, step, ts, data) VALUES (?, 0, 1, 1.0, ?)",
                 (run_id, '{"seq": 0, "step": 1, "loss": NaN, "kl": Infinity}'))
    conn.execute("UPDATE runs SET summary = ? WHERE id = ?", ('{"cost_usd": NaN}', run_id))
    store.close()
    with ServeProcess(tmp_path) as process:
        for path in (f"/runs/{run_id}/points", f"/runs/{run_id}", "/runs"):
            text = _text(process.url + path)
            assert "NaN" not in text and "Infinity" not in text, (path, text)
        assert call(f"{process.url}/runs/{run_id}/points")[1]["points"][0]["loss"] is None
        assert call(f"{process.url}/runs/{run_id}")[1]["summary"] == {"cost_usd": None}


def test_bad_content_length_gets_a_4xx_not_a_dropped_connection(server: ServeProcess) -> None:
    for header in (b"Content-Length: banana", b"Content-Length: -5", b"Content-Length: 5\r\nContent-Length: 7"):
        answer = _raw(server, b"POST /runs HTTP/1.1\r\nHost: 127.0.0.1\r\n" + header + b"\r\n\r\n{}")
        assert answer.startswith(b"HTTP/1.1 400"), (header, answer[:200])


def test_an_oversized_body_is_refused_and_what_it_hides_never_runs(server: ServeProcess) -> None:
    hidden = json.dumps({"name": "smuggled"}).encode()
    inner = (b"POST /runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             b"Content-Length: " + str(len(hidden)).encode() + b"\r\n\r\n" + hidden)
    big = 9 * 1024 * 1024
    head = (b"POST /runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(big).encode() + b"\r\n\r\n")
    answer = _raw(server, head + inner)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b'"code":"body_too_large"' in answer and answer.count(b"HTTP/1.1") == 1
    # the same with a chunked body (no Content-Length): cut off once it passes the cap
    chunk = b"x" * (1024 * 1024)
    chunked = (b"POST /runs HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
               + b"".join(b"%x\r\n" % len(chunk) + chunk + b"\r\n" for _ in range(9)) + b"0\r\n\r\n" + inner)
    try:  # the server answers 413 and closes mid-upload, so the rest of the send may meet a reset
        _raw(server, chunked)
    except (ConnectionResetError, BrokenPipeError):
        pass
    assert call(server.url + "/runs?limit=1")[0] == 200  # still serving
    assert "smuggled" not in {r["name"] for r in call(server.url + "/runs?limit=1000")[1]["runs"]}


def test_keep_alive_connection_survives_a_refusal(server: ServeProcess) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("POST", "/runs", body=b'{"name": 5}', headers={"Content-Type": "application/json"})
    first = connection.getresponse()
    assert first.status == 400 and json.loads(first.read())["field"] == "name"
    connection.request("POST", "/runs", body=b'{"name": "after"}', headers={"Content-Type": "application/json"})
    second = connection.getresponse()
    assert second.status == 200 and "runId" in json.loads(second.read())
    connection.close()


def test_openapi_schema_describes_the_bodies(server: ServeProcess) -> None:
    status, schema = call(server.url + "/openapi.json")
    assert status == 200
    log_body = schema["paths"]["/runs/{run_id}/log"]["post"]["requestBody"]["content"]["application/json"]
    assert log_body["schema"] == {"$ref": "#/components/schemas/LogBody"}
    assert schema["components"]["schemas"]["LogBody"]["properties"]["points"]["maxItems"] == 500
    assert schema["components"]["schemas"]["NoteBody"]["properties"]["markdown"]["maxLength"] == 8192
    assert "patch" in schema["paths"]["/runs/{run_id}"]
