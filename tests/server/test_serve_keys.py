"""`whileai-train serve`'s key and the page's sessions (a real server process): the key from a file or the
environment, a warning when it is on the command line; a random session cookie per login with an expiry,
forgotten when the server restarts; wrong keys rate-limited; TLS with a certificate made here."""

from __future__ import annotations

import datetime
import http.client
import ipaddress
import json
import os
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers.serve_helpers import ServeProcess, call

from whileai_train.server.defaults import SESSION_ATTEMPTS, SESSION_TTL_S

KEY = "sk-keys-test-0123456789abcdef"


def _login(url: str, key: str) -> tuple[int, str]:
    """POST the key form; (status, the Set-Cookie header or '')."""
    connection = http.client.HTTPConnection(url.split("//")[1].rstrip("/"), timeout=10)
    connection.request("POST", "/session", body=json.dumps({"key": key}), headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response.status, response.headers.get("Set-Cookie") or ""


def test_the_key_comes_from_a_file_and_the_command_line_gets_a_warning(isolated_home: Path, tmp_path: Path) -> None:
    key_file = tmp_path / "server.key"
    key_file.write_text(KEY + "\n", encoding="utf-8")
    with ServeProcess(isolated_home / ".whileai", "--api-key-file", str(key_file)) as server:
        command_line = Path(f"/proc/{server.process.pid}/cmdline").read_bytes()
        assert call(server.url + "/runs")[0] == 401
        assert call(server.url + "/runs", headers={"X-Api-Key": KEY})[0] == 200
        _, err = server.stop()
    assert KEY.encode() not in command_line and "warning" not in err
    with ServeProcess(isolated_home / ".whileai", "--api-key", KEY) as server:
        assert call(server.url + "/runs", headers={"X-Api-Key": KEY})[0] == 200
        _, err = server.stop()
    assert "warning: --api-key puts the key on the command line" in err and "--api-key-file" in err
    assert KEY not in err
    key_file.write_text("  \n", encoding="utf-8")
    for args in (["--api-key-file", str(key_file)], ["--api-key-file", str(tmp_path / "missing.key")]):
        done = subprocess.run([sys.executable, "-m", "whileai_train.cli", "serve", "--port", "0", *args],
                              capture_output=True, text=True, timeout=60, env={**os.environ, "WHILEAI_HOME": str(tmp_path)})
        assert done.returncode == 2 and done.stdout == ""
        assert "key file" in done.stderr and "Fix:" in done.stderr


def test_sessions_are_random_expire_and_are_forgotten_on_restart(isolated_home: Path) -> None:
    home = isolated_home / ".whileai"
    with ServeProcess(home, env={"WHILEAI_SERVER_KEY": KEY}) as server:
        first, second = (_login(server.url, KEY) for _ in range(2))
        assert first[0] == second[0] == 204
        cookies = [header.split(";", 1)[0] for header in (first[1], second[1])]
        assert cookies[0] != cookies[1] and all(KEY not in c for c in cookies)
        attributes = {part.strip().split("=")[0].lower(): part.strip() for part in first[1].split(";")[1:]}
        assert attributes["max-age"] == f"Max-Age={SESSION_TTL_S}" and "httponly" in attributes
        for cookie in cookies:
            assert call(server.url + "/runs", headers={"Cookie": cookie})[0] == 200
        assert call(server.url + "/runs", headers={"Cookie": cookies[0][:-2] + "xx"})[0] == 401
    with ServeProcess(home, env={"WHILEAI_SERVER_KEY": KEY}) as restarted:
        for cookie in cookies:
            assert call(restarted.url + "/runs", headers={"Cookie": cookie})[0] == 401


def test_wrong_keys_are_rate_limited(isolated_home: Path) -> None:
    with ServeProcess(isolated_home / ".whileai", env={"WHILEAI_SERVER_KEY": KEY}) as server:
        assert [_login(server.url, f"guess-{i}")[0] for i in range(SESSION_ATTEMPTS)] == [401] * SESSION_ATTEMPTS
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("POST", "/session", body=json.dumps({"key": KEY}), headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
        connection.close()
        assert response.status == 429 and answer["code"] == "too_many_attempts"
        assert 1 <= int(response.headers["Retry-After"]) <= 60
        assert call(server.url + "/runs", headers={"X-Api-Key": KEY})[0] == 200  # scripts with the key go on


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key: made with `cryptography` when installed, else `openssl`."""
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", str(key_path), "-out", str(cert_path)], check=True, capture_output=True)
        return cert_path, key_path
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(private.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(private, hashes.SHA256()))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
    return cert_path, key_path


def test_serve_speaks_tls_with_a_certificate(isolated_home: Path, tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    with ServeProcess(isolated_home / ".whileai", "--ssl-certfile", str(cert), "--ssl-keyfile", str(key),
                      env={"WHILEAI_SERVER_KEY": KEY}) as server:
        assert server.url.startswith("https://127.0.0.1:")
        context = ssl.create_default_context(cafile=str(cert))
        connection = http.client.HTTPSConnection("127.0.0.1", server.port, timeout=10, context=context)
        connection.request("POST", "/session", body=json.dumps({"key": KEY}), headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        assert response.status == 204 and "secure" in response.headers["Set-Cookie"].lower()
        connection.request("GET", "/runs", headers={"X-Api-Key": KEY})
        response = connection.getresponse()
        assert response.status == 200 and json.loads(response.read()) == {"runs": []}
        connection.close()
        plain = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        with pytest.raises(ConnectionError):  # plain HTTP gets no answer from a TLS port
            plain.request("GET", "/runs", headers={"X-Api-Key": KEY})
            plain.getresponse()
        plain.close()
