"""After a run: pass_at, compare_runs and the verdict built on them; group_signal and dataset_report, the
task-grouped readings of a row set (mixed tasks; per tier, the pass rate over tasks)."""
