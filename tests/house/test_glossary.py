"""docs/glossary.md, linked from the README, defines every word a report prints that is not plain English: the
built-in feature names, hack_scan's terms, the alarms, the verdict words and headlines, the band."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

from whileai_train.callbacks.monitor_defaults import ALARMS
from whileai_train.gates.features import HAND
from whileai_train.measure.delta_reading import Headline, Verdict

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_links_the_glossary_and_it_defines_every_term_a_report_prints() -> None:
    assert "[docs/glossary.md](docs/glossary.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    quoted = set(re.findall(r"`([^`]+)`", glossary))
    bold = set(re.findall(r"\*\*([^*]+)\*\*", glossary))
    features = {*HAND, "tool:<name>", "word:<w>", "pair:<w1 w2>", "marker:<name>", "trace:<flag>"}
    assert features - quoted == set()
    assert {*ALARMS, *get_args(Verdict), *get_args(Headline)} - quoted == set()
    terms = {"band", "integrity", "rho", "rivals", "endorsed", "noise floor (tau)", "proxy", "gold", "holdout",
             "mixed task", "calibration stamp", "eval_sourced", "pass@k", "kappa", "re-run band", "probes"}
    assert {t for t in terms if t not in bold and not any(t in b for b in bold)} == set()
