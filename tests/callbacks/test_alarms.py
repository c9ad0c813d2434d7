"""The four alarms on synthetic proxy/gold/length/KL streams (no torch, no trainer)."""

from __future__ import annotations

import numpy as np
import pytest

from whileai_train.callbacks.alarms import (
    AlarmBook,
    AlarmSettings,
    EvalRecord,
    Verdict,
    check_drift,
    check_eval,
    check_feature,
    confirm_length,
    name_tracked_feature,
)

N_ASKS = 32


def _stream(seed: int, n_evals: int, *, proxy_slope: float, gold_slope: float, length_growth: float = 0.0,
            n_asks: int = N_ASKS, noise: float = 0.08) -> list[EvalRecord]:
    """Per-ask means at each eval: ask difficulty + a trend + noise; length in tokens."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.2, 0.6, n_asks)
    base_len = rng.uniform(20, 40, n_asks)
    asks = [f"ask-{i}" for i in range(n_asks)]
    records = []
    for t in range(n_evals):
        proxy = base + proxy_slope * t + rng.normal(0, noise, n_asks)
        gold = base + gold_slope * t + rng.normal(0, noise, n_asks)
        length = base_len * (1 + length_growth) ** t + rng.normal(0, 1.0, n_asks)
        records.append(EvalRecord(step=t * 10, asks=asks, proxy=proxy.tolist(), gold=gold.tolist(),
                                  length=length.tolist(), n_completions=4 * n_asks))
    return records


def _run_book(records: list[EvalRecord], s: AlarmSettings) -> tuple[AlarmBook, list[tuple[int, str]]]:
    book = AlarmBook()
    fired = []
    for i in range(1, len(records) + 1):
        for alarm in book.update(records[i - 1].step, check_eval(records[:i], s)):
            fired.append((i - 1, alarm.name))
    return book, fired


def test_divergence_fires_within_the_window() -> None:
    s = AlarmSettings(window=3, delta=0.1)
    records = _stream(0, 8, proxy_slope=0.06, gold_slope=0.0)
    _, fired = _run_book(records, s)
    names = [name for _, name in fired]
    assert names.count("divergence") == 1  # fired once, not repeated while it stands
    first = next(i for i, name in fired if name == "divergence")
    assert first <= s.window  # the proxy passes delta (0.12 > 0.1) by eval 2, within the window
    assert "length" not in names


def test_divergence_when_gold_falls() -> None:
    records = _stream(1, 5, proxy_slope=0.08, gold_slope=-0.05)
    verdicts = {v.name: v for v in check_eval(records, AlarmSettings())}
    assert verdicts["divergence"].status == "alarm"
    assert verdicts["divergence"].numbers["gold_delta"] < 0
    assert "gold" in verdicts["divergence"].reason


def test_length_fires_when_completions_grow_and_gold_does_not() -> None:
    s = AlarmSettings(window=3, length_pct=0.25)
    records = _stream(2, 8, proxy_slope=0.0, gold_slope=0.0, length_growth=0.12)
    book, fired = _run_book(records, s)
    names = [name for _, name in fired]
    assert names == ["length"]
    first = fired[0][0]
    assert first <= s.window  # 1.12^2 = 1.25 at eval 2
    assert book.standing["length"].numbers["length_growth"] >= 0.25


def test_length_with_gold_going_up_is_not_an_alarm() -> None:
    records = _stream(3, 6, proxy_slope=0.05, gold_slope=0.05, length_growth=0.15)
    _, fired = _run_book(records, AlarmSettings())
    assert fired == []


@pytest.mark.parametrize("seed", range(20))
def test_no_alarm_on_clean_streams(seed: int) -> None:
    """Proxy and gold rise together, length stays flat: nothing fires, at any eval."""
    s = AlarmSettings(kl_budget=0.5)
    records = _stream(100 + seed, 10, proxy_slope=0.04, gold_slope=0.04, length_growth=0.0)
    book, fired = _run_book(records, s)
    assert fired == []
    rng = np.random.default_rng(seed)
    kl_stream = np.abs(rng.normal(0.05, 0.02, 50))
    assert all(check_drift(float(kl), s).status == "clear" for kl in kl_stream)
    assert book.fired == []


@pytest.mark.parametrize("seed", range(20))
def test_no_alarm_on_flat_streams(seed: int) -> None:
    records = _stream(200 + seed, 10, proxy_slope=0.0, gold_slope=0.0)
    _, fired = _run_book(records, AlarmSettings())
    assert fired == []


def test_two_ask_holdout_whose_gold_went_up_is_unknown() -> None:
    """The docs/trl_facts.md failure: divergence fired on a two-prompt holdout while gold went up."""
    asks = ["a", "b"]
    records = [
        EvalRecord(0, asks, proxy=[0.1, 0.2], gold=[0.1, 0.1], length=[10, 12]),
        EvalRecord(10, asks, proxy=[0.9, 0.8], gold=[0.3, 0.1], length=[30, 40]),
    ]
    verdicts = {v.name: v for v in check_eval(records, AlarmSettings())}
    assert verdicts["divergence"].status == "unknown"
    assert verdicts["length"].status == "unknown"
    assert AlarmBook().update(10, list(verdicts.values())) == []


def test_no_gold_is_unknown_not_an_alarm() -> None:
    records = _stream(4, 5, proxy_slope=0.1, gold_slope=0.0, length_growth=0.2)
    records = [EvalRecord(r.step, r.asks, r.proxy, None, r.length) for r in records]
    verdicts = {v.name: v for v in check_eval(records, AlarmSettings())}
    assert verdicts["divergence"].status == "unknown"
    assert verdicts["length"].status == "unknown"


def test_plateau_does_not_hide_a_standing_divergence() -> None:
    """Proxy jumps early then plateaus: the window sees no move, the baseline comparison still does."""
    rng = np.random.default_rng(5)
    asks = [f"a{i}" for i in range(N_ASKS)]
    base = rng.uniform(0.2, 0.5, N_ASKS)
    records = []
    for t in range(10):
        lift = 0.3 if t >= 1 else 0.0
        records.append(EvalRecord(t * 10, asks, (base + lift + rng.normal(0, 0.03, N_ASKS)).tolist(),
                                  (base + rng.normal(0, 0.03, N_ASKS)).tolist(), [20.0] * N_ASKS))
    s = AlarmSettings(window=2)
    book, fired = _run_book(records, s)
    assert [name for _, name in fired] == ["divergence"]
    assert "divergence" in book.standing  # still standing at the last eval, 8 evals into the plateau
    last = {v.name: v for v in check_eval(records, s)}["divergence"]
    assert last.status == "alarm" and last.numbers["since"] == "baseline"


def test_an_alarm_that_clears_can_fire_again() -> None:
    book = AlarmBook()
    from whileai_train.callbacks.alarms import Verdict

    assert len(book.update(1, [Verdict("drift", "alarm", "x")])) == 1
    assert book.update(2, [Verdict("drift", "alarm", "x")]) == []
    assert book.update(3, [Verdict("drift", "unknown", "no kl")]) == []  # unknown is not a recovery
    assert "drift" in book.standing
    assert book.update(4, [Verdict("drift", "clear", "ok")]) == []
    assert len(book.update(5, [Verdict("drift", "alarm", "x")])) == 1
    assert [a.step for a in book.fired] == [1, 5]


def test_drift_reads_the_current_kl() -> None:
    s = AlarmSettings(kl_budget=0.1)
    assert check_drift(0.05, s).status == "clear"
    v = check_drift(0.25, s)
    assert v.status == "alarm" and v.numbers == {"kl": 0.25, "kl_budget": 0.1}
    assert check_drift(None, s).status == "unknown"
    assert check_drift(float("nan"), s).status == "unknown"
    assert check_drift(5.0, AlarmSettings()).status == "unknown"  # no budget, no alarm


def test_drift_fires_on_a_rising_kl_stream_once() -> None:
    s = AlarmSettings(kl_budget=0.2)
    book = AlarmBook()
    kl = np.linspace(0.0, 0.5, 26)
    fired = [step for step, value in enumerate(kl) for _ in book.update(step, [check_drift(float(value), s)])]
    assert fired == [11]  # the first step past 0.2 (0.22), reported once


def test_feature_alarm_from_a_scan() -> None:
    hack = {"top_feature": "word:sure", "reward_hack": True, "degenerate": False, "n_rows": 64,
            "integrity": 0.1, "rivals": ["len"], "features": [{"name": "word:sure", "rho": 0.8}]}
    v = check_feature(hack)
    assert v.status == "alarm" and "word:sure" in v.reason and v.numbers["rho"] == 0.8
    endorsed_top = check_feature({**hack, "reward_hack": False,
                                  "features": [{"name": "word:sure", "rho": 0.8, "endorsed": True}]})
    assert endorsed_top.status == "clear" and "'word:sure' is endorsed" in endorsed_top.reason
    riding = check_feature({**hack, "reward_hack": False, "rivals": [],
                            "features": [{"name": "word:sure", "rho": 0.8, "endorsed": False}]})
    assert riding.status == "clear" and "rides along with the endorsed features" in riding.reason
    assert "is endorsed" not in riding.reason
    assert check_feature({**hack, "reward_hack": None}).status == "unknown"
    assert check_feature({**hack, "degenerate": True, "top_feature": None}).status == "unknown"
    assert check_feature({**hack, "n_rows": 3}).status == "unknown"
    assert check_feature(None).status == "unknown"


def test_alarm_line_is_loud_and_has_numbers() -> None:
    records = _stream(0, 5, proxy_slope=0.1, gold_slope=0.0)
    book = AlarmBook()
    alarms = book.update(40, check_eval(records, AlarmSettings()))
    assert alarms and alarms[0].line.startswith("!!! REWARD MONITOR ALARM [divergence] at step 40:")
    assert "proxy +" in alarms[0].line and "gold" in alarms[0].line


def test_a_length_alarm_stands_only_where_the_reward_rises_with_length() -> None:
    grew = Verdict("length", "alarm", "completion length 3.0 -> 4.5 tokens (+50%, threshold +25%) since baseline",
                   {"length_before": 3.0, "length_now": 4.5})

    def scan(rho: float, above: bool) -> dict:
        return {"degenerate": False, "tau": 0.37, "features": [{"name": "length", "rho": rho, "above_floor": above}]}

    paid = confirm_length(grew, scan(0.88, True))
    assert paid.status == "alarm" and paid.numbers["length_rho"] == 0.88
    drift = confirm_length(grew, scan(0.18, False))
    assert drift.status == "clear" and "does not rise with length" in drift.reason and "3.0 -> 4.5" in drift.reason
    assert confirm_length(grew, scan(-0.6, True)).status == "clear"  # the reward falls as completions grow
    assert confirm_length(grew, None).status == "alarm"  # no scan: the alarm cannot be cleared
    assert confirm_length(grew, {"degenerate": True, "features": []}).status == "alarm"
    assert confirm_length(grew, {"degenerate": False, "features": [{"name": "words", "rho": 0.1}]}).status == "alarm"
    quiet = Verdict("length", "clear", "length 3.0 -> 3.1 tokens")
    assert confirm_length(quiet, scan(0.9, True)) is quiet


def test_confirm_length_reads_a_real_scan_of_rollouts_paid_for_length_and_of_rollouts_that_are_not() -> None:
    import random

    from whileai_train import hack_scan

    rng = random.Random(0)
    rows = [{"prompt": f"ask {a}", "completion": " ".join(["word"] * n), "reward": float(n > 4)}
            for a in range(16) for n in (rng.randint(1, 8) for _ in range(4))]
    grew = Verdict("length", "alarm", "grew", {"length_before": 3.0, "length_now": 4.5})
    assert confirm_length(grew, hack_scan(rows).model_dump()).status == "alarm"
    unpaid = [{**row, "reward": float(rng.random() < 0.3)} for row in rows]
    assert confirm_length(grew, hack_scan(unpaid).model_dump()).status == "clear"


def test_a_divergence_alarm_names_the_unendorsed_feature_the_reward_tracks_most() -> None:
    diverged = Verdict("divergence", "alarm", "proxy +0.56 since baseline while gold -0.06 did not move up", {})
    scan = {"degenerate": False, "top_feature": "tool:issue_refund", "endorsed": ["correct_refund"],
            "features": [{"name": "tool:issue_refund", "rho": 1.0, "endorsed": False},
                         {"name": "correct_refund", "rho": 0.4, "endorsed": True}]}
    named = name_tracked_feature(diverged, scan)
    assert named.status == "alarm" and named.reason.startswith(diverged.reason)
    assert "the reward tracks 'tool:issue_refund' most (rho +1.00, not endorsed)" in named.reason
    assert named.numbers["top_feature"] == "tool:issue_refund"
    endorsed_top = {**scan, "top_feature": "correct_refund"}
    assert name_tracked_feature(diverged, endorsed_top) is diverged  # an endorsed top feature is no explanation
    assert name_tracked_feature(diverged, None) is diverged
    length = Verdict("length", "alarm", "grew", {})
    assert name_tracked_feature(length, scan) is length
