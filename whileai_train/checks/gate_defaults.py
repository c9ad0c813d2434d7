"""Defaults of the measurement and publishing gates (pass_at, compare_runs, publish_gate), one place each."""

from __future__ import annotations

__all__ = [
    "BAND",
    "CONFIG_KEYS",
    "CONFIG_SAMPLE_ROWS",
    "LOW_PAIRED_SHARE",
    "MIN_PAIRED_TASKS",
    "PASS_THRESHOLD",
    "RL_SHAPED_SHARE",
    "SHOW_FIRST",
]

# A graded row passes when its reward is at least this: partial credit splits at 0.5 (product text,
# "Prune before training": n0/n1 split). With 0/1 rewards pass@1 is simply the mean reward per task.
PASS_THRESHOLD = 0.5

# The difficulty band: asks the policy solves 20-80% of the time carry signal (product text, "Prune before
# training"; the offline difficulty filter of the reasoning-model recipes). Same edges as optimize/curriculum.
BAND = (0.2, 0.8)

# compare_runs pairs tasks; with fewer shared tasks than this it falls back to an unpaired Welch test
# (product text, "Intervals and comparison").
MIN_PAIRED_TASKS = 5

# Under this share of tasks paired, the two sides drew different task sets and the delta is between two
# evals (product text: "Under half paired is ... not_comparable").
LOW_PAIRED_SHARE = 0.5

# How many row indices / task names an error or warning lists before "...".
SHOW_FIRST = 10

# Where the production settings of a row are read from (pass_at(rows).config): report key -> row keys, read
# at the top level and inside `config`, `sampling`, `lineage`, `judge_meta` (product text: "temperature, reply
# budget, policy and judge versions").
CONFIG_KEYS: dict[str, tuple[str, ...]] = {
    "temperature": ("temperature",),
    "reply_budget": ("reply_budget", "max_tokens", "max_new_tokens", "max_completion_tokens", "max_completion_length"),
    "policy_version": ("policy_version", "model_version", "policy", "student"),
    "judge_version": ("judge_version", "judge_model", "judge"),
}

# run_config reads at most this many rows, an even stride through the set (our choice: keeps pass_at's config
# block under ~0.1 s at 1M rows; runs mixed in blocks of more than n/20000 rows are still seen).
CONFIG_SAMPLE_ROWS = 20_000

# publish_gate reads a set as RL-shaped (repeats of one ask) when at least this share of its rows sit in tasks
# with two or more rows. Our choice: a stray repeat in an SFT set does not make it RL-shaped; mode= overrides.
RL_SHAPED_SHARE = 0.5
