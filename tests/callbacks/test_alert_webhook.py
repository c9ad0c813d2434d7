"""The alert webhook against a real local HTTP server: each alarm and the stop arrive as Slack / Discord JSON;
a hook that answers 500, hangs or drips its answer costs training nothing and each failure is counted."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from whileai_train.errors import ConfigError


class Hook:
    """A webhook on 127.0.0.1: mode ok (204), error500, hang (hold the request until `release`), drip (send the
    status line a byte every 0.2 s until `release`)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.bodies: list[dict[str, Any]] = []
        self.arrived = threading.Event()
        self.release = threading.Event()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                hook.bodies.append(json.loads(self.rfile.read(length)))
                hook.arrived.set()
                if hook.mode == "hang":
                    hook.release.wait(60)
                    return
                if hook.mode == "drip":
                    for byte in b"HTTP/1.1 200 OK\r\n" * 100:
                        if hook.release.wait(0.2):
                            return
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    return
                self.send_response(500 if hook.mode == "error500" else 204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/services/T0/B0/x"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def _train(tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path, url: str, stop: bool, steps: int,
           deadline: float | None = None) -> tuple[Any, Any]:
    """GRPO with beta > 0 and a KL budget nothing stays under: drift fires at step 2 (the first step the policy
    differs from the reference)."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    import whileai_train as wai
    from whileai_train.demos.grpo_monitor import make_tasks

    def varied(completions: list[str], **kwargs: Any) -> list[float]:  # rewards that differ, so the policy moves
        return [float(sum(map(ord, c)) % 7) for c in completions]

    tasks = make_tasks(16, seed=0)
    monitor = wai.monitor(holdout=tasks[8:], every=1000, n_prompts=8, k=1, kl_budget=1e-12, verbose=False,
                          stop_on=["drift"] if stop else (), alert_webhook=url, name="hooked",
                          health={"window": 100})  # a window past the run: drift is the one alarm (4 tokens truncate)
    if deadline is not None:
        monitor.alerts.deadline_s = deadline
    config = GRPOConfig(output_dir=str(tmp_path / "grpo"), max_steps=steps, learning_rate=1e-2, beta=0.04,
                        per_device_train_batch_size=4, num_generations=2, max_completion_length=4, logging_steps=1,
                        use_cpu=True, save_strategy="no", disable_tqdm=True, seed=0, report_to="none")
    trainer = GRPOTrainer(model=tiny_model, reward_funcs=[monitor.wrap(varied)], args=config,
                          train_dataset=Dataset.from_list(tasks[:8]), processing_class=tiny_tokenizer,
                          callbacks=[monitor])
    wai.track(trainer).train()
    return monitor, trainer


@pytest.mark.trainer
def test_each_alarm_and_the_stop_reach_the_webhook_as_slack_and_discord_json(tiny_model: Any, tiny_tokenizer: Any,
                                                                             tmp_path: Path) -> None:
    hook = Hook("ok")
    try:
        monitor, trainer = _train(tiny_model, tiny_tokenizer, tmp_path, hook.url, stop=True, steps=6)
        assert monitor.alerts.wait(15)
    finally:
        hook.close()
    assert [a.name for a in monitor.summary().alarms] == ["drift"] and trainer.state.global_step < 6
    alarm, stop = hook.bodies
    assert set(alarm) == {"text", "content"} and alarm["text"] == alarm["content"]
    assert alarm["text"].startswith(f"whileai: run hooked ({monitor.run.id}): !!! REWARD MONITOR ALARM [drift]")
    assert "training stopped: reward monitor: drift alarm" in stop["content"]
    assert monitor.alerts.state() == {"sent": 2, "failures": 0, "dropped": 0}


@pytest.mark.trainer
@pytest.mark.parametrize("mode", ["error500", "hang", "drip"])
def test_a_failing_hook_costs_training_nothing_and_each_failure_is_counted(tiny_model: Any, tiny_tokenizer: Any,
                                                                          tmp_path: Path, mode: str) -> None:
    import whileai_train as wai

    hook = Hook(mode)
    try:
        # hang: a deadline past the whole run, so the POST is still held by the server when training ends
        deadline = {"error500": None, "hang": 120.0, "drip": 1.0}[mode]
        monitor, trainer = _train(tiny_model, tiny_tokenizer, tmp_path, hook.url, stop=False, steps=5,
                                  deadline=deadline)
        assert trainer.state.global_step == 5 and monitor.run.status == "done"
        assert hook.arrived.is_set()
        if mode == "hang":
            assert not hook.release.is_set() and monitor.alerts.failures == 0  # still held, training is over
            hook.release.set()  # the server closes it without an answer
        assert monitor.alerts.wait(15)  # drip: the POST's own deadline ends it while the server still drips
        assert monitor.alerts.state() == {"sent": 0, "failures": 1, "dropped": 0}
    finally:
        hook.close()
    if mode == "error500":  # counted on the run, at a step of training (a local 500 answers within a step)
        points = wai.get_run(monitor.run.id)["points"]
        assert [p["alerts/webhook_failures"] for p in points if "alerts/webhook_failures" in p] == [1.0]


def test_a_webhook_that_is_not_a_url_is_a_config_error_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    import whileai_train as wai

    with pytest.raises(ConfigError, match="alert_webhook='hooks.slack.com/x' is not an http"):
        wai.WhileCallback(alert_webhook="hooks.slack.com/x")
    monkeypatch.setenv("WHILEAI_ALERT_WEBHOOK", "ftp://x")
    with pytest.raises(ConfigError, match="WHILEAI_ALERT_WEBHOOK='ftp://x' is not an http"):
        wai.monitor()
    monkeypatch.setenv("WHILEAI_ALERT_WEBHOOK", "http://127.0.0.1:9/hook")
    assert wai.WhileCallback().alerts.url == "http://127.0.0.1:9/hook"


def test_the_queue_is_bounded_while_the_hook_hangs() -> None:
    from whileai_train.callbacks import defaults
    from whileai_train.callbacks.alerts import AlertWebhook

    hook = Hook("hang")
    try:
        poster = AlertWebhook(hook.url, deadline_s=30.0)
        poster.send("first")
        assert hook.arrived.wait(10)  # the first is held by the server; the rest wait in the queue
        for i in range(defaults.ALERT_QUEUE + 5):
            poster.send(f"alert {i}")
        assert poster.dropped == 5 and len(poster._queue) == defaults.ALERT_QUEUE
        assert not poster.wait(0.2)
    finally:
        hook.close()
