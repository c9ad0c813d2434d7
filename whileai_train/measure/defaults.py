"""Defaults of the after-training measurement (pass_at, compare_runs), one place each, with its source."""

from __future__ import annotations

__all__ = [
    "ALPHA",
    "BASE_PASS_RATE",
    "CEILING_PASS_RATE",
    "CONFIG_KEYS",
    "CONFIG_SAMPLE_ROWS",
    "EVAL_RUN_KEY",
    "LOW_PAIRED_SHARE",
    "MIN_EVAL_RUNS",
    "MIN_MIXED_TASKS",
    "MIN_PAIRED_TASKS",
    "MIN_ROOM_TASKS",
    "NOT_MARKERS",
    "NO_GROUP",
    "POWER",
    "TARGET",
    "TIER_KEY",
]

# compare_runs pairs tasks; with fewer shared tasks than this it falls back to an unpaired Welch test
# (a paired interval over fewer tasks is too wide to read; docs/measurement.md, "Intervals over tasks").
MIN_PAIRED_TASKS = 5

# Under this share of tasks paired, the two sides drew different task sets and the delta is between two
# evals: under half paired is not_comparable.
LOW_PAIRED_SHARE = 0.5

# Where the production settings of a row are read from (pass_at(rows).config): report key -> row keys, read
# at the top level and inside `config`, `sampling`, `lineage`, `judge_meta` (temperature, reply budget, policy
# and judge versions: what makes two evals comparable).
CONFIG_KEYS: dict[str, tuple[str, ...]] = {
    "temperature": ("temperature",),
    "reply_budget": ("reply_budget", "max_tokens", "max_new_tokens", "max_completion_tokens", "max_completion_length"),
    "policy_version": ("policy_version", "model_version", "policy", "student"),
    "judge_version": ("judge_version", "judge_model", "judge"),
}

# run_config reads at most this many rows, an even stride through the set (our choice: the config block costs
# the same at any size; runs mixed in blocks of more than n/20000 rows are still seen).
CONFIG_SAMPLE_ROWS = 20_000

# delta_report's default headline metric (target= picks another).
TARGET = "pass@1"

# eval_variance needs this many evaluations of one model (a spread needs three or more).
MIN_EVAL_RUNS = 3

# The lineage key that numbers repeated evaluations of one task set (evaluate(..., runs=3) stamps
# lineage.eval_run on every row).
EVAL_RUN_KEY = "eval_run"

# The before side passes this share or more: little room for a gain (ceiling=True; holdout_size reads the same
# CEILING_PASS_RATE).
CEILING_PASS_RATE = 0.9

# ... "or too few paired tasks left with room": fewer paired tasks below a pass rate of 1 than this (our
# choice: the pairing floor compare_runs itself needs, MIN_PAIRED_TASKS).
MIN_ROOM_TASKS = MIN_PAIRED_TASKS

# holdout_size sizes for this power at this two-sided level (80% power is the usual planning convention;
# every interval of the library is 95%).
POWER = 0.8
ALPHA = 0.05

# The base pass rate of the binomial model when none is given or the measured one is saturated (0.5 is where the
# binomial variance is largest, so the model never under-sizes for it, and the middle of the 20-80% difficulty band
# it recommends).
BASE_PASS_RATE = 0.5

# Keys on row["markers"] that are not behaviour markers in [0, 1] (tables/graded.py reads a row's KL there).
NOT_MARKERS = frozenset({"kl"})

# The group of a row whose by= key is missing or None (our choice of label).
NO_GROUP = "(none)"

# A grouped update (GRPO, DPO pairs, RM pairs) learns only from tasks with both a pass and a fail; under this
# many mixed tasks group_signal reads LOW SIGNAL (docs/measurement.md, "A mixed task, and zero reward spread").
MIN_MIXED_TASKS = 32

# The row key dataset_report splits by (by= moves it): a situation's difficulty tier, read off the row, then its
# tags (the platform's {"difficulty": ...} tags live there), then its lineage. Our choice of name.
TIER_KEY = "tier"
