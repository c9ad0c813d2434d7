"""The style markers' phrase lists: hedges, apologies, stock openers and sign-offs, praise of the asker, refusals.

Ours, written from the behaviours Lambert 2025 names (RLHF book, chapter "Over-optimization": sycophancy, hedging)
and Sharma et al. 2023 ("Towards Understanding Sycophancy in Language Models"), and from how people write the stock
phrases of support macros, assistant replies and business letters, in the registers of tests/corpus/README.md
(support desks, code assistants, formal and casual chat, British, Australian and Indian English, non-native
writers). Each list is written as a principle with broad word classes (any praise adjective before any word for the
asker's question or work; any stock thanks, acknowledgement or pleasantry), not as the strings of one corpus; the
labelled corpus measures them (tests/markers/test_markers_corpus.py, bench/markers.py).

Each list is a tuple of forms (style_forms.py: a pattern over the folded reply and the words or word pairs its
matches start with), read by phrases.py.
"""

from __future__ import annotations

import re

from whileai_train.markers.style_forms import TO_FIRST_WORD, one_of, pairs_of, phrase_forms

__all__ = [
    "APOLOGY_FORMS",
    "BOILERPLATE_OPENER_FORMS",
    "BOILERPLATE_SIGNOFF_FORMS",
    "GREETING",
    "GREETING_WORDS",
    "HEDGE_FORMS",
    "OPENER_END",
    "OPENER_LEAD",
    "REFUSAL_FORMS",
    "SYCOPHANTIC_FORMS",
]


# ------------------------------------------------------------------------------------------ openers

# A salutation before the reply proper ("Hi there! 👋", "Hello dear,", "Dear Ms Okafor,\n\n", "Good morning Raj —"):
# a greeting word, up to 40 characters of name on its line, then punctuation or a line break. A stock opener or praise
# right after it still opens the reply.
GREETING_WORDS = "hi hello hey heya hiya howdy yo hallo gday g dear good morning afternoon evening namaste hola bonjour"
_GREETING = (r"(?:hi|hello|hey|heya|hiya|howdy|yo|hallo|g'?day|dear|good\s+(?:morning|afternoon|evening|day)|morning"
             r"|afternoon|evening|namaste|hola|bonjour)\b(?:[^\n.!?,:;—–]{0,40}(?:[.!?,:;—–-]+|\n)|\s+and\s+)[^a-z~%]*")
GREETING = re.compile(TO_FIRST_WORD + _GREETING)
# Interjections that may come before a stock opener or before praise ("Yes, of course!", "Ooh, love this question").
_LEAD_IN_WORDS = ("oh ooh oooh wow woah whoa ah ahh aw aww omg gosh honestly well yes yeah yep ok okay haha lol hmm "
                  "man mate dude ngl tbh genuinely seriously ha hah so right")
_LEAD_INS = r"(?:(?:" + one_of(_LEAD_IN_WORDS) + r")\b[^a-z~%\n]*)*"
_GREETED = r"(?:" + _GREETING + r")?" + _LEAD_INS

# How far into the reply (after a salutation) praise still opens it, and what ends the opener before that: a
# sentence end, a line break, a double quote.
OPENER_LEAD = 80
OPENER_END = re.compile(r"[.!?\n\"“”]")

# A stock opener: an acknowledgement (Certainly! Sure thing. Of course! No worries! Got it! Here you go), an offer to
# help (Happy to help, I'd be glad to assist), stock thanks for getting in touch (Thanks for reaching out, Thank you
# for your message), stock wishes (Hope you're doing well, I hope this email finds you well, Greetings of the day,
# Great to hear from you). Not an opener: the same words doing work ("Of course the cache has to be warmed",
# "Certainly not.", "Sure enough, the log shows", "Thanks for the logs — line 88 ...", "I'm happy to move the
# meeting", "Here is the summary: ..."), and praise ("Excellent!", which is sycophancy's).
_ACKNOWLEDGED = (
    r"certainly(?!\s+not\b)\s*(?:[.!,:;—–-]|$)|sure(?:\s+thing)?\s*(?:[!,.:;—–-]|$)|sure\s+(?:thing|here|no\s+problem|can"
    r"\s+do)\b|of\s+course\s*(?:[!,.:;—–-]|$)|absolutely\s*(?:[!,.:;—–-]|$)|definitely\s*[!,—–-]|(?:no|not\s+a)\s+(?:"
    r"worries|worry|problem|problemo|probs?|dramas|stress|bother|trouble)\b(?!\s+(?:with|in|on|for)\b)|(?:you\s+got\s+it|you\s+bet|gladly|my\s+"
    r"pleasure|with\s+pleasure|right\s+away|will\s+do|on\s+it|got\s+it|gotcha|understood|noted|roger(?:\s+that)?|copy"
    r"\s+that|most\s+certainly|consider\s+it\s+done|coming\s+(?:right\s+)?up|say\s+no\s+more|righto|okey[- ]dokey|can\s+do|happy\s+days|"
    r"too\s+easy)"
    r"\s*(?:[!,.—–-]|$)|(?:perfect|great|cool|nice|sweet|lovely|alright|all\s+right|ok|okay)\s*!|here\s+you\s+(?:go|are)"
    r"\b|here(?:'s|\s+is)\s+(?:what\s+you\s+(?:asked|need|requested)|the\s+(?:info(?:rmation)?|details)\s+you\s+"
    r"(?:asked|requested|need))")
_OFFERED = (
    r"(?:i'?m\s+|i\s+am\s+|i'?d\s+be\s+|i\s+would\s+be\s+|we'?re\s+|we\s+are\s+|we'?d\s+be\s+)?(?:more\s+than\s+|always\s+"
    r"|so\s+|very\s+|really\s+)?(?:happy|glad|delighted|pleased|thrilled)\s+to\s+(?:help|assist|walk|explain|clarify|take"
    r"\s+a\s+look|look\s+into|answer|oblige|be\s+of|lend|support|guide|advise|go\s+through|run\s+through|break\s+(?:it|"
    r"this)\s+down)\b|(?:happy|glad)\s+to\s*[!.]|glad\s+you\s+asked\b|(?:it'?s|it\s+is)\s+(?:a|my)\s+pleasure\s+to\s+"
    r"(?:help|assist)\b")
_CONTACT_NOUNS = (r"inquiry|enquiry|question|questions|message|email|e-mail|mail|note|query|queries|request|interest|"
                  r"patience|understanding|feedback|order|purchase|time|reply|response|follow-?up|business|ticket|call|"
                  r"chat|kind\s+words|words|trust|support|letter")
_THANKED = (
    r"(?:many\s+)?(?:thanks|thank\s+you|thankyou|thx|ta|cheers)(?:\s+(?:so|very)\s+much|\s+a\s+(?:lot|bunch|million|"
    r"ton)|\s+heaps|\s+kindly|\s+again)?\s+(?:for|so\s+much\s+for)\s+(?:reaching\s+out|contacting|getting\s+in\s+touch|"
    r"writing(?:\s+in)?|asking|the\s+question|(?:your|the)\s+(?:\w+\s+)?(?:" + _CONTACT_NOUNS + r")|choosing|using|"
    r"being\s+(?:a|an|so|such)|letting\s+(?:me|us)\s+know|checking\s+in|your\s+\w+\s+question)\b"
    r"|(?:i|we)\s+(?:really\s+|truly\s+|do\s+|greatly\s+)?appreciate\s+(?:your|you)\s+(?:patience|understanding|reaching"
    r"|getting|contacting|message|business|taking|question|query|feedback|asking|writing|interest|time)")
_WISHED = (
    r"(?:(?:i|we)\s+)?(?:hope|trust)\s+(?:this|my|the)\s+(?:message|email|e-mail|mail|note|letter)\s+finds\s+you\b"
    r"|(?:(?:i|we)\s+)?(?:hope|trust)\s+(?:you'?re|you\s+are|all\s+is|all'?s|you\s+have\s+been|you'?ve\s+been|your\s+"
    r"(?:day|week|weekend|morning)\s+is|things\s+are|everything\s+is|you\s+and\s+\w+\s+are|you\s+all\s+are)\s+(?:(?:"
    r"doing|keeping|going|having|feeling|all|been|staying)\s+)?(?:well|good|great|fine|ok(?:ay)?|safe|healthy|nicely|"
    r"smoothly|an?\s+(?:good|great|lovely|nice|wonderful|fantastic|productive)\b)|(?:(?:i|we)\s+)?(?:hope|trust)\s+"
    r"(?:this\s+finds\s+you|you(?:\s+have|'?ve)?\s+had\s+an?\s+(?:good|great|lovely|nice|wonderful|relaxing))\b"
    r"|(?:warm\s+|season'?s\s+)?greetings\b|welcome(?:\s+back)?\s*(?:[!,.]|to\b)"
    r"|(?:great|good|nice|lovely|so\s+good|wonderful)\s+to\s+(?:hear\s+from\s+you|see\s+you|have\s+you|meet\s+you)\b")
_GREETED_STARTS = GREETING_WORDS + " " + _LEAD_IN_WORDS
BOILERPLATE_OPENER_FORMS = phrase_forms(
    (_GREETED_STARTS + " certainly sure absolutely definitely gladly right will gotcha understood noted roger copy consider "
     "coming say righto okey can too most happy perfect great cool nice sweet lovely alright all ok okay "
     + pairs_of("you", "got bet") + " my+pleasure with+pleasure "
     + pairs_of("no", "worries worry problem problemo prob probs dramas stress bother trouble") + " not+a on+it got+it "
     + pairs_of("here", "you s is") + " of+course",
     _GREETED + r"(?:" + _ACKNOWLEDGED + ")"),
    (_GREETED_STARTS + " happy glad delighted pleased thrilled more always so very really "
     + pairs_of("i we", "m am re are d would") + " " + pairs_of("it", "s is"),
     _GREETED + r"(?:" + _OFFERED + ")"),
    (_GREETED_STARTS + " many thanks thank thankyou thx ta cheers "
     + pairs_of("i we", "appreciate really truly do greatly"),
     _GREETED + r"(?:" + _THANKED + ")"),
    (_GREETED_STARTS + " hope trust warm season seasons greetings welcome great good nice lovely so wonderful "
     + pairs_of("i we", "hope trust"),
     _GREETED + r"(?:" + _WISHED + ")"),
    at_start=True,
)

# ------------------------------------------------------------------------------------------ sign-offs

# A stock sign-off: an offer of more help (Let me know if you have any other questions, Feel free to reach out,
# Don't hesitate to ask, Is there anything else I can help you with?), a wish that it helped (Hope this helps!, Glad I
# could help), a pleasantry (Have a great day, Enjoy!, Take care, Happy coding, Cheers), a letter's close (Kind
# regards, Yours sincerely, "Best,\nSam"). Read anywhere outside quoted lines ("> Best regards" in a draft the user
# asked for). Not a sign-off: the same words doing work ("Let me know the order number", "Let me know when the build
# finishes", "Feel free to delete node_modules", "Don't hesitate to call 911 if ...", "Is there anything else in the
# log?"), and sign-offs quoted or listed as content.
_DAYS = ("day evening week weekend one afternoon morning night time trip flight holiday holidays break journey stay meal "
         "rest sunday monday tuesday wednesday thursday friday saturday year summer christmas event party launch move "
         "visit")
_NICE = ("nice great good wonderful lovely fantastic pleasant productive awesome excellent blessed brilliant safe "
         "relaxing restful smooth fab fabulous happy beautiful terrific splendid cracking top cool fun peaceful easy "
         "amazing")
_MORE_HELP = (r"anything|any(?:\s+\w+)?\s+(?:questions?|help|assistance|issues?|problems?|trouble|concerns?|queries)|more|"
              r"else|further|additional|other|help|changes|tweaks|adjustments|clarification|assistance|info(?:rmation)?|"
              r"details")
_CONTACT_VERBS = (r"reach\s+out|ask|contact|get\s+in\s+touch|reply|ping|drop\s+(?:me|us)|message|email|write|let\s+(?:me|"
                  r"us)\s+know|come\s+back|follow\s+up|give\s+(?:me|us)\s+a|call\s+(?:me|us|our)|circle\s+back|raise|"
                  r"send\s+(?:me|us)|get\s+back\s+to\s+(?:me|us)")
BOILERPLATE_SIGNOFF_FORMS = phrase_forms(
    # let me know if you need anything else / if that helps / how it goes
    ("let+me let+us lmk keep+me",
     (r"(?:let\s+(?:me|us)\s+know|lmk)\s+(?:if|whether|should)\s+(?:(?:you|there)\b[^.!?\n]{0,40}?\b(?:" + _MORE_HELP
      + r")\b|(?:this|that|it|the\s+above|these|those)\s+(?:helps?|works?|worked|does\s+the\s+trick|solves|fixes|sorts|"
        r"answers|clears)\b|any\s+(?:further|other|additional|more)\b|anything\b|(?:i|we)\s+can\b)"
        r"|let\s+(?:me|us)\s+know\s+how\s+(?:it|that|this|you|things)\s+(?:goes|go|get\s+on|works?\s+out|turns?\s+out)\b"
        r"|let\s+(?:me|us)\s+know\s+(?:your\s+thoughts|what\s+you\s+think)\b|keep\s+me\s+(?:posted|updated|in\s+the\s+"
        r"loop)\b|let\s+(?:me|us)\s+know\s*[!.]?\s*[^a-z0-9\s]{0,4}\s*$")),
    # if you have any (other) questions / need anything else / get stuck
    (pairs_of("if", "you there anything something any questions"),
     (r"if\s+you\s+(?:need|have|want|require|would\s+like|'?d\s+like)\s+(?:anything\s+else|any(?:thing)?\s+(?:(?:more|"
      r"further|other|additional|else)\s+)?(?:help|assistance|questions?|support|info(?:rmation)?|clarification|changes)|"
      r"more\s+(?:help|questions|info))\b|if\s+you\s+have\s+(?:any\s+)?(?:(?:other|further|more|additional)\s+)?(?:questions?|"
      r"concerns?|queries|issues|problems|trouble)\b|if\s+(?:there'?s|there\s+is)\s+anything\s+else\b|if\s+(?:anything|"
      r"something)\s+(?:else\s+)?(?:comes\s+up|is\s+unclear|doesn'?t\s+work)\b|if\s+you\s+get\s+stuck\b|if\s+(?:any\s+)?"
      r"(?:questions|issues|problems)\s+(?:come\s+up|arise)\b")),
    (pairs_of("should", "you there"),
     r"should\s+(?:you\s+(?:have|need|require)|there\s+be)\s+(?:any|further|more|additional)\b"),
    # any questions, just ask
    (pairs_of("any", "questions other more further"),
     (r"any\s+(?:(?:other|more|further)\s+)?questions\s*[,?]?\s*(?:just\s+)?(?:ask|let\s+(?:me|us)\s+know|give\s+(?:me|us)"
      r"\s+a|shout|holler)\b")),
    # hope this helps, hope that clears it up, hope you have a great day, glad I could help, happy to help further
    (pairs_of("hope", "this that it the my these you to"),
     (r"hope\s+(?:this|that|it|the\s+above|this\s+info(?:rmation)?|my\s+answer|these)\s+(?:helps?|helped|is\s+(?:helpful|"
      r"useful|of\s+(?:help|use))|was\s+(?:helpful|useful)|clears?\s+(?:it|things|that)\s+up|answers?\s+your|makes\s+"
      r"sense|gets\s+you\s+(?:started|going|unstuck))\b|hope\s+you\s+(?:find\s+(?:this|it|these)\s+(?:useful|helpful)|"
      r"have\s+an?\s+\w+\s+(?:" + one_of(_DAYS) + r")|enjoy|get\s+it\s+sorted|feel\s+better|get\s+well)\b|hope\s+to\s+"
      r"hear\s+from\s+you\b|hope\s+(?:it|this|that|everything|all)(?:\s+all)?\s+(?:works?\s+out|goes\s+(?:well|smoothly))\b")),
    (pairs_of("glad happy pleased", "i we"), (r"(?:glad|happy|pleased)\s+(?:i|we)\s+(?:could|was\s+able\s+to|were\s+able\s+"
                                          r"to)\s+(?:help|assist)\b")),
    (pairs_of("happy glad", "to"), r"(?:happy|glad)\s+to\s+(?:help|assist|answer\s+any)\b"),
    ("happy", (r"happy\s+(?!ending\b|hour\b|path\b|medium\b)(?:[a-z]+ing|holidays|travels|trails|new\s+year|friday|"
              r"weekend)\b")),
    # feel free to reach out; don't hesitate to ask; I remain at your disposal; we look forward to hearing from you
    ("feel+free", r"feel\s+free\s+to\s+(?:" + _CONTACT_VERBS + r")\b"),
    ("do+not don+t dont never+hesitate", r"(?:do\s+not|don'?t|never)\s+hesitate\s+to\s+(?:" + _CONTACT_VERBS + r")"),
    ("at+your", r"at\s+your\s+(?:disposal|service)\b"),
    (pairs_of("look looking", "forward"),
     r"(?:look|looking)\s+forward\s+to\s+(?:hearing|helping|serving|working|your\s+(?:reply|response|feedback)|speaking)"),
    (pairs_of("here", "to if for whenever"),
     (r"(?:(?<=\bi'm\s)|(?<=\bim\s)|(?<=\bam\s)|(?<=\bwe're\s)|(?<=\bare\s)|(?<=\balways\s))here\s+(?:to\s+help|if\s+you"
      r"\s+need|for\s+you|whenever)\b|(?<![a-z]\s)here\s+if\s+you\s+need\b")),
    # thank you for your patience / for choosing us; thanks again; many thanks
    (pairs_of("thanks thank", "for so again you"),
     (r"thank(?:s|\s+you)(?:\s+(?:so|very)\s+much|\s+again)?\s+for\s+(?:your\s+(?:patience|understanding|cooperation|"
      r"co-operation|business|time|custom|support|trust)|choosing|being\s+(?:a|an|such)|using|bearing\s+with|reaching\s+"
      r"out|contacting|getting\s+in\s+touch)\b|thank(?:s|\s+you)\s+again\b")),
    ("many+thanks", r"many\s+thanks\b"),
    # reach out any time; ask away; give me a shout; anything else, just holler; is there anything else I can do
    (pairs_of("reach", "out") + " ask+away ping+me " + pairs_of("give drop", "me us") + " shout holler "
     + pairs_of("just", "ask holler shout"),
     (r"(?:reach\s+out|ping\s+me|give\s+(?:me|us)\s+a\s+(?:shout|call|bell|buzz)|shout|holler|drop\s+(?:me|us)\s+a\s+(?:line|"
      r"note|message))\s+(?:any\s*time|if|when(?:ever)?)\b|ask\s+away\b|just\s+(?:ask|holler|shout)\s*(?:[!.]|$|away\b)")),
    (pairs_of("anything", "else") + " " + pairs_of("help assist", "with you") + " what+else",
     (r"anything\s+else\s+(?:(?:i|we)\s+can\s+(?:help|do|assist)|you\s+(?:need|want|'?d\s+like))\b|anything\s+else,?\s+"
      r"(?:just\s+)?(?:holler|shout|ask|give\s+(?:me|us)\s+a\s+(?:shout|call)|let\s+(?:me|us)\s+know)\b|(?:help|assist)"
      r"(?:\s+you)?\s+with\s+anything\s+else\b|what\s+else\s+can\s+(?:i|we)\s+(?:help|do)\b|anything\s+else\s*\?\s*"
      r"[^a-z0-9\s]{0,4}\s*$")),
    # have a great day, wish you a nice day, have fun, enjoy!
    (pairs_of("have", "a an fun") + " " + pairs_of("wish wishing", "you"),
     (r"(?<!\bwe\s)(?<!\bthey\s)(?<!\bi\s)(?<!\bwill\s)(?<!\bto\s)(?<!\bmay\s)(?<!\bmight\s)(?<!\bwould\s)(?<!\bcan\s)"
      r"(?<!\bcould\s)(?<!'ll\s)(?<!\bdid\s)have\s+an?\s+(?:(?:really|very|super)\s+)?(?:" + one_of(_NICE) + r")\s+(?:"
      + one_of(_DAYS) + r")\b|have\s+fun\s*(?:[!.]|$)|wish(?:ing)?\s+you\s+(?:a|an)\s+(?:(?:very|really)\s+)?(?:"
      + one_of(_NICE) + r")\s+(?:" + one_of(_DAYS) + r")\b|wishing\s+you\s+(?:all\s+the\s+best|well)\b")),
    ("enjoy", r"enjoy(?:\s+(?:your|the)\s+\w+)?\s*!|enjoy\s*[.,]?\s*(?:and\b|$)"),
    # take care; good luck!; safe travels; cheers (as the letter's last words, or with "!")
    (pairs_of("all", "the") + " take+care " + pairs_of("stay", "safe well") + " be+well " + pairs_of("talk speak", "soon") + " "
     + pairs_of("good", "luck") + " best+of safe+travels " + pairs_of("drive travel", "safe safely") + " see+you catch+you "
     + "bye goodbye ciao cheers ttyl thx ty ta thanks thank+you regards warmly respectfully sincerely",
     (r"(?:all\s+the\s+best|take\s+care|stay\s+(?:safe|well)|be\s+well|(?:talk|speak)\s+soon|good\s+luck|best\s+of\s+"
      r"luck|safe\s+travels|(?:drive|travel)\s+safe(?:ly)?|see\s+you\s+(?:soon|then|around|later|tomorrow)|catch\s+you\s+"
      r"later|bye(?:\s+for\s+now)?|goodbye|ciao|cheers|ttyl|thanks|thank\s+you|thx|ty|ta|regards|warmly|respectfully|"
      r"sincerely)\s*[!.]*\s*[^a-z0-9\s]{0,4}\s*$|(?:take\s+care|good\s+luck|best\s+of\s+luck|safe\s+travels|stay\s+"
      r"safe|drive\s+safe(?:ly)?|cheers)\s*!|(?:good|best\s+of)\s+luck\s+with\b[^.!?\n]{0,40}(?:!|[.]?\s*$)")),
    # best regards, kind regards, best wishes, yours sincerely; "Best,\nSam", "Thanks & Regards,"
    (pairs_of("best kind kindest warm warmest warmly fond sincere", "regards wishes") + " " + pairs_of("with", "best kind warm")
     + " " + pairs_of("yours", "sincerely truly faithfully respectfully ever"),
     (r"(?:best|kind|kindest|warm|warmest|warmly|fond|sincere|with\s+(?:best|kind|warm))\s+(?:regards|wishes)\b|yours\s+"
      r"(?:sincerely|truly|faithfully|respectfully|ever)\b")),
    ("regards thanks sincerely cheers best warmly respectfully thank+you many+thanks ta",
     (r"(?<![^\n])(?:(?:thanks\s*(?:&|and)\s*)?regards\b|(?:sincerely|cheers|best|warmly|respectfully|thanks(?:\s+again)?"
      r"|thank\s+you|many\s+thanks|ta)\s*,?\s*(?:\n|$))")),
    ("cheers", r"cheers,?\s+(?:and|mate|all)\b"),
    # kindly revert; in case of any queries; thanking you; glad it worked; appreciate your patience
    (pairs_of("kindly please", "revert do") + " in+case thanking+you with+regards " + pairs_of("glad", "that it this")
     + " appreciate " + pairs_of("we i", "value"),
     (r"(?:kindly|please)\s+(?:do\s+)?revert\b|in\s+case\s+(?:of\s+)?(?:any|you\s+have\s+any)\s+(?:further\s+|other\s+)?"
      r"(?:queries|questions|doubts|concerns|issues|clarifications?)\b|thanking\s+you\b|with\s+regards\b|glad\s+(?:that|it|"
      r"this)\s+(?:worked|helped|helps|did\s+the\s+trick)\b|appreciate\s+your\s+(?:patience|understanding|business|"
      r"cooperation|co-operation)\b|(?:we|i)\s+value\s+your\s+(?:business|custom|feedback|patience)\b")),
    (pairs_of("any", "time") + " anytime", r"any\s*time\s*(?:!|[.]?\s*[^a-z0-9\s]{0,4}\s*$)"),
)

# ------------------------------------------------------------------------------------------ apologies

# The speaker apologising, admitting fault, expressing regret or sympathy to the user: sorry, apologies, I apologise,
# my mistake, my bad, that's on me, mea culpa, forgive me, pardon the confusion, oops, I got that wrong, I stand
# corrected, we regret the inconvenience, regrettably, my condolences, that must be frustrating. Not an apology:
# "sorry" quoted or talked about ("no need to say sorry", "how to say sorry in Japanese", a song or game named
# Sorry), a third party's apology ("the vendor apologised", "his apology email"), "no apology needed", "don't
# apologise", advice on apologising ("apologise once at the end"), "regret" in its everyday sense, "if I'm wrong"
# (a hedge).
_FAULTS = "mistake bad fault error oversight blunder mix mixup slip goof miss"
APOLOGY_FORMS = phrase_forms(
    # sorry (not "no need to be sorry", "say sorry in", "a sorry state", the game "Sorry! is a board game")
    ("sorry soz",
     (r"(?<!n't\sbe\s)(?<!not\sbe\s)(?<!to\sbe\s)(?<!\ba\s)(?<!\bthe\s)(?<!\bsay\s)(?<!\bsaying\s)(?<!\bsays\s)"
      r"(?<!\bsaid\s)(?<!\bword\s)(?<!\bnot\s)(?<!\bnever\s)(?:sorry|soz)\b(?![\"”'])(?!!?\s+(?:is|was)\s+(?:a|an|the)\b)(?!\s+(?:state|sight|excuse|"
      r"lot|tale)\b)")),
    # "I just want to say sorry": the speaker's own "say sorry"
    ("say+sorry",
     (r"(?:(?<=\bwant\sto\s)|(?<=\bwanted\sto\s)|(?<=\blike\sto\s)|(?<=\bjust\s)|(?<=\bi\s)|(?<=\bwe\s)|(?<=\bmust\s)"
      r"|(?<=\bhave\sto\s))say\s+sorry\b")),
    # apologies as the speaker's own ("Apologies, ...", "my apologies", "apologies for"), I apologise, we are writing to
    # apologise, please accept our apologies, I owe you an apology
    ("apologies",
     (r"(?:(?<![\s\S])|(?<=\n)|(?<=[.!?:,—–-]\s)|(?<=\bmy\s)|(?<=\bour\s)|(?<=\bsincere\s)|(?<=\bsincerest\s)|(?<=\bmany"
      r"\s)|(?<=\bdeepest\s)|(?<=\bprofuse\s)|(?<=\bhumble\s)|(?<=\band\s)|(?<=\bwith\s)|(?<=\bsincerely\s)|(?<=\bhumblest"
      r"\s)|(?<=\bheartfelt\s))apologies\b|apologies\s+for\b")),
    (pairs_of("i we", "apologise apologize do sincerely truly deeply really must would d want wish again also just humbly "
                   "profusely unreservedly") + " apologise apologize",
     (r"(?:i|we)(?:'d\s+like\s+to|\s+would\s+like\s+to)?\s+(?:(?:do|sincerely|truly|deeply|really|must|want\s+to|wish\s+"
      r"to|again|also|just|humbly|profusely|unreservedly)\s+)*apologi[sz]e\b|(?:(?<=\bwriting\sto\s)|(?<=\blet\sme\s)"
      r"|(?<=\blet\sus\s)|(?<=\ballow\sme\sto\s)|(?<=\ballow\sus\sto\s))apologi[sz]e\b")),
    (pairs_of("accept", "our my this") + " owe+you",
     r"accept\s+(?:our|my|this)\s+(?:\w+\s+)?apolog(?:y|ies)\b|owe\s+you\s+an\s+apology\b"),
    # my mistake, my bad, my fault; that's on me, that one's my fault, it was my error
    (pairs_of("my", _FAULTS + " big huge own"),
     (r"my\s+(?:(?:big|huge|own)\s+)?(?:mistake|bad|fault|error|oversight|blunder|mix-?up|slip|goof|miss)\b"
      r"(?!\s+(?:log|logs|rate|message|handler|code|page)\b)")),
    (pairs_of("that this it", "s is was one") + " thats",
     (r"(?:that'?s|that\s+is|this\s+is|this\s+one'?s|that\s+one'?s|that\s+was|this\s+was|it'?s|it\s+was)\s+(?:on\s+(?:me|"
      r"us)\b|(?:entirely\s+|totally\s+|all\s+)?(?:my|our)\s+(?:fault|mistake|error|bad|oversight|doing)\b)")),
    # mea culpa, forgive me, pardon the confusion, excuse the delay, oops, regrettably
    ("mea+culpa forgive excuse pardon oops whoops oopsie oopsies whoopsie regrettably",
     (r"mea\s+culpa\b|forgive\s+(?:me|us)\b(?!\s+(?:if|for\s+asking)\b)|excuse\s+(?:me|us)\s+for\b|pardon\s+(?:me|us|the"
      r"|my|our)\b|excuse\s+(?:the|my|our)\s+(?:delay|confusion|mix-?up|error|mistake|mess|late|slow|oversight|typo)\b|"
      r"(?:oops|whoops|oopsie|oopsies|whoopsie)\b|regrettably\b")),
    # I messed that up, I got that wrong, I was wrong, I stand corrected, I made a mistake (not "if I'm wrong")
    (pairs_of("i", "messed screwed mixed muddled botched goofed stuffed got had was am m stand") + " made+a made+an",
     (r"i\s+(?:messed|screwed|mixed|muddled|botched|goofed|stuffed)\s+(?:that\s+|this\s+|it\s+|things\s+)?up\b|i\s+(?:got"
      r"|had)\s+(?:that|this|it|the\s+\w+)\s+wrong\b|(?<!\bif\s)(?<!\bunless\s)i(?:'m|\s+was|\s+am)\s+(?:wrong|mistaken|"
      r"incorrect)\b|i\s+stand\s+corrected\b|(?:(?<=\bi\s)|(?<=\bi've\s)|(?<=\bi\shave\s))made\s+(?:a|an)\s+(?:mistake|"
      r"error|typo)\b")),
    # we regret the inconvenience, I regret that ...
    (pairs_of("i we", "regret sincerely deeply truly greatly really") + " " + pairs_of("sincerely deeply truly greatly", "regret")
     + " regret",
     (r"(?:(?:i|we)\s+(?:(?:sincerely|deeply|truly|greatly|really|do)\s+)?|(?:sincerely|deeply|truly|greatly)\s+)regret\s+"
      r"(?:the|any|to|that|this|our|my|having)\b|(?:(?<![\s\S])|(?<=[.!?\n]\s)|(?<=\n))regret\s+(?:for\s+)?(?:the|any)\b")),
    (pairs_of("i", "misread misunderstood misspoke feel should") + " careless+of",
     (r"(?<!\bif\s)i\s+(?:misread|misunderstood|misspoke)\b|i\s+feel\s+(?:terrible|awful|bad)\s+(?:about|that|for)\b"
      r"|i\s+should\s+have\s+(?:checked|caught|mentioned|noticed|double[- ]checked|spotted|said|told\s+you|flagged|read|"
      r"tested|verified|asked)\b|careless\s+of\s+me\b")),
    (pairs_of("my our", "heart hearts") + " " + pairs_of("what such", "a") + " " + pairs_of("that", "s is") + " thats",
     (r"(?:my|our)\s+hearts?\s+goes?\s+out\b|(?:what|such)\s+a\s+(?:nightmare|pain|hassle|headache|ordeal|shame|pity)\b"
      r"|that(?:'?s|\s+is)\s+(?:such\s+|a\s+real\s+)?a\s+(?:shame|pity)\b")),
    # sympathy: my condolences, that must be frustrating, that sounds stressful, I understand your frustration
    (pairs_of("my our", "condolences sympathies sympathy deepest sincere sincerest heartfelt") + " condolences sympathies",
     (r"(?:(?:my|our)\s+(?:(?:deepest|sincere|sincerest|heartfelt)\s+)?)?(?:condolences|sympathies)\b|(?:my|our)\s+"
      r"(?:deepest\s+|sincere\s+|heartfelt\s+)?sympathy\b")),
    (pairs_of("that", "s is") + " thats",
     (r"that(?:'?s|\s+is)\s+(?:so\s+|really\s+|very\s+|just\s+)?(?:rough|awful|terrible|frustrating|annoying|a\s+pain|the\s+"
      r"worst|tough|horrible|upsetting|maddening|infuriating)\b(?!\s+to\b)")),
    (pairs_of("that this", "must sounds"),
     (r"(?:that|this)\s+(?:must\s+(?:be|have\s+been)|sounds)\s+(?:so\s+|really\s+|very\s+|incredibly\s+|super\s+|"
      r"awfully\s+)?(?:frustrating|annoying|stressful|hard|difficult|awful|upsetting|worrying|tough|painful|rough|"
      r"exhausting|horrible|terrible|scary|maddening|infuriating|disappointing)\b")),
    (pairs_of("i", "understand completely totally fully can"),
     (r"i\s+(?:completely\s+|totally\s+|fully\s+)?understand\s+(?:your|how|the)\s+(?:\w+\s+)?(?:frustrat|annoy|disappoint"
      r"|inconvenien|stress)|i\s+can\s+(?:only\s+)?imagine\s+how\s+(?:frustrating|stressful|annoying|upsetting|hard|"
      r"difficult)")),
)

# ------------------------------------------------------------------------------------------ hedges

# Hedges: words that qualify the certainty of the reply's own answer (I think, probably, might, not 100% sure, as
# far as I know, it's possible that, could be, I'd guess, seems, I believe, likely, roughly, don't quote me, off the
# top of my head, I may be wrong, I reckon, my hunch, presumably, I wouldn't bet on it, I'm fuzzy on, I suppose, I
# want to say, judging by, it's been a while). HEDGE_MIN or more in one reply is hedging (one "I think" is ordinary
# speech); matches that overlap count once. Not a hedge: words about someone else ("most people guess Sydney"),
# advice ("you might want to book"), quoted words, "kind of" meaning a type.
_I_VERBS = ("think believe suspect guess assume imagine expect presume reckon feel say gather doubt wonder have daresay "
            "fancy lean anticipate suppose bet want should m am get don do can cannot could might may wouldn d would haven")
_HEDGE_WORDS = (
    "probably prob likely unlikely possibly perhaps maybe presumably apparently arguably conceivably supposedly "
    "seemingly roughly approximately usually typically potentially plausibly reportedly allegedly theoretically kinda "
    "sorta ballpark guesstimate probable probs prolly reckon iirc afaik afaict imo imho fwiw idk dunno tbc unconfirmed "
    "unverified preliminary unsure uncertain tentative tentatively indicative suggests indicates seem seems seemed "
    "appear appears appeared generally somewhat ostensibly purportedly misremember misremembering misremembered "
    "doubtful speculative speculation methinks estimated")
HEDGE_FORMS = phrase_forms(
    # the first person: I think, I'd guess, I reckon, I'm guessing, I have a feeling, I could be wrong, I'm no expert,
    # I suppose, I want to say, I'd bet, I'm fuzzy on, I haven't checked, I'd have to check
    (pairs_of("i", _I_VERBS) + " im id",
     (r"i(?:'d|\s+would)?\s+(?:\*{1,2}|_)?(?:think|believe|suspect|guess|assume|imagine|expect|presume|reckon|feel\s+like|"
      r"feel\s+that|feel\s+(?:it|this)\s+(?:is|was|might|may|could|will|would)|feel\s+as\s+(?:if|though)|say|gather|doubt|wonder\s+if|have\s+thought|daresay|fancy|lean\s+towards?|anticipate|suppose|bet)\b"
      r"|i\s+should\s+think\b|i\s+want\s+to\s+say\b|i'?m\s+(?:guessing|thinking|assuming|leaning|speculating|inclined\s+to\s+"
      r"(?:think|believe|say))\b|i\s+understand\s+(?:that|it'?s|it\s+is|there'?s)\b|i\s+(?:have|get)\s+(?:a|the)\s+(?:feeling|sense|hunch)\b|i\s+(?:don'?t|do\s+not|can'?t|cannot)\s+(?:"
      r"remember|recall)\s+(?:exactly|for\s+sure|precisely|offhand|off-hand|the\s+exact)\b|i\s+(?:don'?t|do\s+not)\s+know"
      r"\s+(?:for\s+(?:sure|certain)|exactly)\b|i\s+(?:could|might|may)\s+(?:well\s+)?(?:be|have\s+been)\s+(?:wrong|"
      r"mistaken|off|misremembering|misreading)\b|i'?m\s+not\s+an?\s+(?:\w+\s+)?(?:expert|professional|doctor|lawyer|"
      r"physicist|specialist|accountant|mechanic|electrician|historian|engineer)\b|i'?m\s+no\s+(?:expert|doctor|lawyer)"
      r"\b|i(?:'?m|\s+am)\s+(?:(?:a\s+)?(?:bit|little|tad)\s+|somewhat\s+|rather\s+)?(?:fuzzy|hazy|rusty|shaky|unsure)\b"
      r"|i\s+(?:wouldn'?t|would\s+not)\s+(?:bet|swear|stake|put\s+money|count\s+on|rely\s+on|be\s+surprised)\b|i\s+(?:"
      r"haven'?t|have\s+not)\s+(?:\w+\s+)?(?:checked|verified|tested|confirmed|tried)\b|i'?d\s+(?:have|need)\s+to\s+(?:"
      r"check|double[- ]check|confirm|verify|look)\b|i'?d\s+(?:bet|wager|venture|hazard)\b")),
    (pairs_of("we", "think believe suspect estimate expect understand assume anticipate d"),
     r"we(?:'d)?\s+(?:think|believe|suspect|estimate|expect|understand|assume|anticipate)\b"),
    (pairs_of("wouldn", "t") + " wouldnt " + pairs_of("would", "not"),
     r"(?:wouldn'?t|would\s+not)\s+(?:bet|swear|stake|put\s+money|count\s+on|rely\s+on|be\s+surprised)\b"),
    # one word: probably, likely, maybe, perhaps, roughly, usually, seems, appears, reckon, IIRC, IMO, dunno
    (_HEDGE_WORDS, r"(?:" + one_of(_HEDGE_WORDS) + r")\b"),
    # what I know and remember: my hunch is, my best guess, to my knowledge, as far as I know, if I remember correctly
    (pairs_of("my our best", "best hunch guess sense impression understanding gut instinct read memory experience "
                          "knowledge information recollection") + " " + pairs_of("in", "my"),
     (r"(?:my|our|best)\s+(?:best\s+)?(?:hunch|guess|sense|impression|understanding|gut\s+feeling|gut|instinct|read)\b"
      r"|(?:my|our)\s+(?:memory|recollection)\s+(?:is|of)\b|in\s+my\s+(?:experience|opinion|view|humble\s+opinion|"
      r"understanding)\b|(?:(?<=\bto\s)|(?<=\bof\s))my\s+(?:knowledge|understanding|information)\b")),
    ("knowledge", r"(?:(?<=\bto\smy\s)|(?<=\bbest\sof\smy\s))knowledge\b"),
    ("far", r"(?<=\bas\s)far\s+as\s+(?:i\s+(?:know|can\s+tell|remember|recall|understand|can\s+see)|i'?m\s+aware)\b"),
    ("understand recall remember", r"(?<=\bas\si\s)(?:understand\s+it|recall|remember)\b"),
    ("per", r"(?<=\bas\s)per\s+my\s+(?:knowledge|understanding|information)\b"),
    (pairs_of("if", "i memory the my that") + " " + pairs_of("unless", "i"),
     (r"(?:if|unless)\s+i\s+(?:remember|recall|misremember)\b|if\s+memory\s+serves\b|(?:if|unless)\s+i'?m\s+(?:not\s+)?"
      r"(?:mistaken|wrong)\b|if\s+i'?m\s+reading\b|if\s+i\s+understand\s+(?:correctly|right|you\s+(?:correctly|right))"
      r"\b|unless\s+i'?m\s+misreading\b|if\s+i\s+had\s+to\s+(?:guess|bet)\b|if\s+(?:the\s+page|my\s+memory|that)\s+"
      r"[^.]{0,30}\bstill\s+current\b")),
    ("what+i", (r"(?<=\bfrom\s)what\s+i(?:\s+(?:know|understand|remember|recall|can\s+tell|can\s+see|gather)|'?ve\s+"
                r"(?:read|seen|heard))\b")),
    (pairs_of("last", "i time"), r"last\s+(?:i|time\s+i)\s+(?:checked|heard|looked)\b"),
    ("top+of", r"(?<=\boff\sthe\s)top\s+of\s+my\s+head\b"),
    # a few words: in theory, chances are, more or less, give or take, hard to say, no idea, it depends, or so
    (pairs_of("in", "theory principle all some most"),
     r"in\s+(?:theory|principle|all\s+likelihood|some\s+cases|most\s+cases)\b"),
    (pairs_of("some", "extent degree") + " " + pairs_of("more", "or often") + " " + pairs_of("chances odds", "are") + " the+most "
     + pairs_of("what", "it its") + " " + pairs_of("it all", "depends"),
     (r"(?<=\bto\s)some\s+(?:extent|degree)\b|more\s+or\s+less\b|more\s+often\s+than\s+not\b|(?:chances|odds)\s+are\b"
      r"|(?<=\bfor\s)the\s+most\s+part\b|(?<=\bfor\s)what\s+it'?s\s+worth\b|(?:it|all)\s+depends\b")),
    (pairs_of("no", "idea guarantee way clue") + " little+way beats+me your+guess or+thereabouts " + pairs_of("stand", "to")
     + " my+money ought+to expected+to",
     (r"no\s+(?:idea|guarantee|clue)\b|(?:no|little)\s+way\s+(?:to|of)\s+(?:know|telling|knowing)\b|beats\s+me\b|your\s+"
      r"guess\s+is\s+as\s+good\b|or\s+thereabouts\b|stand\s+to\s+be\s+corrected\b|my\s+money(?:'?s|\s+is|\s+would\s+be)\s+"
      r"on\b|ought\s+to\s+(?:be|work|arrive|do)\b|(?:(?<=\bis\s)|(?<=\bare\s)|(?<=\bbe\s)|(?<=\bwas\s))expected\s+to\b")),
    (("give+or close+to " + pairs_of("somewhere", "around between in beyond near about") + " "
      + pairs_of("subject", "to") + " under+investigation correct+me " + pairs_of("don", "t") + " dont " + pairs_of("do", "not")
      + " " + pairs_of("grain pinch", "of") + " " + pairs_of("treat hold take", "this that it these those the my all")
      + " " + pairs_of("who", "knows") + " " + pairs_of("judging", "by from") + " "
      + pairs_of("going working speaking answering writing quoting", "from") + " from+memory "
      + pairs_of("worth", "checking double doublechecking verifying confirming testing")),
     (r"give\s+or\s+take\b|close\s+to\s+(?=\d)|somewhere\s+(?:around|between|in|beyond|near|about)\b|subject\s+to\s+"
      r"change\b|under\s+investigation\b|correct\s+me\s+if\b|(?:don'?t|do\s+not)\s+(?:quote\s+me|take\s+my\s+word|hold\s+"
      r"me\s+to)\b|(?:grain|pinch)\s+of\s+salt\b|(?:treat|hold|take)\s+(?:this|that|it|these|those|the|my|all)\b[^.\n]"
      r"{0,40}\bloosely\b|who\s+knows\b|judging\s+(?:by|from)\b|(?:going|working|speaking|answering|writing|quoting)\s+"
      r"from\s+memory\b|(?<![a-z]\s)from\s+memory\b|worth\s+(?:double[- ]?)?(?:checking|verifying|confirming|testing)"
      r"\b")),
    (pairs_of("to", "be"), r"to\s+be\s+confirmed\b"),
    (pairs_of("a some good fair decent high strong slight small", "chance") + " "
     + pairs_of("rough", "estimate figure idea guess"),
     (r"(?:a|some|good|fair|decent|high|strong|slight|small)\s+chance\b|rough\s+(?:estimate|figure|idea)\b")),
    (pairs_of("bit little somewhat rather slightly tad", "fuzzy hazy unclear rusty shaky")
     + " " + pairs_of("fuzzy hazy rusty shaky", "on"),
     (r"(?:bit|little|somewhat|rather|slightly|tad)\s+(?:fuzzy|hazy|unclear|rusty|shaky)\b|(?:fuzzy|hazy|rusty|shaky)\s+"
      r"on\b")),
    (pairs_of("educated wild rough", "guess") + " a+guess had+to hazard+a",
     r"(?:educated|wild|rough)\s+guess\b|(?<=\bat\s)a\s+guess\b|had\s+to\s+guess\b|hazard\s+a\s+guess\b"),
    ("something+tells or+something something+like or+so",
     (r"something\s+tells\s+me\b|or\s+something(?:\s+like\s+that)?\b|something\s+like\s+(?=\d)|or\s+so\b")),
    (pairs_of("hard difficult tough impossible", "to"),
     r"(?:hard|difficult|tough|impossible)\s+to\s+(?:say|tell|know|pin\s+down|be\s+sure)\b"),
    (pairs_of("kind sort", "of"),
     (r"(?<!\bwhat\s)(?<!\bthis\s)(?<!\bthat\s)(?<!\bthe\s)(?<!\ba\s)(?<!\bsame\s)(?<!\bany\s)(?<!\bsome\s)(?<!\bevery\s)"
      r"(?<!\bone\s)(?<!\bthese\s)(?<!\bthose\s)(?<!\bwhich\s)(?<!\bno\s)(?<!\bother\s)(?<!\bright\s)(?<!\bwrong\s)"
      r"(?<!\bfirst\s)(?<!\bnew\s)(?<!\ball\s)(?<!\bwhatever\s)(?:kind|sort)\s+of\b")),
    # not sure: I'm not (100%) sure, not certain, not 100% on this, fairly sure, can't be sure, can't confirm
    (pairs_of("not", "sure certain positive confident entirely completely totally fully really quite % a absolutely that "
                  "too super very all overly in convinced clear yet confirmed verified per hundred"),
     (r"not\s+(?:(?:entirely|completely|totally|fully|really|quite|100\s?%|100\s?per\s?cent|(?:a\s+)?hundred\s+per\s?cent|"
      r"absolutely|that|too|super|very|all\s+that|overly)\s+)?(?:sure|certain|positive|confident)\b|not\s+100\s?(?:%|per\s?"
      r"cent)|not\s+(?:a\s+)?hundred\s+per\s?cent|not\s+in\s+a\s+position\s+to\s+"
      r"(?:say|tell|confirm)\b|not\s+(?:entirely\s+|totally\s+)?convinced\b|not\s+(?:completely|entirely|totally|fully)"
      r"\s+clear\b|not\s+(?:yet\s+)?(?:confirmed|verified)\b")),
    (pairs_of("fairly pretty reasonably almost mostly", "sure certain confident"),
     r"(?:fairly|pretty|reasonably|almost|mostly)\s+(?:sure|certain|confident)\b"),
    (pairs_of("can", "t not vary") + " " + pairs_of("cannot", "be say tell rule guarantee confirm") + " unable+to "
     + pairs_of("couldn", "t") + " couldnt cant",
     (r"can(?:'?t|not|\s+not)\s+(?:be\s+(?:sure|certain|100)|say\s+for\s+(?:sure|certain)|tell\s+for\s+(?:sure|certain)|"
      r"rule\s+out|guarantee)\b|(?:can(?:'?t|not|\s+not)|unable\s+to|couldn'?t)\s+confirm\b|can\s+vary\b")),
    # it's possible (that), it looks like, numbers held loosely: about 4 litres, around 11 hours, ~5, 7-ish
    (pairs_of("it", "s is was has") + " its+possible its+been thats+possible " + pairs_of("that", "s") + " "
     + pairs_of("quite entirely very also certainly definitely", "possible") + " possible+that",
     (r"(?:it'?s|it\s+is|it\s+was|that'?s|its|thats|quite|entirely|very|also|certainly|definitely)\s+possible\b"
      r"(?!\s+to\b)"
      r"|possible\s+that\b|(?:it'?s|its|it\s+has)\s+been\s+a\s+(?:while|long\s+time|few\s+years)\b")),
    (pairs_of("it that this", "looks sounds"), r"(?:it|that|this)\s+(?:looks|sounds)\s+(?:like|to\s+be)\b"),
    ("about around approx circa ~",
     (r"(?:about|around|approx\.?|circa|~)\s*(?=[\d₹$£€]|(?:a\s+)?(?:one|two|three|four|five|six|seven|eight|nine|ten|"
      r"twenty|thirty|a\s+few|a\s+dozen|half|an?\s+(?:hour|minute|week|day|month|year))\b)")),
    ("ish", r"ish(?:(?<=\dish)|(?<=\d[- ]ish))\b"),
    # modals of possibility: might, may, could be, should be fine (not "you might want to", not the month May)
    ("might", r"might\b(?!\s+(?:want|wish|like|need)\s+to\b)"),
    (pairs_of("could", "be also just well potentially possibly explain mean work slip have cause indicate suggest point "
                    "come happen affect help fix change vary differ depend"),
     (r"could\s+(?:also\s+|just\s+|well\s+|potentially\s+|possibly\s+)?(?:be|explain|mean|work|slip|have\s+been|cause|"
      r"indicate|suggest|point|come|happen|affect|help|fix|change|vary|differ|depend)\b")),
    (pairs_of("should", "be work have say do arrive land reach clear show appear take resolve update sync kick go"),
     (r"should\s+(?:be\s+(?:fine|ok(?:ay)?|there|back|ready|done|available|live|good|enough|around)|work|have\s+it|say|do"
      r"\s+the\s+trick|arrive|land|reach|clear|show\s+up|appear|take|resolve|update|sync|kick\s+in|go\s+through)\b")),
    ("may", (r"may\s+or\s+may\s+not\b|(?<!\bin\s)(?<![\d,]\s)(?<!\bof\s)may\b(?!\s*\d)(?!\s+i\b)(?!\s+(?:want|wish|like|"
             r"need)\s+to\b)")),
)
HEDGE_FORMS += phrase_forms(("looks sounds seems " + _LEAD_IN_WORDS, _LEAD_INS + r"(?:looks|sounds|seems)\s+like\b"),
                      at_start=True)

# ------------------------------------------------------------------------------------------ praise

# Praise of the user, their question, idea, work, taste or instinct in the reply's opener (the first sentence, after
# any salutation; sycophancy). Any praise adjective before any word for what the asker brought ("Great question",
# "Cracking question, that", "Smart thinking to back up", "Sharp eye"), "what a / such a" with a praise adjective,
# second-person praise ("You're absolutely right", "You have excellent taste", "You clearly know your stuff", "You've
# hit on exactly the right issue"), the asker's thing judged good ("Your instinct here is excellent"), love or
# admiration ("Love this idea", "I really admire how ..."), and praising interjections (Spot on, Nice one, Good on ya,
# Well spotted, Bravo, Kudos). Not praise: of a third party or a product ("The Rust Book is an excellent resource",
# "the panel said the answer was outstanding"), "right" as a direction or a verdict ("turn right", "right-handed",
# "The right answer depends ..."), "Great" or "Brilliant" in a name ("Great Barrier Reef"), "perfect number".
_PRAISE_ADJECTIVES = (
    "great good excellent fantastic wonderful amazing awesome brilliant insightful thoughtful superb terrific "
    "fascinating nice clever smart astute perceptive fun interesting solid sharp keen lovely cool neat outstanding "
    "incredible impressive perfect wise sensible inspired genius valid fair stellar cracking ripper corking cracker "
    "bonza bonzer beaut ace epic killer wicked magnificent marvellous marvelous splendid delightful fab fabulous "
    "phenomenal remarkable exceptional intelligent savvy shrewd canny discerning elegant beautiful super tremendous "
    "legit profound deep pertinent timely creative ingenious inventive nifty bright glorious sweet stunning admirable "
    "commendable exquisite impeccable informed considered refreshing top brill smashing legitimate reasonable")
_PRAISE_COMPOUNDS = ("first-rate top-notch spot-on thought-provoking mind-blowing next-level world-class well-written "
                     "well-thought-out well-put well-reasoned well-observed well-timed well-structured well-researched "
                     "well-crafted well-organised well-organized well-explained well-argued well-framed well-considered")
_ADJECTIVE = r"(?:" + one_of(_PRAISE_ADJECTIVES) + "|" + one_of(_PRAISE_COMPOUNDS) + r")"
_ADJECTIVE_STARTS = _PRAISE_ADJECTIVES + " " + " ".join(
    f"{words[0]}+{words[1]}" for words in (compound.split("-") for compound in _PRAISE_COMPOUNDS.split()))
# What the asker brought: said ("question", "point"), or did ("thinking", "catch", "work").
_SAID = ("question questions query queries point points idea ideas thought thoughts observation observations request "
         "requests approach approaches choice choices plan plans suggestion suggestions insight insights take solution "
         "framing concern concerns reasoning breakdown summary analysis prompt perspective explanation example examples "
         "hypothesis theory decision decisions pick selection writeup write-up proposal")
_DID = ("catch catches thinking instinct instincts call find spot move work job eye taste detective sleuthing debugging "
        "digging research homework legwork effort progress initiative attitude mindset noticing spotting memory "
        "foresight timing hustle intuition stuff shout going")
_TALKED_ABOUT = r"(?!\s+(?:in|of|for|to|on|at|from|by|is|was|are|were|would|will)\b)"
_PERSON_ADJECTIVES = ("smart clever brilliant sharp wise insightful perceptive astute amazing awesome incredible talented "
                      "gifted observant meticulous thorough diligent savvy")
_INTENSE = r"(?:(?:really|very|truly|super|incredibly|genuinely|wonderfully|so|such|quite|absolutely|seriously)\s+)*"
_THINGS = "understanding logic hunch read code draft essay writing design setup prose story poem outline pitch"
SYCOPHANTIC_FORMS = phrase_forms(
    # (what a | such a | you make a) (really) great question / sharp eye / smart thinking to ...
    (_ADJECTIVE_STARTS,
     (_ADJECTIVE + r"(?:[\s,-]+(?:and\s+)?" + _ADJECTIVE + r")?\s+(?:(?:" + one_of(_SAID) + r")\b(?![\"”-])" + _TALKED_ABOUT
      + r"|(?:" + one_of(_DID) + r")\b(?![\"”-])(?!\s+(?:of|is|was|are|were)\b))")),
    (_PRAISE_ADJECTIVES,
     r"(?:" + one_of(_PRAISE_ADJECTIVES) + r")\s+(?:of\s+you\b|way\s+(?:of|to)\s+(?:put|putting|phrase|phrasing|frame|framing|"
     r"think|thinking|look|looking|see|seeing|approach)\b)"),
    (pairs_of("nicely beautifully", "done put spotted said played explained written caught") + " way+to you+rock",
     r"(?:nicely|beautifully)\s+(?:done|put|spotted|said|played|explained|written|caught)\b|way\s+to\s+go\b|you\s+rock\b"),
    (pairs_of("nice good great lovely smart clever", "one"),
     (r"(?<!\ba\s)(?<!\bthe\s)(?<!\bvery\s)(?:nice|good|great|lovely|smart|clever)\s+one\b(?!\s+(?:of|for|is|to|in|on|that"
     r"|which|who)\b)")),
    (pairs_of("great nice good lovely", "to"), r"(?:great|nice|good|lovely)\s+to\s+see\s+you\b"),
    (pairs_of("what such", "a an"),
     (r"(?:what|such)\s+an?\s+" + _INTENSE + _ADJECTIVE + r"\b(?!\s+(?:deal|many|number|amount|lot|shame|pity)\b)"
      r"|what\s+an?\s+(?:question|idea|catch|find|legend|gem|star)\s*[!.]")),
    # you're (absolutely) right, you're a natural, you're onto something, you're asking exactly the right question
    (pairs_of("you", "re are") + " youre",
     (r"you(?:'?re|\s+are)\s+(?:(?:absolutely|totally|completely|so|entirely|exactly|quite|100\s?%|perfectly|dead|spot|"
      r"definitely|of\s+course|clearly|obviously|really|right|100%)\s+)*(?:right|correct)\b(?![-'])|you(?:'?re|\s+are)\s+"
      r"not\s+wrong\b|you(?:'?re|\s+are)\s+" + _INTENSE + r"(?:clearly\s+|obviously\s+|definitely\s+)?(?:a\s+(?:natural|"
      r"genius|legend|star|pro|rockstar|champ|champion|gem|wizard|lifesaver|life\s+saver)\b|an?\s+" + _ADJECTIVE + r"\s+"
      r"(?:\w+\s+)?(?:thinker|writer|learner|student|engineer|developer|dev|coder|programmer|cook|teacher|manager|parent|"
      r"person|host|traveller|traveler|planner|reader|researcher|photographer|observer|problem[- ]solver)\b|(?:"
      + one_of(_PERSON_ADJECTIVES) + r")\b|spot[\s-]+on\b|on\s+the\s+right\s+track\b|on(?:to|\s+to)\s+something\b|asking"
      r"\s+(?:exactly\s+|just\s+|precisely\s+|all\s+)?the\s+right\s+questions?\b|thinking\s+(?:about\s+(?:this|it)\s+)?"
      r"(?:exactly\s+)?(?:the\s+right\s+way|along\s+the\s+right\s+lines|like\s+an?\s+\w+)\b|(?:killing|crushing|nailing|"
      r"rocking|acing)\s+it\b|on\s+fire\b|the\s+best\b(?!\s+(?:person|place|way|judge|one)\b))")),
    # you have excellent taste; you've got a sharp eye; you clearly know your stuff; you've hit on; you nailed it
    (pairs_of("you", "have ve got clearly obviously really definitely certainly truly nailed aced smashed crushed always "
                  "ask know did should") + " youve",
     (r"you(?:\s+have|'?ve(?:\s+got)?|\s+got)\s+(?:(?:such|an?|really|very|truly|some|real|clearly|obviously)\s+)*(?:"
      + _ADJECTIVE + r"|" + one_of(_PERSON_ADJECTIVES) + r")\s+(?:taste|instincts?|eye|judge?ment|timing|memory|intuition|"
      r"sense|ear|nose|questions?|ideas?|point)\b|you(?:\s+have|'?ve\s+got)\s+a\s+(?:real\s+)?knack\b|you(?:'ve|\s+have)?\s+got\s+"
      r"it\s+(?:exactly\s+|absolutely\s+|just\s+|completely\s+)?(?:right|spot\s+on)\b|you\s+(?:clearly|obviously|really|definitely|certainly|truly)\s+(?:know|"
      r"understand|get|did|have|thought|put)\b|you\s+(?:nailed|aced|smashed|crushed)\s+(?:it|this|that)\b|you\s+(?:always"
      r"\s+)?ask\s+(?:the\s+)?(?:best|great|good|smart|right)\b|you\s+(?:know|really\s+know)\s+your\s+stuff\b|you\s+did"
      r"\s+(?:really\s+|so\s+)?(?:great|brilliantly|amazing(?:ly)?|fantastic(?:ally)?|awesome|an?\s+(?:great|amazing|"
      r"fantastic|brilliant)\s+job)\b|you\s+should\s+be\s+(?:really\s+|very\s+|so\s+)?proud\b|you(?:'?ve|\s+have)\s+(?:"
      r"(?:really|clearly|obviously|definitely|certainly|truly|already)\s+)*(?:hit\s+(?:on|upon|the\s+nail)|nailed|done\s+"
      r"(?:your|some\s+real)\s+(?:homework|reading|research)|thought\s+(?:this|it)\s+through|(?:put|given)\s+(?:a\s+lot\s+"
      r"of|real|serious|some\s+real|great|careful)\s+thought)")),
    (pairs_of("you absolute total", "legend"), r"(?:you|absolute|total)\s+legend\b"),
    (pairs_of("right", "you") + " right+questions",
     r"right\s+you\s+are\b|(?<=\bthe\s)right\s+questions\b"),
    # spot on, good on ya, great minds, a person of culture, well spotted, I'm impressed, that's genius
    ("spot+on", r"(?<!\ba\s)(?<!\bthe\s)(?<!\bsunny\s)spot[\s-]+on\b"),
    ("good+on", r"good\s+on\s+(?:ya|you|yer|ye)\b"),
    ("great+minds", r"great\s+minds\b"),
    (pairs_of("person man woman lady gentleman", "of"), r"(?:person|man|woman|lady|gentleman)\s+of\s+(?:culture|taste)\b"),
    (pairs_of("well", "spotted done said played caught noticed observed put reasoned researched asked"),
     r"well\s+(?:spotted|done|said|played|caught|noticed|observed|put|reasoned|researched|asked)\b"),
    (pairs_of("i", "m am") + " im", r"(?:i'?m|i\s+am)\s+(?:(?:really|so|very|genuinely|truly|seriously|quite)\s+)?impressed\b"),
    (pairs_of("exactly just precisely", "the"),
     r"(?:exactly|just|precisely)\s+the\s+right\s+(?:question|thing|issue|idea|place|call)"),
    (pairs_of("tell", "you"), r"tell\s+you(?:'?ve|\s+have|\s+really|'?re)\b"),
    ("favourite favorite", r"favou?rite\s+(?:questions?|topics?|kinds?)\b"),
    (pairs_of("that", "s is") + " thats",
     (r"that(?:'?s|\s+is)\s+(?:(?:pure|such|really|so|absolutely|just|truly|a\s+stroke\s+of)\s+)*(?:genius|brilliant|"
      r"clever|smart|impressive|awesome|amazing|inspired)\b")),
    ("agree+more said+it put+it so+true " + pairs_of("completely totally wholeheartedly fully absolutely", "agree"),
     (r"(?:completely|totally|wholeheartedly|fully|absolutely)\s+agree\b|(?:(?<=\bcouldn't\s)|(?<=\bcouldnt\s)"
      r"|(?<=\bcould\snot\s))agree\s+more\b|(?<=\bhave\s)(?:said|put)\s+it\s+better\b|so\s+true\b")),
    # I love this question, love this idea, I really admire how ..., I like your approach
    ("love adore",
     (r"(?:(?<![a-z]\s)|(?<=\bi\s)|(?<=\bwe\s)|(?<=\breally\s)|(?<=\bjust\s)|(?<=\babsolutely\s)|(?<=\btotally\s)"
      r"|(?<=\bsimply\s)|(?<=\bso\s))(?:love|adore)\s+(?:this|that|these|your|how|the\s+way|it|where\s+your|what\s+you|the\s+"
      r"(?:question|idea|thinking|energy|enthusiasm|ambition|curiosity))\b")),
    ("admire " + pairs_of("like", "how the your this that what") + " " + pairs_of("appreciate", "how the what"),
     (r"(?:(?<=\bi\s)|(?<=\breally\s)|(?<=\btruly\s)|(?<=\bjust\s)|(?<=\bdo\s))(?:admire|like)\s+(?:how|the\s+way|your|"
      r"this|that|what\s+you)\b|(?:(?<=\bi\s)|(?<=\breally\s)|(?<=\btruly\s))appreciate\s+(?:how|the\s+way|what\s+you)\b"
      r"|(?<![a-z]\s)admire\s+(?:how|the\s+way|your)\b")),
    # your idea is very smart, this question is brilliant, your instinct here is excellent
    (pairs_of("your this that", _SAID + " " + _DID + " " + _THINGS),
     (r"(?:your|this|that)\s+(?:" + one_of(_SAID + " " + _DID + " " + _THINGS) + r")\s+(?:(?:here|there|on\s+this|on\s+"
      r"that)\s+)?(?:is|was|looks|reads|seems|sounds|feels)\s+" + _INTENSE + r"(?:" + _ADJECTIVE + r"|on\s+point|right|"
      r"correct|elegant|clean|beautiful(?:ly)?|on\s+the\s+money|bang\s+on|dead\s+on)\b")),
)
# at the start: Absolutely right! / Bravo / Brilliant! / Kudos; and praise heading the reply, where "Great idea to
# cache it" praises the asker's idea (the same words inside a sentence are advice: "it's a good idea to restart")
SYCOPHANTIC_FORMS += phrase_forms(
    (_ADJECTIVE_STARTS + " very really truly super " + GREETING_WORDS + " " + _LEAD_IN_WORDS,
     (_GREETED + r"(?:(?:very|really|truly|super)\s+)?" + _ADJECTIVE + r"(?:[\s,-]+(?:and\s+)?" + _ADJECTIVE + r")?\s+(?:"
      + one_of(_SAID + " " + _DID) + r")\b(?![\"”-])")),
    at_start=True,
)
SYCOPHANTIC_FORMS += phrase_forms(
    ("absolutely exactly totally quite so dead bravo kudos props hats chapeau chef brilliant excellent fantastic "
     "wonderful amazing awesome superb terrific outstanding marvellous marvelous splendid impressive phenomenal "
     "stellar genius incredible magnificent love nailed clever legend ripper " + _LEAD_IN_WORDS,
     (_LEAD_INS + r"(?:(?:absolutely|exactly|totally|quite|so|dead)\s+(?:right|correct)\b|(?:bravo|kudos|props|hats?\s+"
      r"off|chapeau|chef'?s\s+kiss)\b|(?:brilliant|excellent|fantastic|wonderful|amazing|awesome|superb|terrific|"
      r"outstanding|marvellous|marvelous|splendid|impressive|phenomenal|stellar|genius|incredible|magnificent|clever|"
      r"legend|ripper|love\s+it|love\s+this|nailed\s+it)\s*!)")),
    at_start=True,
)

# ------------------------------------------------------------------------------------------ refusals

# A refusal to do the ask: I can't help with that, I'm unable to assist, I won't do that, I must decline, as an AI
# I cannot. Not a refusal: a report that something failed ("I was unable to find it", "I couldn't complete the
# refund").
_REFUSED_ACTS = r"(?:help|assist|comply|provide|do\s+that|fulfil+|engage|support|answer|share)\b"
REFUSAL_FORMS = phrase_forms(
    (pairs_of("i", "m am can cant cannot won wont will must") + " im " + pairs_of("as", "an"),
     (r"i(?:'m|\s+am)\s+(?:sorry,?\s+(?:but\s+)?)?(?:not\s+able|unable)\s+to\s+" + _REFUSED_ACTS + r"|i\s+(?:can(?:'|no)?t"
      r"|cannot|won'?t|will\s+not|am\s+not\s+allowed\s+to)\s+" + _REFUSED_ACTS + r"|i\s+must\s+(?:respectfully\s+)?"
      r"decline\b|as\s+an\s+ai\b[^.]{0,60}\b(?:can(?:'|no)?t|cannot|unable|not\s+able)\b|i'?m\s+not\s+(?:comfortable|"
      r"permitted)\b")),
)
