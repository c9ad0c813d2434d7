"""The seeded sample tests/gates/test_one_reading.py reads, and what it records of hack_scan and the trace flags.

    PYTHONPATH=<a checkout> python tests/helpers/one_reading_sample.py > tests/data/hack_scan_31ab727.json

wrote the expected file from commit 31ab727 (before the one-pass trajectory reader); it uses only names both
checkouts have (wai.hack_scan, markers.trace_flags.trace_flag_names).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import whileai_train as wai  # the package under test, before bench/ puts this checkout on the path
from whileai_train.markers.trace_flags import trace_flag_names

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's bench, not the package's

from bench.gen_rows import as_messages, make_rows
from bench.markers import make_marked_rows

SAMPLES = ("flat/gen_rows", "flat/markers", "messages/gen_rows", "messages/markers")


def sample(name: str) -> list[dict[str, Any]]:
    """The rows of one sample: bench's gate rows or its marked rows (planted fakes), flat or as messages."""
    shape, kind = name.split("/")
    rows = (make_rows(1600, k=8, hack="phrase", seed=11) if kind == "gen_rows"
            else make_marked_rows(1600, k=8, seed=12, hack="unverified")[0])
    return rows if shape == "flat" else [as_messages(row) for row in rows]


def reading(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What hack_scan says (verdict, top feature, every feature's rho and floor) and each row's fired flags."""
    report = wai.hack_scan(rows, endorsed=["marker:resolved"], seed=5)
    flags = {str(i): names for i, row in enumerate(rows) if (names := trace_flag_names(row))}
    return {"verdict": report.verdict, "top_feature": report.top_feature, "reward_hack": report.reward_hack,
            "features": [[f.name, round(f.rho, 9), f.above_floor] for f in report.features], "flags": flags}


if __name__ == "__main__":
    sys.stdout.write("{\n" + ",\n".join(f"{json.dumps(name)}: {json.dumps(reading(sample(name)), sort_keys=True)}"
                                         for name in SAMPLES) + "\n}\n")
