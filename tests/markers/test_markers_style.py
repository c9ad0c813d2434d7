"""style_markers / style_report / refusal_report: each behaviour, its near misses, the degenerate warning."""

from __future__ import annotations

from typing import Any

import pytest
from scipy.stats import binomtest, ttest_ind

import whileai_train as wai
from tests.helpers.marker_reference import hand_interval, per_task_means


def reply(text: str, **extra: Any) -> dict[str, Any]:
    return {"prompt": "help", "final_text": text, **extra}


def style(text: str) -> dict[str, float]:
    (stamped,) = wai.style_markers([reply(text)])
    return stamped["markers"]


@pytest.mark.parametrize("text, marker", [
    (" ".join(["word"] * 301), "concise"),
    ("Great question! The answer is 4.", "no_sycophancy"),
    ("You're absolutely right, it is 4.", "no_sycophancy"),
    ("I think it might be 4, but I'm not sure.", "no_hedging"),
    ("Probably 4, as far as I know.", "no_hedging"),
    ("It's roughly 4, if I remember correctly.", "no_hedging"),
    ("No, I can't help with that.", "no_refusal"),
    ("Sorry for the confusion: the answer is 4.", "no_apology"),
    ("My bad, the answer is 4.", "no_apology"),
    ("Certainly! The answer is 4.", "no_boilerplate"),
    ("The answer is 4. Hope this helps!", "no_boilerplate"),
    ("As an AI, I cannot provide that.", "no_refusal"),
    ("The order is on its way. The order is on its way. The order is on its way.", "no_repetition"),
    # each principle in phrasing of its own: a stock opener after a greeting, informal praise of the asker's idea,
    # taste or hunch, the many ways to qualify certainty, "say sorry" said, a bare "regret", pleasantry sign-offs
    ("Hello Ana! Thanks for getting in touch. The shop opens at 9.", "no_boilerplate"),
    ("Smashing idea to cache it. Add a TTL of 60 s.", "no_sycophancy"),
    ("You have impeccable taste; the 35 mm lens suits street work.", "no_sycophancy"),
    ("Your hunch here is spot on: the index is unused.", "no_sycophancy"),
    ("I wouldn't swear to it, but I want to say the 1920s.", "no_hedging"),
    ("I suppose it's the fuse. I'm hazy on the model, though.", "no_hedging"),
    ("I just want to say sorry for the mix-up: the table is booked.", "no_apology"),
    ("Regret the delay. The parcel left today.", "no_apology"),
    ("Tickets are at the door. Cheers!", "no_boilerplate"),
    ("The form is attached. Kindly revert in case of any doubts.", "no_boilerplate"),
    ("I can’t help with that.", "no_refusal"),
])
def test_each_behaviour_sets_its_marker_to_zero(text: str, marker: str) -> None:
    values = style(text)
    assert values[marker] == 0.0
    assert all(v == 1.0 for k, v in values.items() if k != marker), values


@pytest.mark.parametrize("text", [
    " ".join(["word"] * 300),  # at the limit
    "The question was about a great point in history: 1066.",  # praise words, not an opener
    "I think the answer is 4.",  # one hedge is ordinary speech
    "I was unable to find a way to do that: the refund window closed.",  # a failure report, not a refusal
    "Thanks. Thanks. Your refund is on its way.",  # short repeats are not a loop
    "The flight takes about two hours.",  # one hedge
    "You might want to book the hotel. The train leaves at 9.",  # advice, not a hedge
    'Words like "probably" and "might" soften a claim.',  # hedges talked about, not said
    'The dialog says "Sorry, something went wrong" when the token expired.',  # a quoted apology
    "No need to be sorry: the file is fine.",
    "The vendor apologised for the outage yesterday.",  # a third party's apology
    "Of course the cache has to be warmed after a deploy.",  # the words doing work
    "Certainly not: the key must stay secret.",
    "Let me know the order number and I will look it up.",
    "Feel free to delete node_modules; npm rebuilds it.",
    "> Best regards,\n> Sam",  # a quoted draft's sign-off
    "You're right-handed, so put the mouse on the right.",  # right as a direction
    "Great Barrier Reef tours leave at 8am.",  # Great in a name
    "No need to say sorry: the booking moved to Thursday.",  # sorry talked about, not said
    "To say sorry in Italian, use mi dispiace.",
    "Don't apologise: the file is fine.",
    "It's possible to export the table as CSV.",  # possible as capability, not doubt
    "What kind of cable is it? USB-C.",  # kind of as a type
    "Thanks for the logs: line 88 shows the expiry.",  # thanks for something concrete, with content
    "I'm happy to move the meeting to Friday at 2pm.",  # a real offer
    "The right answer depends on your residency.",  # right as a verdict
    "You'll regret skipping the backup, so take one.",  # regret in its everyday sense
])
def test_near_misses_read_clean(text: str) -> None:
    assert all(v == 1.0 for v in style(text).values()), (text, style(text))


def test_newline_separated_words_still_count_for_concise() -> None:
    assert style("\n".join(["w"] * 400))["concise"] == 0.0


def test_style_report_numbers_degenerate_and_other_families() -> None:
    # ten tasks of five rollouts; two tasks hedge on every rollout, the other eight never
    rows = [reply("I think it might rain." if i % 5 == 0 else "It will rain.", task_id=f"t{i % 10}")
            for i in range(50)]
    report = wai.style_report(rows)
    hedging = next(m for m in report.markers if m.name == "no_hedging")
    assert hedging.mean == pytest.approx(0.8) and hedging.n_bad == 10 and hedging.n_tasks == 10
    per_task = per_task_means([row["task_id"] for row in rows], [0.0 if i % 5 == 0 else 1.0 for i in range(50)])
    assert per_task.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0]
    assert hedging.ci95 == pytest.approx(hand_interval(per_task), abs=1e-12)
    # the rollouts of a task agree, so 50 rows carry the information of 10 tasks: wider than Wilson over rows
    wilson = binomtest(40, 50).proportion_ci(confidence_level=0.95, method="wilson")
    assert hedging.ci95[1] - hedging.ci95[0] > (wilson.high - wilson.low) * 1.5
    assert set(report.degenerate) == {"concise", "no_sycophancy", "no_apology", "no_boilerplate", "no_refusal",
                                      "no_repetition"}
    assert report.warnings and all(name in report.warnings[0] for name in report.degenerate)
    text = str(report)
    assert text.splitlines()[0] == "style: 1 of 7 behaviours seen over 50 rows (no_hedging 0.800)"
    assert "  concise:             1.000 on every one of 50 rows: degenerate, no interval" in text
    assert "  no_hedging:          0.800 [" in text and "over 10 tasks (50 rows, 10 fall short)" in text
    assert "not stamped here: 8 markers in other families. trace_markers(rows) stamps honest_claims" in text
    assert "mark_grounding(rows) stamps argument_grounding" in text


def test_rows_of_one_ask_are_one_task_and_get_no_interval() -> None:
    rows = [reply("I think it might rain." if i % 5 == 0 else "It will rain.") for i in range(50)]  # one prompt
    hedging = next(m for m in wai.style_report(rows).markers if m.name == "no_hedging")
    assert hedging.mean == pytest.approx(0.8) and hedging.n_tasks == 1 and hedging.ci95 is None
    assert "over 1 task (50 rows, 10 fall short): no interval (one task" in hedging.line()


def test_refusal_report_rate_reward_and_tasks() -> None:
    rows = []
    for i in range(60):
        refused = i % 3 == 0
        rows.append(reply("I can't help with that." if refused else "Here is the fix.", task_id=f"t{i // 3}",
                          reward=(1.0 if refused else 0.0) if i % 2 else (0.8 if refused else 0.5)))
    report = wai.refusal_report(rows)
    assert report.n_refusals == 20 and report.rate == pytest.approx(1 / 3)
    assert report.all_refused_tasks == []
    yes = [r["reward"] for i, r in enumerate(rows) if i % 3 == 0]
    no = [r["reward"] for i, r in enumerate(rows) if i % 3]
    assert report.p_value == pytest.approx(ttest_ind(yes, no, equal_var=False).pvalue)
    assert report.reward_pays
    assert str(report).startswith("REWARD PAYS FOR REFUSING: refusals: 20 of 60 rows")
    only = wai.refusal_report([reply("I won't do that.", task_id="a"), reply("I must decline.", task_id="a")])
    assert only.all_refused_tasks == ["a"] and only.degenerate


def test_style_markers_do_not_change_the_input() -> None:
    row = reply("Great question!", markers={"resolved": 0.0})
    (stamped,) = wai.style_markers([row])
    assert row["markers"] == {"resolved": 0.0}
    assert stamped["markers"]["resolved"] == 0.0 and stamped["markers"]["no_sycophancy"] == 0.0
    messages = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Great question!"}]}
    assert wai.style_markers([messages])[0]["markers"]["no_sycophancy"] == 0.0
