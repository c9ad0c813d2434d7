"""publish_gate: is this row set fit to publish for training? Stamps, refusals, warnings, and the blocks.

* Every graded row gets a calibration stamp (its task's pass rate over k repeats, k, the policy); a stamp a
  row carries is kept, not re-measured (tables/calibration.py).
* An RL-shaped set (repeats of one ask) is refused with PublishGateError when it is ungraded or has no
  mixed group: a grouped update (GRPO's group-relative advantage) learns nothing from it.
* With mode="sft", rows with a failing reward are refused by the SFT export's own rule (exporters/selection.py,
  the same count and fix), so a gate that passes is an export that writes; check="warn" makes it a warning, as
  it does for the export. Rows read as SFT without mode= get the same words as a warning.
* Warnings when unanimous asks or asks outside the 0.2-0.8 band remain: optimize(mode="rl") prunes those.
* Blocks: pass_at over the rows in front (saying so when carried stamps' k differs), judge_trust when the
  rows carry gold labels, hack_scan on RL-shaped rows (strict_hacks=True refuses a reward_hack),
  near-duplicate asks and length spread.

Everything is arrays after one pass over the rows (tables/graded.py); no pairwise loop, no per-row pydantic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import Field, PrivateAttr

from whileai_train.errors import ConfigError, WhileAIError
from whileai_train.exporters.selection import SftTally, check_selection_options, sft_fix
from whileai_train.gates.defaults import RL_SHAPED_SHARE
from whileai_train.gates.overlap import OVERLAP_MIN_ROWS, start
from whileai_train.measure.pass_at import PassAtReport, most_common_k, pass_at_from_table
from whileai_train.progress import progress_call
from whileai_train.report import Report
from whileai_train.rows.failure import failure_rule
from whileai_train.stats import DEFAULT_DRAWS, DEFAULT_SEED
from whileai_train.tables.band import check_band
from whileai_train.tables.calibration import stamp_rows
from whileai_train.tables.defaults import BAND, PASS_THRESHOLD, SHOW_FIRST
from whileai_train.tables.graded import Graded, graded_table, name_rows
from whileai_train.tables.trajectories import Trajectories, read_trajectories

if TYPE_CHECKING:  # imported where used: the scan and the near-duplicate search load only when a gate runs them
    from whileai_train.gates.hack_scan import HackScanReport
    from whileai_train.gates.hygiene import LengthReport
    from whileai_train.gates.near_duplicates import NearDuplicateReport

__all__ = ["PublishGateError", "PublishGateReport", "publish_gate"]

Verdict = Literal["PASS", "WARN", "REFUSED"]
_OPTIMIZE = 'wai.optimize(rows, mode="rl") prunes unanimous and out-of-band asks (print pass_at before it)'


class PublishGateReport(Report):
    """The gate's reading. str(): the verdict first, then the numbers, then what to do."""

    verdict: Verdict = "PASS"
    mode: Literal["rl", "sft"] = "sft"
    rl_shaped: bool = False
    n_rows: int = 0
    n_tasks: int = 0
    n_graded: int = 0
    n_ungraded: int = 0
    n_stamped: int = 0
    n_carried: int = 0
    n_mixed: int = 0
    n_unanimous: int = 0
    n_all_pass: int = 0
    n_all_fail: int = 0
    n_out_of_band: int = 0  # mixed asks whose pass rate is outside `band`
    band: tuple[float, float] = BAND
    refusals: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    what_to_do: list[str] = Field(default_factory=list)
    pass_at: PassAtReport | None = None
    judge_trust: dict[str, Any] | None = None
    if TYPE_CHECKING:  # what type checkers read; at run time the fields hold the same reports, typed Any so the
        # scan and the near-duplicate search load only when a gate runs them
        hack_scan: HackScanReport | None = None          # on RL-shaped rows
        near_duplicates: NearDuplicateReport | None = None
        length: LengthReport | None = None
    else:
        hack_scan: Any = None
        near_duplicates: Any = None
        length: Any = None
    _stamped: Any = PrivateAttr(default=None)

    @property
    def rows(self) -> list[Mapping[str, Any]]:
        """The rows with their calibration stamps (shallow copies where a stamp was added; made on first use)."""
        return self._stamped.stamped_rows() if self._stamped is not None else []

    def __str__(self) -> str:
        shape = "RL-shaped (repeats of one ask)" if self.rl_shaped else "not RL-shaped"
        head = {"PASS": "fit to publish", "WARN": "publishable, with warnings",
                "REFUSED": "refused"}[self.verdict]
        first = (f"publish_gate: {self.verdict} ({head}): {self.n_rows} rows, {self.n_tasks} tasks, {shape}, "
                 f"mode={self.mode}")
        lines = [first]
        lines += [f"  REFUSED: {refusal}" for refusal in self.refusals]
        lines.append(f"  graded {self.n_graded}, ungraded {self.n_ungraded}; calibration stamps: {self.n_stamped} "
                     f"added, {self.n_carried} carried (kept, not re-measured)")
        if self.rl_shaped:
            lo, hi = self.band
            lines.append(f"  asks: {self.n_mixed} mixed, {self.n_unanimous} unanimous ({self.n_all_pass} all pass, "
                         f"{self.n_all_fail} all fail), {self.n_out_of_band} mixed but outside the {lo:.1f}-{hi:.1f} "
                         "band")
        if self.pass_at is not None:
            lines += ["  " + line for line in str(self.pass_at).splitlines()]
        if self.judge_trust is not None:
            lines.append(f"  judge_trust: {self.judge_trust.get('reading', '')} (ok={self.judge_trust.get('ok')})")
        for name in ("hack_scan", "near_duplicates", "length"):
            block = getattr(self, name)
            if block is not None:
                first = str(block).splitlines()[0] if str(block) else ""
                lines.append(f"  {name}: {first}")
        lines += [f"  note: {note}" for note in self.notes]
        lines += [f"  warning: {warning}" for warning in self.warnings]
        if self.what_to_do:
            lines.append("What to do:")
            lines += [f"  - {step}" for step in self.what_to_do]
        return "\n".join(lines)


def _task_names(table: Graded, tasks: np.ndarray) -> str:
    names = [repr(table.tasks[t][:60]) for t in tasks[:SHOW_FIRST].tolist()]
    more = f", ... ({len(tasks)} in all)" if len(tasks) > SHOW_FIRST else ""
    return ", ".join(names) + more


def _rl_shaped(table: Graded, mode: str | None) -> bool:
    if mode == "rl":
        return True
    if mode == "sft":
        return False
    in_groups = int(table.rows_per_task[table.rows_per_task >= 2].sum())
    return in_groups >= RL_SHAPED_SHARE * table.n_rows


def _check_arguments(mode: Any, band: Any, strict_hacks: bool, endorsed: Any) -> tuple[float, float]:
    if mode not in (None, "rl", "sft"):
        raise ConfigError(f"publish_gate: mode={mode!r}. Fix: mode='rl' (repeats of one ask, grouped updates), "
                          "mode='sft', or leave it unset to read the shape off the rows")
    lo, hi = check_band(band, who="publish_gate")
    if strict_hacks and endorsed is None:
        raise ConfigError("publish_gate: strict_hacks=True without endorsed= can never find a reward_hack (the scan "
                          "needs to know what the reward should track). Fix: pass endorsed=[...] (substrings of "
                          "feature names, e.g. ['tool:issue_refund'])")
    return lo, hi


class PublishGateError(WhileAIError):
    """publish_gate refuses the set; `report` holds the gate report that refused it."""

    def __init__(self, message: str, report: PublishGateReport | None = None) -> None:
        self.report = report
        super().__init__(message)


def _groups(report: PublishGateReport, table: Graded, carried_rate: dict[int, float], lo: float, hi: float,
            ) -> tuple[np.ndarray, np.ndarray]:
    """Count mixed / unanimous / out-of-band asks; returns (unanimous task numbers, out-of-band task numbers)."""
    tasks = table.graded_tasks
    mixed = table.reward_max[tasks] > table.reward_min[tasks]
    unanimous = tasks[~mixed]
    report.n_mixed, report.n_unanimous = int(mixed.sum()), len(unanimous)
    all_pass = table.n_passed[unanimous] == table.n_graded[unanimous]
    report.n_all_pass, report.n_all_fail = int(all_pass.sum()), int((~all_pass).sum())
    rates = table.pass_rates()[tasks]
    for position, task in enumerate(tasks.tolist()):  # the grader's measurement wins where a stamp carries it
        if task in carried_rate:
            rates[position] = carried_rate[task]
    outside = mixed & ((rates < lo) | (rates > hi))
    report.n_out_of_band = int(outside.sum())
    return unanimous, tasks[outside]


def _hygiene_blocks(report: PublishGateReport, near: NearDuplicateReport, table: Graded,
                    trajectories: Trajectories) -> None:
    from whileai_train.gates.hygiene import length_report_from

    report.near_duplicates = near
    # rewards were checked by graded_table
    length = report.length = length_report_from(trajectories.lengths, table.rewards, int(trajectories.truncated.sum()))
    if near.n_groups:
        report.warnings.append(f"near-duplicate asks: {near.n_tasks_involved} of {near.n_tasks} tasks share a "
                               f"near-duplicate ask with another task ({near.n_rows_involved} rows); one situation "
                               "counted as several tasks inflates the task count and leaks across splits")
        report.what_to_do.append("merge near-duplicate asks under one scenario_id or drop the extras "
                                 "(report.near_duplicates lists the pairs)")
    if length.flagged:
        report.warnings.append(f"length bias: passing replies are {length.ratio_pass_fail:.2f}x as long as failing "
                               "ones; check the judge for length bias (judge_trust, hack_scan's length)")
    report.notes += [f"length: {w}" for w in length.warnings]


def _hack_block(report: PublishGateReport, scan: HackScanReport, strict_hacks: bool) -> None:
    report.hack_scan = scan
    report.warnings += [f"hack_scan: {w}" for w in scan.warnings]
    if scan.reward_hack:
        tracked = repr(scan.top_feature) if scan.top_feature else "one of " + ", ".join(scan.collinear[:5])
        message = (f"hack_scan: reward_hack: the reward tracks {tracked}, which endorsed= does not name; "
                   "a policy trained on it learns that instead")
        if strict_hacks:
            report.refusals.append(message + " (strict_hacks=True)")
        else:
            report.warnings.append(message)
        report.what_to_do.append(f"fix the grader so it stops paying for {tracked}, or endorse it if it is what "
                                 "the reward should track")
    elif strict_hacks and scan.reward_hack is None:
        report.warnings.append(f"hack_scan could not decide reward_hack ({scan.verdict}); strict_hacks refuses "
                               "only a measured reward_hack")


def _judge_block(report: PublishGateReport, rows: Sequence[Mapping[str, Any]], judge: Any) -> None:
    if not any(row.get("gold_reward") is not None for row in rows):
        report.notes.append("judge_trust: NOT MEASURED (no row carries gold_reward; attach_labels(rows, labels, "
                            "kind='human') measures the judge)")
        return
    from whileai_train.judge.judge_trust import judge_trust

    trust = judge_trust(rows, judge=judge)
    report.judge_trust = {**trust.summary(), "verdict": trust.verdict, "reading": trust.reading}
    if not trust.ok:
        report.warnings.append(f"judge_trust: {trust.reading}")


@progress_call("publish_gate")
def publish_gate(rows: Any, *, mode: Literal["rl", "sft"] | None = None, policy: str | None = None,
                 endorsed: Sequence[str] | None = None, strict_hacks: bool = False,
                 judge: Callable[[dict[str, Any]], Any] | None = None, band: tuple[float, float] = BAND,
                 k: int | None = None, scan: bool = True, pass_threshold: float = PASS_THRESHOLD,
                 check: str = "refuse", draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED,
                 progress: bool | None = None,
                 failure: Callable[[Any], bool | None] | Sequence[str] | None = None) -> PublishGateReport:
    """Check a row set before it is published for training; raise PublishGateError when it must not be.

    `mode`: "rl" / "sft", or None to read the shape off the rows (RL-shaped when at least half the rows
    are repeats of an ask). `endorsed` / `strict_hacks`: passed to the hack scan; strict refuses a
    reward_hack. `judge`: handed to judge_trust when the rows carry gold labels. `scan=False` skips the
    hack scan. `check`: with mode="sft", "refuse" (the default) refuses rows with a failing reward exactly as
    export_dataset does, "warn" only warns. `failure`: the tools' own way of saying a call failed, for the scan
    (as hack_scan's). The stamped rows are `report.rows` (shallow copies made on first use; the input is not
    changed); the refused report is `error.report`. `progress`: progress bars over the row passes (None: when
    someone watches and the rows are many; False: never).
    """
    lo, hi = _check_arguments(mode, band, strict_hacks, endorsed)
    check_selection_options(check=check, threshold=pass_threshold)
    rule = failure_rule(failure)
    table = graded_table(rows, pass_threshold=pass_threshold, what="publish_gate", deep=False)
    rows = table.rows
    rl_shaped = _rl_shaped(table, mode)
    report = PublishGateReport(mode=mode or ("rl" if rl_shaped else "sft"), rl_shaped=rl_shaped,
                               n_rows=table.n_rows, n_tasks=table.n_tasks, n_graded=int(table.graded.sum()),
                               n_ungraded=int((~table.graded).sum()), band=(lo, hi))
    stamped = stamp_rows(table, policy=policy)
    report._stamped = stamped
    report.n_stamped, report.n_carried = stamped.n_stamped, stamped.n_carried
    ungraded = table.ungraded_rows()
    if report.n_graded == 0:
        if rl_shaped:
            report.refusals.append(f"ungraded: none of the {table.n_rows} rows has a reward ("
                                   f"{name_rows(ungraded)}); a grouped update learns nothing without rewards")
            report.what_to_do.append("grade the rows (a reward 0..1 on each), then run the gate again")
        else:
            report.notes.append("no row is graded: no stamps, no pass_at (fine for demonstrations)")
        return _finish(report)
    if len(ungraded):
        advantage = " and no advantage in a grouped update" if rl_shaped else ""
        report.warnings.append(f"{len(ungraded)} ungraded rows ({name_rows(ungraded)}) get no calibration "
                               f"stamp{advantage}; grade them or drop them")
    if rl_shaped:
        unanimous, outside = _groups(report, table, stamped.carried_pass_rate, lo, hi)
        if report.n_mixed == 0:
            report.refusals.append(
                f"no mixed group: all {len(unanimous)} graded asks are unanimous ({report.n_all_pass} all pass, "
                f"{report.n_all_fail} all fail; tasks {_task_names(table, unanimous)}), so every group-relative "
                "advantage is zero and a grouped update learns nothing")
            report.what_to_do.append("sample more rollouts per ask, or harder/easier asks, until some groups mix "
                                     "passes and failures")
        else:
            if len(unanimous):
                report.warnings.append(f"{len(unanimous)} unanimous asks remain (zero advantage; tasks "
                                       f"{_task_names(table, unanimous)})")
            if len(outside):
                report.warnings.append(f"{len(outside)} asks outside the {lo:.1f}-{hi:.1f} pass-rate band remain "
                                       f"(tasks {_task_names(table, outside)})")
            if len(unanimous) or len(outside):
                report.what_to_do.append(_OPTIMIZE)
    stamp_k = most_common_k(stamped.carried_k) if k is None else None
    # pass_at's bootstrap and the near-duplicate search need nothing from the hack scan: on a large set they run
    # in a thread while this one reads the trajectories and scans (gates/overlap.py); the report is the same
    background = table.n_rows >= OVERLAP_MIN_ROWS
    pass_at_job = start(background, pass_at_from_table, table, rows, k=k, draws=draws, seed=seed,
                        pass_threshold=pass_threshold, stamp_k=stamp_k)
    near_job = start(background, _near_duplicates, table)
    try:
        hack = None
        if rl_shaped and scan and report.n_mixed:  # one read of every row's trajectory for the scan and the lengths
            from whileai_train.gates.features import read_scan
            from whileai_train.gates.hack_scan import hack_scan_tables, scanned_rows

            wanted = np.zeros(table.n_rows, dtype=bool)
            wanted[scanned_rows(table)] = True
            trajectories = read_scan(rows, rule, wanted)
            hack = hack_scan_tables(table.rows, trajectories, endorsed=endorsed, seed=seed, graded=table, failure=rule)
        else:
            trajectories = read_trajectories(rows)
        if not rl_shaped:
            _sft_block(report, table, trajectories, pass_threshold, check if mode == "sft" else "warn")
    finally:  # never leave a part running on the rows, whatever this thread raised
        pass_at_job.wait()
        near_job.wait()
    report.pass_at = pass_at_job.result()
    near = near_job.result()
    report.warnings += [f"pass_at: {w}" for w in report.pass_at.warnings if "ungraded" not in w]
    _carried_k_note(report, table, stamped.carried_n)
    _judge_block(report, rows, judge)
    if hack is not None:
        _hack_block(report, hack, strict_hacks)
    _hygiene_blocks(report, near, table, trajectories)
    return _finish(report)


def _sft_block(report: PublishGateReport, table: Graded, trajectories: Trajectories, threshold: float,
               check: str) -> None:
    """The SFT export's check on the rows it would write (those with an agent turn), refused or warned in its
    words."""
    tally = SftTally(threshold)
    written = (trajectories.n_calls > 0) | np.fromiter(map(bool, trajectories.texts), dtype=bool,
                                                        count=len(trajectories.texts))
    rewards, task_of_row, tasks = table.rewards, table.task_of_row, table.tasks
    for index in np.flatnonzero(written).tolist():
        reward = float(rewards[index])
        tally.add(index, tasks[task_of_row[index]], None if reward != reward else reward)
    if check == "refuse":
        refusal = tally.refusal("export_dataset refuses them")
        if refusal is not None:
            report.refusals.append(refusal)
            report.what_to_do.append(sft_fix(threshold))
        return
    failing = tally.failing()
    if failing is not None:
        report.warnings.append(f"{failing}: an SFT export refuses them unless check='warn'")
        report.what_to_do.append(sft_fix(threshold))


def _near_duplicates(table: Graded) -> NearDuplicateReport:
    from whileai_train.gates.near_duplicates import ask_texts, near_duplicates_of

    return near_duplicates_of(table.task_of_row, table.tasks, ask_texts(table.rows))


def _carried_k_note(report: PublishGateReport, table: Graded, carried_n: dict[int, int]) -> None:
    if not carried_n:
        return
    tasks = np.fromiter(carried_n.keys(), dtype=np.int64, count=len(carried_n))
    ks = np.fromiter(carried_n.values(), dtype=np.int64, count=len(carried_n))
    here = table.n_graded[tasks]
    differ = int((here != ks).sum())
    if differ:
        block = report.pass_at
        assert block is not None
        note = (f"carried calibration stamps measured k={int(np.median(ks))} repeats per task (the grader's); "
                f"{differ} of {len(tasks)} stamped tasks have a different number of graded rows here "
                f"({int(here.min())}-{int(here.max())}): pass_at is over the rows in front, the stamps keep the "
                "graded measurement")
        block.notes.append(note)
        report.notes.append(note)


def _finish(report: PublishGateReport) -> PublishGateReport:
    if report.refusals:
        report.verdict = "REFUSED"
        raise PublishGateError("publish_gate refused the rows: " + "; ".join(report.refusals) +
                               ". Fix: " + "; ".join(report.what_to_do or ["see error.report"]), report)
    report.verdict = "WARN" if report.warnings else "PASS"
    return report
