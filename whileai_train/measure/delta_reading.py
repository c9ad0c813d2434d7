"""What a delta report says: its fields (DeltaReport, one MetricDelta per metric), the verdict word of a metric,
and the report as text (format_delta_report: the headline verdict on the first line, one line per metric).
delta_report.py computes it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from whileai_train.measure.defaults import TARGET
from whileai_train.report import Report

__all__ = ["DROPS", "GAINS", "HEADLINE_MEANING", "DeltaReport", "Headline", "MetricDelta", "Verdict",
           "format_delta_report", "interval_text", "verdict_word"]

Verdict = Literal["moved", "moved_unreplicated", "within_eval_noise", "no_change_detected", "regressed",
                  "regressed_unreplicated", "not_measured"]
Headline = Literal["PASS", "NO DIFFERENCE", "FAIL", "NOT COMPARABLE"]
GAINS = ("moved", "moved_unreplicated")
DROPS = ("regressed", "regressed_unreplicated")

class MetricDelta(BaseModel):
    """One metric compared over the tasks both sides carry it on."""

    name: str
    before: float | None = None
    after: float | None = None
    delta: float | None = None
    ci95: tuple[float, float] | None = None
    p_value: float | None = None
    n_paired_tasks: int = 0
    verdict: Verdict = "not_measured"
    run_std: float | None = None
    band: float | None = None          # half-width of the re-run band around 0 (None: a single evaluation)
    within_noise: bool | None = None   # |delta| <= band


class DeltaReport(Report):
    """The verdict after training. str() is format_delta_report: the headline first, one line per metric."""

    headline_verdict: Headline = "NOT COMPARABLE"
    verdict: Verdict = "not_measured"  # the target's word
    target: str = TARGET
    before: float | None = None
    after: float | None = None
    delta: float | None = None
    target_ci95: tuple[float, float] | None = None
    before_ci95: tuple[float, float] | None = None  # each side's target over the paired tasks, bootstrap over tasks
    after_ci95: tuple[float, float] | None = None
    p_value: float | None = None
    n_paired_tasks: int = 0
    n_before_tasks: int = 0
    n_after_tasks: int = 0
    paired_share: float = 0.0
    k_before: int | None = None
    k_after: int | None = None
    metrics: dict[str, MetricDelta] = Field(default_factory=dict)
    must_not_regress: list[str] = Field(default_factory=list)
    failed: list[str] = Field(default_factory=list)       # target or guards that regressed
    dropped: list[str] = Field(default_factory=list)      # other metrics that dropped significantly (warned)
    run_std: float | None = None
    run_std_runs: int | None = None
    run_std_source: Literal["none", "run_std", "eval_variance", "eval_run"] = "none"
    band_quantile: float | None = None
    eval_runs_before: int = 1
    eval_runs_after: int = 1
    by: str | None = None
    groups: dict[str, MetricDelta] = Field(default_factory=dict)
    groups_down: list[str] = Field(default_factory=list)
    balanced: dict[str, int] | None = None
    ceiling: bool = False
    config: dict[str, dict[str, Any]] = Field(default_factory=dict)
    not_comparable: dict[str, str] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        return format_delta_report(self)


def verdict_word(ci95: tuple[float, float] | None, delta: float | None, band: float | None,
                 replicated: bool = False) -> Verdict:
    """The verdict word of one metric from its interval, its delta and the re-run band. `*_unreplicated` only when
    a side has a single evaluation (`replicated` False) and no band is known: a change seen once per side. With
    repeats on both sides but no band for this metric (too few runs carry it), the interval over tasks decides."""
    if ci95 is None or delta is None:
        return "not_measured"
    if ci95[0] <= 0.0 <= ci95[1]:
        return "no_change_detected"
    if band is None:
        if replicated:
            return "moved" if delta > 0 else "regressed"
        return "moved_unreplicated" if delta > 0 else "regressed_unreplicated"
    if abs(delta) <= band:
        return "within_eval_noise"
    return "moved" if delta > 0 else "regressed"


# What each headline says (printed under it, and in the README).
HEADLINE_MEANING = {
    "PASS": "the target gained by more than its interval (and the re-run band, when known) allows as chance",
    "NO DIFFERENCE": "the interval covers zero or the delta sits inside the eval's re-run band: not a win, not a "
                     "loss, and not proof the runs are equal",
    "FAIL": "the target or a must_not_regress behaviour dropped significantly",
    "NOT COMPARABLE": "the arms cannot be compared as they are; the causes say why and what to fix",
}


def interval_text(ci: tuple[float, float] | None) -> str:
    return f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else ""


def _p(p: float | None) -> str:
    return f" p={p:.3g}" if p is not None else ""


def _metric_line(metric: MetricDelta, role: str, width: int) -> str:
    if metric.delta is None or metric.before is None or metric.after is None:
        return f"  {metric.name:<{width}}  not measured (no task carries it on both sides){role}"
    noise = ""
    if metric.band is not None:
        noise = f" band ±{metric.band:.3f}"
    return (f"  {metric.name:<{width}}  {metric.before:.3f} -> {metric.after:.3f}  {metric.delta:+.3f}"
            f"{interval_text(metric.ci95)}{_p(metric.p_value)}{noise}  {metric.verdict}  "
            f"({metric.n_paired_tasks} tasks){role}")


def format_delta_report(report: DeltaReport) -> str:
    """The report as lines: headline, sizing, one line per metric, groups, noise, ceiling, config, warnings."""
    head = f"{report.headline_verdict}: "
    if report.headline_verdict == "NOT COMPARABLE":
        head += "; ".join(f"{cause}: {why}" for cause, why in report.not_comparable.items())
    elif report.delta is None or report.before is None or report.after is None:
        head += f"{report.target} not measured on both sides"
    else:
        head += (f"{report.target} {report.before:.3f} -> {report.after:.3f}, delta {report.delta:+.3f}"
                 f"{interval_text(report.target_ci95)}{_p(report.p_value)}: {report.verdict}")
        if report.failed:
            head += f"; failed: {', '.join(report.failed)}"
        if report.groups_down:
            head += f"; {len(report.groups_down)} group(s) down: {', '.join(report.groups_down)}"
    lines = [head, f"  ({HEADLINE_MEANING[report.headline_verdict]})"]
    k = (f"k={report.k_before}" if report.k_before == report.k_after
         else f"k={report.k_before} before, k={report.k_after} after")
    if not report.metrics:  # nothing paired: no k and no re-run noise to speak of
        k = "nothing compared"
    elif report.eval_runs_before > 1 or report.eval_runs_after > 1:
        k += f" (rows per task over {report.eval_runs_before} / {report.eval_runs_after} evaluations)"
    lines.append(f"  sizing: {report.n_paired_tasks} paired tasks ({report.n_before_tasks} before, "
                 f"{report.n_after_tasks} after, paired_share {report.paired_share:.2f}), {k}")
    for warning in report.warnings:
        if warning.startswith("unequal rollouts"):
            lines.append(f"  warning: {warning}")
    if report.balanced:
        lines.append(f"  balanced: dropped {report.balanced['before_rows_dropped']} before rows and "
                     f"{report.balanced['after_rows_dropped']} after rows over {report.balanced['tasks_trimmed']} "
                     "tasks (costs precision, removes no bias)")
    width = max([len(name) for name in report.metrics] + [6])
    for name, metric in report.metrics.items():
        role = ("  <- target" if name == report.target
                else "  <- must_not_regress" if name in report.must_not_regress else "")
        lines.append(_metric_line(metric, role, width))
    if report.groups:
        lines.append(f"  {report.target} by {report.by}:")
        group_width = max(len(label) for label in report.groups)
        for label, metric in report.groups.items():
            down = "  <- down" if label in report.groups_down else ""
            lines.append("  " + _metric_line(metric, down, group_width))
    if report.run_std is not None:
        source = {"run_std": "run_std=", "eval_variance": "eval_variance", "eval_run": "lineage.eval_run repeats"}
        df = f", {report.run_std_runs - 1} df" if report.run_std_runs else ", read as exact"
        lines.append(f"  re-run noise: run_std {report.run_std:.4f} ({source.get(report.run_std_source, '')}{df}), "
                     f"band quantile {report.band_quantile:.2f}, evaluations {report.eval_runs_before} before / "
                     f"{report.eval_runs_after} after")
    elif report.metrics:
        lines.append("  re-run noise: not measured (one evaluation per side): at most moved_unreplicated")
    if report.ceiling:
        lines.append("  ceiling: True")
    for side in ("before", "after"):
        config = report.config.get(side)
        if config:
            lines.append(f"  {side} produced with: " + ", ".join(f"{k}={v!r}" for k, v in config.items()))
    lines += [f"  note: {note}" for note in report.notes]
    lines += [f"  warning: {w}" for w in report.warnings if not w.startswith("unequal rollouts")]
    return "\n".join(lines)
