"""Defaults of optimize, the selectors, preference pairs and curriculum: one place, each with its source.

The pass threshold and the difficulty band every stage shares are in tables/defaults.py."""

from __future__ import annotations

from whileai_train.tables.defaults import PASS_THRESHOLD

__all__ = [
    "CURRICULUM_TIERS",
    "LOW_K",
    "ORDERS",
    "SELECTED_RL",
    "SELECTED_SFT",
    "SELECT_RULES",
    "SFT_COMPLETIONS_PER_PROMPT",
    "SFT_MIN_REWARD",
    "TRUNCATED",
    "TRUNCATED_MODES",
]

# Fewer graded rollouts per task than this and the band is a guess: at k=8 a 50% task's Wilson 95% interval is
# about +-0.3 wide (the calibration stamp on each kept row carries that interval, pass_rate_ci95).
LOW_K = 16

# Truncated rollouts: "drop" is DAPO's overlong filtering (Yu et al. 2025, "DAPO", sec. 3.4: truncated samples
# carry a misleading reward, so they are masked out); "penalize" keeps them as failures with the judged score
# under reward_before_penalty; "keep" leaves them in. A truncated rollout never finished, so it is dropped by
# default.
TRUNCATED = "drop"
TRUNCATED_MODES = ("keep", "penalize", "drop")

# "round_robin": across fault kinds, then across pass rates (no kind crowds out the rest under a budget);
# "middle": nearest-to-50% first.
ORDERS = ("round_robin", "middle")

# Rejection sampling (optimize(mode="sft") keeps the passing completions): the engine samples four
# completions per phrasing so there is something to choose among. A completion is kept when it passes by the
# SFT export's own threshold (tables.defaults.PASS_THRESHOLD; a threshold of 1.0 would keep out partial-credit
# passes that export_dataset accepts), so what optimize(mode="sft") keeps is what the export trains.
SFT_COMPLETIONS_PER_PROMPT = 4
SFT_MIN_REWARD = PASS_THRESHOLD
SELECT_RULES = ("top_per_prompt", "top_k_overall", "random_per_prompt", "random_k_overall")

# What a selector writes as `selected_by` on each kept row's calibration stamp (tables/calibration.py): the rows
# were kept by their outcome, so pass_at over them reads pass^k and pass@k as n/a (docs/measurement.md,
# "pass^k and pass@k on a selection").
SELECTED_RL = "optimize(mode='rl')"
SELECTED_SFT = "optimize(mode='sft')"

# A staged schedule of three: easy, middle, hard. Our choice; tiers= moves it.
CURRICULUM_TIERS = 3
