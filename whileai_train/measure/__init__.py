"""After a run: pass_at, compare_runs and the verdict built on them; group_signal and dataset_report, the
task-grouped readings of a row set (mixed tasks; per tier, the pass rate over tasks).

    pass_at.py          pass@1 with its interval over tasks; pass^k / pass@k over the k-eligible groups
    compare_runs.py     did a change move pass@1? paired over shared tasks
    delta_report.py     delta_report: moved by more than the eval's own noise, guards held?
    delta_reading.py    what a delta report says: its fields and each metric's verdict word
    sides.py            one side of a comparison, read once (graded table, marker columns, run and group)
    eval_variance.py    the eval's own re-run standard deviation
    holdout_size.py     holdout_size / detectable_effect: tasks needed for 80% power
    marker_summary.py   metric_summary / marker_summary: each marker's mean over tasks with its interval
    group_signal.py     group_signal: how much of a grouped batch carries a learning signal
    dataset_report.py   dataset_report: a row set per tier (tasks, pass rate, mixed share)
    defaults.py         their defaults, each with its source
"""
