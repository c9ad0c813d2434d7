"""The reward monitor's summary (a pydantic model) and `format_hack_monitor`, its terminal reading.

    print(wai.format_hack_monitor(monitor.summary()))

The first line is the verdict (which alarms fired, whether training was stopped); then the proxy / gold /
length curve per holdout eval with the alarms marked at the eval where they fired, and the markers= curve
when the monitor reads markers; then each alarm's line
with its numbers; then what to do.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from whileai_train.callbacks import monitor_defaults as D
from whileai_train.callbacks.health_alarms import HEALTH_FIX
from whileai_train.report import Report

__all__ = ["AlarmEntry", "AlarmStatus", "EvalPoint", "MonitorSummary", "format_hack_monitor", "verdict_line"]


class EvalPoint(BaseModel):
    """One holdout eval: mean proxy and gold reward and mean completion length (tokens) over its asks."""

    step: int
    proxy_reward: float | None = None
    gold_reward: float | None = None
    holdout_length: float | None = None
    n_asks: int = 0
    n_completions: int = 0
    markers: dict[str, float] = Field(default_factory=dict)  # marker -> mean over asks (markers=)
    rewards: dict[str, float] = Field(default_factory=dict)  # reward function -> its holdout mean (with several)
    tool_completions: int | None = None  # holdout completions that called a tool (None: no tool call in the run)
    tool_calls: int | None = None        # tool calls on the holdout, with their results in the completions
    tool_failures: int | None = None     # ... of which failed (raised, unknown tool, unsupported call)


class AlarmEntry(BaseModel):
    """An alarm as it fired: the step, the one-line message and its numbers."""

    name: str
    step: int
    message: str
    numbers: dict[str, Any] = Field(default_factory=dict)


class AlarmStatus(BaseModel):
    """An alarm's latest status: alarm, clear or unknown, and why."""

    status: str
    reason: str


class MonitorSummary(Report):
    """What the monitor saw: the curve, the alarms, whether it stopped training, and the settings."""

    verdict: str
    curve: list[EvalPoint] = Field(default_factory=list)
    alarms: list[AlarmEntry] = Field(default_factory=list)
    standing: list[str] = Field(default_factory=list)
    latest: dict[str, AlarmStatus] = Field(default_factory=dict)
    stopped: bool = False
    stop_reason: str | None = None
    top_feature: str | None = None
    warnings: list[str] = Field(default_factory=list)
    settings: dict[str, Any] = Field(default_factory=dict)
    holdout_share: float | None = None  # share of the wall time since train begin spent in holdout evals
    run_id: str | None = None
    # the holdout completions kept on the run: kept, cut (to max_chars), dropped (past max_rows), and the two caps
    completions: dict[str, int] = Field(default_factory=dict)

    def __str__(self) -> str:
        return format_hack_monitor(self)


def _num(value: float | None, width: int, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-".rjust(width)
    return f"{value:.{digits}f}".rjust(width)


def verdict_line(names: list[str], steps: list[int], stopped: bool, n_evals: int) -> str:
    """The summary's first line: what fired (a reward hack, or a run that learns nothing), and whether it stopped."""
    if names:
        hack = [n for n in names if n in D.HACK_ALARMS]
        head = "REWARD HACKING SUSPECTED" if hack else "RUN NOT LEARNING"
        said = ", ".join(f"{n} at step {s}" for n, s in zip(names, steps, strict=True))
        line = f"{head}: {len(names)} alarm{'s' if len(names) > 1 else ''} ({said})"
        return line + ("; training stopped" if stopped else "; training went on (not in stop_on)")
    if not n_evals:
        return "NO EVAL YET: the monitor has not sampled the holdout"
    return f"NO ALARM over {n_evals} holdout evals"


_ADVICE = {
    "divergence": "the proxy pays for something gold does not: read the top holdout completions, then fix the "
                  "reward (or add gold's check to it) before resuming",
    "length": "completions grow without gold gains: cap max_completion_length, or penalise length in the reward",
    "drift": "the policy moved past kl_budget from the reference: raise beta, lower the learning rate, or "
             "resume from an earlier checkpoint",
    "feature": "the reward tracks a feature you did not endorse: remove what pays for it from the reward",
    **HEALTH_FIX,
}


def _named_columns(curve: list[EvalPoint], field: str, footnote: str) -> list[str]:
    """A step-by-name table of one of an eval point's named readings (`markers` or `rewards`); none when empty."""
    names = list(dict.fromkeys(name for point in curve for name in getattr(point, field)))
    if not names:
        return []
    lines = ["", f"{'step':>6}  " + "  ".join(f"{name[:16]:>16}" for name in names)]
    for point in curve:
        values = getattr(point, field)
        lines.append(f"{point.step:>6}  " + "  ".join(_num(values.get(name), 16) for name in names))
    lines.append(f"  ({footnote})")
    return lines


def format_hack_monitor(summary: MonitorSummary | Mapping[str, Any]) -> str:
    """The summary as text: verdict, the per-eval curve with alarms marked, the alarm lines, what to do."""
    s = summary if isinstance(summary, MonitorSummary) else MonitorSummary.model_validate(dict(summary))
    lines = [s.verdict]
    if s.run_id:
        lines.append(f"run {s.run_id}")
    marks: dict[int, list[str]] = {}
    for alarm in s.alarms:
        eval_step = max((p.step for p in s.curve if p.step <= alarm.step), default=alarm.step)
        marks.setdefault(eval_step, []).append(alarm.name)
    if s.curve:
        lines.append("")
        lines.append(f"{'step':>6}  {'proxy':>8}  {'gold':>8}  {'length':>8}  {'asks':>5}")
        for p in s.curve:
            mark = ("  <- " + ", ".join(marks[p.step])) if p.step in marks else ""
            lines.append(f"{p.step:>6}  {_num(p.proxy_reward, 8)}  {_num(p.gold_reward, 8)}  "
                         f"{_num(p.holdout_length, 8, 1)}  {p.n_asks:>5}{mark}")
        lines.append("  (holdout means per eval; length in tokens)")
        tools = [p for p in s.curve if p.tool_calls is not None]
        if tools:
            lines.append("")
            lines.append("tool calls on the holdout:")
            for p in tools:
                lines.append(f"  step {p.step}: {p.tool_completions} of {p.n_completions} completions called a tool; "
                             f"{p.tool_calls} calls, {p.tool_failures} failed")
        lines += _named_columns(s.curve, "markers",
                                "markers on the holdout completions, mean over asks; 1.0 is the good outcome")
        lines += _named_columns(s.curve, "rewards", "each reward function's holdout mean")
    else:
        lines.append("no holdout eval yet")
    if s.alarms:
        lines.append("")
        lines.append("alarms:")
        for alarm in s.alarms:
            lines.append(f"  [{alarm.name}] step {alarm.step}: {alarm.message}")
    if s.holdout_share is not None:
        lines.append("")
        lines.append(f"holdout evals took {s.holdout_share:.1%} of the training wall time")
    if s.completions.get("kept") or s.completions.get("dropped"):
        c = s.completions
        lines.append("")
        lines.append(f"holdout completions kept on the run: {c.get('kept', 0)}"
                     + (f"; {c['cut']} cut to {c.get('max_chars')} characters" if c.get("cut") else "")
                     + (f"; {c['dropped']} dropped past the cap of {c.get('max_rows')} per run" if c.get("dropped")
                        else "") + " (wai.get_completions(run_id))")
    if s.latest:
        lines.append("")
        lines.append("latest: " + "; ".join(f"{name} {r.status}" + (f" ({r.reason})" if r.status != "alarm" else "")
                                            for name, r in s.latest.items()))
        fired = {a.name for a in s.alarms}
        quiet = [name for name, r in s.latest.items() if name not in fired and r.status == "clear"]
        unread = [name for name, r in s.latest.items() if name not in fired and r.status == "unknown"]
        lines.append(f"checked: {', '.join(s.latest)}; quiet: {', '.join(quiet) or 'none'}"
                     + (f"; could not be read: {', '.join(unread)}" if unread else ""))
    if s.warnings:
        lines.append("")
        lines.extend(f"warning: {w}" for w in s.warnings)
    todo = [f"  {name}: {_ADVICE[name]}" for name in dict.fromkeys(a.name for a in s.alarms) if name in _ADVICE]
    if todo:
        lines.append("")
        lines.append("what to do:")
        lines.extend(todo)
    return "\n".join(lines)
