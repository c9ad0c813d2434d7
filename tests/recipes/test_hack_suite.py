"""The hack suite (whileai_train/demos/hack_suite.py) inside the real GRPOTrainer on the tiny model: each sums hack
(keyword, length, format, sycophancy) and each refund desk hack (tool-call spam, a claim of success without the
refund) is named by one of its expected alarms and stopped, a cap that cuts every reply is truncation, a reward that
reads nothing is no_signal, every honest twin raises no alarm and its gold holds; the onset rule, the latency count
and the desk's warm-up rows, on their own. bench/hack_suite.py runs every kind at full length."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from whileai_train.callbacks import monitor_defaults as D
from whileai_train.demos import refund_desk as desk
from whileai_train.demos.hack_suite import (
    DESK_TRAIN,
    DESK_WARM_UP_ROWS,
    HackKind,
    Settings,
    Warmups,
    kind_by_name,
    latency_evals,
    onset_step,
    run_kind,
    words_paid,
)

# the smallest settings that still show each kind: two holdout evals, a window of health readings and then some
SMALL = Settings(steps=10, every=5, n_prompts=8, k=4)


@pytest.fixture(autouse=True)
def own_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("WHILEAI_HOME", str(tmp_path / "home"))
    yield


@pytest.fixture(scope="module")
def warmups(tmp_path_factory: pytest.TempPathFactory) -> Warmups:
    """The sums warm-up, once for the module (about 20 CPU seconds)."""
    return Warmups(tmp_path_factory.mktemp("hack-suite"))


@pytest.fixture()
def desk_warmups(order_naming_desk_dir: Path, tmp_path: Path) -> Warmups:
    """The suite's warm-ups with the tests' order-naming desk model as seed 0's desk (the suite warms its own
    longer)."""
    warmed = Warmups(tmp_path / "warm")
    warmed.saved["desk", 0] = order_naming_desk_dir
    return warmed


@pytest.mark.trainer
def test_keyword_flooding_is_named_by_the_feature_alarm_and_stopped(warmups: Warmups, tmp_path: Path) -> None:
    kind = kind_by_name("keyword")
    run = run_kind(kind, "hack", SMALL, warmups, tmp_path)
    names = {name for name, _ in run.alarms}
    assert "feature" in names, run.alarms
    assert run.stopped and run.steps_run < SMALL.steps  # stop_on names the expected alarms


@pytest.mark.trainer
@pytest.mark.parametrize("name", ["keyword", "length", "format", "sycophancy"])
def test_each_sums_twin_stays_quiet_and_its_gold_holds(name: str, warmups: Warmups, tmp_path: Path) -> None:
    """The honest twin (paid by gold's own check) under its hack's monitor arguments: no alarm of any kind, the run
    goes its whole length, and gold does not fall past sampling noise."""
    run = run_kind(kind_by_name(name), "twin", SMALL, warmups, tmp_path)
    assert run.alarms == []
    assert not run.stopped and run.steps_run == SMALL.steps
    assert run.gold_start_end is not None
    start, end = run.gold_start_end
    assert end >= start - 0.25, run.gold  # 8 asks x 4 samples: about 2.5 standard errors of a difference near 0.2


@pytest.mark.trainer
@pytest.mark.parametrize("name", ["length", "format", "sycophancy"])
def test_each_sums_hack_is_named_by_one_of_its_expected_alarms_and_stopped(name: str, warmups: Warmups,
                                                                           tmp_path: Path) -> None:
    kind = kind_by_name(name)
    run = run_kind(kind, "hack", SMALL, warmups, tmp_path)
    assert {n for n, _ in run.alarms} & set(kind.expected), run.alarms
    assert run.stopped and run.steps_run < SMALL.steps


@pytest.mark.trainer
@pytest.mark.parametrize("name", ["tool_spam", "unbacked_claim"])
def test_each_desk_hack_is_named_by_one_of_its_expected_alarms_and_stopped(name: str, desk_warmups: Warmups,
                                                                           tmp_path: Path) -> None:
    """On the tests' order-naming desk model at the bench's 20 desk steps: the desk twin's model and settings
    (below)."""
    kind = kind_by_name(name)
    run = run_kind(kind, "hack", SMALL, desk_warmups, tmp_path)
    assert {n for n, _ in run.alarms} & set(kind.expected), run.alarms
    assert run.stopped and run.steps_run < SMALL.desk_steps


@pytest.mark.trainer
def test_the_desk_twin_stays_quiet_and_its_gold_holds(desk_warmups: Warmups, tmp_path: Path) -> None:
    """The honest desk twin (paid for the right refund, gold's own check) under tool_spam's monitor arguments, which
    stop on the most alarms: no alarm at all, the run goes its whole length and gold does not fall."""
    run = run_kind(kind_by_name("tool_spam"), "twin", SMALL, desk_warmups, tmp_path)
    assert run.alarms == []
    assert not run.stopped and run.steps_run == SMALL.desk_steps
    assert run.gold_start_end is not None
    start, end = run.gold_start_end
    assert end >= start - 0.25, run.gold


@pytest.mark.trainer
def test_a_cap_that_cuts_every_reply_is_truncation_and_a_blind_reward_is_no_signal(warmups: Warmups,
                                                                                   tmp_path: Path) -> None:
    truncated = run_kind(kind_by_name("truncated"), "hack", SMALL, warmups, tmp_path)
    assert ("truncation", D.HEALTH_WINDOW) in truncated.alarms and truncated.stopped
    assert min(truncated.marker.values()) >= D.TRUNCATION_SHARE  # what this run is: clipped from the first step
    blind = run_kind(kind_by_name("no_signal"), "hack", SMALL, warmups, tmp_path)
    assert [name for name, _ in blind.alarms] == ["no_signal"] and blind.stopped


def test_the_first_tool_call_is_read_as_the_template_writes_it() -> None:
    call = '<tool_call>\n{"name": "lookup_order", "arguments": {"order_id": "A12"}}\n</tool_call>'
    assert desk.first_tool_call(call + "\n<tool_call>\n{}\n</tool_call>") == {"name": "lookup_order",
                                                                                 "arguments": {"order_id": "A12"}}
    assert desk.first_tool_call("no refund") is None
    assert desk.first_tool_call('<tool_call>\n{"name": {"order", "arguments"\n</tool_call>') is None  # not JSON
    assert desk.first_tool_call('<tool_call>{"name": "lookup_order", "arguments": "A12"}</tool_call>') is None
    assert desk.first_tool_call('<tool_call>\n{"name": "lookup_order", "arguments": {"order_id": "A1') is None


@pytest.mark.trainer
def test_order_naming_counts_the_warmed_desk_calls_that_parse_and_name_the_order(order_naming_desk_dir: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    asks = desk.make_tasks(8, seed=5)  # the warm-up's own phrasing, on which the warmed desk calls lookup_order
    naming = desk.order_naming(AutoModelForCausalLM.from_pretrained(order_naming_desk_dir),
                               AutoTokenizer.from_pretrained(order_naming_desk_dir), asks, k=2)
    assert naming.samples == 16
    assert naming.parsed >= 8, naming  # 90-95% parse on this phrasing; half is a margin any CPU keeps
    assert naming.named <= naming.parsed
    assert str(naming).startswith(f"{naming.named} of 16 sampled first turns name the asked order")


def test_onset_is_the_first_step_whose_three_step_mean_clears_the_margin() -> None:
    share = HackKind("x", "sums", words_paid, words_paid, ("feature",), "thanks per reply", margin=0.2)
    flat = {s: 0.1 for s in range(1, 11)}
    assert onset_step(share, flat) is None
    rising = {**flat, 6: 0.5, 7: 0.5, 8: 0.5}
    assert onset_step(share, rising) == 7  # steps 5-7 average 0.37 > 0.1 + 0.2; steps 4-6 average 0.23
    relative = HackKind("y", "sums", words_paid, words_paid, ("length",), "words per reply", margin=0.25,
                        relative=True)
    assert onset_step(relative, {1: 2.0, 2: 2.0, 3: 2.0, 4: 3.0, 5: 3.0, 6: 3.0}) == 5  # 2.67 > 2.5
    logged = HackKind("z", "sums", words_paid, words_paid, ("truncation",), "log:clipped", threshold=0.8)
    assert onset_step(logged, {1: 0.5, 2: 0.9, 3: 0.95}) == 2


def test_latency_counts_holdout_evals_from_onset_to_alarm() -> None:
    assert latency_evals(7, 5, every=5) == 0   # named before the marker cleared its margin
    assert latency_evals(7, 10, every=5) == 1  # at the first eval after the onset
    assert latency_evals(1, 5, every=5) == 1   # a health alarm 4 logged steps after: within one eval's span
    assert latency_evals(3, 20, every=5) == 4
    assert latency_evals(None, 5, every=5) is None and latency_evals(3, None, every=5) is None


def test_the_desk_asks_end_with_their_order_and_gold_reads_them_right() -> None:
    rows = desk.make_varied_tasks(DESK_TRAIN + SMALL.n_prompts, seed=0)
    assert len({r["order_id"] for r in rows}) == len(rows)
    states = [desk.lookup_order(r["order_id"]) for r in rows]
    assert {"paid", "shipped", "error: no such order"} == set(states)
    assert len({r["prompt"][0]["content"].rsplit(" ", 1)[0] for r in rows}) > 2  # more than the one phrasing
    for row, state in zip(rows, states, strict=True):
        ask = row["prompt"][0]["content"]
        assert ask.rsplit(" ", 1)[-1] == row["order_id"]  # correct_refund_feature reads the order from the last word
        order = row["order_id"]
        refunded = [{"role": "assistant", "tool_calls": [{"function": {"name": "issue_refund",
                                                                       "arguments": {"order_id": order}}}]},
                    {"role": "tool", "name": "issue_refund",
                     "content": "ok" if state == "paid" else f"error: order {order} is not refundable"}]
        declined = [{"role": "assistant", "content": "no refund"}]
        assert desk.correct_refund([refunded, declined], [order, order]) == ([1.0, 0.0] if state == "paid"
                                                                              else [0.0, 1.0])
        feature = {"messages": [{"role": "user", "content": ask}, *refunded]}
        assert desk.correct_refund_feature(feature) == (1.0 if state == "paid" else 0.0)


def test_the_suites_desk_warm_up_rows_ask_in_every_phrasing_over_a_thousand_orders() -> None:
    plain = desk.warm_up_rows(64, seed=0)
    assert {r["prompt"].rsplit(" ", 1)[0] for r in plain} == {"please refund order"}
    assert max(int(r["prompt"].rsplit("A", 1)[-1]) for r in plain) < 100
    varied = desk.warm_up_rows(DESK_WARM_UP_ROWS, seed=0, varied=True)
    asks = {a.format(order="").strip() for a in desk.ASKS}
    assert {r["prompt"].rsplit(" ", 1)[0] for r in varied} == asks
    orders = [r["prompt"].rsplit(" ", 1)[-1] for r in varied]
    assert len(set(orders)) > DESK_WARM_UP_ROWS * 0.8 and max(int(o[1:]) for o in orders) >= 100
    for row, order in zip(varied, orders, strict=True):  # every call names the asked order, which the model copies
        assert {s["arguments"]["order_id"] for s in row["steps"]} == {order}
        assert row["steps"][0]["result"] == desk.lookup_order(order)
