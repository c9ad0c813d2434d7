"""The style phrase lists as read: every form matches what it is written to match, the fast reading (words cut
once, forms tried only where their start words stand) finds exactly what the slow rule finds (every form at every
word start), and a form's start words cover every place its pattern can match."""

from __future__ import annotations

import random
import re

import pytest

from tests.corpus_data import authored_reply, rollouts, style_replies
from whileai_train.markers.defaults import (
    APOLOGY_FORMS,
    BOILERPLATE_SIGNOFF_FORMS,
    HEDGE_FORMS,
    OPENER_CHARS,
    SYCOPHANTIC_FORMS,
    Form,
)
from whileai_train.markers.phrases import LISTS, form_spans, opener_lead, places, read_phrases

EXAMPLES: dict[str, tuple[tuple[Form, ...], list[str]]] = {
    "hedge": (HEDGE_FORMS, [
        "I think so", "it seems", "possibly", "I'm not sure", "in some cases", "might", "probably", "as far as I know",
        "IIRC", "not 100% on this", "I reckon", "about 3 hours", "give or take", "my hunch is", "off the top of my head",
        "I could be wrong", "take it with a grain of salt", "in principle", "I'm guessing", "we estimate",
        "if I'm not mistaken", "in my opinion", "dunno", "can't confirm", "it's possible", "or something",
        "could explain", "sounds like rain", "ballpark", "7-ish", "a good chance", "I'm no expert", "hard to say",
        "no way to know", "a bit fuzzy", "~5 minutes", "to my knowledge", "from what I've read", "for what it's worth",
        "may or may not", "it depends"]),
    "apology": (APOLOGY_FORMS, [
        "Sorry about that", "My apologies", "Apologies, I misread it", "I apologise", "my bad", "that's on me",
        "forgive me", "we regret the delay", "pardon the confusion", "oops", "I mixed that up", "my condolences",
        "that must be frustrating", "I understand your frustration", "excuse the delay", "please accept our apologies"]),
    "sign-off": (BOILERPLATE_SIGNOFF_FORMS, [
        "Let me know if you have any other questions", "Hope this helps!", "Kind regards", "Feel free to reach out",
        "Don't hesitate to ask", "Have a great day", "Is there anything else I can help you with?", "Happy coding",
        "Thanks,\nCheers,\nSam", "I remain at your disposal", "let me know how it goes", "should you need any help",
        "Take care!", "we look forward to hearing from you", "I'm here to help", "Yours sincerely"]),
    "praise": (SYCOPHANTIC_FORMS, [
        "Great question!", "You're absolutely right", "What a lovely idea", "Spot on.", "I love this question",
        "Your instinct is spot on", "Bravo!", "Nice one, that works", "You clearly know your stuff", "Well spotted!"]),
}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_every_example_is_found_by_its_list(name: str) -> None:
    forms, texts = EXAMPLES[name]
    number = LISTS.index(forms)
    for text in texts:
        assert read_phrases(text.lower())[number], (name, text)


def _texts() -> list[str]:
    """Every labelled reply, every rollout's reply, the examples, and seeded jumbles of the lists' start words and
    phrases with ordinary words, punctuation, quotes and line breaks between them."""
    texts = [reply["text"] for reply in style_replies()] + [authored_reply(record) for record in rollouts()]
    texts += [text for _, examples in EXAMPLES.values() for text in examples]
    pieces = sorted({word for forms in LISTS for form in forms for word in form.starts})
    pieces += [text for _, examples in EXAMPLES.values() for text in examples]
    pieces += ["the", "order", "is", "on", "its", "way", "3", "2pm", "'", '"', ".", ",", "!", "?", "\n", "> ", "—",
               "café", "naïve", "don't", "it's", "I'd", "you're", "A1", "May", "in May", "7", "-ish"]
    rng = random.Random(20)
    for _ in range(400):
        texts.append(" ".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30))))
    return texts


def test_the_fast_reading_finds_exactly_what_the_slow_rule_finds() -> None:
    found_any = [0] * len(LISTS)
    for text in _texts():
        low = text.lower()
        found = read_phrases(low)
        for number, forms in enumerate(LISTS):
            if forms is SYCOPHANTIC_FORMS:
                slow = form_spans(low, forms, opener_lead(low), OPENER_CHARS)
            else:
                slow = form_spans(low, forms)
            assert sorted(found[number]) == sorted(slow), (text, number)
            found_any[number] += bool(slow)
    assert all(count > 50 for count in found_any), found_any


_WORD_START = re.compile(r"(?<![a-z~])[a-z~]+")


def test_a_form_matches_only_where_one_of_its_start_words_stands() -> None:
    """Scanned end to end, a form's pattern never matches at a word start whose word it does not name: the start
    words are complete, so trying a form only where they stand loses nothing."""
    checked = 0
    for text in _texts():
        low = text.lower()
        for forms in LISTS:
            for form in forms:
                for match in form.pattern.finditer(low):
                    start = match.start()
                    word = _WORD_START.match(low, start)
                    if word is None:
                        continue  # not at a word start: the reader never tries there, and the slow rule agrees
                    checked += 1
                    if form.starts:
                        assert word.group() in form.starts, (form.starts, match.group(), text)
                    else:
                        assert start == 0 or not low[:start].strip(" \n\t\"'(*-—>.,!?:;"), (match.group(), text)
    assert checked > 1000


def test_overlapping_matches_count_as_one_place() -> None:
    assert places([]) == 0 and places([(0, 4)]) == 1
    assert places([(0, 10), (5, 20), (12, 15)]) == 1  # a chain of overlaps is one place
    assert places([(10, 12), (0, 4), (4, 8)]) == 3  # touching is not overlapping
    hedges = read_phrases("i may or may not be right".lower()).hedges
    assert places(hedges) == 1  # "may or may not" is one hedge, though "may" stands twice
