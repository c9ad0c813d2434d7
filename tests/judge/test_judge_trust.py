"""judge_trust against rows built to a known truth; intervals checked against scipy, kappa against the formula."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

import whileai_train as wai
from whileai_train.errors import ConfigError, LabelError


def _graded(gold: list[int], judged: list[float | str | None], *, kind: str = "human") -> list[dict]:
    rows = []
    for i, (g, j) in enumerate(zip(gold, judged, strict=True)):
        rows.append({"rollout_id": f"r{i}", "scenario_id": f"s{i % 25}", "rollout_index": i // 25,
                     "prompt": f"ask number {i % 25}", "final_text": "ok " * (3 + i % 7), "reward": j,
                     "gold_reward": float(g), "gold_kind": kind})
    return rows


def _hand_kappa(a: list[int], b: list[int]) -> float:
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    return (observed - expected) / (1 - expected)


def test_agreement_interval_is_wilson_and_kappa_the_formula() -> None:
    rng = np.random.default_rng(3)
    gold = rng.integers(0, 2, 120).tolist()
    judged = [g if rng.random() < 0.9 else 1 - g for g in gold]
    report = wai.judge_trust(_graded(gold, [float(j) for j in judged]))
    k = sum(g == j for g, j in zip(gold, judged, strict=True))
    ci = binomtest(k, 120).proportion_ci(confidence_level=0.95, method="wilson")
    assert report.n_gold == 120
    assert report.agreement == pytest.approx(k / 120)
    assert report.agreement_low == pytest.approx(ci.low, abs=1e-9)
    assert report.agreement_high == pytest.approx(ci.high, abs=1e-9)
    assert report.kappa == pytest.approx(_hand_kappa(gold, judged), abs=1e-12)
    assert report["agreement_low"] == report.agreement_low  # report["key"] reads like the product text
    assert set(report.summary()) == {"agreement", "agreement_low", "kappa", "n_gold", "ok"}
    assert report.n_disagreements == 120 - k == len(report.review_queue)
    assert all(item["gold"] != item["judge"] for item in report.review_queue)
    assert sum(h.n for h in report.halves) == 120 and len(report.halves) == 2


def test_pass_and_fail_readings() -> None:
    gold = [1, 0] * 100
    good = wai.judge_trust(_graded(gold, [float(g) for g in gold]))
    assert good.verdict == "PASS" and good.ok
    assert str(good).startswith("PASS") and wai.format_judge_trust(good).startswith("PASS")
    lenient = wai.judge_trust(_graded(gold, [1.0] * 200))  # passes everything: half right, kappa 0
    assert lenient.verdict == "FAIL" and not lenient.ok
    text = str(lenient)
    assert text.startswith("FAIL") and "0.80" in text and "kappa 0.00 < floor 0.60" in text
    assert "What to do:" in text


def test_no_labels_reads_not_measured() -> None:
    rows = [{"prompt": "a", "final_text": "b", "reward": 1.0}]
    report = wai.judge_trust(rows)
    assert report.verdict == "NOT MEASURED" and report.ok is False and report.n_gold == 0
    assert wai.format_judge_trust(report).startswith("NOT MEASURED")
    assert "unmeasured (not untrustworthy)" in str(report)
    assert wai.judge_trust([]).verdict == "NOT MEASURED"


def test_model_gold_refused_unless_allowed() -> None:
    gold = [1, 0] * 20
    rows = _graded(gold, [float(g) for g in gold], kind="model")
    with pytest.raises(LabelError, match="allow_model_gold=True"):
        wai.judge_trust(rows)
    allowed = wai.judge_trust(rows, allow_model_gold=True)
    assert allowed.n_gold == 40 and allowed.gold_kind == "model"
    mixed = _graded(gold, [float(g) for g in gold])
    for row in mixed[:10]:
        row["gold_kind"] = "model"
    report = wai.judge_trust(mixed)
    assert report.n_gold == 30 and report.model_gold_excluded == 10
    assert any("model-written" in w for w in report.warnings)


def test_program_gold_counts_and_is_named() -> None:
    gold = [1, 0] * 30
    rows = wai.attach_labels([{k: v for k, v in r.items() if k not in ("gold_reward", "gold_kind")}
                              for r in _graded(gold, [float(g) for g in gold])],
                             {f"r{i}": g for i, g in enumerate(gold)}, kind="verifier")
    report = wai.judge_trust(rows)
    assert report.gold_kind == "program" and report.verdict == "PASS"
    assert "gold labels (program)" in str(report)
    older = _graded(gold, [float(g) for g in gold])
    for row in older:
        del row["gold_kind"]
    assert wai.judge_trust(older).gold_kind == "unknown"


def test_one_class_only_says_so_and_skips_kappa() -> None:
    report = wai.judge_trust(_graded([1] * 40, [1.0] * 40))
    assert report.one_class and report.kappa is None and report.length_bias == []
    assert report.verdict == "INCONCLUSIVE" and not report.ok
    assert "one class only" in str(report)


def test_partial_and_text_rewards_are_skipped_and_counted() -> None:
    gold = [1, 0] * 50
    judged: list[float | str | None] = [float(g) for g in gold]
    judged[0], judged[1], judged[2] = 0.5, "pass", None  # partial, text, ungraded: 3% skipped
    report = wai.judge_trust(_graded(gold, judged))
    assert report.skipped == 3 and report.n_gold == 97
    assert report.skipped_by_reason == {"partial": 1, "text": 1, "ungraded": 1}
    assert report.verdict == "PASS"
    for i in range(3, 15):  # 15% skipped: over max_skipped_share
        judged[i] = 0.75
    report = wai.judge_trust(_graded(gold, judged))
    assert report.skipped == 15 and report.verdict == "INCONCLUSIVE" and not report.ok
    assert str(report).startswith("INCONCLUSIVE: 15 of 100 gold rows skipped (15% > 10%)")
    assert "Criterion(kind='hard')" in str(report)


def test_length_bias_within_the_same_label() -> None:
    rows = []
    for i in range(160):
        gold = i % 2
        long = (i // 2) % 2 == 1
        reply = ("word " * (40 if long else 5)).strip()
        judged = 1.0 if (gold == 1 or long) else 0.0  # failing long replies pass: the judge reads length
        rows.append({"rollout_id": f"r{i}", "prompt": f"ask {i}", "final_text": reply, "reward": judged,
                     "gold_reward": float(gold), "gold_kind": "human"})
    report = wai.judge_trust(rows)
    flagged = [b for b in report.length_bias if b.flagged]
    assert [b.gold_label for b in flagged] == [0]
    assert flagged[0].short.rate == 0.0 and flagged[0].long.rate == 1.0
    assert "length bias" in " ".join(report.warnings)


def _judge_reading(row: dict) -> float:
    """Passes a reply that mentions the refund, or any long reply (it reads length)."""
    text = row.get("final_text") or ""
    return 1.0 if "refund issued" in text or len(text.split()) > 30 else 0.0


def _refund_rows(n: int = 120) -> list[dict]:
    rows = []
    for i in range(n):
        good = i % 2 == 0
        rows.append({"rollout_id": f"r{i}", "scenario_id": f"s{i}", "prompt": f"Refund order {i}",
                     "final_text": "The refund issued today." if good else "I looked at it.",
                     "reward": 1.0 if good else 0.0, "gold_reward": 1.0 if good else 0.0, "gold_kind": "human"})
    return rows


def test_judge_callable_consistency_filler_flip_and_probes() -> None:
    report = wai.judge_trust(_refund_rows(), _judge_reading, probes="all", rubric="The refund issued is confirmed")
    assert report.consistency is not None and report.consistency.rate == 1.0
    assert report.filler_flip is not None and report.filler_flip.n == 40
    assert report.filler_flip.rate == pytest.approx(0.5, abs=0.2)  # the failing half flips
    assert any("reads length" in w for w in report.warnings)
    assert "filler" in report.exploitable_by and "rubric_words" in report.exploitable_by
    assert report.verdict == "FAIL" and "exploitable by" in report.reading


def test_few_labels_fail_and_say_how_many_would_do() -> None:
    gold = [1, 0] * 4
    report = wai.judge_trust(_graded(gold, [float(g) for g in gold]))
    assert report.agreement == 1.0 and report.verdict == "FAIL"
    assert report.reading.startswith("FAIL: measured against human labels (n=8), agreement lower bound 0.68")
    assert any("about 16 labels" in step for step in report.what_to_do)
    from whileai_train.stats import wilson_interval

    assert wilson_interval(16, 16)[0] >= 0.80 > wilson_interval(15, 15)[0]


def test_format_reads_the_summary_block_and_the_dump() -> None:
    gold = [1, 0] * 50
    report = wai.judge_trust(_graded(gold, [float(g) for g in gold]))
    assert wai.format_judge_trust(report.model_dump()) == str(report)
    line = wai.format_judge_trust(report.summary())
    assert line.startswith("PASS: agreement 100%") and "n_gold 100" in line
    empty = {"agreement": None, "agreement_low": None, "kappa": None, "n_gold": 0, "ok": False}
    assert wai.format_judge_trust(empty).startswith("NOT MEASURED")


def _judge_content(row: dict) -> float:
    """Passes a reply that mentions the refund, whatever its length."""
    return 1.0 if "refund issued" in (row.get("final_text") or "") else 0.0


def test_judge_fills_in_missing_rewards() -> None:
    rows = _refund_rows(60)
    for row in rows:
        row["reward"] = None
    report = wai.judge_trust(rows, _judge_content)
    assert report.n_gold == 60 and report.skipped == 0 and report.verdict == "PASS" and report.ok
    assert report.consistency.rate == 1.0 and report.filler_flip.rate == 0.0


def test_ok_is_false_when_the_judge_reads_length() -> None:
    """A judge that agrees with every label but flips on neutral filler is not clean."""
    report = wai.judge_trust(_refund_rows(), _judge_reading)
    assert report.agreement == 1.0 and report.kappa == 1.0 and report.consistency.rate == 1.0
    assert report.filler_flip.rate >= 0.1 and any("reads length" in w for w in report.warnings)
    assert not report.ok and report.verdict == "FAIL" and report.summary()["ok"] is False
    assert str(report).startswith("FAIL: measured against human labels (n=120)")
    assert "the judge reads length (neutral filler flipped" in report.reading
    assert any("length is not quality" in step for step in report.what_to_do)
    assert report.exploitable_by == []  # no probes asked: the flag comes from the filler re-judge alone


def test_ok_is_false_when_the_rewards_are_noisy() -> None:
    """A judge that changes a third of its verdicts on the same reply is not clean."""
    rng = np.random.default_rng(11)

    def noisy(row: dict) -> float:
        right = _judge_content(row)
        return right if rng.random() > 0.35 else 1.0 - right

    rows = _refund_rows()  # the rows' own rewards are right: agreement 100%, only the re-judge sees the noise
    report = wai.judge_trust(rows, noisy)
    assert report.agreement == 1.0 and report.consistency is not None and report.consistency.rate < 0.9
    assert any("noisy" in w for w in report.warnings)
    assert not report.ok and report.verdict == "FAIL" and "rewards are noisy (consistency" in report.reading
    assert any("temperature 0" in step for step in report.what_to_do)


def test_length_bias_within_a_label_is_not_clean() -> None:
    gold = [1, 0] * 100
    rows = _graded(gold, [float(g) for g in gold])
    for i, row in enumerate(rows):  # failing long replies pass: the rows' rewards read length
        if gold[i] == 0 and i % 4 == 1:
            row["final_text"], row["reward"] = "word " * 60, 1.0
    report = wai.judge_trust(rows)
    assert any(b.flagged for b in report.length_bias) and not report.ok
    assert "the judge reads length (long replies pass more often" in report.reading


def test_review_queue_shows_the_ask_of_a_messages_row() -> None:
    """A messages-shaped row's ask is its user turn (the row contract's rule), not ''."""
    rows = []
    for i in range(40):
        rows.append({"rollout_id": f"m{i}", "scenario_id": f"s{i}",
                     "messages": [{"role": "system", "content": "You are the refund desk."},
                                  {"role": "user", "content": f"Refund order {i}, please"},
                                  {"role": "assistant", "content": "Done." if i % 2 else "I cannot."}],
                     "reward": 1.0 if i % 4 else 0.0, "gold_reward": float(i % 2), "gold_kind": "human"})
    report = wai.judge_trust(rows)
    assert report.review_queue and report.n_disagreements == len(report.review_queue)
    for item in report.review_queue:
        assert item["prompt"] == f"Refund order {item['row']}, please"
        assert item["reply"] == ("Done." if item["row"] % 2 else "I cannot.")


def test_probes_need_a_judge() -> None:
    with pytest.raises(ConfigError, match="judge="):
        wai.judge_trust(_refund_rows(), probes="all")


def test_rows_are_not_changed_and_judge_errors_are_counted() -> None:
    import copy

    rows = _refund_rows(60)
    before = copy.deepcopy(rows)
    calls = {"n": 0}

    def flaky_editor(row: dict) -> float:
        calls["n"] += 1
        row["final_text"] = "edited by the judge"  # a judge that edits its input must not reach our rows
        if calls["n"] % 10 == 0:
            raise TimeoutError("judge timed out")
        return 1.0 if row.get("prompt", "").endswith("0") else 0.0

    report = wai.judge_trust(rows, flaky_editor)
    assert rows == before
    assert any("judge calls raised" in w and "TimeoutError" in w for w in report.warnings)
    assert report.consistency is not None and report.filler_flip is not None
    assert report.consistency.n + report.filler_flip.n == 80 - 8  # the 8 failed calls are left out
