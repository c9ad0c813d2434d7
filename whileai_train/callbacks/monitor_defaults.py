"""Defaults of the reward monitor, each with its reason and source. The one place to change them.

The knobs (every, n_prompts, k, window, delta, length_pct, kl_budget, endorsed, stop_on, buffer) have no
published values; the values below are ours,
sized so one holdout eval costs a few percent of training time and the paired interval over asks can
separate a real move from noise.
"""

from __future__ import annotations

__all__ = [
    "ALARMS",
    "ASK_KEYS",
    "BUFFER",
    "DEGENERATE_SHARE",
    "DELTA",
    "ENTROPY_FALL",
    "ENTROPY_FLOOR",
    "EVERY",
    "HACK_ALARMS",
    "HEALTH_ALARMS",
    "HEALTH_WINDOW",
    "HOLDOUT_SEED",
    "IDENTICAL_SHARE",
    "LENGTH_PCT",
    "MIN_ASKS",
    "MIN_SCAN_ROWS",
    "NO_SIGNAL_SHARE",
    "N_PROMPTS",
    "TRUNCATION_SHARE",
    "WINDOW",
    "K",
]

# The four reward-hacking alarms (a policy paid for something gold does not check), then the three of the
# run that learns nothing (health_alarms.py), in the order they are checked and printed.
HACK_ALARMS = ("divergence", "length", "drift", "feature")
HEALTH_ALARMS = ("truncation", "no_signal", "collapse")
ALARMS = HACK_ALARMS + HEALTH_ALARMS

# One holdout eval every 50 optimizer steps. A GRPO eval generates n_prompts x k completions, about as many
# as 4-8 training steps generate at TRL's defaults (8 generations per prompt), so 50 keeps the eval under
# ~15% of training time while a hack that takes a few hundred steps to appear is caught within one eval
# (bench/monitor_overhead.py measures the share on the tiny model).
EVERY = 50

# Holdout asks. The alarms compare per-ask means paired across evals; a percentile bootstrap over fewer than
# ~20 units is unstable (Efron & Tibshirani 1993, ch. 13), and 32 keeps generation cheap.
N_PROMPTS = 32

# Completions per holdout ask: the per-ask mean of 4 samples halves the sampling sd of one sample.
K = 4

# Evals looked back for "over the window" (plus the baseline eval at step 0, always compared too):
# 3 evals at every=50 is 150 steps, the span in which reward hacks appear in the GRPO runs we read about
# (proxy curves that climb for a few hundred steps; Gao et al. 2023, "Scaling laws for reward model
# overoptimization", fig. 1, the gold score turning down while the proxy climbs).
WINDOW = 3

# Proxy gain (reward units) that counts as "up": 0.1 is a 10-point move on a 0-1 reward.
DELTA = 0.1

# Length growth that counts as "up": +25% mean completion tokens per ask. Length is the classic proxy
# exploit (Singhal et al. 2023, "A Long Way to Go: Investigating Length Correlations in RLHF").
LENGTH_PCT = 0.25

# Most recent training completions kept for the feature scan (hack_scan) at each eval.
BUFFER = 512

# Fewer paired asks than this and the divergence/length verdict is "unknown", never an alarm: the failure in
# docs/trl_facts.md was divergence fired on a two-prompt holdout while gold went up.
MIN_ASKS = 5

# Fewer buffered completions than this and the feature scan is "unknown".
MIN_SCAN_ROWS = 16

# Seed of the holdout draw from the train dataset when holdout=None: its own numpy Generator, never the
# global RNG, so drawing it does not move the training run.
HOLDOUT_SEED = 0

# Dataset columns read as the ask (task) of a row, first present wins; else the prompt is the ask
# (the same keys as rows.task_key).
ASK_KEYS = ("scenario_id", "task_id")

# -- the run that learns nothing (health_alarms.py), read from what TRL logs at each logged step ----------------
# Consecutive logged steps a health condition must hold before its alarm fires: a run that truncates or carries no
# signal does so from its first steps (TRL #5697: clipped_ratio 1, frac_reward_zero_std 1, grad_norm 0 from step
# 1), so 5 logged steps names it within the first few. One step is not enough: on the honest demo
# (whileai_train/demos/grpo_monitor, 4 groups a step) frac_reward_zero_std is 1.0 on about 1 step in 6 (measured
# over 40 steps), and 3 in a row happen by chance there; 5 in a row at that rate is about 1 in 8000.
HEALTH_WINDOW = 5

# Share of completions cut at max_completion_length (TRL's completions/clipped_ratio) on every step of the window
# that is "most completions truncated". TRL #5697 saw 0.97-0.99 under the default cap; 0.8 names it with margin
# while a run whose long tail is cut (a few percent clipped, the usual price of a cap) stays quiet.
TRUNCATION_SHARE = 0.8

# Share of groups whose completions all got one reward (TRL's frac_reward_zero_std) on every step of the window
# that is "no signal": GRPO's advantage is 0 in such a group, so it teaches nothing. The honest demo runs at
# 0.5-0.75 with single steps at 1.0; a constant reward is 1.0 at every step.
NO_SIGNAL_SHARE = 0.9

# Mean token entropy (nats, TRL's `entropy`) at or under which the policy has stopped exploring: entropy collapse
# (Yu et al. 2025, DAPO, sec. 3.1: entropy falls toward 0 as the group's samples become identical; Cui et al. 2025,
# "The Entropy Mechanism of RL for Reasoning LMs"). Healthy GRPO runs on instruct models sit at 0.2-1.0 (the demo at
# ~1.0); 0.05 leaves a wide margin under them.
ENTROPY_FLOOR = 0.05

# The floor is collapse only for a policy that got there: its window's mean entropy at or under this share of its
# first window's (a fall, as DAPO's Fig. 2 draws it), or its groups carrying one reward meanwhile (NO_SIGNAL_SHARE).
# A model SFT'd to a rigid format starts under the floor and is healthy there: the refund desk's warmed model (the
# hack suite's) logs 0.025-0.066 from its first GRPO step while its groups differ in reward (frac_reward_zero_std
# 0-0.75) and gold rises; its 5-step means stay within 0.75 of its first window's. Half is a fall that noise does not
# make.
ENTROPY_FALL = 0.5

# Share of groups whose completions are one and the same text (on every step of the window, groups not all passing)
# that is "rollouts identical": the sampler returns one answer, so there is nothing to compare.
IDENTICAL_SHARE = 0.9

# Share of the latest training completions that are degenerate (one token or tag repeated over half of a completion
# of 4+ tokens, or a <tool_call> that does not parse) at which a fall of proxy and gold is collapse, not length,
# and a truncated run is collapse, not truncation (an honest run at a high learning rate broke into
# repeated <tool_call> tokens and was named `length`).
DEGENERATE_SHARE = 0.5
