"""select_for_sft: rejection sampling, what optimize(mode="sft") does.

Rules: "top_per_prompt" keeps each prompt's best completion(s) at or above `min_reward`; "top_k_overall" the
best k across prompts; "random_per_prompt" and "random_k_overall" are the matching chance controls: the same
number of rows, drawn (seeded) from the graded completions without looking at their reward (random_per_prompt
draws from the prompts top_per_prompt keeps). With k unset, k is what top_per_prompt would keep, so the four
rules select sets of one size and can be compared directly.

A "prompt" is a task (`task_key`) by default, so rephrasings of one situation count as one; group_by="prompt"
groups by the ask's text instead. Every kept row carries `group_stats` (n, n0/n1 split at 0.5, reward_mean,
reward_std over its group's graded completions, population std) and a calibration stamp.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from whileai_train.errors import ConfigError
from whileai_train.report import KeptRows
from whileai_train.rows.contract import carried_stamp, prompt_text
from whileai_train.select.defaults import (
    SELECT_RULES,
    SELECTED_SFT,
    SFT_COMPLETIONS_PER_PROMPT,
    SFT_MIN_REWARD,
)
from whileai_train.select.select_rows import SelectionReport, eval_warning
from whileai_train.stats import DEFAULT_SEED
from whileai_train.tables.calibration import mark_selected, task_stamps
from whileai_train.tables.graded import graded_table, name_rows

__all__ = ["SFTSelectionReport", "select_for_sft"]


class SFTSelectionReport(SelectionReport):
    """What select_for_sft / optimize(mode="sft") kept, from how many completions per prompt."""

    mode: Literal["sft"] = "sft"
    select: str = "top_per_prompt"
    min_reward: float = SFT_MIN_REWARD
    k: int | None = None
    per_prompt: int = 1
    group_by: Literal["task", "prompt"] = "task"
    n: int = 0
    kept: int = 0
    prompts: int = 0
    prompts_kept: int = 0
    prompts_passing: int = 0
    ungraded: int = 0
    best_reward: float | None = None
    completions_per_prompt_mean: float = 0.0
    selection_effective: bool = False
    groups: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def verdict(self) -> str:
        if self.kept == 0:
            return "NOTHING KEPT"
        return "kept, check the warnings" if self.warnings else "kept"

    def __str__(self) -> str:
        rule = f"{self.select}" + (f", k={self.k}" if self.k is not None else "")
        lines = [(f"optimize sft: {self.verdict}: {self.kept} of {self.n} rows from {self.prompts_kept} of "
                  f"{self.prompts} prompts ({rule}, min_reward {self.min_reward:g})")]
        lines.append(f"  completions per prompt: mean {self.completions_per_prompt_mean:.2f} "
                     f"(selection_effective {self.selection_effective}); prompts with a completion at or above "
                     f"min_reward: {self.prompts_passing}")
        if self.best_reward is not None:
            lines.append(f"  best reward seen {self.best_reward:g}; ungraded rows skipped {self.ungraded}")
        lines.append(f"  eval_sourced: {self.eval_sourced}")
        for warning in self.warnings:
            lines.append(f"  warning: {warning}")
        if self.kept == 0:
            lines.append("  next: lower min_reward for a partial-credit grader, or sample more completions")
        return "\n".join(lines)



def _ranked_within(groups: np.ndarray, *keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order of the given rows by group, then by `keys` (last key primary within group, lexsort style),
    and each row's rank inside its group."""
    order = np.lexsort((*keys, groups))
    sorted_groups = groups[order]
    first = np.searchsorted(sorted_groups, sorted_groups, side="left")
    return order, np.arange(len(order)) - first


def _check(select: str, min_reward: float, k: int | None, per_prompt: int, group_by: str) -> None:
    if select not in SELECT_RULES:
        raise ConfigError(f"select={select!r}. Fix: use one of {', '.join(SELECT_RULES)}")
    if isinstance(min_reward, bool) or not isinstance(min_reward, (int, float)):
        raise ConfigError(f"min_reward={min_reward!r}. Fix: pass a reward between 0 and 1 (1.0 keeps passes only)")
    for name, value in (("k", k), ("per_prompt", per_prompt)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ConfigError(f"{name}={value!r}. Fix: pass a positive whole number")
    if k is not None and select.endswith("per_prompt"):
        raise ConfigError(f"k={k} with select={select!r}: k is for the *_k_overall rules. Fix: use per_prompt= "
                          "to keep more than one completion per prompt, or select='top_k_overall'")
    if group_by not in ("task", "prompt"):
        raise ConfigError(f"group_by={group_by!r}. Fix: use 'task' (the default) or 'prompt'")


def select_for_sft(
    rows: Any,
    *,
    select: str = "top_per_prompt",
    min_reward: float = SFT_MIN_REWARD,
    k: int | None = None,
    per_prompt: int = 1,
    group_by: str = "task",
    seed: int = DEFAULT_SEED,
) -> KeptRows[SFTSelectionReport]:
    """Rejection sampling: keep the best completion(s) per prompt (or overall), or the matching chance control.

    Returns KeptRows(rows, report); the rows are new dicts in input order, the input is untouched.
    """
    _check(select, min_reward, k, per_prompt, group_by)
    view = graded_table(rows, what="optimize(mode='sft')", order="first_seen", need_graded=True, deep=False)
    rows, n = view.rows, view.n_rows
    if group_by == "task":
        group_of, names = view.task_of_row, view.tasks
    else:
        codes: dict[str, int] = {}
        group_of = np.array([codes.setdefault(prompt_text(row), len(codes)) for row in rows], dtype=np.int64)
        names = list(codes)
    groups = len(names)
    graded, rewards = view.graded, view.rewards
    graded_index = np.flatnonzero(graded)
    graded_groups = group_of[graded_index]
    graded_rewards = rewards[graded_index]

    counts = np.bincount(graded_groups, minlength=groups)
    passes = np.bincount(graded_groups, weights=view.passed[graded_index], minlength=groups)
    sums = np.bincount(graded_groups, weights=graded_rewards, minlength=groups)
    means = np.divide(sums, counts, out=np.zeros(groups), where=counts > 0)
    squares = np.bincount(graded_groups, weights=(graded_rewards - means[graded_groups]) ** 2, minlength=groups)
    stds = np.sqrt(np.divide(squares, counts, out=np.zeros(groups), where=counts > 0))

    eligible = graded_rewards >= min_reward
    eligible_index = graded_index[eligible]
    eligible_counts = np.bincount(group_of[eligible_index], minlength=groups)
    quota = np.minimum(eligible_counts, per_prompt)
    size = int(quota.sum()) if k is None else k

    if select == "top_per_prompt":
        order, rank = _ranked_within(group_of[eligible_index], eligible_index, -rewards[eligible_index])
        chosen = eligible_index[order][rank < per_prompt]
    elif select == "top_k_overall":
        chosen = eligible_index[np.lexsort((eligible_index, -rewards[eligible_index]))][:size]
    elif select == "random_per_prompt":
        rng = np.random.default_rng(seed)
        pool = graded_index[quota[graded_groups] > 0]
        order, rank = _ranked_within(group_of[pool], rng.random(len(pool)))
        chosen = pool[order][rank < quota[group_of[pool][order]]]
    else:  # random_k_overall
        rng = np.random.default_rng(seed)
        chosen = rng.choice(graded_index, size=min(size, len(graded_index)), replace=False)
    chosen = np.sort(chosen)

    group_stats = [{"task_id" if group_by == "task" else "prompt": names[g], "n": int(counts[g]),
                    "n0": int(counts[g] - passes[g]), "n1": round(float(passes[g])), "reward_mean": float(means[g]),
                    "reward_std": float(stds[g])} for g in range(groups)]
    stamps = task_stamps(view)
    out: list[dict[str, Any]] = []
    kept_per_group = np.bincount(group_of[chosen], minlength=groups)
    for i in chosen.tolist():
        row = rows[i]
        new = dict(row)
        new["group_stats"] = dict(group_stats[group_of[i]])
        if not view.carries[i]:
            new["calibration"] = dict(stamps[view.task_of_row[i]] or {})
        if len(chosen) < n:  # kept by outcome: pass_at reads the k-way numbers n/a on this selection
            mark_selected(new, carried_stamp(row) if view.carries[i] else new["calibration"], SELECTED_SFT)
        out.append(new)
    for g, stats in enumerate(group_stats):
        stats["kept"] = int(kept_per_group[g])

    with_graded = int((counts > 0).sum())
    report = SFTSelectionReport(
        select=select, min_reward=float(min_reward), k=size if select.endswith("k_overall") else None,
        per_prompt=per_prompt, group_by=group_by,  # type: ignore[arg-type]
        n=n, kept=len(out), prompts=groups, prompts_kept=int((kept_per_group > 0).sum()),
        prompts_passing=int((eligible_counts > 0).sum()), ungraded=int(n - len(graded_index)),
        best_reward=float(graded_rewards.max()),
        completions_per_prompt_mean=len(graded_index) / with_graded if with_graded else 0.0,
        groups=group_stats)
    report.selection_effective = report.completions_per_prompt_mean >= 2
    if report.ungraded:
        report.warnings.append(f"skipped {report.ungraded} ungraded rows (reward is null): "
                               f"{name_rows(np.flatnonzero(~graded))}")
    if not report.selection_effective:
        report.warnings.append(
            f"completions_per_prompt_mean {report.completions_per_prompt_mean:.2f}: with about one completion per "
            f"prompt there is nothing to choose among, so this is a filter, not rejection sampling. Sample "
            f"{SFT_COMPLETIONS_PER_PROMPT} per prompt (SFT_COMPLETIONS_PER_PROMPT; repeats= moves it)")
    if not len(eligible_index):
        report.warnings.append(
            f"no completion reached min_reward={min_reward:g} (best reward {report.best_reward:g}; every graded row "
            "is below it): nothing to imitate. Lower min_reward for a partial-credit grader, or sample more")
    eval_rows = chosen[view.eval_sourced[chosen]].tolist()
    report.eval_sourced, report.eval_sourced_rows = len(eval_rows), eval_rows
    if eval_rows:
        report.warnings.append(eval_warning(len(eval_rows), eval_rows))
    return KeptRows(out, report)
