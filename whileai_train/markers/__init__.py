"""Behaviour markers read from the trajectory, each stamped on row["markers"] with 1.0 the good outcome.

Five families write to row["markers"]; this room holds the ones read from the rows themselves:

    grounding.py     argument_grounding: every string a tool got appears in an earlier prompt, turn or result
    trace_flags.py   lie.*, hack.*, risk.* flags on row["trace_flags"] and their clean-is-1.0 markers
                     (honest_claims, reported_failure, no_test_tampering, no_suppression, no_bypass,
                     no_destructive, no_secrets); kinds.py tells reads, writes, deletes and commands apart
    trace_report.py  trace_flag_report: each flag's rate, examples, and whether the reward pays for it
    style.py         the over-optimisation behaviours (concise, no_sycophancy, no_hedging, no_apology,
                     no_boilerplate, no_refusal, no_repetition), style_report and refusal_report
    phrases.py       what a reply says of the style lists, found in one reading (words cut once)
    style_phrases.py the style markers' phrase lists (hedges, apologies, openers, sign-offs, praise, refusals)
    style_forms.py   how a phrase form is written (its pattern and the words it starts with) and the folded reply
    stages.py        stage lineage: stamp_stage, stage_of, stage_report (a task in eval and in training)
    spec.py          a model spec as an object: load_spec, Spec (version = content hash), stamp_spec
    families.py      which function stamps which marker; each family's markers summarised by the one rule
                     (tables.marker_column, which measure's marker_summary uses too)
    trajectory.py    one row read as events (heard, said, called, result), both row shapes
    registry.py      markers by name, for the reward monitor's markers=
    defaults.py      every other pattern and threshold, with its source

It imports the row rules (rows.py and its siblings rows/content.py, rows/failure.py, rows/trajectory.py, rows/files.py),
errors.py, report.py, stats/ and tables/ only (never measure/); gates/ (hack_scan's
trace: features) and callbacks/ (the reward monitor's markers=) import from here.
"""
