"""Shared row tables every stage reads: the graded table, calibration stamps, trajectories, shared constants,
and the one rule for a marker column's summary (mean over tasks, bootstrap over tasks)."""
