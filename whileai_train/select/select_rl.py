"""select_for_rl: prune graded rollouts to the asks a grouped (GRPO-style) update learns from.

Drop order: junk rows; duplicate rollouts within an ask; truncated
rollouts (keep | penalize | drop); unanimous asks (all pass or all fail: zero advantage); asks outside the
pass-rate band. Then whole groups are kept round-robin across fault kinds and, within a fault kind, across
pass rates (a 25%, a 50% and a 75% ask in turn); `order="middle"` ranks nearest-to-50% first instead.

Junk is a row with no reward (ungraded), no task (no scenario_id, task_id or prompt), an `error`, or nothing
the agent did (no steps, final_text, messages or completion); each is counted under its first reason and
named in a warning. A duplicate is a row whose trajectory (the agent's texts and tool calls with arguments,
the rule of dedupe_groups) repeats an earlier row of the same ask; the first is kept. Truncated means `truncated: true` or
`finish_reason == "length"`.

A row's fault kind is the first of `fault_kind`, `fault`, `faults` on the row, then the same keys under
`lineage` ("none" when absent; a list of faults reads as their sorted names joined by "+"); an ask's fault
kind is that of its first surviving row. Pass means reward >= 0.5 (partial credit splits there).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np
from pydantic import Field

from whileai_train.errors import ConfigError
from whileai_train.report import KeptRows
from whileai_train.rows.contract import carried_stamp, final_reply
from whileai_train.rows.failure import FailureRule, failure_rule
from whileai_train.select.defaults import (
    LOW_K,
    ORDERS,
    SELECTED_RL,
    TRUNCATED,
    TRUNCATED_MODES,
)
from whileai_train.select.select_rows import SelectionReport, eval_warning
from whileai_train.stats import DEFAULT_SEED, wilson_interval
from whileai_train.tables.band import check_band
from whileai_train.tables.calibration import mark_selected, task_stamps
from whileai_train.tables.defaults import BAND, PASS_THRESHOLD
from whileai_train.tables.graded import Graded, graded_table, name_rows
from whileai_train.tables.trajectories import read_sizes, trajectory_key

if TYPE_CHECKING:
    from whileai_train.gates.hack_scan import HackScanReport
    from whileai_train.gates.hygiene import CorrelationsReport

__all__ = ["RLSelectionReport", "fault_kind", "select_for_rl"]

DROP_ORDER = ("junk", "duplicate", "truncated", "unanimous", "out_of_band", "budget")


class RLSelectionReport(SelectionReport):
    """What select_for_rl / optimize(mode="rl") kept, what it dropped (in drop order) and why."""

    mode: Literal["rl"] = "rl"
    n: int = 0
    kept: int = 0
    asks: int = 0
    asks_kept: int = 0
    dropped: dict[str, int] = Field(default_factory=dict)
    dropped_asks: dict[str, int] = Field(default_factory=dict)
    junk: dict[str, int] = Field(default_factory=dict)
    truncated: dict[str, int] = Field(default_factory=dict)
    truncated_mode: Literal["keep", "penalize", "drop"] = "drop"
    band: tuple[float, float] = BAND
    order: Literal["round_robin", "middle"] = "round_robin"
    max_rows: int | None = None
    max_asks: int | None = None
    fault_kinds: dict[str, int] = Field(default_factory=dict)
    pass_rates: dict[str, int] = Field(default_factory=dict)
    rollouts_per_task: float = 0.0
    low_k: bool = False
    calibration: dict[str, int] = Field(default_factory=dict)
    hygiene_warnings: list[str] = Field(default_factory=list)
    if TYPE_CHECKING:  # what type checkers read; at run time typed Any so hygiene and the scan load only when used
        correlations: CorrelationsReport | None = None
        hack_scan: HackScanReport | None = None
    else:
        correlations: Any = None
        hack_scan: Any = None

    @property
    def verdict(self) -> str:
        if self.kept == 0:
            return "NOTHING KEPT"
        if getattr(self.hack_scan, "reward_hack", None):
            return "kept, REWARD HACK flagged (not pruned)"
        if self.warnings or self.low_k:
            return "kept, check the warnings"
        return "kept"

    def __str__(self) -> str:
        lo, hi = self.band
        lines = [(f"optimize rl: {self.verdict}: {self.kept} of {self.n} rows, {self.asks_kept} of {self.asks} "
                  f"asks (band {lo:g}-{hi:g}, order {self.order})")]
        lines.append("  dropped in order: " + ", ".join(
            f"{reason} {self.dropped.get(reason, 0)}" for reason in DROP_ORDER) + " rows")
        if self.junk:
            lines.append("  junk: " + ", ".join(f"{reason} {count}" for reason, count in self.junk.items()))
        if self.truncated.get("seen"):
            lines.append(f"  truncated ({self.truncated_mode}): " + ", ".join(
                f"{key} {value}" for key, value in self.truncated.items()))
        if self.fault_kinds:
            lines.append("  asks kept per fault kind: " + ", ".join(
                f"{kind} {count}" for kind, count in self.fault_kinds.items()))
        if self.pass_rates:
            lines.append("  asks kept per pass rate: " + ", ".join(
                f"{rate} {count}" for rate, count in self.pass_rates.items()))
        stamp = self.calibration
        lines.append(f"  calibration: {stamp.get('stamped', 0)} rows stamped, {stamp.get('carried', 0)} carried a "
                     f"stamp; median {self.rollouts_per_task:g} rollouts per ask at the band")
        lines.append(f"  eval_sourced: {self.eval_sourced}")
        if self.correlations is not None:
            lines.append(f"  correlations: {str(self.correlations).splitlines()[0]}")
        if self.hack_scan is not None:
            lines.append(f"  hack_scan: {getattr(self.hack_scan, 'verdict', self.hack_scan)}")
        for warning in self.warnings:
            lines.append(f"  warning: {warning}")
        for warning in self.hygiene_warnings:
            lines.append(f"  hygiene: {warning}")
        if self.kept == 0:
            lines.append("  next: sample more rollouts per ask, or widen band=, before an RL run")
        elif getattr(self.hack_scan, "reward_hack", None):
            lines.append("  next: a reward that tracks a shortcut is a judge problem: fix the grader (or endorse "
                         "what it should track) before training on this selection")
        return "\n".join(lines)


def _kind(value: Any) -> str | None:
    if value is None or value == "" or value == [] or value == ():
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in ("kind", "type", "name"):
            if value.get(key):
                return str(value[key])
        return json.dumps(value, sort_keys=True, default=str)
    if isinstance(value, (list, tuple)):
        names = sorted({_kind(item) or "none" for item in value})
        return "+".join(names)
    return str(value)


def fault_kind(row: Mapping[str, Any]) -> str:
    """The row's fault kind: `fault_kind`, `fault`, `faults` on the row or its lineage; "none" when absent."""
    for source in (row, row.get("lineage")):
        if isinstance(source, Mapping):
            for key in ("fault_kind", "fault", "faults"):
                kind = _kind(source.get(key))
                if kind is not None:
                    return kind
    return "none"


def _duplicates(view: Graded, candidates: np.ndarray) -> np.ndarray:
    """Rows (among candidates) repeating an earlier candidate's trajectory within the same ask.

    Rows are first bucketed by (ask, final reply); only rows sharing a bucket are compared in full, so the
    common case (rollouts end differently) costs one dict lookup per row. Rows whose final replies differ are
    never duplicates.
    """
    rows = view.rows
    task_of = view.task_of_row.tolist()
    duplicate = np.zeros(view.n_rows, dtype=bool)
    # per ask, per final reply: the first row, or the trajectories seen once a second row shares the bucket
    # (keyed ask by ask rather than by an (ask, reply) tuple: no container per row for the collector to walk)
    by_ask: dict[int, dict[str, Any]] = {}
    for i in candidates.tolist():
        final = rows[i].get("final_text")
        coarse = final if final.__class__ is str else final_reply(rows[i])  # messages: their last reply
        seen = by_ask.get(task_of[i])
        if seen is None:
            seen = by_ask[task_of[i]] = {}
        bucket = seen.get(coarse)
        if bucket is None:
            seen[coarse] = i
            continue
        if bucket.__class__ is int:
            bucket = seen[coarse] = {trajectory_key(rows[bucket])}
        fine = trajectory_key(rows[i])
        if fine in bucket:
            duplicate[i] = True
        else:
            bucket.add(fine)
    return duplicate


def _interleave(sequences: Sequence[Sequence[int]]) -> list[int]:
    """Round robin: the first of each sequence, then the second of each, until all are used up."""
    out: list[int] = []
    depth = max((len(seq) for seq in sequences), default=0)
    for position in range(depth):
        out.extend(seq[position] for seq in sequences if position < len(seq))
    return out


def _order_groups(groups: np.ndarray, rates: np.ndarray, kinds: list[str], order: str) -> list[int]:
    """Kept asks in the order they are taken (and cut by a budget)."""
    if order == "middle":
        distance = np.round(np.abs(rates - 0.5), 9)
        return [int(groups[i]) for i in np.lexsort((groups, rates, distance))]
    by_kind: dict[str, dict[float, list[int]]] = {}
    for group, rate, kind in zip(groups.tolist(), np.round(rates, 9).tolist(), kinds):
        by_kind.setdefault(kind, {}).setdefault(rate, []).append(group)
    per_kind = [_interleave([buckets[rate] for rate in sorted(buckets)]) for buckets in by_kind.values()]
    return _interleave(per_kind)


def _check_arguments(truncated: str, order: str, band: Sequence[float], max_rows: int | None,
                     max_asks: int | None, endorsed: Any) -> tuple[float, float]:
    if truncated not in TRUNCATED_MODES:
        raise ConfigError(f"truncated={truncated!r}. Fix: use one of {', '.join(TRUNCATED_MODES)}")
    if order not in ORDERS:
        raise ConfigError(f"order={order!r}. Fix: use one of {', '.join(ORDERS)}")
    lo, hi = check_band(band, who="optimize(mode='rl')")
    if isinstance(endorsed, (str, bytes)):
        raise ConfigError(f"endorsed={endorsed!r} is a string; it would be read letter by letter. "
                          f"Fix: pass a list, endorsed=[{endorsed!r}]")
    for name, value in (("max_rows", max_rows), ("max_asks", max_asks)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ConfigError(f"{name}={value!r}. Fix: pass a positive whole number, or None for no budget")
    return lo, hi


def select_for_rl(
    rows: Any,
    *,
    band: Sequence[float] = BAND,
    truncated: str = TRUNCATED,
    order: str = "round_robin",
    max_rows: int | None = None,
    max_asks: int | None = None,
    endorsed: Sequence[str] | None = None,
    features: Mapping[str, Any] | None = None,
    seed: int = DEFAULT_SEED,
    failure: Callable[[Any], bool | None] | Sequence[str] | None = None,
) -> KeptRows[RLSelectionReport]:
    """Keep the asks a grouped RL update learns from; return KeptRows(rows, report). Input rows untouched.

    Kept rows come ask by ask in the order taken (an ask's rows in input order); they are shallow copies, so
    only the keys optimize sets (calibration, reward and reward_before_penalty) differ from the input. Every
    kept row carries a calibration stamp measured on the rows given (before dedupe and trims), or the stamp
    it already had. `max_rows` / `max_asks` keep the longest run of whole asks, in that order, that fits.
    report["correlations"] is reward_correlations on the selection; with `endorsed=` (or `features=`) hack_scan
    runs on the selection too and is carried as report["hack_scan"], its warnings in report["hygiene_warnings"];
    `failure` is the scan's (hack_scan's failure=).
    """
    lo, hi = _check_arguments(truncated, order, band, max_rows, max_asks, endorsed)
    rule = failure_rule(failure)
    view = graded_table(rows, what="optimize(mode='rl')", order="first_seen", need_graded=True, deep=False)
    n = view.n_rows
    report = RLSelectionReport.model_validate({
        "n": n, "asks": view.n_tasks, "truncated_mode": truncated, "band": (lo, hi), "order": order,
        "max_rows": max_rows, "max_asks": max_asks})

    alive, cut = _drop_junk(view, report)  # 1
    graded_rows = alive.copy()  # the band is each ask's measured pass rate: over every graded rollout given

    # 2. the same trajectory twice in one ask adds nothing to a group-relative advantage
    duplicate = _duplicates(view, np.flatnonzero(alive))
    report.dropped["duplicate"] = int(duplicate.sum())
    alive &= ~duplicate

    rewards = _handle_truncated(view.rewards.copy(), cut, alive, truncated, report)  # 3
    per_ask = _measure_band(view, alive, graded_rows, rewards, lo, hi, report)  # 4 and 5
    asks = _take_asks(view, alive, per_ask, order, max_rows, max_asks, report)  # 6
    penalized = cut if truncated == "penalize" else np.zeros(n, dtype=bool)
    out = _stamped_copies(view, asks, per_ask, penalized, report)  # 7

    sorted_rows, starts, taken = asks.sorted_rows, asks.starts, asks.taken
    kept_index = [i for group in taken for i in sorted_rows[starts[group]:starts[group + 1]].tolist()]
    eval_kept = np.asarray(kept_index, dtype=np.int64)[view.eval_sourced[kept_index]].tolist()
    report.eval_sourced, report.eval_sourced_rows = len(eval_kept), sorted(eval_kept)
    if eval_kept:
        report.warnings.append(eval_warning(len(eval_kept), sorted(eval_kept)))
    if not out:
        report.warnings.append(_why_nothing(view, report))
    if len(out) < n:
        report.hygiene_warnings.append(
            "pass^k and pass@k are n/a on this selection: pruning shrank the groups, so the k-way reliability "
            "numbers of the graded rows do not survive it. Print pass_at on the graded rows before optimize; each "
            "kept row's calibration stamp keeps the graded per-task measurement")
    if out:
        _hygiene(out, rewards[kept_index], report, endorsed, features, seed, rule)
    elif endorsed is not None or features is not None:
        report.hygiene_warnings.append("hack_scan not run: nothing was kept to scan")
    return KeptRows(out, report)


def _drop_junk(view: Graded, report: RLSelectionReport) -> tuple[np.ndarray, np.ndarray]:
    """1. junk: a row is counted once, under its first reason. Returns the rows still alive and the truncated
    ones (read here with the rest of each row's flags)."""
    n, rows = view.n_rows, view.rows
    errored = np.zeros(n, dtype=bool)
    empty = np.zeros(n, dtype=bool)
    cut = np.zeros(n, dtype=bool)
    for i, row in enumerate(rows):
        if row.get("error"):
            errored[i] = True
        if not (row.get("steps") or row.get("final_text") or row.get("messages") or row.get("completion")):
            empty[i] = True
        if row.get("truncated") is True or row.get("finish_reason") == "length":
            cut[i] = True
    no_task = np.array([name == "" for name in view.tasks], dtype=bool)[view.task_of_row]
    alive = np.ones(n, dtype=bool)
    junk_rows: list[int] = []
    for reason, mask in (("ungraded", ~view.graded), ("no_task", no_task), ("errored", errored), ("empty", empty)):
        hit = alive & mask
        if hit.any():
            report.junk[reason] = int(hit.sum())
            junk_rows.extend(np.flatnonzero(hit).tolist())
            alive &= ~mask
    report.dropped["junk"] = len(junk_rows)
    if junk_rows:
        report.warnings.append(f"dropped {len(junk_rows)} junk rows (" + ", ".join(
            f"{reason} {count}" for reason, count in report.junk.items()) + f"): {name_rows(sorted(junk_rows))}")
    return alive, cut


def _handle_truncated(rewards: np.ndarray, cut: np.ndarray, alive: np.ndarray, truncated: str,
                      report: RLSelectionReport) -> np.ndarray:
    """3. truncated rollouts, as `truncated=` says: dropped (from `alive`, in place), scored 0, or kept as they
    are. Returns the rewards the band reads; `cut` keeps only the live truncated rows."""
    cut &= alive
    report.truncated = {"seen": int(cut.sum())}
    if truncated == "drop":
        alive &= ~cut
        report.dropped["truncated"] = report.truncated["dropped"] = int(cut.sum())
    else:
        report.dropped["truncated"] = 0
        if truncated == "penalize":
            rewards[cut] = 0.0
            report.truncated["penalized"] = int(cut.sum())
        else:
            report.truncated["kept_as_overlong"] = int(cut.sum())
    return rewards


class AskBand(NamedTuple):
    """Per ask: live rollouts left, the pass rate measured over every graded rollout, and whether it is kept."""

    sizes: np.ndarray
    rates: np.ndarray
    keep: np.ndarray


def _measure_band(view: Graded, alive: np.ndarray, graded_rows: np.ndarray, rewards: np.ndarray, lo: float,
                  hi: float, report: RLSelectionReport) -> AskBand:
    """4. unanimous asks: all that is left passes, or all fails (zero group-relative advantage); 5. asks outside
    the band."""
    tasks, task_of = view.n_tasks, view.task_of_row
    live_tasks = task_of[alive]
    sizes = np.bincount(live_tasks, minlength=tasks)
    passes = np.bincount(live_tasks, weights=rewards[alive] >= PASS_THRESHOLD, minlength=tasks)
    present = sizes > 0
    unanimous = present & ((passes == 0) | (passes == sizes))
    # the pass rate over every graded rollout of the ask (what the policy solves), not over the distinct
    # trajectories left after dedupe, which would measure trajectory variety instead
    measured_tasks = task_of[graded_rows]
    measured_sizes = np.bincount(measured_tasks, minlength=tasks)
    measured_passes = np.bincount(measured_tasks, weights=rewards[graded_rows] >= PASS_THRESHOLD, minlength=tasks)
    rates = np.divide(measured_passes, measured_sizes, out=np.zeros(tasks), where=measured_sizes > 0)
    outside = present & ~unanimous & ((rates < lo) | (rates > hi))
    for reason, mask in (("unanimous", unanimous), ("out_of_band", outside)):
        report.dropped[reason] = int(sizes[mask].sum())
        report.dropped_asks[reason] = int(mask.sum())
    if present.any():
        report.rollouts_per_task = float(statistics.median(measured_sizes[present].tolist()))
        report.low_k = report.rollouts_per_task < LOW_K
    if report.low_k:
        k = int(report.rollouts_per_task)
        low, high = wilson_interval(k / 2, k) if k else (0.0, 1.0)
        report.warnings.append(
            f"low k: the band was measured from a median of {report.rollouts_per_task:g} rollouts per ask (fewer "
            f"than {LOW_K}); at that k a 50% ask's 95% interval is {low:.2f}-{high:.2f}, so its band assignment "
            f"can be off by about {(high - low) / 2:.1f}. Sample {LOW_K} or more rollouts per ask")
    return AskBand(sizes, rates, present & ~unanimous & ~outside)


class TakenAsks(NamedTuple):
    """The asks taken, in order, with the live rows sorted by ask (an ask's rows: sorted_rows[starts[a]:
    starts[a + 1]]) and each kept ask's fault kind."""

    taken: list[int]
    sorted_rows: np.ndarray
    starts: np.ndarray
    kind_of: dict[int, str]


def _take_asks(view: Graded, alive: np.ndarray, band: AskBand, order: str, max_rows: int | None,
               max_asks: int | None, report: RLSelectionReport) -> TakenAsks:
    """6. whole asks, round robin (or nearest-to-50%), then the budget."""
    task_of = view.task_of_row
    groups = np.flatnonzero(band.keep)
    alive_index = np.flatnonzero(alive)
    order_index = np.argsort(task_of[alive_index], kind="stable")
    sorted_rows = alive_index[order_index]
    starts = np.searchsorted(task_of[sorted_rows], np.arange(view.n_tasks + 1))
    kinds = [fault_kind(view.rows[int(sorted_rows[starts[g]])]) for g in groups.tolist()]
    taken: list[int] = []
    kept_rows = 0
    for group in _order_groups(groups, band.rates[groups], kinds, order):
        size = int(band.sizes[group])
        if (max_asks is not None and len(taken) >= max_asks) or (
                max_rows is not None and kept_rows + size > max_rows):
            break
        taken.append(group)
        kept_rows += size
    report.dropped["budget"] = int(band.sizes[groups].sum()) - kept_rows
    report.dropped_asks["budget"] = len(groups) - len(taken)
    return TakenAsks(taken, sorted_rows, starts, dict(zip(groups.tolist(), kinds)))


def _stamped_copies(view: Graded, asks: TakenAsks, band: AskBand, penalized: np.ndarray,
                    report: RLSelectionReport) -> list[dict[str, Any]]:
    """7. new dicts, stamped: each kept row's carried calibration stamp, or its ask's measured on the rows given."""
    rows, n = view.rows, view.n_rows
    stamps = task_stamps(view)
    carries = view.carries.tolist()
    penalized_rows = penalized.tolist()
    out: list[dict[str, Any]] = []
    measured: list[Any] = []  # per kept row: its carried stamp, or the one measured on the rows given
    carried = 0
    for group in asks.taken:
        stamp = stamps[group]
        for i in asks.sorted_rows[asks.starts[group]:asks.starts[group + 1]].tolist():
            row = rows[i]
            new = dict(row)
            if penalized_rows[i]:
                new["reward_before_penalty"] = row.get("reward")
                new["reward"] = 0.0
            if carries[i]:
                carried += 1
                measured.append(carried_stamp(row))
            else:
                new["calibration"] = dict(stamp)  # type: ignore[arg-type]
                measured.append(None)
            out.append(new)
        kind = asks.kind_of[group]
        report.fault_kinds[kind] = report.fault_kinds.get(kind, 0) + 1
        rate = f"{band.rates[group]:.2f}"
        report.pass_rates[rate] = report.pass_rates.get(rate, 0) + 1
    report.pass_rates = dict(sorted(report.pass_rates.items()))
    if len(out) < n:  # rows were dropped by their outcome: pass_at reads the k-way numbers n/a on this selection
        for new, stamp in zip(out, measured):
            mark_selected(new, stamp if stamp is not None else new["calibration"], SELECTED_RL)
    report.kept, report.asks_kept = len(out), len(asks.taken)
    report.calibration = {"stamped": len(out) - carried, "carried": carried}
    return out


def _why_nothing(view: Graded, report: RLSelectionReport) -> str:
    passed = view.passed[view.graded]
    if passed.all() or not passed.any():
        which = "passes" if passed.all() else "fails"
        return (f"nothing kept: every graded row {which} (one class only), so every ask is unanimous and a grouped "
                "update would learn nothing from it. Fix: add harder (or easier) asks, or grade with partial credit")
    asks, rows = report.dropped_asks, report.dropped
    return (f"nothing kept: rows dropped as junk {rows.get('junk', 0)}, duplicate {rows.get('duplicate', 0)}, "
            f"truncated {rows.get('truncated', 0)}; then {asks.get('unanimous', 0)} asks unanimous, "
            f"{asks.get('out_of_band', 0)} outside the {report.band[0]:g}-{report.band[1]:g} band, "
            f"{asks.get('budget', 0)} over the budget. Fix: sample more rollouts per ask, widen band=, or raise "
            "the budget")


def _hygiene(out: list[dict[str, Any]], rewards: np.ndarray, report: RLSelectionReport,
             endorsed: Sequence[str] | None, features: Mapping[str, Any] | None, seed: int,
             rule: FailureRule) -> None:
    """The pooled reward correlations, and hack_scan when `endorsed=` names what the reward should track.

    `rewards` are the kept rows' rewards (after a penalty); the rows' steps are read once for both."""
    from whileai_train.gates.features import read_scan
    from whileai_train.gates.hygiene import correlations_from

    scan = endorsed is not None or features is not None
    trajectories = read_scan(out, rule) if scan else None
    sizes = read_sizes(out) if trajectories is None else (
        trajectories.lengths, trajectories.n_calls.astype(np.float64), trajectories.turns.astype(np.float64))
    report.correlations = correlations_from(sizes, rewards, len(out))
    for warning in getattr(report.correlations, "warnings", None) or ():
        report.hygiene_warnings.append(f"correlations: {warning}")
    if not scan:
        return
    from whileai_train.gates.hack_scan import hack_scan_tables

    report.hack_scan = hack_scan_tables(out, trajectories, endorsed=endorsed, features=features, seed=seed, failure=rule)
    for warning in getattr(report.hack_scan, "warnings", None) or ():
        report.hygiene_warnings.append(f"hack_scan: {warning}")
