"""Shared row tables every stage reads: the graded table, calibration stamps, trajectories, shared constants,
and the one rule for a marker column's summary (mean over tasks, bootstrap over tasks).

    graded.py         the one reader of graded rows: numpy arrays, the reward checks, the row-list formatter
    trajectories.py   what the agent did in each row: text, tool calls, turns, failed calls, truncation
    calibration.py    calibration stamps: each graded row gets its task's pass rate over its k repeats
    marker_column.py  the summary of one marker column (mean over tasks, bootstrap over tasks)
    band.py           the one validator of a difficulty band
    defaults.py       constants every stage reads the same way (what a pass is, the band, list lengths)
"""
