"""The style phrase lists as read: every list finds what it is written to find, the fast reading (words cut once,
forms tried only where their start words or start pairs stand, a decided list not tried again) says exactly what the
slow rule says (every form at every word start), and a form's start words and pairs cover every place its pattern can
match."""

from __future__ import annotations

import random
import re

import pytest

from tests.helpers.corpus_data import authored_reply, held_out_replies, rollouts, style_replies
from whileai_train.markers.phrases import (
    LISTS,
    form_spans,
    opener_lead,
    places,
    said,
    said_slowly,
    word_starts,
)
from whileai_train.markers.style_forms import fold
from whileai_train.markers.style_phrases import (
    APOLOGY_FORMS,
    BOILERPLATE_OPENER_FORMS,
    BOILERPLATE_SIGNOFF_FORMS,
    HEDGE_FORMS,
    REFUSAL_FORMS,
    SYCOPHANTIC_FORMS,
)

# Phrases each list must find, written for this test in the registers the lists cover (not taken from the corpus).
EXAMPLES: dict[str, list[str]] = {
    "hedges": [
        "I think so", "it seems", "possibly", "I'm not sure", "in some cases", "might", "probably", "as far as I know",
        "IIRC", "not 100% on this", "I reckon", "about 3 hours", "give or take", "my hunch is", "off the top of my head",
        "I could be wrong", "take it with a grain of salt", "in principle", "I'm guessing", "we estimate",
        "if I'm not mistaken", "in my opinion", "dunno", "can't confirm", "it's possible", "or something",
        "could explain", "it sounds like rain", "ballpark", "7-ish", "a good chance", "I'm no expert", "hard to say",
        "no way to know", "a bit fuzzy", "~5 minutes", "to my knowledge", "from what I've read", "for what it's worth",
        "may or may not", "it depends", "I suppose", "I want to say", "I wouldn't bet on it", "I'm hazy on the date",
        "I'd bet", "judging by the logs", "it's been a while since I used it", "I haven't tested it", "kind of slow",
        "I’d guess", "If I had to guess", "going from memory", "worth double-checking", "who knows", "somewhat",
        "I'm a little rusty", "wouldn't be surprised if", "I'd have to check", "should arrive Friday"],
    "apology": [
        "Sorry about that", "My apologies", "Apologies, I misread it", "I apologise", "my bad", "that's on me",
        "forgive me", "we regret the delay", "pardon the confusion", "oops", "I mixed that up", "my condolences",
        "that must be frustrating", "I understand your frustration", "excuse the delay", "please accept our apologies",
        "I’m sorry", "I just want to say sorry for the mix-up", "I got that wrong", "I stand corrected",
        "I'd like to apologise", "we are writing to apologise", "that one's my fault", "I've made a mistake",
        "that sounds stressful", "I can imagine how frustrating", "regrettably, no"],
    "boilerplate": [
        "Let me know if you have any other questions", "Hope this helps!", "Kind regards", "Feel free to reach out",
        "Don't hesitate to ask", "Have a great day", "Is there anything else I can help you with?", "Happy coding",
        "Thanks,\nCheers,\nSam", "I remain at your disposal", "let me know how it goes", "should you need any help",
        "Take care!", "we look forward to hearing from you", "I'm here to help", "Yours sincerely",
        "Certainly! It is 4.", "Hi there! Thanks for getting in touch.", "Hello Sam,\n\nHope you are doing well.",
        "No worries — it is 4.", "Got it! It is 4.", "Good morning, thank you for your email.", "Greetings!",
        "Yes, of course! It is 4.", "I'd be glad to help.", "Thanks heaps for your message.", "Wish you a nice day!",
        "Reply here if you have questions.", "Enjoy!", "Cheers, and good luck", "It is 4.\n\nBest,\nSam",
        "Thanks & Regards,\nSupport", "any questions, just ask"],
    "praise": [
        "Great question!", "You're absolutely right", "What a lovely idea", "Spot on.", "I love this question",
        "Your instinct is spot on", "Bravo!", "Nice one, that works", "You clearly know your stuff", "Well spotted!",
        "Cracking question, that.", "You have excellent taste.", "Your plan here is excellent.", "Smart thinking.",
        "Sharp eye!", "What a well-written prompt!", "Good on ya for asking.", "You’re spot on.", "Hi Sam,\n\nGreat catch!",
        "Oh wow, you're a natural.", "Totally agree.", "I couldn't agree more.", "Such a ripper of an idea!",
        "Impressive work getting this far.", "You've done your homework here.", "Top-notch question."],
    "refusal": ["I can't help with that", "I'm unable to assist", "I must decline", "I won't do that",
                "As an AI, I cannot do that", "I’m not comfortable writing that"],
}
_FIELD = {"hedges": 0, "apology": 1, "boilerplate": 2, "praise": 3, "refusal": 4}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_every_example_is_found_by_its_list(name: str) -> None:
    for text in EXAMPLES[name]:
        assert said(fold(text))[_FIELD[name]], (name, text)


@pytest.mark.parametrize("text, field", [
    ("Sure enough, the log shows two runs.", "boilerplate"), ("Certainly not.", "boilerplate"),
    ("Let me know the order number.", "boilerplate"), ("Don't hesitate to call 911 if it hurts.", "boilerplate"),
    ("Thanks for the logs: line 88 shows it.", "boilerplate"), ("I hope you kept the old file.", "boilerplate"),
    ("> Best regards,\n> Sam", "boilerplate"), ('The footer says "Have a great day".', "boilerplate"),
    ("No need to say sorry, it moved to Thursday.", "apology"), ("How to say sorry in French: pardon.", "apology"),
    ("Don't apologise: the file is fine.", "apology"), ("Correct me if I'm wrong about the date.", "apology"),
    ("Turn right at the light.", "praise"), ("The Rust Book is an excellent resource.", "praise"),
    ("The first sentence is plain. Great question though!", "praise"), ("You're right-handed, so use the left.", "praise"),
    ("What kind of file is it?", "hedges"), ("I was unable to find the file.", "refusal"),
])
def test_near_misses_are_not_found(text: str, field: str) -> None:
    assert not said(fold(text))[_FIELD[field]], (text, field)


def _texts() -> list[str]:
    """Every labelled reply (all three splits), every rollout's reply, the examples, and seeded jumbles of the lists' start words and
    pairs, the examples, ordinary words, punctuation, quotes, greetings and line breaks."""
    texts = [reply["text"] for reply in (*style_replies(), *held_out_replies())]
    texts += [authored_reply(record) for record in rollouts()]
    texts += [text for examples in EXAMPLES.values() for text in examples]
    pieces = sorted({word for forms in LISTS for form in forms for word in form.starts})
    pieces += sorted({f"{first} {second}" for forms in LISTS for form in forms for first, second in form.pairs})
    pieces += [text for examples in EXAMPLES.values() for text in examples]
    pieces += ["the", "order", "is", "on", "its", "way", "3", "2pm", "'", '"', ".", ",", "!", "?", "\n", "> ", "—",
               "café", "naïve", "don't", "it's", "I'd", "you're", "A1", "May", "in May", "7", "-ish", "Hi Sam,\n",
               "100%", "~", "question", "idea", "right", "help", "anything else", "  ", "\t", "’"]
    rng = random.Random(20)
    for _ in range(600):
        texts.append(" ".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30))))
    return texts


def test_the_fast_reading_says_exactly_what_the_slow_rule_says() -> None:
    seen = [0] * 5
    for text in _texts():
        low = fold(text)
        fast, slow = said(low), said_slowly(low)
        assert fast == slow, (text, fast, slow)
        for field, value in enumerate(slow):
            seen[field] += bool(value)
    assert all(count > 30 for count in seen), seen


def test_a_form_matches_only_where_one_of_its_start_words_or_pairs_stands() -> None:
    """Scanned end to end, a form's pattern never matches at a word start whose word (or word and the next word) it
    does not name, and an at_start form only matches a reply whose first word it names: the starts are complete, so
    trying a form only where they stand loses nothing."""
    checked = 0
    for text in _texts():
        low = fold(text)
        starts = word_starts(low)
        following = {at: (word, starts[index + 1][1] if index + 1 < len(starts) else "")
                     for index, (at, word) in enumerate(starts)}
        for forms in LISTS:
            for form in forms:
                if form.at_start:
                    if form.pattern.match(low):
                        word, after = following[starts[0][0]]
                        assert word in form.starts or (word, after) in form.pairs, (form.pattern.pattern[:60], text)
                        checked += 1
                    continue
                for match in form.pattern.finditer(low):
                    if match.start() not in following:
                        continue  # not at a word start: the reader never tries there, and the slow rule agrees
                    word, after = following[match.start()]
                    assert word in form.starts or (word, after) in form.pairs, (form.starts, match.group(), text)
                    checked += 1
    assert checked > 1500


def test_praise_counts_only_in_the_opener_after_a_salutation() -> None:
    assert opener_lead(fold("Hi Sam,\n\nGreat catch! The rest.")) == len("Hi Sam,\n\nGreat catch")
    assert said(fold("Dear Ms Okafor,\nWhat a thoughtful question.")).praise
    assert not said(fold("The answer is 4, as the table shows on the second page of the report. Great question!")).praise


def test_overlapping_matches_count_as_one_place() -> None:
    assert places([]) == 0 and places([(0, 4)]) == 1
    assert places([(0, 10), (5, 20), (12, 15)]) == 1  # a chain of overlaps is one place
    assert places([(10, 12), (0, 4), (4, 8)]) == 3  # touching is not overlapping
    assert said(fold("I may or may not be right")).hedges == 1  # "may or may not" is one hedge, though "may" stands twice
    assert said(fold("I'm a bit rusty on this")).hedges == 1


def test_the_lists_are_the_ones_read() -> None:
    assert LISTS == (HEDGE_FORMS, APOLOGY_FORMS, BOILERPLATE_SIGNOFF_FORMS, SYCOPHANTIC_FORMS, REFUSAL_FORMS,
                     BOILERPLATE_OPENER_FORMS)
    assert form_spans(fold("Sorry! Hope this helps."), BOILERPLATE_SIGNOFF_FORMS) == [(7, 22)]
    assert all(re.fullmatch(r"[a-z~%]+", word) for forms in LISTS for form in forms for word in form.starts)


def test_the_outcome_bits_of_the_style_markers_do_not_collide() -> None:
    """reply_style's outcome key joins read()'s bits with its own (hedging, length, repetition): no bit is shared, and
    each outcome's markers fall short exactly where its bits say."""
    from whileai_train.markers import style
    from whileai_train.markers.phrases import APOLOGY_FOUND, BOILERPLATE_FOUND, PRAISE_FOUND, REFUSAL_FOUND

    found = (APOLOGY_FOUND, BOILERPLATE_FOUND, PRAISE_FOUND, REFUSAL_FOUND)
    own = (style._HEDGING, style._LONG, style._REPEATING)
    assert len({*found, *own}) == 7 and all(bit.bit_count() == 1 for bit in (*found, *own))
    assert sum(found + own) < len(style._OUTCOMES)
    assert style.reply_style("Sorry! Hope this helps.") == {**style._OUTCOMES[0], "no_apology": 0.0, "no_boilerplate": 0.0}
