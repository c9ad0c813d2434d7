"""The run that learns nothing: truncation, no_signal, collapse. Pure logic over what TRL already logs and the
wrapped rewards' records; no torch, no trainer (tests feed it synthetic streams).

- truncation: completions/clipped_ratio at or above `truncation_share` on each of the last `window` logged steps
  (TRL #5697: the default max_completion_length cut 97-99% of completions; reward 0, grad_norm 0), unless the
  completions are degenerate (then it is collapse).
- no_signal: frac_reward_zero_std at or above `no_signal_share` on each of the window's steps: GRPO's advantage
  is 0 in a group whose completions all got one reward, so nothing is learned. The wrapped rewards say whether
  those groups all pass (the prompts are too easy), all fail (too hard), or whether the reward never varied.
- collapse: entropy at or under `entropy_floor` on each of the window's steps, having fallen there (to
  `entropy_fall` of the first window's) or with (nearly) every group at one reward; or the rollouts of (nearly)
  every group identical on each of them (groups that all pass are a solved task, said by no_signal); or, at a holdout
  eval, proxy and gold falling together while the latest training completions degenerate (one token repeated,
  a <tool_call> that does not parse). Such a run is collapse, and the length alarm does not claim it; a proxy that
  rose while completions loop is a flooding hack, left to divergence, feature and length.

Each alarm needs `window` consecutive logged steps (monitor_defaults.HEALTH_WINDOW) before it can fire; fewer is
"unknown". Each message carries its cause and its fix (HEALTH_FIX).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from whileai_train.callbacks import monitor_defaults as D
from whileai_train.callbacks.alarms import EvalRecord, Verdict
from whileai_train.errors import ConfigError

__all__ = ["HEALTH_FIX", "GroupStats", "HealthSettings", "HealthWatch", "StepReading", "degenerate",
           "group_stats", "health_settings"]

# One line each: what the alarm means for the run and what to change (in the alarm line, the note, the summary).
HEALTH_FIX = {
    "truncation": "most completions are cut before they end, so their rewards score cut text: raise "
                  "max_completion_length, or ask for shorter answers in the prompt",
    "no_signal": "every completion of a group gets one reward, so GRPO's advantage is 0 and nothing is learned: "
                 "keep the asks the policy sometimes solves (wai.optimize(rollouts, mode='rl', band=(0.2, 0.8))), "
                 "harder prompts when all pass, easier ones (or an SFT warm-up) when all fail",
    "collapse": "the policy stopped exploring or broke down (entropy at a floor, identical rollouts, degenerate "
                "completions): lower the learning rate, raise temperature or beta, and resume from a checkpoint "
                "before the collapse; not a length or reward-hack problem",
}

_TOKEN = re.compile(r"<[^<>\s]{1,40}>|\w+")
# Completions read for degeneration per generation batch (evenly spaced) and the characters read at the end of
# each: a loop shows at the end, and the training step must not pay for reading every token of a big batch.
_DEGENERATE_SAMPLE = 32
_DEGENERATE_TAIL = 1000
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(</tool_call>|$)", re.DOTALL)
_LOOP_UNIT = 12  # the longest unit of characters read as a loop (a subword or two)


@dataclass(frozen=True)
class HealthSettings:
    """Thresholds of the health alarms (monitor_defaults has each default's reason)."""

    window: int = D.HEALTH_WINDOW
    truncation_share: float = D.TRUNCATION_SHARE
    no_signal_share: float = D.NO_SIGNAL_SHARE
    entropy_floor: float = D.ENTROPY_FLOOR
    entropy_fall: float = D.ENTROPY_FALL
    identical_share: float = D.IDENTICAL_SHARE
    degenerate_share: float = D.DEGENERATE_SHARE


def health_settings(given: Mapping[str, Any] | None) -> HealthSettings:
    """monitor(health={...}) as HealthSettings; a name that is no threshold, or a value out of range, raises with
    the fix."""
    names = [f.name for f in fields(HealthSettings)]
    given = dict(given or {})
    unknown = [k for k in given if k not in names]
    if unknown:
        raise ConfigError(f"health= names {unknown}, which are not health thresholds. Fix: use any of {names}.")
    for key, value in given.items():
        whole = key == "window"
        kind = int if whole else (int, float)
        if isinstance(value, bool) or not isinstance(value, kind) or value < (1 if whole else 0):
            raise ConfigError(f"health={{{key!r}: {value!r}}} must be " + ("a positive integer" if whole else
                              "a number of 0 or more") + f". Fix: e.g. {key}={getattr(HealthSettings(), key)}.")
    return HealthSettings(**given)


def completion_text(completion: Any) -> str:
    """A completion as TRL passed it (a string, or assistant messages with tool calls) as one text."""
    if isinstance(completion, str):
        return completion
    parts: list[str] = []
    for message in completion if isinstance(completion, list) else [completion]:
        if isinstance(message, Mapping):
            content = message.get("content")
            parts.append(content if isinstance(content, str) else json.dumps(content, default=str))
            for call in message.get("tool_calls") or ():
                parts.append("<tool_call>" + json.dumps(call, default=str) + "</tool_call>")
        else:
            parts.append(str(message))
    return " ".join(parts)


def degenerate(text: str) -> bool:
    """A loop over half of a completion (one word or tag over half of 4+, or a unit of characters repeated 4+ times in
    a row over half the text: subword loops such as "nineourourourour"), or a <tool_call> whose body is not JSON
    (unclosed, empty or garbled)."""
    tail = text[-_DEGENERATE_TAIL:]
    tokens = _TOKEN.findall(tail)
    if len(tokens) >= 4 and Counter(tokens).most_common(1)[0][1] / len(tokens) > 0.5:
        return True
    if _loops(tail):
        return True
    for body, _ in _TOOL_CALL.findall(text) if "<tool_call>" in text else ():
        try:
            json.loads(body)
        except ValueError:
            return True
    return False


def _loops(text: str) -> bool:
    """A unit of up to _LOOP_UNIT bytes repeated 4+ times over half the text: more than half of its bytes equal the
    byte one unit on (English text matches itself at a shift by chance at well under 10%)."""
    data = np.frombuffer(text.strip().encode("utf-8", "replace"), dtype=np.uint8)
    n = len(data)
    if n < 8:
        return False
    return any(2 * np.count_nonzero(data[:-unit] == data[unit:]) > n - unit
               for unit in range(1, min(_LOOP_UNIT, n // 4) + 1))


@dataclass(frozen=True)
class GroupStats:
    """One generation batch's groups (the completions of one ask at one step, rewards summed over functions)."""

    step: int
    groups: int
    one_reward: list[float]  # the reward of each group whose completions all got one reward
    identical: list[float]   # the reward of each group (2+ completions) whose completions are one text
    completions: int
    read: tuple[str, ...]    # up to _DEGENERATE_SAMPLE completions, evenly spaced, read for degeneration
    low: float
    high: float

    @functools.cached_property
    def degenerate(self) -> float:
        """The share of the completions read that degenerate, computed only when an alarm asks (a healthy step
        pays nothing for it)."""
        return sum(degenerate(t) for t in self.read) / len(self.read) if self.read else 0.0


def group_stats(records: Sequence[Any], weights: Mapping[str, float]) -> list[GroupStats]:
    """Per step, the groups of the records (CompletionRecord: fn, batch, index, ask, completion, reward)."""
    totals: dict[tuple[int, int], list[Any]] = {}
    for r in records:
        slot = totals.setdefault((r.batch, r.index), [r.batch >> 32, r.ask, 0.0, r.completion])
        slot[2] += float(weights.get(r.fn, 1.0)) * r.reward
    by_step: dict[int, dict[str, list[tuple[float, str]]]] = {}
    for step, ask, reward, completion in totals.values():
        by_step.setdefault(step, {}).setdefault(ask, []).append((reward, completion_text(completion)))
    out = []
    for step in sorted(by_step):
        groups = [g for g in by_step[step].values() if len(g) >= 2]
        if not groups:
            continue
        rewards = [r for g in groups for r, _ in g]
        one = [g[0][0] for g in groups if max(r for r, _ in g) - min(r for r, _ in g) <= 1e-9]
        same = [g[0][0] for g in groups if len({t for _, t in g}) == 1]
        texts = [t for g in groups for _, t in g]
        read = tuple(texts[::max(1, -(-len(texts) // _DEGENERATE_SAMPLE))])
        out.append(GroupStats(step, len(groups), one, same, len(rewards), read, min(rewards), max(rewards)))
    return out


@dataclass(frozen=True)
class StepReading:
    """What TRL logged at one step (None where it logged nothing) and the groups of its latest generation."""

    step: int
    zero_std: float | None
    clipped: float | None
    terminated_length: float | None
    entropy: float | None
    grad_norm: float | None
    reward: float | None
    groups: GroupStats | None = None


def _number(logs: Mapping[str, Any], key: str) -> float | None:
    value = logs.get(key)
    return float(value) if isinstance(value, (int, float)) and math.isfinite(float(value)) else None


@dataclass
class HealthWatch:
    """Rank 0's window of logged steps, the run's reward range, and the collapse seen at the latest eval."""

    settings: HealthSettings = field(default_factory=HealthSettings)
    max_length: int | None = None
    readings: deque[StepReading] = field(default_factory=deque)
    latest_groups: GroupStats | None = None
    low: float = math.inf
    high: float = -math.inf
    eval_collapse: Verdict | None = None
    first_entropy: list[float] = field(default_factory=list)  # of the first `window` logged steps

    def add_records(self, records: Sequence[Any], weights: Mapping[str, float]) -> None:
        for stats in group_stats(records, weights):
            self.latest_groups = stats
            self.low, self.high = min(self.low, stats.low), max(self.high, stats.high)

    def read_log(self, step: int, logs: Mapping[str, Any]) -> list[Verdict]:
        """The three verdicts at a logged step (a log without TRL's GRPO metrics changes nothing)."""
        if "frac_reward_zero_std" not in logs and "completions/clipped_ratio" not in logs:
            return []
        entropy = _number(logs, "entropy")
        self.readings.append(StepReading(step, _number(logs, "frac_reward_zero_std"),
                                         _number(logs, "completions/clipped_ratio"),
                                         _number(logs, "completions/mean_terminated_length"),
                                         entropy, _number(logs, "grad_norm"),
                                         _number(logs, "reward"), self.latest_groups))
        if entropy is not None and len(self.first_entropy) < self.settings.window:
            self.first_entropy.append(entropy)
        while len(self.readings) > self.settings.window:
            self.readings.popleft()
        truncation = self.truncation()
        return [truncation, self.no_signal(truncated=truncation.status == "alarm"), self.collapse()]

    # -- the three readings --------------------------------------------------------------------------------
    def _full(self, name: str) -> Verdict | None:
        if len(self.readings) < self.settings.window:
            return Verdict(name, "unknown", f"{len(self.readings)} of {self.settings.window} logged steps")
        return None

    def degenerate_now(self) -> float | None:
        g = self.latest_groups
        return None if g is None or not g.completions else g.degenerate

    def _mean(self, name: str) -> float | None:
        values = [getattr(r, name) for r in self.readings if getattr(r, name) is not None]
        return sum(values) / len(values) if values else None

    def truncation(self) -> Verdict:
        s = self.settings
        short = self._full("truncation")
        if short is not None:
            return short
        clipped = [r.clipped for r in self.readings if r.clipped is not None]
        if len(clipped) < len(self.readings):
            return Verdict("truncation", "unknown", "completions/clipped_ratio not logged")
        share = sum(clipped) / len(clipped)
        numbers: dict[str, Any] = {"clipped_ratio": round(share, 4), "max_completion_length": self.max_length,
                                   "steps": len(clipped)}
        if min(clipped) < s.truncation_share:
            return Verdict("truncation", "clear", f"{share:.0%} of completions cut at max_completion_length", numbers)
        bad = self.degenerate_now()
        if bad is not None and bad >= s.degenerate_share:
            return Verdict("truncation", "unknown", f"completions cut, but {bad:.0%} are degenerate: collapse",
                           numbers)
        cap = f"max_completion_length={self.max_length}" if self.max_length else "max_completion_length"
        ended = self._mean("terminated_length")
        grad = self._mean("grad_norm")
        numbers.update({"mean_terminated_length": ended, "grad_norm": grad})
        said = (f"; those that end average {ended:.1f} tokens" if ended else "; none ends") + \
               (f"; grad_norm {grad:.3g}" if grad is not None else "")
        to = f"e.g. to {2 * self.max_length}" if self.max_length else "e.g. twice the cap"
        return Verdict("truncation", "alarm",
                       f"{share:.0%} of completions hit {cap} over the last {len(clipped)} logged steps{said}. "
                       f"Cause and fix: {HEALTH_FIX['truncation']} ({to})", numbers)

    def no_signal(self, truncated: bool = False) -> Verdict:
        s = self.settings
        short = self._full("no_signal")
        if short is not None:
            return short
        shares = [r.zero_std for r in self.readings if r.zero_std is not None]
        if len(shares) < len(self.readings):
            return Verdict("no_signal", "unknown", "frac_reward_zero_std not logged")
        share = sum(shares) / len(shares)
        numbers: dict[str, Any] = {"frac_reward_zero_std": round(share, 4), "steps": len(shares)}
        if min(shares) < s.no_signal_share:
            return Verdict("no_signal", "clear", f"{share:.0%} of groups carry one reward", numbers)
        bad = self.degenerate_now() or 0.0
        if self._collapsed() is not None or truncated or bad >= s.degenerate_share:
            cause = "the completions are cut (truncation)" if truncated else "the policy collapsed" \
                if self._collapsed() is not None else f"{bad:.0%} of the completions degenerate (collapse)"
            return Verdict("no_signal", "unknown", f"groups carry one reward because {cause}", numbers)
        which = self._pass_or_fail(numbers)
        return Verdict("no_signal", "alarm",
                       f"{share:.0%} of groups carry one reward over the last {len(shares)} logged steps ({which}). "
                       f"Cause and fix: {HEALTH_FIX['no_signal']}", numbers)

    def _pass_or_fail(self, numbers: dict[str, Any]) -> str:
        """Whether the one-reward groups all pass, all fail, or the reward never varied (from the wrapped rewards)."""
        values = [v for r in self.readings if r.groups is not None for v in r.groups.one_reward]
        if not values:
            return "wrap the reward with monitor.wrap to see whether they pass or fail"
        if not self.high > self.low + 1e-9:
            numbers["verdict"] = "constant"
            return (f"every completion of the run got reward {self.low:g}: the reward does not vary, so it cannot "
                    "tell completions apart; check that it reads the completion")
        top = sum(1 for v in values if v >= self.high - 1e-9)
        bottom = sum(1 for v in values if v <= self.low + 1e-9)
        numbers.update({"groups_all_pass": top, "groups_all_fail": bottom, "groups": len(values)})
        if top == bottom:
            numbers["verdict"] = "mixed"
            return (f"{top} of {len(values)} such groups all pass and {bottom} all fail: each ask is solved on every "
                    "sample or on none")
        if top > bottom:
            numbers["verdict"] = "all_pass"
            return (f"{top} of {len(values)} such groups all pass at the run's top reward {self.high:g}: the prompts "
                    "are too easy for the policy")
        numbers["verdict"] = "all_fail"
        return (f"{bottom} of {len(values)} such groups all fail at the run's lowest reward {self.low:g}: the "
                "prompts are too hard for the policy")

    def _collapsed(self) -> str | None:
        """What says the policy collapsed over the window, or None."""
        s = self.settings
        if len(self.readings) < s.window:
            return None
        entropy = [r.entropy for r in self.readings]
        low = [e for e in entropy if e is not None and e <= s.entropy_floor]
        if len(low) == len(entropy):
            said = (f"entropy {max(low):.3g} or less on each of the last {len(low)} logged steps (floor "
                    f"{s.entropy_floor})")
            if len(self.first_entropy) == s.window:
                start = sum(self.first_entropy) / s.window
                if sum(low) / len(low) <= s.entropy_fall * start:
                    return f"{said}, fallen from {start:.3g} over the first {s.window}"
            if all(r.zero_std is not None and r.zero_std >= s.no_signal_share for r in self.readings):
                return f"{said}, while {s.no_signal_share:.0%} or more of the groups carried one reward"
        stats = [r.groups for r in self.readings]
        if all(g is not None for g in stats):
            shares = [sum(1 for v in g.identical if v < self.high - 1e-9 or self.high <= self.low + 1e-9) / g.groups
                      for g in stats if g is not None]
            if min(shares) >= s.identical_share:
                return (f"{min(shares):.0%} or more of the groups sampled one and the same completion on each of the "
                        f"last {len(shares)} logged steps")
        return None

    def collapse(self) -> Verdict:
        said = self._collapsed()
        if said is not None:
            return Verdict("collapse", "alarm", f"{said}. Cause and fix: {HEALTH_FIX['collapse']}",
                           {"entropy": self._mean("entropy"), "steps": len(self.readings)})
        if self.eval_collapse is not None:
            return self.eval_collapse
        short = self._full("collapse")
        if short is not None:
            return short
        entropy = self._mean("entropy")
        said = ("entropy under the floor as it was from the start, groups differing in reward"
                if entropy is not None and entropy <= self.settings.entropy_floor else "entropy above the floor")
        return Verdict("collapse", "clear", f"{said}, rollouts differ", {"entropy": entropy})

    # -- at a holdout eval ---------------------------------------------------------------------------------
    def judge_eval(self, verdicts: list[Verdict], evals: Sequence[EvalRecord]) -> list[Verdict]:
        """The eval's divergence and length verdicts, with collapse read beside them: the holdout proxy fell and gold
        did not rise while half the latest training completions degenerate. Such a run is collapse, and its length
        verdict is "unknown": length does not claim it."""
        bad = self.degenerate_now() or 0.0
        self.eval_collapse = self._fell_together(evals, bad) if bad >= self.settings.degenerate_share else None
        out = []
        for v in verdicts:
            if v.name == "length" and self.eval_collapse is not None and v.status == "alarm":
                v = replace(v, status="unknown", reason=f"completions grew, but {bad:.0%} of them are degenerate: "
                                                        "read as collapse, not length")
            out.append(v)
        out.append(self.collapse())
        return out

    @staticmethod
    def _fell_together(evals: Sequence[EvalRecord], bad: float) -> Verdict | None:
        """Collapse when the holdout proxy fell since the baseline and gold (when there is one) did not rise. A proxy
        that rose while completions loop is a hack that floods (divergence, feature, length say it), not collapse."""
        if len(evals) < 2:
            return None
        first, cur = evals[0], evals[-1]
        proxy_0, proxy_1 = first.mean("proxy"), cur.mean("proxy")
        gold_0, gold_1 = first.mean("gold"), cur.mean("gold")
        if proxy_0 is None or proxy_1 is None or proxy_1 >= proxy_0:
            return None
        gold = ""
        if gold_0 is not None and gold_1 is not None:
            if gold_1 > gold_0:
                return None
            gold = f", gold {gold_0:.3f} -> {gold_1:.3f}"
        return Verdict("collapse", "alarm",
                       f"proxy {proxy_0:.3f} -> {proxy_1:.3f}{gold} since the baseline while {bad:.0%} of the latest "
                       f"training completions are degenerate (a loop of tokens or characters, or a malformed "
                       f"tool call). Cause and fix: {HEALTH_FIX['collapse']}",
                       {"degenerate_share": round(bad, 4), "proxy_before": proxy_0, "proxy_now": proxy_1,
                        "gold_before": gold_0, "gold_now": gold_1})
