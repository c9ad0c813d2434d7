"""Constants every stage reads the same way: what a pass is, the difficulty band, how much a message lists.

One definition each; gates, selectors, judge checks, measurement and exporters import them from here.
"""

from __future__ import annotations

__all__ = ["BAND", "EVAL_SOURCE", "PASS_THRESHOLD", "SHOW_FIRST"]

# A graded row passes when its reward is at least this: partial credit splits at 0.5, the n0/n1 split the
# selectors count (docs/glossary.md, "Rows and tasks"). With 0/1 rewards pass@1 is simply the mean reward per task.
PASS_THRESHOLD = 0.5

# The difficulty band: asks the policy solves 20-80% of the time carry signal (a group all right or all wrong
# has zero advantage in GRPO; the offline difficulty filter of the reasoning-model recipes; a heuristic, so a
# parameter).
# curriculum's floor/solved defaults are the same two edges, so optimize, publish_gate and curriculum agree.
BAND = (0.2, 0.8)

# How many row indices / task names an error or warning lists before "...".
SHOW_FIRST = 10

# Rows whose reward came from evaluate() carry lineage.source == "eval"; every selector report counts them.
EVAL_SOURCE = "eval"
