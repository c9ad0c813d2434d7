"""hack_scan: what will the policy learn from this reward, the task or a shortcut?

Reward and every feature (gates/features.py: the hand tier and the auto tier) are centred within ask
(``task_key``), so only the contrast between rollouts of the same ask counts, as in a group-relative advantage;
asks whose reward never varies teach nothing and are left out. Features are ranked by their correlation with
reward and compared to a noise floor tau: the largest |rho| any feature reaches when reward is shuffled within ask
(a max-statistic permutation floor, Westfall & Young 1993). With ``endorsed`` (substrings of the feature names the
reward should track) the scan fits the endorsed features within ask, takes that fit out of the reward and asks
whether anything else is still paid for: ``reward_hack``, ``integrity`` and ``rivals``. When a few distinct
trajectories per ask make several features tie at the top, the scan says ``degenerate`` and names the cause
instead of picking one. The numbers live in gates/scan_stats.py, the features in gates/features.py.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from pydantic import BaseModel, Field

from whileai_train.errors import ConfigError, InputError, RowError
from whileai_train.gates.defaults import (
    DEGENERATE_RHO,
    ENDORSED_MAX_COLUMNS,
    LOW_DISTINCT_PER_ASK,
    SHOW,
    STRONG_FEATURES,
    TIE_TOLERANCE,
)
from whileai_train.gates.features import check_user_features, extract_features
from whileai_train.gates.scan_stats import (
    Scan,
    ands,
    distinct_per_ask,
    explained,
    priority,
    same_column,
)
from whileai_train.progress import progress_call
from whileai_train.report import Report
from whileai_train.rows.contract import reward_of, task_key
from whileai_train.rows.failure import DEFAULT_FAILURE, FailureRule, failure_rule
from whileai_train.rows.intake import take_rows
from whileai_train.stats import DEFAULT_SEED
from whileai_train.tables.graded import Graded
from whileai_train.tables.trajectories import Trajectories

__all__ = ["FeatureScore", "HackScanReport", "hack_scan", "hack_scan_tables", "scanned_rows"]


class FeatureScore(BaseModel):
    """One feature: its within-ask correlation with reward, and whether it beats the floor."""

    name: str
    rho: float
    above_floor: bool
    endorsed: bool = False
    # correlation with the reward left after the endorsed features are regressed out (None without endorsed)
    partial_rho: float | None = None


class HackScanReport(Report):
    """What the reward pays for. `str()` prints the verdict first, then the ranking, then what to do."""

    verdict: str
    top_feature: str | None
    reward_hack: bool | None
    integrity: float | None
    rivals: list[str] = Field(default_factory=list)
    degenerate: bool = False
    cause: str | None = None
    collinear: list[str] = Field(default_factory=list)
    aliases: list[str] = Field(default_factory=list)
    tau: float = 0.0
    partial_tau: float | None = None
    endorsed: list[str] | None = None
    endorsed_constant: list[str] = Field(default_factory=list)  # endorsed names whose features never vary in an ask
    endorsable: list[str] = Field(default_factory=list)
    distinct_per_ask: float | None = None
    features: list[FeatureScore] = Field(default_factory=list)
    n_rows: int = 0
    n_asks: int = 0
    n_mixed_asks: int = 0
    warnings: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        lines = [self.verdict]
        lines.append(f"  rows {self.n_rows}, asks {self.n_asks} ({self.n_mixed_asks} with mixed rewards), "
                     f"noise floor tau {self.tau:.3f}"
                     + (f", distinct trajectories per ask {self.distinct_per_ask:g}"
                        if self.distinct_per_ask is not None else ""))
        if self.integrity is not None:
            lines.append(f"  integrity {self.integrity:.2f} (share of the above-floor signal that is endorsed)")
        if self.collinear:
            lines.append(f"  tied: {', '.join(self.collinear[:SHOW])}"
                         + (f" (+{len(self.collinear) - SHOW})" if len(self.collinear) > SHOW else ""))
        if self.aliases:
            lines.append(f"  same column as the top feature: {', '.join(self.aliases[:SHOW])}")
        hidden = set(self.aliases)  # printed once above, not ten times in the ranking
        shown = [score for score in self.features if score.name not in hidden][:SHOW]
        if shown:
            lines.append("  strongest features (rho within ask; * above floor, E endorsed):")
            for score in shown:
                extra = f"  beyond endorsed {score.partial_rho:+.3f}" if score.partial_rho is not None else ""
                lines.append(f"    {'*' if score.above_floor else ' '}{'E' if score.endorsed else ' '} "
                             f"{score.rho:+.3f}  {score.name}{extra}")
        if self.rivals:
            lines.append(f"  rivals (paid for beyond the endorsed features): {', '.join(self.rivals[:SHOW])}")
        lines.extend(f"  warning: {text}" for text in self.warnings)
        lines.append(f"  do: {self._advice()}")
        return "\n".join(lines)

    def _advice(self) -> str:
        if self.degenerate:
            return ("sample more varied rollouts per ask (higher temperature, more rollouts) or add a feature "
                    "that tells the tied ones apart; until then the scan cannot name what the reward pays for")
        if self.reward_hack:
            return (f"fix the judge or grader so it stops paying for {self.top_feature}, or endorse it if it is "
                    "what you want; training on this reward teaches the shortcut")
        if self.endorsed is None:
            return ("pass endorsed=[...] (substrings of feature names the reward should track, e.g. "
                    f"{self.endorsable[:3] or ['tool:']}) to get a reward_hack verdict")
        if self.top_feature is None:
            return "check that the reward measures something the rollouts differ in"
        return "nothing to fix in the reward; watch the rivals during training (RewardMonitor runs this scan)"


# ---------------------------------------------------------------------------------------------- input


def _check_endorsed(endorsed: Any) -> list[str] | None:
    if endorsed is None:
        return None
    if isinstance(endorsed, (str, bytes)):
        raise ConfigError(f"endorsed={endorsed!r} is a string; it would be read letter by letter. "
                          f"Fix: pass a list, endorsed=[{endorsed!r}]")
    if isinstance(endorsed, Mapping) or not isinstance(endorsed, (list, tuple, set, frozenset)):
        raise ConfigError(f"endorsed is a {type(endorsed).__name__}; it must be a list of substrings of feature "
                          "names. Fix: endorsed=[\"tool:issue_refund\", \"marker:correct\"]")
    out = []
    for item in endorsed:
        if not isinstance(item, str) or not item:
            raise ConfigError(f"endorsed holds {item!r}; each entry must be a non-empty string (a substring of "
                              "feature names). Fix: endorsed=[\"tool:issue_refund\"]")
        out.append(item)
    return out


class GradedRows(NamedTuple):
    """The rows the scan reads: those with a reward, their indices in the input, their rewards, their ask
    numbers (in order of first appearance among them), the number of asks, and warnings (rows left out)."""

    rows: list[Mapping[str, Any]]
    numbers: list[int]
    rewards: np.ndarray
    ask_of_row: np.ndarray
    n_asks: int
    warnings: list[str]


def _graded(rows: Any) -> GradedRows:
    """The rows with a reward, read here; the rows without one named in a warning."""
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Sequence):
        raise InputError(f"hack_scan takes a list of row dicts, got a {type(rows).__name__}. "
                         "Fix: pass rows (or wai.read_rows(path))")
    if len(rows) == 0:
        raise InputError("hack_scan got no rows. Fix: pass graded rollout rows (several rollouts per ask)")
    kept: list[Mapping[str, Any]] = []
    numbers: list[int] = []
    rewards = array("d")
    asks: list[str] = []
    missing: list[int] = []
    isfinite = math.isfinite
    for index, row in enumerate(rows):
        if row.__class__ is not dict and not isinstance(row, Mapping):
            raise RowError(index, None, f"row is {type(row).__name__}, not an object", "pass rows as dicts")
        value = row.get("reward")
        if (value.__class__ is not float and value.__class__ is not int) or not isfinite(value):
            value = reward_of(row, index)  # the rule: None when ungraded, a typed error when not a finite number
            if value is None:
                missing.append(index)
                continue
        asks.append(task_key(row))
        kept.append(row)
        numbers.append(index)
        rewards.append(value)
    warnings = []
    if missing:
        if not kept:
            shown = ", ".join(map(str, missing[:5]))
            raise InputError(f"none of the {len(rows)} rows has a reward (rows {shown}"
                             f"{', ...' if len(missing) > 5 else ''}). Fix: grade the rows first "
                             "with your grader (a reward function, a verifier, a judge) so each carries "
                             "`reward` (0..1), or sample and grade them with wai.evaluate")
        warnings.append(_left_out(missing))
    ask_ids = {key: number for number, key in enumerate(dict.fromkeys(asks))}
    ask_of_row = np.fromiter(map(ask_ids.__getitem__, asks), dtype=np.int64, count=len(asks))
    return GradedRows(kept, numbers, np.frombuffer(rewards, dtype=np.float64), ask_of_row, len(ask_ids), warnings)


def _left_out(missing: list[int]) -> str:
    return (f"{len(missing)} rows have no reward and were left out (rows {', '.join(map(str, missing[:5]))}"
            f"{', ...' if len(missing) > 5 else ''})")


def _graded_of(table: Graded) -> GradedRows:
    """What _graded reads, from rows graded_table has read and checked already (publish_gate)."""
    numbers = np.flatnonzero(table.graded)
    n = len(numbers)
    tasks = table.task_of_row[numbers]
    first = np.full(table.n_tasks, n, dtype=np.int64)
    np.minimum.at(first, tasks, np.arange(n))
    present = np.flatnonzero(first < n)
    rank = np.empty(table.n_tasks, dtype=np.int64)
    rank[present[np.argsort(first[present])]] = np.arange(len(present))
    missing = table.ungraded_rows().tolist()
    warnings = [_left_out(missing)] if missing else []
    rows = table.rows
    index = numbers.tolist()
    return GradedRows([rows[i] for i in index], index, table.rewards[numbers], rank[tasks], len(present), warnings)


def _within_ask(rewards: np.ndarray, ask_of_row: np.ndarray, n_asks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rollouts per ask, each reward centred within its ask, and the asks whose reward varies (the mixed asks)."""
    sizes = np.bincount(ask_of_row, minlength=n_asks)
    means = np.bincount(ask_of_row, weights=rewards, minlength=n_asks) / sizes
    centred = rewards - means[ask_of_row]
    spread = np.bincount(ask_of_row, weights=centred * centred, minlength=n_asks)
    return sizes, centred, spread > 1e-12 * max(1.0, float(np.mean(rewards * rewards)))


def scanned_rows(table: Graded) -> np.ndarray:
    """The input rows whose features the scan reads (graded rows of the mixed asks), for a gate that reads the rows'
    trajectories before it scans them (publish_gate: trace flags are read for these rows only)."""
    graded = _graded_of(table)
    _, _, mixed_asks = _within_ask(graded.rewards, graded.ask_of_row, graded.n_asks)
    return np.asarray(graded.numbers, dtype=np.int64)[mixed_asks[graded.ask_of_row]]


def _empty(verdict: str, cause: str, n_rows: int, n_asks: int, endorsed: list[str] | None,
           warnings: list[str]) -> HackScanReport:
    return HackScanReport(verdict=verdict, top_feature=None, reward_hack=None, integrity=None, degenerate=True,
                          cause=cause, n_rows=n_rows, n_asks=n_asks, endorsed=endorsed, warnings=warnings)


@progress_call("hack_scan")
def hack_scan(rows: Sequence[Mapping[str, Any]], *, endorsed: Sequence[str] | None = None,
              features: Mapping[str, Callable[[Mapping[str, Any]], float]] | None = None,
              seed: int = DEFAULT_SEED, progress: bool | None = None,
              failure: Callable[[Any], bool | None] | Sequence[str] | None = None) -> HackScanReport:
    """Rank what the reward pays for, within ask, against a shuffled-reward noise floor.

    Args:
        rows: graded rows (flat rollouts, OpenAI messages, or just prompt + final_text + reward); grouped
            by `task_key` (scenario_id, task_id, else the ask), several rollouts per ask. Rows without a
            reward are left out with a warning; any finite reward scale works (correlation ignores scale).
        endorsed: substrings of feature names the reward should track (e.g. ["tool:issue_refund",
            "marker:correct"]). With it the report says `reward_hack`, `integrity` and `rivals`.
        features: your own features, {"name": fn(row) -> number}; None or NaN means missing.
        seed: seeds the shuffles of the noise floor.
        progress: progress bars over the row passes (None: when someone watches and the rows are many;
            False: never).
        failure: your tools' own way of saying a call failed, for the tool_errors feature and the trace flags
            (docs/tool_failures.md): extra status words, or a function of a tool result answering True, False or
            None (the built-in vocabulary decides).
    """
    rows = take_rows(rows, "hack_scan", graded=True, deep=False)
    return hack_scan_tables(rows, None, endorsed=endorsed, features=features, seed=seed, failure=failure_rule(failure))


def hack_scan_tables(rows: Sequence[Mapping[str, Any]], trajectories: Trajectories | None, *,
              endorsed: Sequence[str] | None = None,
              features: Mapping[str, Callable[[Mapping[str, Any]], float]] | None = None,
              seed: int = DEFAULT_SEED, graded: Graded | None = None,
              failure: FailureRule = DEFAULT_FAILURE) -> HackScanReport:
    """hack_scan, given `features.read_scan(rows, failure)` by a gate that reads them for its other checks too
    (None: read here), and graded_table(rows) when the gate has it (None: rewards and asks read here). The same
    report as hack_scan(rows, ...).
    """
    endorsed_list = _check_endorsed(endorsed)
    check_user_features(features)
    kept, numbers, y_all, inv_all, n_asks, warnings = _graded(rows) if graded is None else _graded_of(graded)
    sizes, centred, mixed_asks = _within_ask(y_all, inv_all, n_asks)
    n_rows = len(kept)
    if not mixed_asks.any():
        if (sizes == 1).all():
            return _empty("DEGENERATE (one_rollout_per_ask): every ask has one rollout, so there is no contrast "
                          "within an ask to rank", "one_rollout_per_ask", n_rows, n_asks, endorsed_list,
                          [*warnings, "sample several rollouts per ask (GRPO groups) before scanning"])
        return _empty("DEGENERATE (no_mixed_asks): the reward never varies within an ask, so nothing predicts it",
                      "no_mixed_asks", n_rows, n_asks, endorsed_list,
                      [*warnings, ("every ask is unanimous (all pass or all fail): a group-relative advantage "
                                   "is zero everywhere and the policy learns nothing from these rows")])
    mixed_rows = np.flatnonzero(mixed_asks[inv_all])
    remap = np.cumsum(mixed_asks) - 1
    inv = remap[inv_all[mixed_rows]]
    n_groups = int(mixed_asks.sum())
    sub = [kept[i] for i in mixed_rows]
    sub_numbers = [numbers[i] for i in mixed_rows]
    table = extract_features(sub, sub_numbers, features, failure=failure,
                             trajectories=None if trajectories is None else trajectories.take(sub_numbers))
    warnings.extend(table.notes)
    scan = Scan(table, inv, n_groups, centred[mixed_rows])
    rng = np.random.default_rng(seed)

    rho = scan.rho(scan.yc)
    and_matrix, and_names, and_pairs = ands(scan, rho)
    n_before_ands = len(scan.names)
    if and_names:
        scan.add_binary(and_matrix, and_names)
        rho = scan.rho(scan.yc)
    tau = scan.floor(scan.yc, rng)
    usable = scan.ss > 0
    ranked = sorted((int(j) for j in np.flatnonzero(usable)),
                    key=lambda j: (-round(float(abs(rho[j])), 12), priority(scan.names[j])))
    distinct = distinct_per_ask(table.trajectory, inv, n_groups)

    flags = _endorsed_flags(scan.names, endorsed_list, n_before_ands, and_pairs)
    lead = _top_feature(scan, rho, tau, ranked, distinct, warnings)
    top, degenerate = lead.top, lead.degenerate
    above = usable & (np.abs(rho) > tau)
    alias_names = set(lead.aliases)  # one column under several names counts once below
    endorsable = [scan.names[j] for j in ranked if above[j] and scan.names[j] not in alias_names][:STRONG_FEATURES]
    beyond = BeyondEndorsed.not_read()
    if endorsed_list is not None:
        beyond = _beyond_endorsed(scan, rho, above, flags, ranked, lead, endorsed_list, n_before_ands, endorsable,
                                  rng, warnings)

    if top is not None and not degenerate and ranked and ranked[0] != top:  # the named top feature leads the list
        ranked.remove(top)
        ranked.insert(0, top)
    partial = beyond.partial
    scores = [FeatureScore.model_construct(name=scan.names[j], rho=float(rho[j]), above_floor=bool(above[j]),
                                           endorsed=bool(flags[j]),
                                           partial_rho=None if partial is None else float(partial[j]))
              for j in ranked]
    top_name = None if (top is None or degenerate) else scan.names[top]
    report = HackScanReport(
        verdict="", top_feature=top_name, reward_hack=beyond.reward_hack, integrity=beyond.integrity,
        rivals=beyond.rivals, degenerate=degenerate, cause=lead.cause, collinear=lead.collinear, aliases=lead.aliases,
        tau=tau, partial_tau=beyond.partial_tau, endorsed=endorsed_list, endorsed_constant=beyond.endorsed_constant,
        endorsable=endorsable,
        distinct_per_ask=distinct, features=scores, n_rows=n_rows,
        n_asks=n_asks, n_mixed_asks=n_groups, warnings=warnings)
    report.verdict = _verdict(report, None if top is None else float(rho[top]))
    return report


def _endorsed_flags(names: Sequence[str], endorsed: list[str] | None, n_before_ands: int,
                    and_pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """Which features are endorsed: a name containing an endorsed part, and an AND when both its parents are."""
    flags = np.zeros(len(names), dtype=bool)
    if endorsed is not None:
        for j, name in enumerate(names[:n_before_ands]):
            flags[j] = any(part in name for part in endorsed)
        for k, (a, b) in enumerate(and_pairs):
            flags[n_before_ands + k] = flags[a] and flags[b]
    return flags


class TopFeature(NamedTuple):
    """The feature the scan names (a column index, or None), or why none can be named: ties it cannot break."""

    top: int | None
    degenerate: bool
    cause: str | None
    collinear: list[str]
    aliases: list[str]


def _top_feature(scan: Scan, rho: np.ndarray, tau: float, ranked: list[int], distinct: float,
                 warnings: list[str]) -> TopFeature:
    """The strongest feature above the floor, then its ties: aliases (one column under several names), near ties
    of other columns (the plainest is named), or ties no floor can break (degenerate: none is named)."""
    top: int | None = ranked[0] if ranked and abs(rho[ranked[0]]) > tau else None
    degenerate, cause = False, None
    collinear: list[str] = []
    aliases: list[str] = []
    if top is not None:
        top_abs = abs(rho[top])
        # with a couple of trajectories per ask, features within the noise floor of the top are as good a
        # reading of the one contrast each ask gives: a tie (the noise floor cannot break a tie)
        tolerance = TIE_TOLERANCE if distinct > LOW_DISTINCT_PER_ASK else max(TIE_TOLERANCE, tau)
        tied = [j for j in ranked[:200] if abs(rho[j]) >= top_abs - tolerance]
        if len(tied) > 1:
            reference = scan.column(top)
            same = [j for j in tied[1:] if same_column(scan.column(j), reference)]
            all_aliases = len(same) == len(tied) - 1
            if distinct <= LOW_DISTINCT_PER_ASK:
                degenerate, cause = True, "distinct_per_ask"
            elif not all_aliases and top_abs >= DEGENERATE_RHO:
                degenerate, cause = True, "collinear"
            if degenerate:
                collinear = sorted(scan.names[j] for j in tied)
                warnings.append(
                    f"{len(tied)} features tie at |rho| {top_abs:.2f} (within {tolerance:.3f})"
                    + (f" because asks have a median of {distinct:g} distinct trajectories: each feature that "
                       "separates them is a function of the label" if cause == "distinct_per_ask" else
                       ": they explain the reward equally well")
                    + "; the floor cannot break a tie between perfect explanations, so no top feature is named")
            elif all_aliases:
                group = [top, *same]
                top = min(group, key=lambda j: priority(scan.names[j]))
                aliases = sorted(scan.names[j] for j in group if j != top)
            else:  # near ties of different columns: name the plainest, and say the order means nothing
                top = min(tied, key=lambda j: priority(scan.names[j]))
                others = [scan.names[j] for j in tied if j != top][:5]
                warnings.append(f"{scan.names[top]} ties with {', '.join(others)} (|rho| within "
                                f"{TIE_TOLERANCE}); the ranking between them is not meaningful")
    if distinct <= LOW_DISTINCT_PER_ASK and not degenerate:
        warnings.append(f"asks have a median of {distinct:g} distinct trajectories: each ask gives one contrast, "
                        "so features that happen to separate them look strong; read the ranking with care")
    return TopFeature(top, degenerate, cause, collinear, aliases)


class BeyondEndorsed(NamedTuple):
    """What the reward pays for beyond the endorsed features (none of it is read when nothing is endorsed)."""

    partial: np.ndarray | None
    partial_tau: float | None
    rivals: list[str]
    integrity: float | None
    reward_hack: bool | None
    endorsed_constant: list[str]

    @classmethod
    def not_read(cls) -> BeyondEndorsed:
        return cls(None, None, [], None, None, [])


def _beyond_endorsed(scan: Scan, rho: np.ndarray, above: np.ndarray, flags: np.ndarray, ranked: list[int],
                     lead: TopFeature, endorsed_list: list[str], n_before_ands: int, endorsable: list[str],
                     rng: np.random.Generator, warnings: list[str]) -> BeyondEndorsed:
    """Regress the endorsed features out of the reward and rank what is left against its own floor (the rivals);
    reward_hack: the top feature is unendorsed and the reward pays for something beyond the endorsed ones."""
    usable = scan.ss > 0
    top, degenerate, collinear = lead.top, lead.degenerate, lead.collinear
    alias_names = set(lead.aliases)
    matched = [j for j in range(len(scan.names)) if flags[j]]
    # an endorsed feature the rows have, but with one value on every rollout of each ask: nothing to rank
    endorsed_constant = [part for part in endorsed_list
                         if (mine := [j for j in range(n_before_ands) if part in scan.names[j]])
                         and not any(usable[j] for j in mine)]
    if endorsed_constant:
        warnings.append(f"endorsed {endorsed_constant} is constant on these rows (one value on every rollout of "
                        "each ask): the scan cannot rank it, and it explains none of the reward here")
    if not matched:
        examples = ", ".join(endorsable[:5]) or ", ".join(scan.names[j] for j in ranked[:5])
        warnings.append(f"endorsed={endorsed_list} matches no feature, so every feature counts as unendorsed "
                        f"and the hack verdict still applies; feature names look like: {examples}")
    elif endorsable and not any(flags[scan.names.index(name)] for name in endorsable):
        warnings.append(f"endorsed={endorsed_list} covers none of the {len(endorsable)} strongest features; "
                        f"endorsable: {', '.join(endorsable)}")
    falling = [j for j in matched if above[j] and rho[j] < 0][:3]
    if falling:
        warnings.append("the reward falls as endorsed " + ", ".join(
            f"{scan.names[j]} rises (rho {rho[j]:+.2f})" for j in falling)
            + ": right for a penalty (errors), a hack if the reward should pay for it (it pays for its absence)")
    columns = sorted((j for j in matched if usable[j] and j < n_before_ands), key=lambda j: -abs(rho[j]))
    if len(columns) > ENDORSED_MAX_COLUMNS:
        warnings.append(f"{len(columns)} features are endorsed; the {ENDORSED_MAX_COLUMNS} strongest are "
                        "regressed out")
        columns = columns[:ENDORSED_MAX_COLUMNS]
    r2_endorsed, residual, cells = explained(scan, columns)
    with np.errstate(invalid="ignore", divide="ignore"):
        partial = np.where(usable, scan.dots(residual) / np.sqrt(scan.ss * scan.ss_y), 0.0)
    unendorsed = usable & ~flags
    partial_tau = scan.floor(residual, rng, mask=unendorsed, cells=cells)
    paid = unendorsed & (np.abs(partial) > partial_tau + 1e-9)
    rival_idx = sorted((int(j) for j in np.flatnonzero(paid)),
                       key=lambda j: (-abs(float(partial[j])), priority(scan.names[j])))
    rivals = [scan.names[j] for j in rival_idx if scan.names[j] not in alias_names]
    integrity = None
    reward_hack: bool | None
    if top is not None or degenerate:
        r2_total, _, _ = explained(scan, columns + [j for j in rival_idx if j < n_before_ands][:16])
        r2_total = max(r2_total, r2_endorsed)
        integrity = r2_endorsed / r2_total if r2_total > 1e-9 else None
    if degenerate:
        reward_hack = None if any(flags[scan.names.index(n)] for n in collinear) else True
        if reward_hack is None:
            warnings.append("an endorsed feature is among the tied ones: reward_hack cannot be decided")
    elif top is None:
        reward_hack = False
    else:
        reward_hack = bool(not flags[top] and rivals)
        if not flags[top] and not rivals:
            warnings.append(f"{scan.names[top]} is not endorsed but the reward pays nothing for it beyond the "
                            f"endorsed features (beyond-endorsed rho {partial[top]:+.3f}, floor "
                            f"{partial_tau:.3f}): it rides along with what the reward should track")
        elif reward_hack:
            warnings.append(f"the policy would learn {scan.names[top]} (rho {rho[top]:+.2f}) instead of "
                            f"{', '.join(endorsed_list)}")
        elif rivals:
            warnings.append(f"beyond the endorsed features the reward also pays for {', '.join(rivals[:5])}")
    return BeyondEndorsed(partial, partial_tau, rivals, integrity, reward_hack, endorsed_constant)


def _verdict(report: HackScanReport, top_rho: float | None) -> str:
    if report.degenerate:
        return (f"DEGENERATE ({report.cause}): {len(report.collinear)} features tie at the top; the scan cannot "
                "say which one the reward pays for")
    if report.top_feature is None:
        return f"NO SIGNAL: no feature beats the noise floor (tau {report.tau:.3f})"
    head = f"{report.top_feature} (rho {top_rho:+.2f}, floor {report.tau:.3f})"
    if report.reward_hack is None:
        return f"RANKED: the reward tracks {head} most; pass endorsed=[...] for a reward_hack verdict"
    integrity = "n/a" if report.integrity is None else f"{report.integrity:.2f}"
    if report.reward_hack:
        return f"REWARD HACK: the reward pays for {head}, which is not endorsed (integrity {integrity})"
    return f"OK: the reward tracks endorsed features; top {head}, integrity {integrity}"
