"""Pure numbers (numpy; scipy only where a quantile needs it). Imports nothing of whileai_train.

Every interval, p-value and kappa in the package comes from here, so each is computed one way.

    intervals.py       Wilson score interval, normal and Student-t quantiles
    bootstrap.py       the percentile bootstrap over tasks, seeded and vectorised
    groups.py          per-task means: the unit every report resamples is the task
    paired.py          paired comparison over shared tasks: bootstrap interval, sign-flip p-value
    paired_columns.py  many paired comparisons at once, with shared draws and sign-flip patterns
    welch.py           Welch's unpaired interval, the fallback when too few tasks pair
    agreement.py       Cohen's kappa between two raters
"""

from whileai_train.stats.agreement import cohen_kappa
from whileai_train.stats.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_DRAWS,
    DEFAULT_SEED,
    bootstrap_mean_ci,
    bootstrap_mean_cis,
    bootstrap_means,
)
from whileai_train.stats.groups import GroupMeans, group_means
from whileai_train.stats.intervals import normal_quantile, t_quantile, wilson_interval
from whileai_train.stats.paired import PairedComparison, paired_comparison, sign_flip_p_value, welch_p_value

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_DRAWS",
    "DEFAULT_SEED",
    "GroupMeans",
    "PairedComparison",
    "bootstrap_mean_ci",
    "bootstrap_mean_cis",
    "bootstrap_means",
    "cohen_kappa",
    "group_means",
    "normal_quantile",
    "paired_comparison",
    "sign_flip_p_value",
    "t_quantile",
    "welch_p_value",
    "wilson_interval",
]
