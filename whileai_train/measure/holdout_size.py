"""holdout_size / detectable_effect: how many paired tasks prove a gain at 80% power, and the gain n tasks prove.

The binomial model: each of n tasks is run k times per arm, every task at the same pass rate (base before,
base + effect after), the arms independent draws. A task's paired difference then has variance
v = (base(1 - base) + (base + effect)(1 - base - effect)) / k, and the two-sided 5% test of its mean has 80% power
at n = (z_0.975 + z_0.80)^2 * v / effect^2 tasks (never under 2). Two ways it errs, both reported:

- concentrated: when the gain sits on a few tasks (a trait only some prompts exercise) most tasks tie and a
  share `effect` of them flips from fail to pass: v = effect(1 - effect) + 2 base(1 - base) / k (the whole-task
  flips plus the binomial noise of the ties), never under the model's v: `n_tasks_concentrated`.
- spread: tasks of different difficulty p_i share their p_i across the arms, which pairing cancels; the model
  then asks for 1 / (1 - Var(p_i) / (base(1 - base))) times the tasks pairing needs (`model_ratio`).

The measured paths replace the model: `before=` reads the base, k and Var(p_i) (observed variance of task rates
less their binomial part) off a previous eval; `before=` with `after=` reads the per-task paired sd of both arms
on the same tasks (the covariance pairing buys is in it); `task_std=` takes that sd directly (from a
delta_report: (hi - lo) * sqrt(n_paired_tasks) / 3.92 of target_ci95). n = z^2 * task_std^2 / effect^2.
detectable_effect solves the same equations for the effect, so the two are inverses of each other.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from pydantic import Field

from whileai_train.errors import ConfigError
from whileai_train.measure.defaults import ALPHA, BASE_PASS_RATE, CEILING_PASS_RATE, POWER
from whileai_train.measure.sides import PASS_AT_1, read_side
from whileai_train.report import Report
from whileai_train.stats import normal_quantile
from whileai_train.tables.defaults import PASS_THRESHOLD
from whileai_train.tables.marker_column import task_means

__all__ = ["DetectableEffectReport", "HoldoutSizeReport", "detectable_effect", "holdout_size", "power_z"]

Path = Literal["model", "before", "before_after", "task_std"]

_MODEL_NOTE = ("the binomial model assumes the gain is spread evenly across tasks and the two arms are independent "
               "draws: a gain carried by a few tasks needs n_tasks_concentrated, and tasks of unequal difficulty "
               "need fewer (pairing cancels the difficulty); measure with before= and after= for the real number")
_SATURATED_FIX = ("use harder situations so the baseline sits inside the 20-80% difficulty band, then size again")


def power_z(power: float = POWER, alpha: float = ALPHA) -> float:
    """z_(1 - alpha/2) + z_power: 1.96 + 0.84 = 2.80 at the defaults."""
    if not 0 < power < 1 or not 0 < alpha < 1:
        raise ConfigError(f"power={power}, alpha={alpha}: both are probabilities strictly between 0 and 1")
    return normal_quantile(1 - alpha / 2) + normal_quantile(power)


class _Sizing(Report):
    path: Path = "model"
    base: float = BASE_PASS_RATE
    k: int = 1
    power: float = POWER
    alpha: float = ALPHA
    task_std: float | None = None      # per-task paired sd (measured paths)
    task_spread: float | None = None   # sd of task pass rates with the binomial part taken out (before=)
    model_ratio: float | None = None   # tasks the model asks for / tasks pairing needs (before=)
    saturated: bool = False
    notes: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def _tail(self) -> list[str]:
        lines = []
        if self.task_spread is not None and self.model_ratio is not None:
            lines.append(f"  task spread {self.task_spread:.3f}: the binomial model asks for {self.model_ratio:.2f}x "
                         "the tasks pairing needs")
        lines += [f"  note: {note}" for note in self.notes]
        lines += [f"  warning: {warning}" for warning in self.warnings]
        return lines

    def _how(self) -> str:
        if self.path == "model":
            return f"binomial model, base {self.base:.3f}, k={self.k}"
        if self.task_std is None:  # before= alone: base, k and spread are measured, the model still sizes
            return f"binomial model on a measured base ({self.path}), base {self.base:.3f}, k={self.k}"
        return f"measured ({self.path}), task_std {self.task_std:.3f}, base {self.base:.3f}, k={self.k}"


class HoldoutSizeReport(_Sizing):
    """Paired tasks that prove `effect` at `power`; `n_tasks_concentrated` when the gain sits on a few tasks."""

    effect: float = 0.0
    n_tasks: int = 2
    n_tasks_concentrated: int = 2
    n_tasks_model: int | None = None  # the binomial model's answer beside a measured one

    def __str__(self) -> str:
        head = (f"holdout_size: {self.n_tasks} paired tasks to detect {self.effect:+.3f} at {self.power:.0%} power "
                f"({self._how()}); {self.n_tasks_concentrated} if the gain is concentrated in a few tasks")
        if self.saturated:
            head += "; SATURATED"
        return "\n".join([head] + self._tail())


class DetectableEffectReport(_Sizing):
    """The gain `n_tasks` paired tasks detect at `power`; `effect_concentrated` for a gain on a few tasks."""

    n_tasks: int = 2
    effect: float | None = None
    effect_concentrated: float = 1.0

    def __str__(self) -> str:
        gain = f"{self.effect:+.3f}" if self.effect is not None else "no gain up to a pass rate of 1"
        head = (f"detectable_effect: {self.n_tasks} paired tasks detect {gain} at {self.power:.0%} power "
                f"({self._how()}); {self.effect_concentrated:+.3f} if the gain is concentrated in a few tasks")
        if self.saturated:
            head += "; SATURATED"
        return "\n".join([head] + self._tail())


# --------------------------------------------------------------------------------------------- the model


def _model_variance(base: float, effect: float, k: int, spread_variance: float = 0.0) -> float:
    after = base + effect
    return max(0.0, base * (1 - base) - spread_variance + after * (1 - after) - spread_variance) / k


def _concentrated_variance(base: float, effect: float, k: int) -> float:
    return effect * (1 - effect) + 2 * base * (1 - base) / k


def _concentrated_effect(z: float, n: int, base: float, k: int) -> float:
    """The root of z^2 (e(1 - e) + c) = n e^2 with c = 2 base(1 - base) / k."""
    c, zz = 2 * base * (1 - base) / k, z * z
    return (zz + math.sqrt(zz * zz + 4 * (n + zz) * zz * c)) / (2 * (n + zz))


def _n(z: float, variance: float, effect: float) -> int:
    return max(2, math.ceil(z * z * variance / (effect * effect) - 1e-9))


def _solve_effect(z: float, n: int, base: float, k: int, spread_variance: float) -> float | None:
    """The effect e in (0, 1 - base] with z^2 v(e) / e^2 = n (bisection), None when even e = 1 - base needs more."""
    def excess(effect: float) -> float:
        return z * z * _model_variance(base, effect, k, spread_variance) / (effect * effect) - n

    high = 1.0 - base
    if high <= 0 or excess(high) > 0:
        return None
    low = 1e-12
    for _ in range(200):
        middle = (low + high) / 2
        if excess(middle) > 0:
            low = middle
        else:
            high = middle
    return high


def _check_fraction(value: Any, name: str, *, closed: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 <= value <= 1) or (
            not closed and value in (0, 1)):
        raise ConfigError(f"{name}={value!r}: a pass rate between 0 and 1 (58% is 0.58)")
    return float(value)


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k={k!r}: rollouts per task per arm, an integer >= 1")
    return k


# --------------------------------------------------------------------------------------------- measuring


def _measure(sizing: _Sizing, before: Any, after: Any, task_std: float | None, k: int | None,
             base: float | None, pass_threshold: float) -> float:
    """Fill base, k, task_std, task_spread from what was passed; returns the spread variance (0 without)."""
    if task_std is not None:
        if isinstance(task_std, bool) or not isinstance(task_std, (int, float)) or not task_std >= 0:
            raise ConfigError(f"task_std={task_std!r}: the per-task paired standard deviation, a number >= 0 "
                              "((hi - lo) * sqrt(n_paired_tasks) / 3.92 from a delta_report's target_ci95)")
        sizing.path, sizing.task_std = "task_std", float(task_std)
    if before is None:
        if after is not None:
            raise ConfigError("after= without before=: the paired sd needs both arms of a previous eval")
        sizing.base = _check_fraction(base if base is not None else BASE_PASS_RATE, "base")
        sizing.k = _check_k(k if k is not None else 1)
        if base is None and task_std is None:
            sizing.notes.append(f"base not given: the model is at BASE_PASS_RATE ({BASE_PASS_RATE})")
        return 0.0
    side = read_side(before, what="holdout_size before", pass_threshold=pass_threshold)
    tasks = side.table.graded_tasks
    n_graded = side.table.n_graded[tasks]
    rates = side.table.pass_rates()[tasks]
    sizing.base = float(rates.mean())
    values, counts = np.unique(n_graded, return_counts=True)
    sizing.k = _check_k(k) if k is not None else int(values[np.argmax(counts)])
    spread_variance = 0.0
    repeated = n_graded >= 2
    if repeated.sum() >= 2:
        binomial = float(np.mean(rates[repeated] * (1 - rates[repeated]) / (n_graded[repeated] - 1)))
        spread_variance = min(max(0.0, float(rates[repeated].var(ddof=1)) - binomial), sizing.base * (1 - sizing.base))
        sizing.task_spread = math.sqrt(spread_variance)
        if sizing.base * (1 - sizing.base) > spread_variance:
            sizing.model_ratio = 1.0 / (1.0 - spread_variance / (sizing.base * (1 - sizing.base)))
    else:
        sizing.notes.append("one graded rollout per task on before=: the task spread cannot be told from the "
                            "binomial noise; evaluate with k >= 2 to measure it")
    if after is None:
        if task_std is None:
            sizing.path = "before"
        return spread_variance
    other = read_side(after, what="holdout_size after", pass_threshold=pass_threshold)
    position = {key: i for i, key in enumerate(other.table.tasks)}
    after_rates, after_counts = task_means(other.table.task_of_row, other.values(PASS_AT_1), other.n_tasks)
    pairs = [(float(rate), float(after_rates[position[side.table.tasks[t]]])) for t, rate in zip(tasks.tolist(), rates)
             if side.table.tasks[t] in position and after_counts[position[side.table.tasks[t]]] > 0]
    if len(pairs) < 2:
        raise ConfigError(f"holdout_size: before= and after= share {len(pairs)} graded task(s); the paired sd needs "
                          "at least 2 (the same tasks on both arms)")
    differences = np.array([a - b for b, a in pairs])
    if task_std is None:
        sizing.path, sizing.task_std = "before_after", float(differences.std(ddof=1))
        sizing.notes.append(f"task_std {sizing.task_std:.3f} measured over {len(pairs)} paired tasks of both arms")
    return spread_variance


def _saturation(sizing: _Sizing, ceiling_pass_rate: float) -> bool:
    measured = sizing.path != "model"
    if sizing.base >= ceiling_pass_rate or (measured and sizing.task_std == 0.0):
        sizing.saturated = True
        why = (f"the base pass rate {sizing.base:.3f} is at or above the ceiling {ceiling_pass_rate}"
               if sizing.base >= ceiling_pass_rate else "the measured paired sd is 0")
        sizing.warnings.append(f"saturated: {why}, where the formula collapses toward its floor of 2 tasks (a "
                               f"binomial variance near 0 is the model collapsing, not evidence); answered with the "
                               f"model at BASE_PASS_RATE ({BASE_PASS_RATE}). Fix: {_SATURATED_FIX}")
        sizing.path, sizing.base, sizing.task_std = "model", BASE_PASS_RATE, None
        sizing.task_spread = sizing.model_ratio = None
        return True
    return False


def holdout_size(effect: float, *, base: float | None = None, k: int | None = None, before: Any = None,
                 after: Any = None, task_std: float | None = None, power: float = POWER, alpha: float = ALPHA,
                 ceiling_pass_rate: float = CEILING_PASS_RATE,
                 pass_threshold: float = PASS_THRESHOLD) -> HoldoutSizeReport:
    """Paired tasks needed to detect a gain of `effect` (a pass-rate difference, 0.05 = 5 points) at `power`.

    Model path: base= (default BASE_PASS_RATE) and k= (default 1). Measured paths: before= (base, k and the task
    spread off a previous eval), before= with after= (the per-task paired sd of both arms), task_std=.
    """
    if isinstance(effect, bool) or not isinstance(effect, (int, float)) or not 0 < effect <= 1:
        raise ConfigError(f"effect={effect!r}: the gain to detect, a pass-rate difference in (0, 1] (5 points is 0.05)")
    report = HoldoutSizeReport(effect=float(effect), power=power, alpha=alpha)
    z = power_z(power, alpha)
    spread_variance = _measure(report, before, after, task_std, k, base, pass_threshold)
    if _saturation(report, ceiling_pass_rate):
        spread_variance = 0.0
    report.n_tasks_concentrated = _n(z, _concentrated_variance(report.base, effect, report.k), effect)
    if report.path in ("model", "before") and report.base + effect > 1:
        raise ConfigError(f"holdout_size: base {report.base:.3f} + effect {effect} is over a pass rate of 1. Fix: a "
                          f"smaller effect (at most {1 - report.base:.3f})")
    model_n = _n(z, _model_variance(report.base, effect, report.k), effect)
    if report.path == "model":
        report.n_tasks = model_n
        report.notes.append(_MODEL_NOTE)
    elif report.path == "before":
        report.n_tasks = _n(z, _model_variance(report.base, effect, report.k, spread_variance), effect)
        report.n_tasks_model = model_n
        report.notes.append("before= alone: the base, k and task spread are measured, the gain is still assumed "
                            "spread evenly; add after= (a previous eval of both arms) for the measured paired sd")
    else:
        assert report.task_std is not None
        report.n_tasks = _n(z, report.task_std ** 2, effect)
        if report.base + effect <= 1:
            report.n_tasks_model = model_n
    return report


def detectable_effect(n_tasks: int, *, base: float | None = None, k: int | None = None, before: Any = None,
                      after: Any = None, task_std: float | None = None, power: float = POWER, alpha: float = ALPHA,
                      ceiling_pass_rate: float = CEILING_PASS_RATE,
                      pass_threshold: float = PASS_THRESHOLD) -> DetectableEffectReport:
    """The smallest gain `n_tasks` paired tasks detect at `power`: holdout_size solved for the effect."""
    if isinstance(n_tasks, bool) or not isinstance(n_tasks, int) or n_tasks < 2:
        raise ConfigError(f"n_tasks={n_tasks!r}: paired tasks, an integer >= 2 (the formula's floor)")
    report = DetectableEffectReport(n_tasks=n_tasks, power=power, alpha=alpha)
    z = power_z(power, alpha)
    spread_variance = _measure(report, before, after, task_std, k, base, pass_threshold)
    if _saturation(report, ceiling_pass_rate):
        spread_variance = 0.0
    report.effect_concentrated = _concentrated_effect(z, n_tasks, report.base, report.k)
    if report.path in ("model", "before"):
        report.effect = _solve_effect(z, n_tasks, report.base, report.k,
                                      spread_variance if report.path == "before" else 0.0)
        if report.effect is None:
            report.notes.append(f"{n_tasks} tasks do not detect even a gain to a pass rate of 1 from {report.base:.3f}")
        if report.path == "model":
            report.notes.append(_MODEL_NOTE)
    else:
        assert report.task_std is not None
        report.effect = z * report.task_std / math.sqrt(n_tasks)
    return report
