"""MonitorConfig: every plain-data option of the reward monitor as a dataclass with `help`, as TRL's configs are;
and the checks each option passes when the monitor is built (ConfigError naming the option and the fix).

    from trl import TrlParser
    training_args, monitor_config = TrlParser((GRPOConfig, wai.MonitorConfig)).parse_args_and_config()
    monitor = wai.monitor(holdout=eval_rows, gold=verifier, config=monitor_config)   # keywords beside it override

    python train.py --config run.yaml --monitor_every 20 --monitor_stop_on divergence length

Each field is the monitor's keyword with the prefix `monitor_` (GRPOConfig has a `delta` of its own). A YAML file
passed with `--config` fills it as it fills GRPOConfig (TrlParser reads both from one file).
Callables (gold, proxy, features, markers that are functions) and the run stay keywords of `wai.monitor`.
The defaults are monitor_defaults.py's (the one place for them); a keyword passed to `wai.monitor` beside a config
overrides that field when it differs from the default (a keyword left at its default leaves the config's value).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from whileai_train.callbacks import monitor_defaults as D
from whileai_train.errors import ConfigError, name_list

__all__ = ["PREFIX", "MonitorConfig", "checked_proxy", "checked_stop_on", "merge_config", "positive_float",
           "positive_int"]

# Every field is named monitor_<keyword>: one TrlParser (and one YAML file) fills GRPOConfig and this together, and
# GRPOConfig already has fields of the monitor's names (`delta`, its two-sided clipping bound).
PREFIX = "monitor_"


def _option(default: Any = None, help: str = "", factory: Any = None) -> Any:
    if factory is not None:
        return field(default_factory=factory, metadata={"help": help})
    return field(default=default, metadata={"help": help})


@dataclass
class MonitorConfig:
    """The reward monitor's options (see wai.monitor / RewardMonitor for each), each as monitor_<keyword>."""

    monitor_every: int = _option(D.EVERY, "Steps between holdout evals (also one at step 0).")
    monitor_n_prompts: int = _option(D.N_PROMPTS, "Holdout asks sampled at each eval.")
    monitor_k: int = _option(D.K, "Completions sampled per holdout ask.")
    monitor_window: int = _option(D.WINDOW, "Evals looked back for 'over the window' (and the step-0 baseline).")
    monitor_delta: float = _option(D.DELTA, "Proxy gain (reward units) that counts as 'up'.")
    monitor_length_pct: float = _option(D.LENGTH_PCT, "Completion-length growth (a fraction) that counts as 'up'.")
    monitor_kl_budget: float | None = _option(None, "KL from the reference past which drift fires (needs beta > 0).")
    monitor_endorsed: list[str] | None = _option(None, "Substrings of the feature names the reward should track.")
    monitor_stop_on: list[str] = _option(help="Alarms that stop training: divergence, length, drift, feature, "
                                              "truncation, no_signal, collapse.",
                                         factory=list)
    monitor_buffer: int = _option(D.BUFFER, "Most recent training completions kept for the feature scan.")
    monitor_holdout_seed: int = _option(D.HOLDOUT_SEED, "Seed of the holdout drawn from the train set (no holdout).")
    monitor_markers: list[str] | None = _option(None, "Built-in behaviour markers read on the holdout completions.")
    monitor_verbose: bool = _option(True, "Print the alarm lines (rank 0).")
    monitor_alert_webhook: str | None = _option(None, "Slack / Discord webhook URL for alarms and stops (else "
                                                      "$WHILEAI_ALERT_WEBHOOK).")
    # a dict or, from the command line, its JSON text (as TRL's `model_init_kwargs`); read in __post_init__
    monitor_health: dict[str, float] | str | None = _option(
        None, "Thresholds of the truncation, no_signal and collapse alarms by name, e.g. '{\"window\": 5, "
              "\"entropy_floor\": 0.05}' (health_alarms.HealthSettings; defaults in monitor_defaults).")

    def __post_init__(self) -> None:
        if isinstance(self.monitor_health, str):
            try:
                health = json.loads(self.monitor_health)
            except ValueError:
                health = None
            if not isinstance(health, dict):
                raise ConfigError(f"monitor_health={self.monitor_health!r} is not a JSON object. Fix: pass the "
                                  'thresholds by name, e.g. --monitor_health \'{"window": 5}\'.')
            self.monitor_health = health

    def to_kwargs(self) -> dict[str, Any]:
        """The options as `wai.monitor` keywords (the prefix dropped; alert_webhook only when set)."""
        out = {name.removeprefix(PREFIX): value for name, value in dataclasses.asdict(self).items()}
        if out["alert_webhook"] is None:
            del out["alert_webhook"]
        return out


_DEFAULTS = MonitorConfig().to_kwargs()


def merge_config(config: MonitorConfig | None, passed: dict[str, Any]) -> dict[str, Any]:
    """`passed` (wai.monitor's keywords) over `config`: a keyword overrides the config where it differs from the
    default (Python cannot tell a keyword left at its default from one passed equal to it)."""
    if config is None:
        return passed
    if not isinstance(config, MonitorConfig):
        from whileai_train.errors import ConfigError

        raise ConfigError(f"config={type(config).__name__}: pass a wai.MonitorConfig (TrlParser fills one from the "
                          "command line or a YAML file).")
    merged = config.to_kwargs()
    for name, value in passed.items():
        if name not in _DEFAULTS or _differs(value, _DEFAULTS[name]):
            merged[name] = value
    return merged


def _differs(value: Any, default: Any) -> bool:
    if isinstance(value, (tuple, list)) and isinstance(default, (tuple, list)):
        return list(value) != list(default)
    return bool(value != default) or type(value) is not type(default)


# -- the checks of each option (ConfigError at construction, with the fix) ------------------------------------
def positive_int(name: str, value: Any) -> int:
    """`value` when it is a positive integer; else ConfigError naming the option and the fix."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name}={value!r} must be a positive integer. Fix: pass e.g. {name}="
                          f"{getattr(D, name.upper(), 1)}.")
    return value


def positive_float(name: str, value: Any, allow_none: bool = False) -> float | None:
    """`value` as a float above 0 (or None where allowed); else ConfigError naming the option and the fix."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigError(f"{name}={value!r} must be a number above 0"
                          + (" (or None)" if allow_none else "") + f". Fix: pass e.g. {name}=0.1.")
    return float(value)


def checked_stop_on(stop_on: Sequence[str] | None, *, gold: Any, kl_budget: float | None,
                    endorsed: Sequence[str] | None) -> tuple[str, ...]:
    """The alarms that stop training, each one that could fire with what was passed; else ConfigError."""
    stops = [] if stop_on is None else name_list("stop_on", stop_on)
    unknown = [s for s in stops if s not in D.ALARMS]
    if unknown:
        raise ConfigError(f"stop_on names {unknown}, which are not alarms. Fix: use any of {list(D.ALARMS)}.")
    if gold is not None and not callable(gold):
        raise ConfigError(f"gold={gold!r} is not callable. Fix: pass a function with the reward-function "
                          "contract: gold(prompts=, completions=, **kwargs) -> list[float].")
    needs = {"divergence": (gold, "gold=", "divergence compares proxy with gold"),
             "length": (gold, "gold=", "length fires only while gold does not move up"),
             "drift": (kl_budget, "kl_budget=", "drift compares KL with kl_budget"),
             "feature": (endorsed, "endorsed=", "feature fires when the top feature is not endorsed")}
    for name in stops:
        value, arg, why = needs.get(name, (True, "", ""))  # the health alarms need nothing more
        if value is None:
            raise ConfigError(f"stop_on names {name!r} but {arg}None: {why}, so it could never fire. "
                              f"Fix: pass {arg}... or drop {name!r} from stop_on.")
    return tuple(stops)


def checked_proxy(proxy: Callable[..., Any] | Sequence[Callable[..., Any]] | None) -> list[Callable[..., Any]]:
    """The reward functions passed as `proxy=`, as a list; ConfigError when one is not callable."""
    extra = [] if proxy is None else ([proxy] if callable(proxy) else list(proxy))
    for fn in extra:
        if not callable(fn):
            raise ConfigError(f"proxy has {fn!r}, which is not callable. Fix: pass reward functions.")
    return extra
