"""judge_trust: can the judge's rewards be believed? Measured against gold labels stamped by attach_labels.

The reading, first line of ``str(report)`` (and of :func:`format_judge_trust`):

* NOT MEASURED: no gold labels; the judge is unmeasured, not untrustworthy (``ok`` is False);
* INCONCLUSIVE: over ``max_skipped_share`` (0.10) of the gold rows had no exact 0/1 reward (partial credit,
  text, ungraded), or the gold labels hold one class only, so kappa cannot be read;
* PASS: the Wilson lower bound of agreement >= 0.80, Cohen's kappa >= 0.60, no probe found a hole, and the
  judge is clean: its rewards are not noisy (re-judged as-is) and it does not read length (the filler flip and
  the length bias within a label); ``ok`` means measured and clean, so any of these warnings makes it False;
* FAIL: otherwise, with the number, the floor and what to do.

The judge contract is the one in :mod:`whileai_train.judge.judge_probes`: ``judge(row) -> reward`` or
``{"reward": ..., "markers": ...}``. Without ``judge=`` the rows' own ``reward`` is the judge's verdict; with
it, a gold row with no reward is judged, and a sample is re-judged as-is (consistency) and with neutral filler
appended (a flip means the judge reads length).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel

from whileai_train.errors import ConfigError, LabelError
from whileai_train.judge.defaults import (
    AGREEMENT_FLOOR,
    CONSISTENCY_SAMPLE,
    KAPPA_FLOOR,
    MAX_SKIPPED_SHARE,
    PROBE_FLAG_RATE,
    PROBE_MIN_N,
    REVIEW_QUEUE_MAX,
    SEED,
)
from whileai_train.judge.judge_probes import JudgeCalls, JudgeProbesReport, judge_probes, with_filler
from whileai_train.judge.labels import gold_kind_of, kind_words
from whileai_train.report import Report
from whileai_train.rows.contract import final_reply, prompt_text, task_key
from whileai_train.rows.intake import take_rows
from whileai_train.rows.text import words
from whileai_train.stats import cohen_kappa, wilson_interval

__all__ = ["AgreementRate", "JudgeTrustReport", "LengthBias", "format_judge_trust", "judge_trust"]


class AgreementRate(BaseModel):
    """A rate (agreement, consistency, flip) over n rows with its Wilson 95% interval."""

    name: str
    k: int
    n: int
    rate: float | None
    ci95: tuple[float, float]

    def text(self) -> str:
        if self.rate is None:
            return f"{self.name}: no rows"
        return f"{self.name}: {self.rate:.0%} of {self.n} (95% CI {self.ci95[0]:.0%}-{self.ci95[1]:.0%})"


class LengthBias(BaseModel):
    """Judge pass rate on short vs long replies among rows with the same gold label."""

    gold_label: int
    split_words: float
    short: AgreementRate
    long: AgreementRate
    flagged: bool


class JudgeTrustReport(Report):
    """The judge measured against gold labels. str() prints the reading first, then the numbers, then the fix."""

    verdict: str
    reading: str
    ok: bool
    n_gold: int
    gold_kind: str
    agreement: float | None
    agreement_low: float | None
    agreement_high: float | None
    kappa: float | None
    agreement_floor: float
    kappa_floor: float
    one_class: bool
    gold_pass_rate: float | None
    judge_pass_rate: float | None
    halves: list[AgreementRate]
    length_bias: list[LengthBias]
    consistency: AgreementRate | None
    filler_flip: AgreementRate | None
    review_queue: list[dict[str, Any]]
    n_disagreements: int
    skipped: int
    skipped_share: float
    skipped_by_reason: dict[str, int]
    max_skipped_share: float
    model_gold_excluded: int
    probes: JudgeProbesReport | None
    exploitable_by: list[str]
    warnings: list[str]
    what_to_do: list[str]

    def summary(self) -> dict[str, Any]:
        """The block other reports carry (judge_meta["trust"], publish_gate's judge_trust)."""
        return {"agreement": self.agreement, "agreement_low": self.agreement_low, "kappa": self.kappa,
                "n_gold": self.n_gold, "ok": self.ok}

    def __str__(self) -> str:
        lines = [self.reading]
        if self.agreement is not None:
            kappa = "undefined" if self.kappa is None else f"{self.kappa:.2f}"
            lines.append(f"  agreement {self.agreement:.1%} (95% CI {self.agreement_low:.1%}-{self.agreement_high:.1%},"
                         f" floor {self.agreement_floor:.2f} on the lower bound); kappa {kappa} "
                         f"(floor {self.kappa_floor:.2f}); n_gold {self.n_gold} ({self.gold_kind})")
            lines.append(f"  gold pass rate {self.gold_pass_rate:.0%}, judge pass rate {self.judge_pass_rate:.0%}; "
                         f"{self.n_disagreements} disagreements in the review queue")
        for half in self.halves:
            lines.append(f"  {half.text()}")
        for bias in self.length_bias:
            flag = "  <- the judge reads length" if bias.flagged else ""
            s, lo = bias.short, bias.long
            lines.append(f"  gold={bias.gold_label}: judge passes {s.rate:.0%} of {s.n} short replies (<= "
                         f"{bias.split_words:.0f} words; CI {s.ci95[0]:.0%}-{s.ci95[1]:.0%}) vs {lo.rate:.0%} of "
                         f"{lo.n} long (CI {lo.ci95[0]:.0%}-{lo.ci95[1]:.0%}){flag}")
        for rate in (self.consistency, self.filler_flip):
            if rate is not None:
                lines.append(f"  {rate.text()}")
        if self.skipped:
            reasons = ", ".join(f"{v} {k}" for k, v in self.skipped_by_reason.items())
            lines.append(f"  skipped {self.skipped} gold rows ({self.skipped_share:.0%}; {reasons})")
        if self.probes is not None:
            lines.append(f"  probes: {self.probes.verdict}")
            lines.extend(f"  {line}" for line in self.probes.lines())
        lines.extend(f"  warning: {w}" for w in self.warnings)
        if self.what_to_do:
            lines.append("What to do:")
            lines.extend(f"  - {step}" for step in self.what_to_do)
        return "\n".join(lines)


def format_judge_trust(report: JudgeTrustReport | Mapping[str, Any]) -> str:
    """The printed reading: NOT MEASURED / INCONCLUSIVE / PASS / FAIL on the first line, then the numbers.

    Takes the report, its model_dump(), or the summary block other reports carry (agreement, agreement_low,
    kappa, n_gold, ok), which prints one line.
    """
    if isinstance(report, JudgeTrustReport):
        return str(report)
    if isinstance(report, Mapping):
        if set(JudgeTrustReport.model_fields) <= set(report):
            return str(JudgeTrustReport.model_validate(dict(report)))
        if "reading" in report:
            return str(report["reading"])
        n_gold = int(report.get("n_gold") or 0)
        if n_gold == 0:
            return "NOT MEASURED: no gold labels, so the judge is unmeasured (not untrustworthy)."
        agreement, low, kappa = report.get("agreement"), report.get("agreement_low"), report.get("kappa")
        shown = "undefined" if kappa is None else f"{kappa:.2f}"
        numbers = (f"agreement {agreement:.0%} (lower bound {low:.2f}, floor {AGREEMENT_FLOOR:.2f}), kappa {shown} "
                   f"(floor {KAPPA_FLOOR:.2f}), n_gold {n_gold}") if agreement is not None and low is not None else ""
        return f"{'PASS' if report.get('ok') else 'FAIL'}: {numbers}"
    raise ConfigError(f"format_judge_trust got a {type(report).__name__}. Fix: pass judge_trust(...)'s report")


def _labels_needed(agreement: float, floor: float) -> int | None:
    """How many labels at this agreement put the Wilson lower bound at the floor (None past 100k)."""
    def enough(n: int) -> bool:
        return wilson_interval(agreement * n, n)[0] >= floor

    high = 1
    while not enough(high):
        high *= 2
        if high > 100_000:
            return None
    low = high // 2  # the lower bound grows with n at a fixed rate: bisect for the smallest n
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high


def _rate(name: str, k: int, n: int) -> AgreementRate:
    return AgreementRate(name=name, k=k, n=n, rate=(k / n if n else None), ci95=wilson_interval(k, n))


def _exact01(value: Any) -> tuple[int | None, str | None]:
    """(0 or 1, None) for an exact 0/1 reward, else (None, why it is skipped)."""
    if value is None:
        return None, "ungraded"
    if isinstance(value, bool):
        return int(value), None
    if isinstance(value, str):
        return None, "text"
    if not isinstance(value, (int, float)) or math.isnan(value):
        return None, "not a number"
    if value in (0, 1):
        return int(value), None
    return None, "partial"


def _words(row: Mapping[str, Any]) -> int:
    return len(words(final_reply(row)))


def _length_bias(rows: Sequence[Mapping[str, Any]], gold: np.ndarray, judged: np.ndarray) -> list[LengthBias]:
    out: list[LengthBias] = []
    lengths = np.array([_words(r) for r in rows], dtype=float)
    for label in (0, 1):
        mask = gold == label
        if mask.sum() < 4:
            continue
        split = float(np.median(lengths[mask]))
        short, long_ = mask & (lengths <= split), mask & (lengths > split)
        if not long_.any() or not short.any():
            continue
        s = _rate("short", int(judged[short].sum()), int(short.sum()))
        lo = _rate("long", int(judged[long_].sum()), int(long_.sum()))
        flagged = s.ci95[1] < lo.ci95[0]  # disjoint intervals, long replies passed more: not chance
        out.append(LengthBias(gold_label=label, split_words=split, short=s, long=lo, flagged=flagged))
    return out


@dataclass
class _Gold:
    """The gold rows that count: kept[i] is a row number, gold[i] its label, judged[i] the judge's 0/1 verdict."""

    labelled: list[int]
    kept: list[int] = field(default_factory=list)
    gold: list[int] = field(default_factory=list)
    judged: list[int] = field(default_factory=list)
    reasons: dict[str, int] = field(default_factory=dict)
    model_excluded: int = 0

    def skip(self, why: str) -> None:
        self.reasons[why] = self.reasons.get(why, 0) + 1


def _gold_rows(rows: Sequence[Mapping[str, Any]], calls: JudgeCalls | None, allow_model_gold: bool,
               warnings_: list[str]) -> _Gold:
    labelled = [i for i, r in enumerate(rows)
                if r.get("gold_reward") is not None
                and not (isinstance(r["gold_reward"], float) and math.isnan(r["gold_reward"]))]
    model_rows = {i for i in labelled if gold_kind_of(rows[i]) == "model"}
    if model_rows and not allow_model_gold:
        if len(model_rows) == len(labelled):
            raise LabelError(f"the {len(model_rows)} gold labels were written by a model (gold_kind='model'); a "
                             "judge graded against another model measures agreement between models, not trust. "
                             "Fix: label a sample by hand (attach_labels(kind='human')) or by rule (kind='program'),"
                             " or pass allow_model_gold=True to read it anyway")
        warnings_.append(f"{len(model_rows)} model-written gold labels left out (allow_model_gold=True counts them)")
        labelled = [i for i in labelled if i not in model_rows]
    out = _Gold(labelled=labelled, model_excluded=0 if allow_model_gold else len(model_rows))
    for i in labelled:
        label, why_gold = _exact01(rows[i]["gold_reward"])
        if label is None:
            out.skip(f"gold {why_gold}")
            continue
        reward = rows[i].get("reward")
        if reward is None and calls is not None:
            reward = calls.reward(rows[i])
        verdict, why_reward = _exact01(reward)
        if verdict is None:
            out.skip(str(why_reward))
            continue
        out.kept.append(i)
        out.gold.append(label)
        out.judged.append(verdict)
    return out


def _review_item(row: Mapping[str, Any], number: int, gold: int, judged: int) -> dict[str, Any]:
    return {"row": number, "rollout_id": row.get("rollout_id"), "task": task_key(row), "gold": gold,
            "judge": judged, "gold_kind": gold_kind_of(row), "prompt": prompt_text(row)[:200],
            "reply": final_reply(row)[:200]}


def _rejudge(rows: Sequence[Mapping[str, Any]], measured: _Gold, calls: JudgeCalls, sample: int, seed: int,
             warnings_: list[str], unclean: list[str]) -> tuple[AgreementRate, AgreementRate]:
    """Consistency (the same reply judged again) and the filler flip (neutral filler appended), on a sample; a
    flag on either is a warning and a cause in `unclean` (the report's ok then reads False)."""
    if measured.kept:
        pool, before_of = measured.kept, measured.judged
    else:
        pool = [i for i, r in enumerate(rows) if _exact01(r.get("reward"))[0] is not None]
        before_of = [int(_exact01(rows[i].get("reward"))[0] or 0) for i in pool]
    same = flips = n_same = n_flip = 0
    for position in np.random.default_rng(seed).permutation(len(pool))[:sample].tolist():
        row = rows[pool[position]]
        again = calls.verdict(row)
        filled = calls.verdict(with_filler(row))
        if again is not None:
            n_same += 1
            same += int(again == bool(before_of[position]))
            if filled is not None:
                n_flip += 1
                flips += int(filled != again)
    consistency = _rate("consistency (re-judged as-is, same verdict)", same, n_same)
    filler_flip = _rate("filler flip (neutral filler appended, verdict changed)", flips, n_flip)
    if n_same and same < (1 - PROBE_FLAG_RATE) * n_same:
        warnings_.append(f"the judge changed {n_same - same} of {n_same} verdicts on the same reply: its rewards "
                         "are noisy; grade at temperature 0 or average several calls")
        unclean.append(f"rewards are noisy (consistency {consistency.rate:.0%} of {n_same})")
    if n_flip >= PROBE_MIN_N and flips >= PROBE_FLAG_RATE * n_flip:
        warnings_.append(f"neutral filler changed {flips} of {n_flip} verdicts: the judge reads length")
        unclean.append(f"the judge reads length (neutral filler flipped {flips} of {n_flip} verdicts)")
    return consistency, filler_flip


def _verdict(measured: _Gold, against: str, agreement: float | None, low: float | None, kappa: float | None,
             one_class: bool, exploitable_by: list[str], floors: tuple[float, float, float],
             todo: list[str], unclean: Sequence[str] = ()) -> tuple[str, str]:
    """(verdict, reading line); appends what to do. PASS means measured and clean: over both floors, no probe
    hole, and none of `unclean` (noisy rewards, a judge that reads length)."""
    agreement_floor, kappa_floor, max_skipped_share = floors
    n, labelled = len(measured.kept), len(measured.labelled)
    skipped = sum(measured.reasons.values())
    if not labelled:
        todo.append("label a sample by hand (both passes and failures) and attach_labels(kind='human')")
        return "NOT MEASURED", ("NOT MEASURED: no gold labels on these rows, so the judge is unmeasured (not "
                                "untrustworthy). Label 50-100 rows by hand, attach_labels(rows, labels, "
                                "kind='human'), and run judge_trust again.")
    if skipped > max_skipped_share * labelled:
        todo.append("make the judge's verdict exact (Criterion(kind='hard')), or grade those rows again so each "
                    "reward is 0 or 1")
        return "INCONCLUSIVE", (f"INCONCLUSIVE: {skipped} of {labelled} gold rows skipped ({skipped / labelled:.0%} "
                                f"> {max_skipped_share:.0%}): agreement counts exact 0/1 rewards only.")
    assert agreement is not None and low is not None  # n > 0 from here: labelled rows, few skipped
    if one_class and low < agreement_floor:
        todo.append("read the review queue; label some rows of the other class too")
        return "FAIL", (f"FAIL: agreement with {against} {agreement:.0%} (lower bound {low:.2f} < floor "
                        f"{agreement_floor:.2f}); the gold labels hold one class only, so kappa is not read.")
    if one_class:
        only = "passes" if measured.gold[0] == 1 else "failures"
        todo.append(f"label some {'failures' if only == 'passes' else 'passes'} too, so both classes are measured")
        return "INCONCLUSIVE", (f"INCONCLUSIVE: the {n} {against} are all {only}: one class only, so kappa and the "
                                "length flags are skipped and the judge's errors on the other class are unseen.")
    low_ok = low >= agreement_floor
    kappa_ok = kappa is not None and kappa >= kappa_floor
    if low_ok and kappa_ok and not exploitable_by and not unclean:
        return "PASS", (f"PASS: the judge agrees with {against} on {agreement:.0%} of {n} rows (lower bound "
                        f"{low:.2f} >= {agreement_floor:.2f}), kappa {kappa:.2f} >= {kappa_floor:.2f}.")
    why = []
    if not low_ok:
        why.append(f"agreement lower bound {low:.2f} < floor {agreement_floor:.2f}")
        enough = _labels_needed(agreement, agreement_floor) if agreement >= agreement_floor else None
        if enough is not None:
            todo.append(f"agreement {agreement:.0%} is above the floor but {n} labels cannot show it: about {enough} "
                        f"labels at this agreement would put the lower bound over {agreement_floor}")
        else:
            todo.append("read the review queue, fix the rubric on task half A and re-read half B")
    if not kappa_ok:
        why.append(f"kappa {'undefined' if kappa is None else f'{kappa:.2f}'} < floor {kappa_floor:.2f}")
        todo.append("kappa under the floor means agreement beyond chance is weak: check the judge is not passing "
                    "(or failing) nearly everything")
    if exploitable_by:
        why.append(f"exploitable by {', '.join(exploitable_by)}")
        todo.append("close the probe holes before training on this judge")
    why.extend(unclean)
    return "FAIL", f"FAIL: measured against {against} (n={n}), " + "; ".join(why) + "."


def judge_trust(rows: Sequence[Mapping[str, Any]], judge: Callable[[dict[str, Any]], Any] | None = None, *,
                rubric: Any = None, probes: Any = None, allow_model_gold: bool = False,
                max_skipped_share: float = MAX_SKIPPED_SHARE, agreement_floor: float = AGREEMENT_FLOOR,
                kappa_floor: float = KAPPA_FLOOR, sample: int = CONSISTENCY_SAMPLE,
                seed: int = SEED) -> JudgeTrustReport:
    """Measure the judge against the rows' gold labels (``gold_reward``, stamped by attach_labels).

    ``probes="all"`` (or a list of names) also runs :func:`judge_probes` (needs ``judge=``); ``rubric=`` feeds
    its keyword probe. Model-written gold is refused unless ``allow_model_gold=True``.
    """
    rows = take_rows(rows, "judge_trust")
    if probes is not None and judge is None:
        raise ConfigError("probes= needs the judge. Fix: pass judge=, a callable row -> reward")
    if not 0.0 <= max_skipped_share <= 1.0:
        raise ConfigError(f"max_skipped_share={max_skipped_share}. Fix: a share between 0 and 1 (default 0.10)")
    table = rows if isinstance(rows, list) else list(rows)  # read only; the judge gets copies
    calls = JudgeCalls(judge) if judge is not None else None
    warnings_: list[str] = []
    todo: list[str] = []
    measured = _gold_rows(table, calls, allow_model_gold, warnings_)
    kinds = sorted({gold_kind_of(table[i]) for i in measured.kept})
    gold_kind = kinds[0] if len(kinds) == 1 else ("none" if not kinds else "mixed (" + ", ".join(kinds) + ")")
    against = kind_words(kinds[0]) if len(kinds) == 1 else "gold labels"
    if "unknown" in kinds:
        warnings_.append("some gold rows carry no gold_kind (older rows): counted as unknown; re-attach them "
                         "with attach_labels(kind=...) so the report says who wrote them")

    gold = np.array(measured.gold, dtype=int)
    judged = np.array(measured.judged, dtype=int)
    n = len(measured.kept)
    agree = gold == judged
    agreement = low = high = kappa = None
    one_class = False
    halves: list[AgreementRate] = []
    length_bias: list[LengthBias] = []
    disagreements = np.flatnonzero(~agree).tolist()
    queue = [_review_item(table[measured.kept[p]], measured.kept[p], int(gold[p]), int(judged[p]))
             for p in disagreements[:REVIEW_QUEUE_MAX]]
    if n:
        agreement = float(agree.mean())
        low, high = wilson_interval(int(agree.sum()), n)
        one_class = len(set(measured.gold)) < 2
        kappa = None if one_class else cohen_kappa(measured.gold, measured.judged)
        half_of = np.array([zlib.crc32(task_key(table[i]).encode()) % 2 for i in measured.kept])
        for half, name in ((0, "agreement, task half A"), (1, "agreement, task half B")):
            halves.append(_rate(name, int(agree[half_of == half].sum()), int((half_of == half).sum())))
        if not one_class:
            length_bias = _length_bias([table[i] for i in measured.kept], gold, judged)

    consistency = filler_flip = None
    probe_report = None
    unclean: list[str] = []  # what keeps a judge that clears the floors from being clean (ok False)
    if calls is not None:
        consistency, filler_flip = _rejudge(table, measured, calls, sample, seed, warnings_, unclean)
        if probes is not None:
            probe_report = judge_probes(table, calls.judge, rubric=rubric, probes=probes, seed=seed)
        calls.raise_if_all_failed()
        if calls.errors:
            warnings_.append(f"{calls.errors} of {calls.calls} judge calls raised (first: {calls.first_error!r})")
    exploitable_by = list(probe_report.exploitable_by) if probe_report is not None else []
    if any(b.flagged for b in length_bias):
        warnings_.append("the judge passes long replies more often than short ones with the same "
                         f"{against} verdict (length bias the labels rule out)")
        unclean.append("the judge reads length (long replies pass more often under the same label)")
    verdict, reading = _verdict(measured, against, agreement, low, kappa, one_class, exploitable_by,
                                (agreement_floor, kappa_floor, max_skipped_share), todo, unclean)
    if any("noisy" in cause for cause in unclean):
        todo.append("make the judge's rewards repeatable: grade at temperature 0 or average several calls")
    if any("reads length" in cause for cause in unclean):
        todo.append("tell the judge that length is not quality, or penalise length in the reward")
    skipped = sum(measured.reasons.values())
    return JudgeTrustReport(
        verdict=verdict, reading=reading, ok=verdict == "PASS", n_gold=n, gold_kind=gold_kind, agreement=agreement,
        agreement_low=low, agreement_high=high, kappa=kappa, agreement_floor=agreement_floor,
        kappa_floor=kappa_floor, one_class=one_class,
        gold_pass_rate=float(gold.mean()) if n else None, judge_pass_rate=float(judged.mean()) if n else None,
        halves=halves, length_bias=length_bias, consistency=consistency, filler_flip=filler_flip,
        review_queue=queue, n_disagreements=len(disagreements), skipped=skipped,
        skipped_share=skipped / len(measured.labelled) if measured.labelled else 0.0,
        skipped_by_reason=measured.reasons, max_skipped_share=max_skipped_share,
        model_gold_excluded=measured.model_excluded, probes=probe_report, exploitable_by=exploitable_by,
        warnings=warnings_, what_to_do=todo)
