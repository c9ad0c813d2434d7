"""Fault tests: a real Trainer with WhileCallback against a real HTTP server that misbehaves.

In each, training completes without an exception and the points on the server equal the points logged
(after `whileai-train sync` where the server never came back during the run). Timings are shortened
through SenderConfig so every test takes seconds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.http_server import FaultyServer
from tests.callbacks.test_callback import lm_dataset, trainer_args
from whileai_train.runs.config import SenderConfig

pytestmark = pytest.mark.trainer

# timeouts short enough to keep each test to seconds, long enough for a machine under heavy load
FAST = SenderConfig(flush_interval_s=0.05, finish_wait_s=10.0, connect_timeout_s=1.0, read_timeout_s=1.0,
                    open_timeout_s=1.0, backoff_base_s=0.05, backoff_max_s=0.2)


@pytest.fixture()
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    srv = FaultyServer(tmp_path / "server.db")
    srv.hang_s = 2.5  # > read_timeout_s: the client gives up first
    monkeypatch.setenv("WHILEAI_API_KEY", srv.api_key)
    monkeypatch.setenv("WHILEAI_API_URL", srv.url)
    yield srv
    srv.close()


def train(tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path, *, at_step: dict[int, Callable[[], None]] | None = None,
          config: SenderConfig = FAST, steps: int = 4) -> Any:
    """Train `steps` steps with WhileCallback; `at_step[k]()` runs at the end of step k. Returns the callback."""
    from transformers import Trainer, TrainerCallback

    import whileai_train as wai

    actions = at_step or {}

    class Flip(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if state.global_step in actions:
                actions[state.global_step]()

    cb = wai.WhileCallback(name="faulty", config=config)
    trainer = Trainer(model=tiny_model, args=trainer_args(tmp_path, max_steps=steps),
                      train_dataset=lm_dataset(tiny_tokenizer), callbacks=[cb, Flip()])
    with wai.track(trainer):
        trainer.train()  # must not raise, whatever the server does
    return cb


def assert_exactly_logged(server: FaultyServer, cb: Any, status: str = "done", *,
                          opened_by_sync: bool = False) -> None:
    runs = server.runs()
    assert len(runs) == 1, runs  # one run, even when POST /runs was retried
    run_id = runs[0]["id"]
    if opened_by_sync:  # the platform never answered during the run: the run knows only its client id
        assert cb.run.id == cb.run.client_id == runs[0]["client_id"]
    else:
        assert cb.run.id == run_id
    seqs = [p["seq"] for p in server.points(run_id)]
    assert seqs == list(range(cb.run.logged)) and cb.run.logged == 4
    assert server.run(run_id)["status"] == status


def spool_files(tmp_path: Path) -> list[Path]:
    return list((tmp_path / "home" / ".whileai" / "spool").glob("*.jsonl"))


def test_down_at_start(server: FaultyServer, tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path) -> None:
    server.down()
    cb = train(tiny_model, tiny_tokenizer, tmp_path, at_step={2: server.up})
    assert_exactly_logged(server, cb)
    assert not spool_files(tmp_path)


def test_500s_for_a_stretch(server: FaultyServer, tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path) -> None:
    server.set("error500")
    cb = train(tiny_model, tiny_tokenizer, tmp_path, at_step={3: lambda: server.set("ok")})
    assert_exactly_logged(server, cb)
    assert any(r[2] == "error500" for r in server.requests)


def test_500s_to_the_end_then_sync(server: FaultyServer, tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    from whileai_train.cli import main

    server.set("error500")
    config = SenderConfig(**{**FAST.__dict__, "finish_wait_s": 0.5})
    cb = train(tiny_model, tiny_tokenizer, tmp_path, config=config)
    out = capsys.readouterr().out
    assert "kept in" in out and "whileai-train sync" in out  # the one line at finish
    assert cb.run.status == "done"
    assert len(spool_files(tmp_path)) == 1
    server.set("ok")
    assert main(["sync"]) == 0
    assert_exactly_logged(server, cb, opened_by_sync=True)
    assert not spool_files(tmp_path)
    assert main(["sync"]) == 0  # nothing left: a second sync is a no-op
    assert len(server.points(server.runs()[0]["id"])) == 4


def test_hanging_server(server: FaultyServer, tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path) -> None:
    server.fail_for(3, "hang")
    cb = train(tiny_model, tiny_tokenizer, tmp_path)
    assert_exactly_logged(server, cb)


def test_dropped_connections(server: FaultyServer, tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path) -> None:
    server.fail_for(4, "drop")
    cb = train(tiny_model, tiny_tokenizer, tmp_path)
    assert_exactly_logged(server, cb)
    assert sum(r[2] == "drop" for r in server.requests) == 4


def test_429_retry_after_is_honoured(server: FaultyServer, tiny_model: Any, tiny_tokenizer: Any,
                                     tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Retry-After longer than the rest of the run: nothing is sent after the 429, not even at finish; the
    points wait in the spool and `whileai-train sync` delivers them once the run is over."""
    from whileai_train.cli import main

    server.retry_after = "600"
    config = replace(FAST, finish_wait_s=1.0)
    cb = train(tiny_model, tiny_tokenizer, tmp_path, config=config,
               at_step={1: lambda: server.fail_for(1, "r429")})
    modes = [r[2] for r in server.requests]
    assert "r429" in modes
    assert modes[modes.index("r429") + 1:] == []  # honoured: no request inside the server's window
    assert "whileai-train sync" in capsys.readouterr().out
    assert len(spool_files(tmp_path)) == 1
    assert main(["sync"]) == 0
    assert_exactly_logged(server, cb)
    assert not spool_files(tmp_path)


def test_key_never_in_logs_reprs_errors_or_spool(server: FaultyServer, tiny_model: Any, tiny_tokenizer: Any,
                                                 tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 caplog: pytest.LogCaptureFixture) -> None:
    from whileai_train.runs.credentials import resolve_credential

    key = server.api_key
    server.set("error500")
    config = SenderConfig(**{**FAST.__dict__, "finish_wait_s": 0.3})
    with caplog.at_level("WARNING"):
        cb = train(tiny_model, tiny_tokenizer, tmp_path, config=config)
    captured = capsys.readouterr()
    assert "could not send" in caplog.text  # a warning was given ...
    texts = [caplog.text, captured.out, captured.err, repr(cb.run), str(cb.run), repr(cb),
             repr(resolve_credential()), str(resolve_credential()), json.dumps(cb.state()),
             repr(cb.run._sender.sink)]
    texts += [p.read_text() for p in spool_files(tmp_path)]
    assert spool_files(tmp_path)
    assert all(key not in t for t in texts)  # ... and none of it carries the key
    assert server.headers_seen and all(h.get("x-api-key") == key for h in server.headers_seen)
