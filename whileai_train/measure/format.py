"""format_delta_report: the delta report as text, the headline verdict on the first line, one line per metric."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from whileai_train.measure.delta_report import DeltaReport, MetricDelta

__all__ = ["HEADLINE_MEANING", "format_delta_report"]

# What each headline says (printed under it, and in the README).
HEADLINE_MEANING = {
    "PASS": "the target gained by more than its interval (and the re-run band, when known) allows as chance",
    "NO DIFFERENCE": "the interval covers zero or the delta sits inside the eval's re-run band: not a win, not a "
                     "loss, and not proof the runs are equal",
    "FAIL": "the target or a must_not_regress behaviour dropped significantly",
    "NOT COMPARABLE": "the arms cannot be compared as they are; the causes say why and what to fix",
}


def _interval(ci: tuple[float, float] | None) -> str:
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
            f"{_interval(metric.ci95)}{_p(metric.p_value)}{noise}  {metric.verdict}  "
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
                 f"{_interval(report.target_ci95)}{_p(report.p_value)}: {report.verdict}")
        if report.failed:
            head += f"; failed: {', '.join(report.failed)}"
        if report.groups_down:
            head += f"; {len(report.groups_down)} group(s) down: {', '.join(report.groups_down)}"
    lines = [head, f"  ({HEADLINE_MEANING[report.headline_verdict]})"]
    k = (f"k={report.k_before}" if report.k_before == report.k_after
         else f"k={report.k_before} before, k={report.k_after} after")
    if report.eval_runs_before > 1 or report.eval_runs_after > 1:
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
    else:
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
