"""Before a run, picks rows: optimize (rl, sft), preference pairs, curriculum."""
