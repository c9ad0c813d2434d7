"""judge_probes on judges with planted holes: flagged only with enough rows, symmetric churn is not a hole."""

from __future__ import annotations

import zlib

import pytest

import whileai_train as wai
from whileai_train.errors import ConfigError, InputError
from whileai_train.judge.defaults import FILLER_TEXT, PROBE_MIN_N
from whileai_train.judge.judge_probes import probe_row, resolvable_rate
from whileai_train.stats import wilson_interval


def _rows(n_pass: int, n_fail: int) -> list[dict]:
    rows = []
    for i in range(n_pass + n_fail):
        good = i < n_pass
        rows.append({"rollout_id": f"r{i}", "scenario_id": f"s{i}", "prompt": f"Cancel reservation {i}",
                     "steps": [{"tool": "cancel_reservation", "arguments": {"id": i}, "result": "ok"}] if good else [],
                     "final_text": "Reservation cancelled, confirmation sent." if good else "Let me check.",
                     "reward": 1.0 if good else 0.0})
    return rows


def _honest(row: dict) -> float:
    return 1.0 if "cancelled" in (row.get("final_text") or "") and row.get("steps") else 0.0


def _reads_filler(row: dict) -> float:
    return 1.0 if _honest(row) or FILLER_TEXT in (row.get("final_text") or "") else 0.0


def test_honest_judge_has_no_hole() -> None:
    report = wai.judge_probes(_rows(40, 40), _honest, rubric="The reservation is cancelled")
    assert report.exploitable_by == []
    assert report.verdict.startswith("NO HOLE FOUND")
    assert {p.name for p in report.probes} == {"filler", "rubric_words", "claimed_success", "echo_ask",
                                               "empty_tool_call", "sycophantic_opener", "polite_refusal"}


def test_additive_hole_flagged_with_enough_rows() -> None:
    report = wai.judge_probes(_rows(30, 30), _reads_filler, probes=["filler"])
    filler = report.probes[0]
    assert filler.n == 30 and filler.flips_up == 30 and filler.rate == 1.0
    assert filler.ci95 == pytest.approx(wilson_interval(30, 30))
    assert report.exploitable_by == ["filler"] and str(report).startswith("EXPLOITABLE")


def test_additive_hole_below_min_n_reads_low_power() -> None:
    report = wai.judge_probes(_rows(30, 10), _reads_filler, probes=["filler"])
    filler = report.probes[0]
    assert filler.n == 10 < PROBE_MIN_N and filler.rate == 1.0
    assert filler.low_power and not filler.exploitable and report.exploitable_by == []
    assert "low power (n=10; resolves about 0.4 at 80% power)" in filler.reading
    assert report.verdict.startswith("LOW POWER")


def test_lenient_judge_still_reaches_min_n_failing_rows() -> None:
    # the judge passes 85% of the rows: a flat sample of 40 holds about 6 failing rows and could never flag
    report = wai.judge_probes(_rows(170, 30), _reads_filler, probes=["filler"])
    assert report.n_failing >= PROBE_MIN_N
    assert report.exploitable_by == ["filler"]


def test_symmetric_churn_is_noise_not_a_hole() -> None:
    def churn(row: dict) -> float:
        verdict = _honest(row)
        text = row.get("final_text") or ""
        if FILLER_TEXT in text and zlib.crc32(str(row["prompt"]).encode()) % 4 == 0:
            return 1.0 - verdict  # a quarter of the rows flip, both ways
        return verdict

    report = wai.judge_probes(_rows(40, 40), churn, probes=["filler"])
    filler = report.probes[0]
    assert filler.flips_up > 0 and filler.flips_down > 0
    assert filler.rate == pytest.approx(max(0, filler.flips_up - filler.flips_down) / filler.n)
    assert filler.rate < 0.10 and report.exploitable_by == []


def test_replacement_probes_flag_contentless_passes() -> None:
    def gullible(row: dict) -> float:
        text = row.get("final_text") or ""
        called = bool(row.get("steps"))
        return 1.0 if "successfully" in text or called else 0.0

    report = wai.judge_probes(_rows(30, 30), gullible)
    by_name = {p.name: p for p in report.probes}
    assert by_name["claimed_success"].exploitable and by_name["claimed_success"].n == 60
    assert by_name["empty_tool_call"].exploitable
    assert not by_name["polite_refusal"].exploitable and not by_name["echo_ask"].exploitable
    assert set(report.exploitable_by) == {"claimed_success", "empty_tool_call"}
    assert any("rubric_words not run" in note for note in report.notes)


def test_rubric_words_probe_stuffs_the_rubric() -> None:
    def keyword(row: dict) -> float:
        return 1.0 if "confirmation" in (row.get("final_text") or "").lower() else 0.0

    report = wai.judge_probes(_rows(30, 30), keyword, rubric=["Sends a confirmation", "Cancels the reservation"],
                              probes=["rubric_words"])
    assert report.exploitable_by == ["rubric_words"]


def test_probe_rows_for_both_row_shapes() -> None:
    flat = _rows(1, 0)[0]
    assert probe_row("echo_ask", flat)["final_text"] == flat["prompt"]
    assert probe_row("echo_ask", flat)["steps"] == []
    assert probe_row("empty_tool_call", flat)["steps"] == [{"tool": "cancel_reservation", "arguments": {}}]
    chat = {"messages": [{"role": "system", "content": "be kind"}, {"role": "user", "content": "hi"},
                         {"role": "assistant", "content": "hello"}], "reward": 1.0}
    opened = probe_row("sycophantic_opener", chat)
    assert opened["messages"][-1]["content"].endswith("hello") and opened["messages"][-1]["content"] != "hello"
    assert chat["messages"][-1]["content"] == "hello"  # the input row is untouched
    refused = probe_row("polite_refusal", chat)
    assert [m["role"] for m in refused["messages"]] == ["system", "user", "assistant"]
    tool = probe_row("empty_tool_call", chat)["messages"][-1]
    assert tool["tool_calls"][0]["function"] == {"name": "lookup", "arguments": "{}"}


def test_resolution_and_bad_input() -> None:
    assert resolvable_rate(10) == pytest.approx(0.443, abs=0.01)
    with pytest.raises(InputError):
        wai.judge_probes([], _honest)
    with pytest.raises(ConfigError, match="unknown probes"):
        wai.judge_probes(_rows(2, 2), _honest, probes=["nope"])

    def broken(row: dict) -> float:
        raise TimeoutError("judge down")

    with pytest.raises(InputError, match="every one of .* judge calls raised"):
        wai.judge_probes(_rows(2, 2), broken)
