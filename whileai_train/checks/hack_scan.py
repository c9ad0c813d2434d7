"""hack_scan: what will the policy learn from this reward, the task or a shortcut?

Reward and every feature (checks/features.py: the hand tier and the auto tier) are centred within ask
(``task_key``), so only the contrast between rollouts of the same ask counts, as in a group-relative advantage;
asks whose reward never varies teach nothing and are left out. Features are ranked by their correlation with
reward and compared to a noise floor tau: the largest |rho| any feature reaches when reward is shuffled within ask
(a max-statistic permutation floor, Westfall & Young 1993). With ``endorsed`` (substrings of the feature names the
reward should track) the scan regresses the endorsed features out of the reward and asks whether anything else is
still paid for: ``reward_hack``, ``integrity`` and ``rivals``. When a few distinct trajectories per ask make several
features tie at the top, the scan says ``degenerate`` and names the cause instead of picking one.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel, Field

from whileai_train.checks.defaults import (
    AND_PARENTS,
    AND_REDUNDANT,
    DEGENERATE_RHO,
    DISCRETE_VALUES,
    ENDORSED_MAX_COLUMNS,
    LOW_DISTINCT_PER_ASK,
    SHOW,
    SHUFFLES,
    STRONG_FEATURES,
    TIE_TOLERANCE,
)
from whileai_train.checks.features import FeatureTable, extract_features, vector_dot
from whileai_train.errors import ConfigError, InputError, RowError
from whileai_train.rows import task_key

__all__ = ["FeatureScore", "HackScanReport", "hack_scan"]

_EPS = 1e-12


class FeatureScore(BaseModel):
    """One feature: its within-ask correlation with reward, and whether it beats the floor."""

    name: str
    rho: float
    above_floor: bool
    endorsed: bool = False
    # correlation with the reward left after the endorsed features are regressed out (None without endorsed)
    partial_rho: float | None = None


class HackScanReport(BaseModel):
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
        shown = self.features[:SHOW]
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


def _graded(rows: Any) -> tuple[list[Mapping[str, Any]], list[int], np.ndarray, list[str], list[str]]:
    """Rows with a reward (and their indices), the rewards, their asks, and a warning naming rows without one."""
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
            if value is None:
                missing.append(index)
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise RowError(index, "reward", f"reward is {type(value).__name__} {value!r}, not a number",
                               "write the grader's score as a number, or null when the row is ungraded")
            if not isfinite(value):
                raise RowError(index, "reward", f"reward is {value}",
                               "grade the row again, or set reward to null to leave it out")
        key = row.get("scenario_id")
        asks.append(key if key.__class__ is str and key else task_key(row))
        kept.append(row)
        numbers.append(index)
        rewards.append(value)
    warnings = []
    if missing:
        if not kept:
            shown = ", ".join(map(str, missing[:5]))
            raise InputError(f"none of the {len(rows)} rows has a reward (rows {shown}"
                             f"{', ...' if len(missing) > 5 else ''}). Fix: grade the rows first "
                             "(wai.grade / run_judge) so each carries `reward`")
        warnings.append(f"{len(missing)} rows have no reward and were left out (rows "
                        f"{', '.join(map(str, missing[:5]))}{', ...' if len(missing) > 5 else ''})")
    return kept, numbers, np.frombuffer(rewards, dtype=np.float64), asks, warnings


# ---------------------------------------------------------------------------------------------- numbers


def _center_dense(dense: np.ndarray, inv: np.ndarray, n_groups: int) -> np.ndarray:
    """Each column minus its ask mean over present values; a missing value centres to 0 (carries no contrast)."""
    out = np.empty_like(dense)
    for j in range(dense.shape[1]):
        x = dense[:, j]
        present = np.isfinite(x)
        values = np.where(present, x, 0.0)
        counts = np.bincount(inv, weights=present, minlength=n_groups)
        means = np.bincount(inv, weights=values, minlength=n_groups) / np.maximum(counts, 1.0)
        out[:, j] = np.where(present, x - means[inv], 0.0)
    return out


def _binary_ss(binary: sp.csr_matrix, groups: sp.csr_matrix, sizes: np.ndarray) -> np.ndarray:
    """Within-ask sum of squares of 0/1 columns: sum(x) - sum over asks of count^2 / size."""
    if binary.shape[1] == 0:
        return np.zeros(0)
    per_ask = (groups.T @ binary).tocsr()
    per_ask.data **= 2
    between = np.asarray(per_ask.T @ (1.0 / sizes)).ravel()
    return np.asarray(binary.sum(axis=0)).ravel() - between


def _shuffled(values: np.ndarray, inv: np.ndarray, order: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """`values` permuted within each ask (rows of an ask swap values among themselves only).

    Sorting ask + U(0,1) lists the rows ask by ask in random order; `order` lists them ask by ask in their own
    order; the two blocks of each ask have the same size, so pairing them up permutes within asks.
    """
    perm = np.argsort(inv + rng.random(len(inv)))
    out = np.empty_like(values)
    out[order] = values[perm]
    return out


class _Scan:
    """The centred matrices of one scan and the products every statistic needs."""

    def __init__(self, table: FeatureTable, inv: np.ndarray, n_groups: int, yc: np.ndarray) -> None:
        self.inv, self.n_groups = inv, n_groups
        self.sizes = np.bincount(inv, minlength=n_groups).astype(np.float64)
        n = len(inv)
        self.groups = sp.csr_matrix((np.ones(n), (np.arange(n), inv)), shape=(n, n_groups))
        self.table_dense = table.dense
        self.dense = _center_dense(table.dense, inv, n_groups)
        self.binary = table.binary
        self.names = list(table.dense_names) + list(table.binary_names)
        self.n_dense = len(table.dense_names)
        ss = np.concatenate([(self.dense ** 2).sum(axis=0), _binary_ss(table.binary, self.groups, self.sizes)])
        self.ss = np.where(ss > 1e-9, ss, 0.0)
        self.yc = yc
        self.ss_y = vector_dot(yc, yc)
        self.order = np.argsort(inv, kind="stable")
        self._csc: sp.csc_matrix | None = None

    def dots(self, y: np.ndarray) -> np.ndarray:
        """x . y for every feature column (centring x is not needed when y sums to 0 within each ask).

        `y` is one vector (-> one value per feature) or n x m (-> features x m)."""
        out = np.concatenate([self.dense.T @ y, np.asarray(self.binary.T @ y)])
        return out.ravel() if y.ndim == 1 else out

    def rho(self, y: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            out = self.dots(y) / np.sqrt(self.ss * self.ss_y)
        return np.where(self.ss > 0, out, 0.0)

    def add_binary(self, columns: sp.csr_matrix, names: list[str]) -> None:
        self.binary = sp.hstack([self.binary, columns], format="csr")
        self.names += names
        ss = _binary_ss(columns, self.groups, self.sizes)
        self.ss = np.concatenate([self.ss, np.where(ss > 1e-9, ss, 0.0)])

    def column(self, j: int) -> np.ndarray:
        """Feature j centred within ask (for alias checks and least squares)."""
        if j < self.n_dense:
            return self.dense[:, j]
        if self._csc is None or self._csc.shape != self.binary.shape:
            self._csc = self.binary.tocsc()
        x = self._csc[:, j - self.n_dense].toarray().ravel()
        means = np.bincount(self.inv, weights=x, minlength=self.n_groups) / self.sizes
        return x - means[self.inv]

    def raw(self, j: int) -> np.ndarray:
        """Feature j as read (not centred); NaN where missing."""
        if j < self.n_dense:
            return self.table_dense[:, j]
        if self._csc is None or self._csc.shape != self.binary.shape:
            self._csc = self.binary.tocsc()
        return self._csc[:, j - self.n_dense].toarray().ravel()

    def floor(self, y: np.ndarray, rng: np.random.Generator, mask: np.ndarray | None = None,
              cells: np.ndarray | None = None) -> float:
        """Largest |x . y_shuffled| / sqrt(ss_x ss_y) over features (in `mask`) and SHUFFLES shuffles.

        `y` is shuffled within ask, or within `cells` (finer groups) when given."""
        usable = self.ss > 0 if mask is None else (self.ss > 0) & mask
        groups = self.inv if cells is None else cells
        order = self.order if cells is None else np.argsort(cells, kind="stable")
        if not usable.any() or self.ss_y <= _EPS:
            return 0.0
        scale = np.sqrt(self.ss[usable] * self.ss_y)[:, None]
        best = 0.0
        for start in range(0, SHUFFLES, 10):  # ten shuffles per sparse product (one pass over the matrix)
            batch = np.column_stack([_shuffled(y, groups, order, rng)
                                     for _ in range(min(10, SHUFFLES - start))])
            best = max(best, float(np.max(np.abs(self.dots(batch)[usable] / scale))))
        return best


def _ands(scan: _Scan, rho: np.ndarray) -> tuple[sp.csr_matrix, list[str], list[tuple[int, int]]]:
    """ANDs of the strongest 0/1 features whose |rho| beats both parents' (the interactions nobody listed)."""
    first = scan.n_dense
    strength = np.abs(rho[first:])
    strength[scan.ss[first:] <= 0] = 0.0
    parents = [first + j for j in np.argsort(-strength, kind="stable")[:AND_PARENTS] if strength[j] > 0]
    if len(parents) < 2:
        return sp.csr_matrix((len(scan.inv), 0)), [], []
    if scan._csc is None or scan._csc.shape != scan.binary.shape:
        scan._csc = scan.binary.tocsc()
    block = scan._csc[:, [p - first for p in parents]].toarray()
    column_counts = block.sum(axis=0)
    found: list[tuple[int, int]] = []
    for a in range(len(parents) - 1):
        both = block[:, a + 1:] * block[:, a:a + 1]  # AND of parent a with every later parent
        counts = both.sum(axis=0)
        per_ask = np.asarray(scan.groups.T @ both)
        ss = counts - (per_ask * per_ask / scan.sizes[:, None]).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            value = (scan.yc @ both) / np.sqrt(ss * scan.ss_y)
        for offset in range(len(counts)):
            b = a + 1 + offset
            if counts[offset] in (0, column_counts[a], column_counts[b]) or ss[offset] <= 1e-9:
                continue  # empty, or the same column as a parent: cannot beat it
            if abs(value[offset]) > max(abs(rho[parents[a]]), abs(rho[parents[b]])) + TIE_TOLERANCE:
                found.append((a, b))
    if not found:
        return sp.csr_matrix((len(scan.inv), 0)), [], []
    # an AND that is (almost) a feature we already have, e.g. two adjacent words = their pair, adds a name, not a
    # finding: keep only ANDs unlike every one of the strongest existing features
    existing = [scan.column(j) for j in np.argsort(-np.abs(np.where(scan.ss > 0, rho, 0.0)), kind="stable")[:AND_PARENTS]]
    novel = []
    for a, b in found:
        column = block[:, a] * block[:, b]
        centred = column - (np.bincount(scan.inv, weights=column, minlength=scan.n_groups) / scan.sizes)[scan.inv]
        if not any(_similar(centred, other, AND_REDUNDANT) for other in existing):
            novel.append((a, b))
    found = novel
    if not found:
        return sp.csr_matrix((len(scan.inv), 0)), [], []
    matrix = sp.csr_matrix(np.column_stack([block[:, a] * block[:, b] for a, b in found]))
    names = [f"{scan.names[parents[a]]} & {scan.names[parents[b]]}" for a, b in found]
    return matrix, names, [(parents[a], parents[b]) for a, b in found]


def _distinct_per_ask(trajectory: np.ndarray, inv: np.ndarray, n_groups: int) -> float:
    order = np.lexsort((trajectory, inv))
    g, t = inv[order], trajectory[order]
    new = np.ones(len(g), dtype=bool)
    new[1:] = (g[1:] != g[:-1]) | (t[1:] != t[:-1])
    return float(np.median(np.bincount(g[new], minlength=n_groups)))


def _explained(scan: _Scan, columns: list[int]) -> tuple[float, np.ndarray, np.ndarray]:
    """How much of the within-ask reward `columns` explain: R^2, the residual, and the cells it is centred in.

    Discrete columns (indicators, counts, graded markers: at most DISCRETE_VALUES distinct values) split each ask
    into cells of rollouts that look the same on them, and the reward is centred within cell, so a tool that is
    right for one ask and wrong for another is fitted per ask, not by one global slope. Continuous columns
    (length, logprob) are then fitted by least squares within cell (a fixed-effects regression).
    """
    cells = scan.inv.astype(np.uint64)
    continuous = []
    for j in columns:
        values = scan.raw(j)
        distinct = np.unique(values[np.isfinite(values)])
        if len(distinct) <= DISCRETE_VALUES:
            code = np.searchsorted(distinct, np.where(np.isfinite(values), values, distinct[0] if len(distinct)
                                                      else 0.0)).astype(np.uint64) + np.isnan(values) * np.uint64(1 << 20)
            cells = cells * np.uint64(0x9E3779B97F4A7C15) + code  # mix (wraps; a collision merges two cells)
        else:
            continuous.append(j)
    _, cell = np.unique(cells, return_inverse=True)
    cell = cell.ravel()
    n_cells = int(cell.max()) + 1 if len(cell) else 0
    sizes = np.bincount(cell, minlength=n_cells)
    residual = scan.yc - (np.bincount(cell, weights=scan.yc, minlength=n_cells) / sizes)[cell]
    if continuous:
        design = np.column_stack([scan.raw(j) for j in continuous])
        design = np.where(np.isfinite(design), design, 0.0)
        design = design - (np.stack([np.bincount(cell, weights=design[:, k], minlength=n_cells)
                                     for k in range(design.shape[1])], axis=1) / sizes[:, None])[cell]
        coef, *_ = np.linalg.lstsq(design, residual, rcond=None)
        residual = residual - design @ coef
    if scan.ss_y <= _EPS:
        return 0.0, residual, cell
    return max(0.0, 1.0 - vector_dot(residual, residual) / scan.ss_y), residual, cell


def _priority(name: str) -> tuple[int, int]:
    """Which of several same-column features names the group: hand tier, then pairs, words, ANDs; longer first."""
    if " & " in name:
        rank = 3
    elif name.startswith("word:"):
        rank = 2
    elif name.startswith("pair:"):
        rank = 1
    else:
        rank = 0
    return rank, -len(name)


def _similar(a: np.ndarray, b: np.ndarray, level: float) -> bool:
    """|corr| of two centred columns is at least `level`."""
    norm = math.sqrt(vector_dot(a, a) * vector_dot(b, b))
    return norm > 0 and abs(vector_dot(a, b)) / norm >= level


def _same_column(a: np.ndarray, b: np.ndarray) -> bool:
    """The two centred columns are one up to scale and sign (|corr| = 1): the same explanation twice."""
    return _similar(a, b, 1.0 - 1e-9)


def _empty(verdict: str, cause: str, n_rows: int, n_asks: int, endorsed: list[str] | None,
           warnings: list[str]) -> HackScanReport:
    return HackScanReport(verdict=verdict, top_feature=None, reward_hack=None, integrity=None, degenerate=True,
                          cause=cause, n_rows=n_rows, n_asks=n_asks, endorsed=endorsed, warnings=warnings)


def hack_scan(rows: Sequence[Mapping[str, Any]], *, endorsed: Sequence[str] | None = None,
              features: Mapping[str, Callable[[Mapping[str, Any]], float]] | None = None,
              seed: int = 0) -> HackScanReport:
    """Rank what the reward pays for, within ask, against a shuffled-reward noise floor.

    Args:
        rows: graded rows (flat rollouts, OpenAI messages, or just prompt + final_text + reward); grouped
            by `task_key` (scenario_id, task_id, else prompt), several rollouts per ask. Rows without a
            reward are left out with a warning; any finite reward scale works (correlation ignores scale).
        endorsed: substrings of feature names the reward should track (e.g. ["tool:issue_refund",
            "marker:correct"]). With it the report says `reward_hack`, `integrity` and `rivals`.
        features: your own features, {"name": fn(row) -> number}; None or NaN means missing.
        seed: seeds the shuffles of the noise floor.
    """
    endorsed_list = _check_endorsed(endorsed)
    kept, numbers, y_all, asks, warnings = _graded(rows)
    ask_ids: dict[str, int] = {}
    inv_all = np.fromiter((ask_ids.setdefault(key, len(ask_ids)) for key in asks), dtype=np.int64, count=len(asks))
    n_asks = len(ask_ids)
    sizes = np.bincount(inv_all, minlength=n_asks)
    means = np.bincount(inv_all, weights=y_all, minlength=n_asks) / sizes
    centred = y_all - means[inv_all]
    spread = np.bincount(inv_all, weights=centred * centred, minlength=n_asks)
    mixed_asks = spread > 1e-12 * max(1.0, float(np.mean(y_all * y_all)))
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
    table = extract_features(sub, [numbers[i] for i in mixed_rows], features)
    warnings.extend(table.notes)
    scan = _Scan(table, inv, n_groups, centred[mixed_rows])
    rng = np.random.default_rng(seed)

    rho = scan.rho(scan.yc)
    and_matrix, and_names, and_pairs = _ands(scan, rho)
    n_before_ands = len(scan.names)
    if and_names:
        scan.add_binary(and_matrix, and_names)
        rho = scan.rho(scan.yc)
    tau = scan.floor(scan.yc, rng)
    usable = scan.ss > 0
    ranked = sorted((int(j) for j in np.flatnonzero(usable)),
                    key=lambda j: (-round(float(abs(rho[j])), 12), _priority(scan.names[j])))
    distinct = _distinct_per_ask(table.trajectory, inv, n_groups)

    # endorsed flags (an AND is endorsed when both its parents are)
    flags = np.zeros(len(scan.names), dtype=bool)
    if endorsed_list is not None:
        for j, name in enumerate(scan.names[:n_before_ands]):
            flags[j] = any(part in name for part in endorsed_list)
        for k, (a, b) in enumerate(and_pairs):
            flags[n_before_ands + k] = flags[a] and flags[b]

    # the top, ties, aliases, degeneracy
    top: int | None = ranked[0] if ranked and abs(rho[ranked[0]]) > tau else None
    degenerate, cause = False, None
    collinear: list[str] = []
    aliases: list[str] = []
    if top is not None:
        top_abs = abs(rho[top])
        tied = [j for j in ranked[:200] if abs(rho[j]) >= top_abs - TIE_TOLERANCE]
        if len(tied) > 1:
            reference = scan.column(top)
            same = [j for j in tied[1:] if _same_column(scan.column(j), reference)]
            all_aliases = len(same) == len(tied) - 1
            if distinct <= LOW_DISTINCT_PER_ASK:
                degenerate, cause = True, "distinct_per_ask"
            elif not all_aliases and top_abs >= DEGENERATE_RHO:
                degenerate, cause = True, "collinear"
            if degenerate:
                collinear = sorted(scan.names[j] for j in tied)
                warnings.append(
                    f"{len(tied)} features tie at |rho| {top_abs:.2f}"
                    + (f" because asks have a median of {distinct:g} distinct trajectories: each feature that "
                       "separates them is a function of the label" if cause == "distinct_per_ask" else
                       ": they explain the reward equally well")
                    + "; the floor cannot break a tie between perfect explanations, so no top feature is named")
            elif all_aliases:
                group = [top, *same]
                top = min(group, key=lambda j: _priority(scan.names[j]))
                aliases = sorted(scan.names[j] for j in group if j != top)
            else:  # near ties of different columns: name the plainest, and say the order means nothing
                top = min(tied, key=lambda j: _priority(scan.names[j]))
                others = [scan.names[j] for j in tied if j != top][:5]
                warnings.append(f"{scan.names[top]} ties with {', '.join(others)} (|rho| within "
                                f"{TIE_TOLERANCE}); the ranking between them is not meaningful")
    if distinct <= LOW_DISTINCT_PER_ASK and not degenerate:
        warnings.append(f"asks have a median of {distinct:g} distinct trajectories: each ask gives one contrast, "
                        "so features that happen to separate them look strong; read the ranking with care")
    above = usable & (np.abs(rho) > tau)
    endorsable = [scan.names[j] for j in ranked if above[j]][:STRONG_FEATURES]

    # what the reward pays for beyond the endorsed features
    partial = None
    partial_tau = None
    rivals: list[str] = []
    integrity = None
    reward_hack: bool | None = None
    if endorsed_list is not None:
        matched = [j for j in range(len(scan.names)) if flags[j]]
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
        r2_endorsed, residual, cells = _explained(scan, columns)
        with np.errstate(invalid="ignore", divide="ignore"):
            partial = np.where(usable, scan.dots(residual) / np.sqrt(scan.ss * scan.ss_y), 0.0)
        unendorsed = usable & ~flags
        partial_tau = scan.floor(residual, rng, mask=unendorsed, cells=cells)
        paid = unendorsed & (np.abs(partial) > partial_tau + 1e-9)
        rival_idx = sorted((int(j) for j in np.flatnonzero(paid)),
                           key=lambda j: (-abs(float(partial[j])), _priority(scan.names[j])))
        rivals = [scan.names[j] for j in rival_idx]
        if top is not None or degenerate:
            r2_total, _, _ = _explained(scan, columns + [j for j in rival_idx if j < n_before_ands][:16])
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

    if top is not None and not degenerate and ranked and ranked[0] != top:  # the named top feature leads the list
        ranked.remove(top)
        ranked.insert(0, top)
    scores = [FeatureScore.model_construct(name=scan.names[j], rho=float(rho[j]), above_floor=bool(above[j]),
                                           endorsed=bool(flags[j]),
                                           partial_rho=None if partial is None else float(partial[j]))
              for j in ranked]
    top_name = None if (top is None or degenerate) else scan.names[top]
    report = HackScanReport(
        verdict="", top_feature=top_name, reward_hack=reward_hack, integrity=integrity, rivals=rivals,
        degenerate=degenerate, cause=cause, collinear=collinear, aliases=aliases, tau=tau, partial_tau=partial_tau,
        endorsed=endorsed_list, endorsable=endorsable, distinct_per_ask=distinct, features=scores, n_rows=n_rows,
        n_asks=n_asks, n_mixed_asks=n_groups, warnings=warnings)
    report.verdict = _verdict(report, None if top is None else float(rho[top]))
    return report


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
