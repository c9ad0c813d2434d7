"""truncation, no_signal and collapse on synthetic TRL log streams and reward records (no torch, no trainer);
the per-function holdout means and the divergence alarm that names its function."""

from __future__ import annotations

from typing import Any

import pytest

from whileai_train.callbacks.alarms import AlarmBook, AlarmSettings, EvalRecord, Verdict, check_eval
from whileai_train.callbacks.health_alarms import HealthSettings, HealthWatch, degenerate, group_stats
from whileai_train.callbacks.monitor_report import (
    AlarmStatus,
    MonitorSummary,
    format_hack_monitor,
    verdict_line,
)
from whileai_train.callbacks.per_function import fn_means, name_rising_function
from whileai_train.callbacks.reward_wrap import CompletionRecord

WINDOW = HealthSettings().window


def _log(clipped: float = 0.0, zero_std: float = 0.5, entropy: float = 1.0, **extra: Any) -> dict[str, Any]:
    return {"completions/clipped_ratio": clipped, "frac_reward_zero_std": zero_std, "entropy": entropy,
            "completions/mean_terminated_length": 3.0, "grad_norm": 0.5, "reward": 0.3, **extra}


def _records(step: int, groups: list[list[tuple[str, float]]], fn: str = "r") -> list[CompletionRecord]:
    """One generation batch: each group is one ask's completions with their rewards."""
    out, index = [], 0
    for g, group in enumerate(groups):
        for text, reward in group:
            out.append(CompletionRecord(fn, step << 32, index, f"ask-{g}", f"prompt {g}", text, reward, 3))
            index += 1
    return out


def _feed(watch: HealthWatch, logs: list[dict[str, Any]], groups: list[list[tuple[str, float]]] | None = None
          ) -> list[tuple[int, str, str]]:
    """Each step: its records (if any), then its log; the alarms that start standing (step, name, message)."""
    book, fired = AlarmBook(), []
    for step, log in enumerate(logs, start=1):
        if groups is not None:
            watch.add_records(_records(step, groups), {})
        for alarm in book.update(step, watch.read_log(step, log)):
            fired.append((step, alarm.name, alarm.message))
    return fired


def test_healthy_stream_stays_quiet_and_each_reading_is_clear() -> None:
    watch = HealthWatch(max_length=8)
    # the honest demo's shape: a quarter to three quarters of groups with one reward, single steps at 1.0
    shares = [0.5, 0.75, 1.0, 0.5, 0.75, 1.0, 1.0, 0.75, 0.25, 0.5, 1.0, 0.75]
    groups = [[("five", 1.0), ("six", 0.0)], [("two", 0.0), ("three", 0.0)]]
    fired = _feed(watch, [_log(zero_std=z, clipped=0.05) for z in shares], groups)
    assert fired == []
    assert {v.name: v.status for v in watch.read_log(13, _log())} == {
        "truncation": "clear", "no_signal": "clear", "collapse": "clear"}


def test_window_not_full_is_unknown_never_an_alarm() -> None:
    watch = HealthWatch(max_length=4)
    verdicts = [v for step in range(1, WINDOW) for v in watch.read_log(step, _log(clipped=1.0, zero_std=1.0))]
    assert {v.status for v in verdicts} == {"unknown"}


def test_truncation_names_the_cap_the_share_and_the_fix_within_the_window() -> None:
    watch = HealthWatch(max_length=4)
    fired = _feed(watch, [_log(clipped=0.97, zero_std=0.5)] * (WINDOW + 3))
    assert [(step, name) for step, name, _ in fired] == [(WINDOW, "truncation")]  # once, at the first full window
    message = fired[0][2]
    assert "max_completion_length=4" in message and "97%" in message and "raise max_completion_length" in message


def test_truncated_run_whose_groups_carry_one_reward_is_named_truncation_not_no_signal() -> None:
    watch = HealthWatch(max_length=4)
    fired = _feed(watch, [_log(clipped=1.0, zero_std=1.0)] * WINDOW, [[("a b c", 0.0), ("d e f", 0.0)]])
    assert [name for _, name, _ in fired] == ["truncation"]


def test_no_signal_says_all_fail_all_pass_or_a_constant_reward() -> None:
    fail = HealthWatch()
    fail.add_records(_records(0, [[("five", 1.0), ("six", 0.0)]]), {})  # the run has seen a pass once
    (msg,) = [m for _, name, m in _feed(fail, [_log(zero_std=1.0)] * WINDOW, [[("a", 0.0), ("b", 0.0)]] * 4)
              if name == "no_signal"]
    assert "all fail" in msg and "too hard" in msg and "band=(0.2, 0.8)" in msg

    easy = HealthWatch()
    easy.add_records(_records(0, [[("five", 1.0), ("six", 0.0)]]), {})
    (msg,) = [m for _, name, m in _feed(easy, [_log(zero_std=1.0)] * WINDOW, [[("x", 1.0), ("y", 1.0)]] * 4)
              if name == "no_signal"]
    assert "all pass" in msg and "too easy" in msg

    constant = HealthWatch()
    (msg,) = [m for _, name, m in _feed(constant, [_log(zero_std=1.0)] * WINDOW, [[("x", 0.5), ("y", 0.5)]] * 4)
              if name == "no_signal"]
    assert "reward 0.5" in msg and "does not vary" in msg


def test_one_step_with_signal_in_the_window_keeps_no_signal_quiet() -> None:
    watch = HealthWatch()
    logs = [_log(zero_std=1.0)] * (WINDOW - 1) + [_log(zero_std=0.75)] + [_log(zero_std=1.0)] * (WINDOW - 1)
    assert _feed(watch, logs) == []


def test_entropy_floor_is_collapse() -> None:
    watch = HealthWatch()
    fired = _feed(watch, [_log(entropy=0.01, zero_std=1.0)] * WINDOW)
    assert [name for _, name, _ in fired] == ["collapse"]  # the groups carry one reward because of it
    assert "entropy" in fired[0][2] and "lower the learning rate" in fired[0][2]


def test_a_policy_that_starts_under_the_entropy_floor_with_groups_that_differ_is_not_collapse() -> None:
    """A model SFT'd to a rigid format (the hack suite's refund desk: 0.025-0.066 from its first step, its groups
    differing in reward) is healthy there; it collapses when it falls to half of where it started, or when its
    groups stop differing."""
    confident = [0.048, 0.063, 0.054, 0.025, 0.033, 0.042, 0.051, 0.049, 0.027, 0.041, 0.045, 0.030, 0.045, 0.045]
    shares = [0.5, 0.75, 0.0, 0.75, 0.75, 0.5, 0.25, 0.25, 0.5, 0.5, 0.25, 0.5, 0.25, 0.5]
    watch = HealthWatch()
    assert _feed(watch, [_log(entropy=e, zero_std=z) for e, z in zip(confident, shares, strict=True)]) == []
    (collapse,) = [v for v in watch.read_log(len(confident) + 1, _log(entropy=0.04)) if v.name == "collapse"]
    assert collapse.status == "clear" and collapse.reason.startswith("entropy under the floor as it was from the start")

    falling = [0.4] * WINDOW + [0.04, 0.02, 0.01, 0.01, 0.01]
    fired = _feed(HealthWatch(), [_log(entropy=e, zero_std=0.5) for e in falling])
    assert [(step, name) for step, name, _ in fired] == [(2 * WINDOW, "collapse")]
    assert "fallen from 0.4 over the first 5" in fired[0][2]

    stuck = _feed(HealthWatch(), [_log(entropy=0.03, zero_std=z) for z in [0.5] * WINDOW + [1.0] * WINDOW])
    assert [(step, name) for step, name, _ in stuck] == [(2 * WINDOW, "collapse")]
    assert "groups carried one reward" in stuck[0][2]


def test_identical_rollouts_that_fail_are_collapse_and_identical_rollouts_that_pass_are_no_signal() -> None:
    watch = HealthWatch()
    watch.add_records(_records(0, [[("five", 1.0), ("six", 0.0)]]), {})
    fired = _feed(watch, [_log(zero_std=1.0)] * WINDOW, [[("six", 0.0), ("six", 0.0)]] * 4)
    assert [name for _, name, _ in fired] == ["collapse"]

    solved = HealthWatch()
    solved.add_records(_records(0, [[("five", 1.0), ("six", 0.0)]]), {})
    fired = _feed(solved, [_log(zero_std=1.0)] * WINDOW, [[("five", 1.0), ("five", 1.0)]] * 4)
    assert [name for _, name, _ in fired] == ["no_signal"]


def test_degenerate_completions() -> None:
    assert degenerate("<tool_call><tool_call><tool_call><tool_call>")
    assert degenerate("five five five five six")
    assert degenerate('<tool_call>{"name": "refund", "arguments": {</tool_call>')
    assert not degenerate('<tool_call>{"name": "refund", "arguments": {"id": 1}}</tool_call> done')
    assert not degenerate("the answer is five")
    assert not degenerate("five")
    assert degenerate(" nineourourourourourourour")  # a subword loop inside one word (the demo at lr 1e-2)
    assert not degenerate(" nine ten")
    assert not degenerate("the total is 1000 dollars, see ---- below for the refund of order A1")
    stats = group_stats(_records(2, [[("five five five five", 0.0), ("one two three four", 1.0)]]), {})
    assert [(s.step, s.groups, s.degenerate, s.completions) for s in stats] == [(2, 1, 0.5, 2)]


def _evals(proxy: list[float], gold: list[float], length: list[float], n_asks: int = 8) -> list[EvalRecord]:
    asks = [f"ask-{i}" for i in range(n_asks)]
    return [EvalRecord(step=5 * t, asks=asks, proxy=[p + 0.01 * i for i in range(n_asks)],
                       gold=[g + 0.01 * i for i in range(n_asks)], length=[n + 0.1 * i for i in range(n_asks)])
            for t, (p, g, n) in enumerate(zip(proxy, gold, length, strict=True))]


def test_a_run_that_breaks_down_is_collapse_not_length() -> None:
    evals = _evals(proxy=[0.6, 0.1], gold=[0.6, 0.1], length=[3.0, 7.7])
    plain = {v.name: v.status for v in check_eval(evals, AlarmSettings())}
    assert plain["length"] == "alarm"  # the length alarm alone would claim it
    watch = HealthWatch()
    watch.add_records(_records(9, [[("<tool_call><tool_call><tool_call><tool_call>", 0.0)] * 2] * 4), {})
    verdicts = {v.name: v for v in watch.judge_eval(check_eval(evals, AlarmSettings()), evals)}
    assert verdicts["length"].status != "alarm"
    assert verdicts["collapse"].status == "alarm" and "degenerate" in verdicts["collapse"].reason

    healthy = HealthWatch()
    healthy.add_records(_records(9, [[("seven", 0.0), ("eight", 0.0)]] * 4), {})
    verdicts = {v.name: v for v in healthy.judge_eval(check_eval(evals, AlarmSettings()), evals)}
    assert verdicts["length"].status == "alarm" and verdicts["collapse"].status != "alarm"


def test_a_flooding_hack_whose_proxy_rose_is_not_collapse() -> None:
    evals = _evals(proxy=[0.2, 0.9], gold=[0.2, 0.2], length=[3.0, 7.7])
    watch = HealthWatch()
    watch.add_records(_records(9, [[("thanks thanks thanks thanks", 1.0)] * 2] * 4), {})
    verdicts = {v.name: v for v in watch.judge_eval(check_eval(evals, AlarmSettings()), evals)}
    assert verdicts["collapse"].status != "alarm"
    assert verdicts["divergence"].status == "alarm" and verdicts["length"].status == "alarm"


def test_divergence_names_the_reward_function_that_rose() -> None:
    asks = [f"ask-{i}" for i in range(8)]
    flat = [0.2 + 0.01 * i for i in range(8)]
    up = [0.9 - 0.01 * i for i in range(8)]
    before = EvalRecord(0, asks, proxy=[f + f for f in flat], gold=flat, length=[3.0] * 8,
                        fns={"format_reward": flat, "correct": flat})
    after = EvalRecord(5, asks, proxy=[u + f for u, f in zip(up, flat, strict=True)], gold=flat, length=[3.0] * 8,
                       fns={"format_reward": up, "correct": flat})
    verdicts = name_rising_function(check_eval([before, after], AlarmSettings()), [before, after])
    (div,) = [v for v in verdicts if v.name == "divergence"]
    assert div.status == "alarm" and div.numbers["rose"] == "format_reward"
    assert "the reward function that rose: format_reward" in div.reason
    assert fn_means(after)["format_reward"] > fn_means(after)["correct"] + 0.5


@pytest.mark.parametrize(("names", "head"), [(["no_signal"], "RUN NOT LEARNING"),
                                              (["truncation", "feature"], "REWARD HACKING SUSPECTED")])
def test_the_verdict_says_which_kind_of_trouble(names: list[str], head: str) -> None:
    assert verdict_line(names, [3] * len(names), False, 2).startswith(head)


def test_summary_says_what_was_checked_and_what_was_quiet() -> None:
    latest = {"divergence": AlarmStatus(status="clear", reason="x"), "truncation": AlarmStatus(status="alarm", reason="y"),
              "drift": AlarmStatus(status="unknown", reason="no kl_budget")}
    text = format_hack_monitor(MonitorSummary(verdict="v", latest=latest, alarms=[
        {"name": "truncation", "step": 5, "message": "cut"}]))
    assert "checked: divergence, truncation, drift; quiet: divergence; could not be read: drift" in text
    assert "truncation: most completions are cut" in text  # what to do


def test_a_verdict_kept_by_the_book_is_reported_once() -> None:
    book = AlarmBook()
    alarm = Verdict("no_signal", "alarm", "m")
    assert [a.name for a in book.update(5, [alarm])] == ["no_signal"]
    assert book.update(6, [alarm]) == []


def test_health_thresholds_are_checked_at_construction() -> None:
    import whileai_train as wai

    m = wai.monitor(health={"window": 3, "entropy_floor": 0.1}, stop_on=["truncation", "no_signal", "collapse"],
                    verbose=False)
    assert m.health_settings.window == 3 and m.health_settings.entropy_floor == 0.1
    with pytest.raises(wai.ConfigError, match="not health thresholds"):
        wai.monitor(health={"windw": 3})
    with pytest.raises(wai.ConfigError, match="positive integer"):
        wai.monitor(health={"window": 0})
    assert wai.monitor(health={"entropy_fall": 0.25}, verbose=False).health_settings.entropy_fall == 0.25
    with pytest.raises(wai.ConfigError, match="entropy_fall.*0 or more"):
        wai.monitor(health={"entropy_fall": -1})
    with pytest.raises(wai.ConfigError, match="not alarms.*collapse"):
        wai.monitor(stop_on=["colapse"])


def test_the_summary_prints_a_table_per_named_reading() -> None:
    """Markers and each reward function's holdout mean print as step-by-name tables, each with its footnote."""
    from whileai_train.callbacks.monitor_report import EvalPoint, MonitorSummary, format_hack_monitor

    curve = [EvalPoint(step=step, proxy_reward=0.1 * step, gold_reward=0.1, markers={"honest_claims": 0.5},
                       rewards={"format_reward": 0.25 * step, "correct": 0.1}) for step in (0, 2)]
    text = format_hack_monitor(MonitorSummary(verdict="NO ALARM", curve=curve))
    lines = text.splitlines()
    marker_head = next(i for i, line in enumerate(lines) if "honest_claims" in line)
    reward_head = next(i for i, line in enumerate(lines) if "format_reward" in line)
    assert marker_head < reward_head and "correct" in lines[reward_head]
    assert lines[reward_head + 2].split() == ["2", "0.500", "0.100"]
    assert "(each reward function's holdout mean)" in text and "1.0 is the good outcome" in text
