"""The held-out verdict kept on a run: summary["holdout"] (each side's value, n_tasks, k, ci95, the delta and
verdict) and summary["delta"] (the whole delta report), on a finished run or a live one, and read back.

    attach_holdout(run_id, before, after)    summary["holdout"]: each side's pass rate (n_tasks, k, ci95), verdict
    attach_delta(run_id, report)             summary["holdout"] and summary["delta"] (the whole delta report)
    run.holdout / run.delta                  the same on a live Run (keep_on_run), also in its finish summary
    run.refresh()                            a live Run's summary and holdout block read back from where it went

The local store merges the keys into the run's summary (LocalStore.update_summary); the platform gets
PATCH /runs/{id} with {"summary": {...}}. `before` / `after` are two pass rates (0 to 1: 58% is 0.58; or two
held-out losses with metric="loss", lower better) or two row lists, which are measured with delta_report.
Reading a run and the platform client are records.py's.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any, Literal

from whileai_train.errors import ConfigError, RunError
from whileai_train.runs.config import SenderConfig
from whileai_train.runs.credentials import Credential, redact
from whileai_train.runs.records import (
    local_store_with,
    platform_client,
    platform_credential,
    platform_error,
    platform_record,
)

__all__ = [
    "attach_delta",
    "attach_holdout",
    "delta_patch",
    "delta_summary",
    "holdout_line",
    "holdout_summary",
    "keep_on_run",
    "patch_platform_summary",
    "refresh_run",
]

logger = logging.getLogger("whileai_train.runs")

Metric = Literal["pass_rate", "loss"]


# --------------------------------------------------------------------------------------------- the blocks


def _number(value: Any, name: str, metric: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{name}={value!r}: a number ({'a held-out loss' if metric == 'loss' else 'a pass rate'})")
    if metric == "pass_rate" and not 0 <= value <= 1:
        raise ConfigError(f"{name}={value!r}: pass rates are 0 to 1, so 58% is 0.58")
    if metric == "loss" and value < 0:
        raise ConfigError(f"{name}={value!r}: a loss is >= 0")
    return float(value)


def delta_summary(report: Any) -> dict[str, Any]:
    """summary["holdout"] from a delta report: each side's value with n_tasks, k, ci95, the delta and verdict."""
    from whileai_train.measure.delta_reading import DeltaReport

    if not isinstance(report, DeltaReport):
        raise ConfigError(f"expected a delta report (wai.delta_report(before, after)), got {type(report).__name__}")
    metric = "pass_rate" if report.target == "pass@1" else report.target

    def side(value: float | None, k: int | None, ci: tuple[float, float] | None) -> dict[str, Any]:
        return {metric: value, "n_tasks": report.n_paired_tasks, "k": k, "ci95": list(ci) if ci else None}

    return {"metric": metric, "before": side(report.before, report.k_before, report.before_ci95),
            "after": side(report.after, report.k_after, report.after_ci95), "delta": report.delta,
            "ci95": list(report.target_ci95) if report.target_ci95 else None, "verdict": report.verdict,
            "headline_verdict": report.headline_verdict}


def holdout_line(block: Mapping[str, Any]) -> str:
    """summary["holdout"] as one line: the verdict, each side with its interval and size, the delta."""
    metric = block.get("metric") if isinstance(block.get("metric"), str) else "pass_rate"

    def value(side: Any) -> Any:
        return side.get(metric) if isinstance(side, Mapping) else side

    def interval(pair: Any) -> str:
        ok = isinstance(pair, (list, tuple)) and len(pair) == 2 and all(isinstance(x, (int, float)) for x in pair)
        return f" [{pair[0]:.4g}, {pair[1]:.4g}]" if ok else ""

    def size(side: Any) -> str:
        if not isinstance(side, Mapping) or side.get("n_tasks") is None:
            return ""
        return f" ({side['n_tasks']} tasks" + (f", k={side['k']})" if side.get("k") is not None else ")")

    before, after = value(block.get("before")), value(block.get("after"))
    if not isinstance(before, (int, float)) or not isinstance(after, (int, float)):
        return "no pass rates in the block"
    delta = block.get("delta") if isinstance(block.get("delta"), (int, float)) else after - before
    words = [w for w in (block.get("headline_verdict"), block.get("verdict")) if isinstance(w, str) and w]
    sides = (f"{metric} {before:.4g}{interval(_get(block.get('before'), 'ci95'))}{size(block.get('before'))} -> "
             f"{after:.4g}{interval(_get(block.get('after'), 'ci95'))}{size(block.get('after'))}, "
             f"delta {delta:+.4g}{interval(block.get('ci95'))}")
    return (": ".join(words) + " - " if words else "") + sides


def _get(side: Any, key: str) -> Any:
    return side.get(key) if isinstance(side, Mapping) else None


def holdout_summary(before: Any, after: Any, *, metric: Metric = "pass_rate",
                    **delta_options: Any) -> tuple[dict[str, Any], Any]:
    """(summary["holdout"], the delta report or None) for two numbers or two row lists."""
    if metric not in ("pass_rate", "loss"):
        raise ConfigError(f"metric={metric!r}: \"pass_rate\" (0 to 1, higher better) or \"loss\" (held-out loss)")
    numbers = not isinstance(before, (list, tuple, str)) and not hasattr(before, "__fspath__") \
        and not hasattr(before, "column_names")
    if numbers or metric == "loss":
        b, a = _number(before, "before", metric), _number(after, "after", metric)
        empty = {"n_tasks": None, "k": None, "ci95": None}
        return ({"metric": metric, "before": {metric: b, **empty}, "after": {metric: a, **empty}, "delta": a - b,
                 "ci95": None, "verdict": None, "headline_verdict": None,
                 "note": "two numbers were given: no interval or verdict (pass the rows to have them measured)"},
                None)
    from whileai_train.measure.delta_report import delta_report

    report = delta_report(before, after, **delta_options)
    return delta_summary(report), report


def _holdout_block(raw: Any) -> dict[str, Any] | None:
    """summary["holdout"] as read back: a block of ours as it is; two bare numbers (what a hosted run's platform
    keeps) as the same block with the interval fields None and a note saying why."""
    if not isinstance(raw, Mapping):
        return None
    before, after = raw.get("before"), raw.get("after")
    if isinstance(before, Mapping) or isinstance(after, Mapping):
        return dict(raw)
    metric: Metric = "loss" if raw.get("metric") == "loss" else "pass_rate"
    try:
        block, _ = holdout_summary(before, after, metric=metric)
    except ConfigError:
        return dict(raw)  # not two numbers either: kept as it came, for the reader to see
    block["note"] = "the platform returned two numbers only: no n_tasks, k, interval or verdict to read back"
    return block


# --------------------------------------------------------------------------------------------- kept on the run


def patch_platform_summary(run_id: str, patch: Mapping[str, Any], *, credential: Credential,
                           url: str | None = None, config: SenderConfig | None = None) -> None:
    """PATCH /runs/{id} with {"summary": patch}: the platform merges the keys into the run's summary."""
    import json

    import httpx

    body = json.dumps({"summary": dict(patch)}, default=str)
    try:
        with platform_client(credential, url, config) as client:
            response = client.patch(f"/runs/{run_id}", content=body, headers={"Content-Type": "application/json"})
    except httpx.HTTPError as exc:
        raise platform_error(f"PATCH /runs/{run_id} did not reach the platform", exc, credential, config,
                             url) from None
    if response.status_code >= 400:
        raise RunError(f"PATCH /runs/{run_id} answered HTTP {response.status_code}"
                       + (" (the key was refused)" if response.status_code in (401, 403) else "")
                       + ("; no such run there" if response.status_code == 404 else ""))


def _write(run_id: str, patch: dict[str, Any], api_key: str | None, url: str | None) -> str:
    """Merge `patch` into the run's summary where the run is; returns 'local' or 'platform'."""
    store = local_store_with(run_id)
    if store is not None:
        store.update_summary(run_id, patch)
        return "local"
    patch_platform_summary(run_id, patch, credential=platform_credential(run_id, api_key), url=url)
    return "platform"


def attach_holdout(run_id: str, before: Any, after: Any, *, metric: Metric = "pass_rate", api_key: str | None = None,
                   url: str | None = None, **delta_options: Any) -> dict[str, Any]:
    """Store summary["holdout"] on a finished run; returns the block. Rows are measured with delta_report."""
    block, _ = holdout_summary(before, after, metric=metric, **delta_options)
    _write(run_id, {"holdout": block}, api_key, url)
    return block


def attach_delta(run_id: str, report: Any, after: Any = None, *, api_key: str | None = None, url: str | None = None,
                 **delta_options: Any) -> dict[str, Any]:
    """Keep a delta report on a finished run: `attach_delta(run_id, report)` or `attach_delta(run_id, before,
    after, ...)` (measured here). Adds summary["holdout"] and summary["delta"]; returns the holdout block."""
    patch = delta_patch(report, after, **delta_options)
    _write(run_id, patch, api_key, url)
    return dict(patch["holdout"])


def delta_patch(report: Any, after: Any = None, **delta_options: Any) -> dict[str, Any]:
    """{"holdout": block, "delta": the whole report} for a delta report, or for two row lists measured here."""
    if after is not None:
        from whileai_train.measure.delta_report import delta_report

        report = delta_report(report, after, **delta_options)
    return {"holdout": delta_summary(report), "delta": report.model_dump(mode="json")}


def keep_on_run(run: Any, patch: dict[str, Any]) -> None:
    """Keep `patch` on a live Run: in its finish summary (`Run._measured`), and on its record now.

    A finished run's record gets the keys at once; a running one gets them now where the sink can merge them
    (the local store) and, in any case, with its finish summary. A failed write warns and never raises.
    """
    run._measured = {**(run._measured or {}), **patch}
    if "holdout" in patch:
        run.holdout_summary = patch["holdout"]
    if run.summary is not None:
        run.summary.update(patch)
    sender = run._sender
    if sender is None:
        return
    run_id = run.id
    try:
        if sender.sink.kind == "local":
            sender.sink.store.update_summary(run_id, patch)
        elif sender.sink.kind == "memory":
            record = sender.sink.runs.get(run_id)
            if record is not None:
                record["summary"] = {**(record.get("summary") or {}), **patch}
        elif run.status != "running":
            patch_platform_summary(run_id, patch, credential=run._credential, url=sender.sink.where,
                                   config=sender.config)
    except Exception as exc:  # noqa: BLE001  (the measurement is on the Run object; the record can be re-sent)
        logger.warning("whileai: could not store %s on run %s (%s); it is on run.holdout_summary, and "
                       "wai.attach_holdout / attach_delta can send it again", ", ".join(patch), run_id,
                       redact(repr(exc), run._credential))


def refresh_run(run: Any) -> dict[str, Any]:
    """run.refresh(): read the run's record back from where it went (local store, platform, memory) and set
    run.summary and run.holdout_summary from it; returns the record. A RunError when the platform cannot say."""
    sender = run._sender
    if sender is None:
        raise RunError(f"run {run.name!r} was never recorded (whileai logging is disabled here): nothing to read back")
    kind = sender.sink.kind
    if kind == "local":
        record = sender.sink.store.get_run(run.id)
    elif kind == "memory":
        record = sender.sink.runs.get(run.id)
    else:
        record = platform_record(run.id, run._credential, sender.sink.where, with_points=False,
                                 config=sender.config)
    if not isinstance(record, dict):
        raise RunError(f"no record of run {run.id!r} where it was sent ({sender.sink.where})")
    summary = record.get("summary")
    if isinstance(summary, dict):
        block = _holdout_block(summary.get("holdout"))
        if block is not None:
            summary = {**summary, "holdout": block}
            run.holdout_summary = block
        run.summary = summary
    return record
