"""After a run: pass_at, compare_runs and the verdict built on them."""
