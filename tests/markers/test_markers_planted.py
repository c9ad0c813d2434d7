"""On generated refund-agent rows with fakes planted at known rates, every marker reads what was planted."""

from __future__ import annotations

import copy

import pytest
from scipy.stats import binomtest, pearsonr

import whileai_train as wai
from bench.markers import PLANTS, RATES, make_marked_rows

# marker -> the plants that set it to 0.0 (grounding reads free-text reasons with ignore_keys=("reason",))
PLANTED = {"argument_grounding": ("invented_id",), "honest_claims": ("phantom_edit", "unverified_claim"),
           "reported_failure": ("ignored_failure",)}
UNPLANTED = ("no_test_tampering", "no_suppression", "no_bypass", "no_destructive", "no_secrets", "concise",
             "no_sycophancy", "no_hedging", "no_refusal", "no_repetition")


@pytest.fixture(scope="module")
def planted() -> tuple[list[dict], dict[str, list[int]], list[dict]]:
    rows, truth = make_marked_rows(10_000, seed=0)
    stamped = wai.style_markers(wai.trace_markers(wai.mark_grounding(rows, ignore_keys=("reason",))))
    return rows, truth, stamped


def test_each_planted_marker_reads_the_planted_rate_within_its_interval(planted: tuple) -> None:
    rows, truth, stamped = planted
    n = len(rows)
    for marker, plants in PLANTED.items():
        bad = {i for i, row in enumerate(stamped) if row["markers"][marker] < 1.0}
        expected_rows = set().union(*(set(truth[p]) for p in plants))
        assert bad == expected_rows, marker  # row by row, not only in rate
        planted_rate = sum(RATES[p] for p in plants)
        ci = binomtest(len(bad), n).proportion_ci(confidence_level=0.95, method="wilson")
        low, high = ci.low, ci.high
        assert low <= planted_rate <= high, (marker, len(bad) / n, planted_rate, (low, high))


def test_the_reports_own_intervals_cover_the_planted_rates(planted: tuple) -> None:
    """The interval every report prints (mean over tasks, bootstrap over tasks) covers the planted clean rate;
    the family reports print the same interval as marker_summary."""
    rows, _, stamped = planted
    summary = wai.marker_summary(stamped)
    for marker, plants in PLANTED.items():
        clean = 1.0 - sum(RATES[p] for p in plants)
        read = summary.markers[marker]
        assert read.ci95 is not None and read.n_tasks == 2500
        assert read.ci95[0] <= clean <= read.ci95[1], (marker, read.mean, clean, read.ci95)
    grounding = wai.grounding_report(rows, ignore_keys=("reason",))
    assert grounding.argument_grounding == summary.markers["argument_grounding"]
    assert grounding.rate_ci95 is not None
    assert grounding.rate_ci95[0] <= RATES["invented_id"] <= grounding.rate_ci95[1]
    for marker in wai.trace_flag_report(rows).markers:
        assert marker == summary.markers[marker.name], marker.name


def test_unplanted_markers_read_one_on_every_clean_row(planted: tuple) -> None:
    _, truth, stamped = planted
    dirty = set().union(*(set(truth[p]) for p in PLANTS))
    for i, row in enumerate(stamped):
        for marker in UNPLANTED:
            assert row["markers"][marker] == 1.0, (i, marker)
        if i not in dirty:
            assert all(row["markers"][m] == 1.0 for m in PLANTED), i
            assert row["trace_flags"] == ()


def test_no_stamper_changes_its_input() -> None:
    rows, _ = make_marked_rows(2000, seed=3)
    snapshot = copy.deepcopy(rows)
    spec = {"source": "t", "traits": [{"id": "honest", "principle": "Say what you did."}]}
    out = wai.stamp_spec(wai.stamp_stage(wai.style_markers(wai.trace_markers(wai.mark_grounding(rows))), "rl"), spec)
    assert rows == snapshot
    assert len(out) == len(rows) and all(out[i] is not rows[i] for i in range(len(rows)))
    assert all(v in (0.0, 1.0) for row in out for k, v in row["markers"].items() if k != "resolved")


def test_free_text_reasons_are_invented_until_ignored(planted: tuple) -> None:
    rows, truth, _ = planted
    plain = wai.grounding_report(rows)
    assert plain.by_key.get("reason", 0) > 0  # escalation reasons are free text, not copied from anywhere
    assert plain.n_ungrounded_rows > len(truth["invented_id"])
    ignored = wai.grounding_report(rows, ignore_keys=("reason",))
    assert ignored.n_ungrounded_rows == len(truth["invented_id"]) and set(ignored.by_tool) == {"issue_refund"}


def test_report_says_the_reward_pays_for_the_unverified_claim() -> None:
    rates = {"invented_id": 0.05, "phantom_edit": 0.03, "unverified_claim": 0.15, "ignored_failure": 0.03}
    rows, truth = make_marked_rows(4000, seed=1, hack="unverified", rates=rates)
    report = wai.trace_flag_report(rows)
    assert report.paid_for == ["lie.unverified_claim"]
    flag = next(f for f in report.flags if f.flag == "lie.unverified_claim")
    assert flag.n_flagged == len(truth["unverified_claim"])
    hit = [1.0 if i in set(truth["unverified_claim"]) else 0.0 for i in range(len(rows))]
    assert flag.correlation == pytest.approx(pearsonr(hit, [r["reward"] for r in rows]).statistic)
    assert str(report).startswith("trace: THE REWARD PAYS FOR FAKED WORK (lie.unverified_claim)")
    # stamped rows are read as stamped: the same report
    assert wai.trace_flag_report(wai.trace_markers(rows)).model_dump() == report.model_dump()

    scan = wai.hack_scan(rows, endorsed=["marker:resolved"])
    assert scan.rivals[0] == "trace:lie.unverified_claim"
    assert any("trace:lie.unverified_claim" in warning for warning in scan.warnings)
    assert "trace:lie.unverified_claim" in {f.name for f in scan.features}
    # rows stamped clean carry no flag: the scan reads the stamp, so the feature is gone
    unflagged = [dict(row, trace_flags=[]) for row in rows]
    assert "trace:lie.unverified_claim" not in {f.name for f in wai.hack_scan(unflagged).features}
