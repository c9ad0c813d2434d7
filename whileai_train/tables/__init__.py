"""Shared row tables every stage reads: the graded table, calibration stamps, trajectories, shared constants."""
