"""MonitorConfig: every plain-data option of the monitor, filled by TrlParser from the command line or one YAML
file beside GRPOConfig, passed as wai.monitor(config=...) with keywords that override it."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest

import whileai_train as wai
from whileai_train.callbacks import monitor_defaults as D
from whileai_train.errors import ConfigError

# RewardMonitor's keywords that are not plain data (callables, rows, a live run) stay keywords of wai.monitor
NOT_CONFIG = {"self", "holdout", "gold", "run", "proxy", "features", "_adopt", "open_kwargs"}


def test_every_plain_option_of_the_monitor_is_a_field_with_help_and_the_same_default() -> None:
    fields = {f.name.removeprefix("monitor_"): f for f in dataclasses.fields(wai.MonitorConfig)}
    options = inspect.signature(wai.RewardMonitor.__init__).parameters
    assert set(options) - NOT_CONFIG == set(fields) - {"alert_webhook"}  # alert_webhook: a WhileCallback keyword
    assert all(f.metadata.get("help") for f in fields.values())
    defaults = wai.MonitorConfig()
    for name, parameter in options.items():
        if name in fields:
            assert getattr(defaults, f"monitor_{name}") == (list(parameter.default) if isinstance(parameter.default,
                                                            tuple) else parameter.default), name
    assert defaults.monitor_every == D.EVERY and defaults.monitor_n_prompts == D.N_PROMPTS


def test_trl_parser_fills_it_from_one_yaml_beside_grpo_config_and_the_command_line(tmp_path: Path) -> None:
    from trl import GRPOConfig, TrlParser

    config_file = tmp_path / "run.yaml"
    config_file.write_text(f"output_dir: {tmp_path / 'out'}\nlearning_rate: 0.0002\ndelta: 4.0\nuse_cpu: true\n"
                           "monitor_every: 20\nmonitor_k: 2\nmonitor_delta: 0.2\nmonitor_stop_on: [divergence, length]\n"
                           "monitor_endorsed: [answer]\nmonitor_verbose: false\n", encoding="utf-8")
    training, options = TrlParser((GRPOConfig, wai.MonitorConfig)).parse_args_and_config(
        args=["--config", str(config_file), "--monitor_n_prompts", "16", "--monitor_kl_budget", "0.5"])
    assert training.learning_rate == 2e-4 and training.delta == 4.0  # GRPOConfig's own delta stays its own
    assert (options.monitor_every, options.monitor_k, options.monitor_n_prompts) == (20, 2, 16)
    assert (options.monitor_kl_budget, options.monitor_delta) == (0.5, 0.2)
    assert options.monitor_stop_on == ["divergence", "length"] and options.monitor_endorsed == ["answer"]
    assert not options.monitor_verbose

    def gold(prompts: list[str], completions: list[str], **kwargs: object) -> list[float]:
        return [0.0] * len(completions)

    monitor = wai.monitor(gold=gold, config=options, k=3)  # a keyword beside the config overrides it
    assert (monitor.every, monitor.k, monitor.n_prompts) == (20, 3, 16)
    assert monitor.stop_on == ("divergence", "length") and monitor.endorsed == ["answer"]
    assert monitor.settings.kl_budget == 0.5 and monitor.settings.delta == 0.2 and monitor.verbose is False


def test_a_config_is_checked_as_the_keywords_are() -> None:
    with pytest.raises(ConfigError, match="stop_on names 'drift' but kl_budget=None"):
        wai.monitor(config=wai.MonitorConfig(monitor_stop_on=["drift"]))
    with pytest.raises(ConfigError, match="every=0 must be a positive integer"):
        wai.monitor(config=wai.MonitorConfig(monitor_every=0))
    with pytest.raises(ConfigError, match="pass a wai.MonitorConfig"):
        wai.monitor(config={"every": 5})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="alert_webhook='x' is not an http"):
        wai.monitor(config=wai.MonitorConfig(monitor_alert_webhook="x"))


def test_the_health_thresholds_are_a_field_from_a_dict_yaml_or_the_command_line(tmp_path: Path) -> None:
    """monitor_health reaches the health alarms' settings however it is given; a keyword beside it overrides it."""
    from trl import GRPOConfig, TrlParser

    monitor = wai.monitor(config=wai.MonitorConfig(monitor_health={"window": 7, "entropy_floor": 0.05}))
    assert monitor.health_settings.window == 7 and monitor.health_settings.entropy_floor == 0.05
    assert wai.monitor(config=wai.MonitorConfig(monitor_health={"window": 7}),
                       health={"window": 3}).health_settings.window == 3
    assert wai.monitor(config=wai.MonitorConfig()).health_settings.window == D.HEALTH_WINDOW

    config_file = tmp_path / "run.yaml"
    config_file.write_text(f"output_dir: {tmp_path / 'out'}\nuse_cpu: true\nmonitor_health: {{window: 4}}\n",
                           encoding="utf-8")
    _, from_yaml = TrlParser((GRPOConfig, wai.MonitorConfig)).parse_args_and_config(args=["--config", str(config_file)])
    assert wai.monitor(config=from_yaml).health_settings.window == 4
    _, from_line = TrlParser((GRPOConfig, wai.MonitorConfig)).parse_args_and_config(
        args=["--output_dir", str(tmp_path / "out"), "--use_cpu", "true",
              "--monitor_health", '{"window": 6, "truncation_share": 0.5}'])
    assert from_line.monitor_health == {"window": 6, "truncation_share": 0.5}
    assert wai.monitor(config=from_line).health_settings.truncation_share == 0.5


def test_health_thresholds_in_a_config_are_checked_as_the_keyword_is() -> None:
    with pytest.raises(ConfigError, match="monitor_health='window' is not a JSON object"):
        wai.MonitorConfig(monitor_health="window")
    with pytest.raises(ConfigError, match="health= names \\['windows'\\], which are not health thresholds"):
        wai.monitor(config=wai.MonitorConfig(monitor_health={"windows": 5}))
