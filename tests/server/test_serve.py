"""`whileai-train serve`: the dashboard page and the runs API over the local store, in a real process."""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from tests.helpers.serve_helpers import ServeProcess, call

import whileai_train as wai


def _get(url: str) -> tuple[str, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.headers.get("Content-Type", ""), response.read()


def test_serve_shows_the_local_runs(isolated_home: Path) -> None:
    with wai.run(name="served-run", total_steps=3) as run:
        for step in range(1, 4):
            run.log(step, loss=1.0 / step)
        run.note("hello from the test")
    env = dict(os.environ)
    with subprocess.Popen([sys.executable, "-m", "whileai_train.cli", "serve", "--port", "0"],
                          stdout=subprocess.PIPE, text=True, env=env) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            url = re.search(r"http://[\d.]+:\d+/", line).group(0)
            content_type, page = _get(url)
            assert content_type.startswith("text/html") and b"whileai_train runs" in page
            runs = json.loads(_get(url + "runs")[1])["runs"]
            assert [r["name"] for r in runs] == ["served-run"] and runs[0]["status"] == "done"
            points = json.loads(_get(url + f"runs/{run.id}/points")[1])["points"]
            assert [(p["step"], p["loss"]) for p in points] == [(1, 1.0), (2, 0.5), (3, 1.0 / 3)]
            record = json.loads(_get(url + f"runs/{run.id}")[1])
            assert record["notes"][0]["markdown"] == "hello from the test"
        finally:
            process.terminate()
            process.wait(timeout=10)


def test_serve_open_hands_the_served_page_to_the_browser(isolated_home: Path, tmp_path: Path) -> None:
    """--open gives the user's browser ($BROWSER, as the webbrowser module reads it) the URL the server answers."""
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.py"
    browser.write_text(f"import sys\nopen({str(opened)!r}, 'w').write(sys.argv[1])\n", encoding="utf-8")
    env = dict(os.environ, BROWSER=f"{sys.executable} {browser} %s")
    with subprocess.Popen([sys.executable, "-m", "whileai_train.cli", "serve", "--port", "0", "--open"],
                          stdout=subprocess.PIPE, text=True, env=env) as process:
        try:
            assert process.stdout is not None
            printed = re.search(r"http://[\d.]+:\d+/", process.stdout.readline()).group(0)
            for _ in range(200):  # the browser is a process of its own: wait until it has been handed the page
                if opened.exists() and opened.read_text(encoding="utf-8"):
                    break
                time.sleep(0.05)
            assert opened.read_text(encoding="utf-8") == printed
            content_type, page = _get(printed)
            assert content_type.startswith("text/html") and b"whileai_train runs" in page
        finally:
            process.terminate()
            process.wait(timeout=10)


# -- security: a key off loopback, 401 everywhere without it, Host and Origin checks ----------------------
KEY = "sk-serve-test-0123456789abcdef"


def test_serve_refuses_a_network_address_without_a_key(isolated_home: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "whileai_train.cli", "serve", "--host", "0.0.0.0", "--port", "0"],
                          check=False, capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert done.returncode == 2 and done.stdout == ""
    assert "refusing to listen on 0.0.0.0" in done.stderr and "--api-key" in done.stderr


def test_with_a_key_every_route_answers_401_without_it(isolated_home: Path) -> None:
    with ServeProcess(isolated_home / ".whileai", "--host", "0.0.0.0", env={"WHILEAI_SERVER_KEY": KEY}) as server:
        url = f"http://127.0.0.1:{server.port}"
        keyed = {"X-Api-Key": KEY}
        status, opened = call(url + "/runs", "POST", {"name": "keyed"}, headers=keyed)
        assert status == 200
        run_id = opened["runId"]
        schema = call(url + "/openapi.json", headers=keyed)[1]
        routes = [(method.upper(), path.replace("{run_id}", run_id))
                  for path, methods in schema["paths"].items() for method in methods]
        routes += [("GET", "/"), ("GET", "/static/app.js"), ("GET", "/openapi.json")]
        assert len(routes) >= 11
        for method, path in routes:
            for headers in ({}, {"X-Api-Key": KEY + "x"}):
                status, answer = call(url + path, method, {} if method != "GET" else None, headers=headers)
                assert status == 401, (method, path, status, answer)
        assert call(url + f"/runs/{run_id}", headers=keyed)[1]["name"] == "keyed"
        # the page's key form: a session cookie (a random token, not the key) opens the page
        status, _ = call(url + "/session", "POST", {"key": "wrong"})
        assert status == 401
        request = urllib.request.Request(url + "/session", data=json.dumps({"key": KEY}).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            cookie = response.headers["Set-Cookie"].split(";", 1)[0]
        assert KEY not in cookie and "HttpOnly" in response.headers["Set-Cookie"]
        pages = [call(url + path, headers={"Cookie": cookie})[1] for path in ("/", "/static/app.js", "/runs")]
        assert "whileai_train runs" in pages[0] and pages[2]["runs"][0]["name"] == "keyed"
        login = call(url + "/")[1]
        out, err = server.stop()
    for text in (*map(str, pages), login, out, err, server.first_line):
        assert KEY not in text


def test_a_foreign_host_header_is_refused(isolated_home: Path) -> None:
    with ServeProcess(isolated_home / ".whileai") as server:
        for host in ("evil.example", f"evil.example:{server.port}", "127.0.0.1.evil.example"):
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            connection.request("GET", "/runs", headers={"Host": host})
            response = connection.getresponse()
            assert response.status == 403 and json.loads(response.read())["code"] == "bad_host", host
            connection.close()
        for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}"):
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            connection.request("GET", "/runs", headers={"Host": host})
            assert connection.getresponse().status == 200, host
            connection.close()


def test_a_cross_origin_write_is_refused(isolated_home: Path) -> None:
    with ServeProcess(isolated_home / ".whileai") as server:
        body = {"name": "from another page"}
        for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"},
                        {"Origin": f"http://localhost:{server.port}"}, {"Sec-Fetch-Site": "cross-site"}):
            status, answer = call(server.url + "/runs", "POST", body, headers={**headers, "Content-Type": "text/plain"})
            assert status == 403 and answer["code"] == "cross_origin", headers
        assert call(server.url + "/runs")[1]["runs"] == []
        status, _ = call(server.url + "/runs", "POST", body, headers={"Origin": server.url})
        assert status == 200  # the page's own origin writes


# -- interop: the product text's plain-HTTP bodies, from a client that is not this library ---------------
def test_plain_http_client_with_the_product_text_bodies(isolated_home: Path) -> None:
    with ServeProcess(isolated_home / ".whileai", env={"WHILEAI_SERVER_KEY": KEY}) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)

        def post(path: str, body: dict[str, object]) -> dict[str, object]:
            connection.request("POST", path, body=json.dumps(body), headers={"X-Api-Key": KEY})
            response = connection.getresponse()
            payload = json.loads(response.read())
            assert response.status == 200, payload
            return dict(payload)

        run_id = post("/runs", {"name": "from curl", "dataset_id": "ds-1", "base_model": "Qwen/Qwen2.5-0.5B",
                                "total_steps": 9})["runId"]
        for call_index in range(3):
            points = [{"step": 3 * call_index + i + 1, "loss": 2.0 - 0.1 * (3 * call_index + i), "lr": 1e-5}
                      for i in range(3)]
            assert post(f"/runs/{run_id}/log", {"points": points}) == {"accepted": 3, "new": 3}
        post(f"/runs/{run_id}/finish", {"status": "done", "summary": {"eval_pass_rate": 0.61},
                                        "adapter": "s3://bucket/adapter"})
        connection.request("GET", f"/runs/{run_id}/points", headers={"X-Api-Key": KEY})
        points = json.loads(connection.getresponse().read())["points"]
        connection.request("GET", f"/runs/{run_id}", headers={"X-Api-Key": KEY})
        record = json.loads(connection.getresponse().read())
        connection.close()
    assert [(p["step"], p["loss"], p["lr"]) for p in points] == \
        [(s, pytest.approx(2.0 - 0.1 * (s - 1)), 1e-5) for s in range(1, 10)]
    assert record["status"] == "done" and record["points_count"] == 9 and record["base_model"] == "Qwen/Qwen2.5-0.5B"
    assert record["summary"] == {"eval_pass_rate": 0.61, "adapter": "s3://bucket/adapter"}
