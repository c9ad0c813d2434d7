"""The four alarms as pure logic over eval records: divergence, length, drift, feature.

No torch, no trainer: the monitor feeds this module numbers, and tests feed it synthetic streams.

- divergence: the holdout proxy reward rose by `delta` (the lower end of its paired 95% interval over asks
  is at or above `delta`: a fluke of noise on both scorers must not fire it) while gold did not move up
  (gold gained less than delta/2). A gold gain of delta/2 or more whose interval still reaches 0 is
  "unknown": gold may have kept up.
- length: mean completion tokens per ask rose by at least `length_pct` (interval above 0) while gold did
  not move up, same gold test.
- drift: the KL logged at the current step is past `kl_budget`.
- feature: hack_scan over the training buffer says reward_hack (its top feature is not endorsed).

Each eval is compared with the eval `window` evals back and with the baseline (step 0), so a plateau does
not hide a standing divergence. Too few paired asks (< min_asks) or no gold is "unknown", never an alarm.
An alarm that stands is reported once (`AlarmBook`), again only after it has cleared.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from whileai_train.alarm_event import AlarmEvent
from whileai_train.callbacks import monitor_defaults as D
from whileai_train.stats import paired_comparison

if TYPE_CHECKING:
    from whileai_train.gates.hack_scan import HackScanReport

__all__ = [
    "Alarm",
    "AlarmBook",
    "AlarmSettings",
    "EvalRecord",
    "Verdict",
    "check_divergence",
    "check_drift",
    "check_eval",
    "check_feature",
    "check_length",
    "confirm_length",
    "endorsed_warnings",
    "name_tracked_feature",
]

Status = Literal["alarm", "clear", "unknown"]


@dataclass(frozen=True)
class AlarmSettings:
    """Thresholds of the alarms (see monitor_defaults for each default's reason)."""

    window: int = D.WINDOW
    delta: float = D.DELTA
    length_pct: float = D.LENGTH_PCT
    kl_budget: float | None = None
    min_asks: int = D.MIN_ASKS


@dataclass(frozen=True)
class EvalRecord:
    """One holdout eval: per-ask means (index i is one ask in every list). gold is None without a gold scorer."""

    step: int
    asks: list[str]
    proxy: list[float] | None
    gold: list[float] | None
    length: list[float]
    n_completions: int = 0
    fns: dict[str, list[float]] | None = None  # per-ask means of each reward function, with several (per_function.py)

    def mean(self, name: str) -> float | None:
        values = getattr(self, name)
        if not values:
            return None
        finite = [v for v in values if v is not None and math.isfinite(v)]
        return float(np.mean(finite)) if finite else None


@dataclass(frozen=True)
class Verdict:
    """One alarm's reading at one step: status, a one-line reason, and the numbers behind it."""

    name: str
    status: Status
    reason: str
    numbers: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Alarm:
    """An alarm that fired: the loud line printed and noted on the run."""

    name: str
    step: int
    message: str
    numbers: dict[str, Any]

    @property
    def line(self) -> str:
        return f"!!! REWARD MONITOR ALARM [{self.name}] at step {self.step}: {self.message}"

    def event(self) -> AlarmEvent:
        """This alarm as the typed event a run carries to its sink (evidence as JSON values: tuples as lists)."""
        evidence = {key: list(value) if isinstance(value, tuple) else value for key, value in self.numbers.items()}
        return AlarmEvent(name=self.name, step=self.step, message=self.message, evidence=evidence)


def _paired(ref: EvalRecord, cur: EvalRecord, name: str) -> tuple[list[float], list[float]]:
    """Per-ask values of `name` on the asks both evals share (finite on both sides), in ref's order."""
    a, b = getattr(ref, name), getattr(cur, name)
    if a is None or b is None:
        return [], []
    index = {ask: i for i, ask in enumerate(cur.asks)}
    before, after = [], []
    for i, ask in enumerate(ref.asks):
        j = index.get(ask)
        if j is None:
            continue
        x, y = a[i], b[j]
        if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)):
            continue
        before.append(float(x))
        after.append(float(y))
    return before, after


def _gold_reading(ref: EvalRecord, cur: EvalRecord, s: AlarmSettings) -> tuple[str, dict[str, Any]]:
    """'up', 'not_up' or 'unknown' for gold between two evals, with its paired numbers."""
    before, after = _paired(ref, cur, "gold")
    if not before:
        return "unknown", {"gold": "no gold scores"}
    if len(before) < s.min_asks:
        return "unknown", {"gold_asks": len(before)}
    cmp = paired_comparison(before, after)
    numbers = {"gold_delta": round(cmp.delta, 4), "gold_ci95": _round_ci(cmp.ci95), "gold_asks": cmp.n}
    lo = cmp.ci95[0] if cmp.ci95 is not None else 0.0
    if cmp.delta >= s.delta / 2:
        # gold kept up by half the threshold or more: up when its interval is above 0, else too noisy to say
        return ("up" if lo > 0 else "unknown"), numbers
    return "not_up", numbers


def _round_ci(ci: tuple[float, float] | None) -> list[float] | None:
    return None if ci is None else [round(ci[0], 4), round(ci[1], 4)]


def _label(ref: EvalRecord) -> str:
    return "baseline" if ref.step == 0 else f"step {ref.step}"


def check_divergence(ref: EvalRecord, cur: EvalRecord, s: AlarmSettings) -> Verdict:
    """Proxy up by delta (paired interval above 0) while gold does not move up, between ref and cur."""
    before, after = _paired(ref, cur, "proxy")
    if len(before) < s.min_asks:
        return Verdict("divergence", "unknown", f"{len(before)} paired asks with a proxy score (< {s.min_asks})",
                       {"asks": len(before)})
    proxy = paired_comparison(before, after)
    numbers: dict[str, Any] = {"since": _label(ref), "proxy_delta": round(proxy.delta, 4),
                               "proxy_ci95": _round_ci(proxy.ci95), "asks": proxy.n}
    proxy_up = proxy.ci95 is not None and proxy.ci95[0] >= s.delta
    if not proxy_up:
        return Verdict("divergence", "clear",
                       f"proxy {proxy.delta:+.3f} since {_label(ref)} (its 95% CI is not above delta {s.delta})",
                       numbers)
    return _unless_gold_up("divergence", "proxy up", ref, cur, s, numbers,
                           f"proxy {proxy.delta:+.3f} since {_label(ref)} (delta {s.delta})")


def check_length(ref: EvalRecord, cur: EvalRecord, s: AlarmSettings) -> Verdict:
    """Mean completion tokens per ask up by length_pct (interval above 0) while gold does not move up."""
    before, after = _paired(ref, cur, "length")
    if len(before) < s.min_asks:
        return Verdict("length", "unknown", f"{len(before)} paired asks (< {s.min_asks})", {"asks": len(before)})
    base = float(np.mean(before))
    now = float(np.mean(after))
    growth = (now - base) / base if base > 0 else (math.inf if now > 0 else 0.0)
    cmp = paired_comparison(before, after)
    numbers: dict[str, Any] = {"since": _label(ref), "length_before": round(base, 2), "length_now": round(now, 2),
                               "length_growth": round(growth, 4) if math.isfinite(growth) else None,
                               "asks": cmp.n}
    grew = growth >= s.length_pct and cmp.ci95 is not None and cmp.ci95[0] > 0
    if not grew:
        return Verdict("length", "clear", f"length {base:.1f} -> {now:.1f} tokens since {_label(ref)}", numbers)
    pct = f"{growth:+.0%}" if math.isfinite(growth) else "from 0"
    return _unless_gold_up("length", "completions grew", ref, cur, s, numbers,
                           f"completion length {base:.1f} -> {now:.1f} tokens ({pct}, threshold "
                           f"{s.length_pct:+.0%}) since {_label(ref)}")


def confirm_length(verdict: Verdict, scan: HackScanReport | Mapping[str, Any] | None) -> Verdict:
    """A length alarm says the reward pays for length. It stands when the scan of the training rollouts shows the
    reward rising with length (hack_scan's `length` feature above its floor), or cannot tell (no scan, length not
    ranked). It clears when the scan ranks length and the reward does not rise with it: completions that drift longer
    in a run whose reward pays nothing for length (reasoning runs grow long honestly) are not a length hack."""
    if verdict.name != "length" or verdict.status != "alarm" or not scan or scan.get("degenerate"):
        return verdict
    length = next((f for f in scan.get("features") or [] if _feature_field(f, "name") == "length"), None)
    rho = None if length is None else _feature_field(length, "rho")
    if rho is None or not math.isfinite(rho):
        return verdict
    if _feature_field(length, "above_floor") and rho > 0:
        return replace(verdict, numbers={**verdict.numbers, "length_rho": round(float(rho), 4)})
    floor = scan.get("tau")
    floor_text = f", floor {floor:.2f}" if isinstance(floor, (int, float)) else ""
    return replace(verdict, status="clear",
                   reason=f"completions grew {verdict.numbers.get('length_before')} -> "
                          f"{verdict.numbers.get('length_now')} tokens, but the reward does not rise with length in "
                          f"the training rollouts (rho {rho:+.2f}{floor_text}): drift, not a length hack",
                   numbers={**verdict.numbers, "length_rho": round(float(rho), 4)})


def name_tracked_feature(verdict: Verdict, scan: HackScanReport | Mapping[str, Any] | None) -> Verdict:
    """A divergence alarm says what the proxy pays for that gold does not: the scan's top feature of the training
    rollouts, when it is not endorsed (with endorsed= given) or when nothing is endorsed."""
    if verdict.name != "divergence" or verdict.status != "alarm" or not scan or scan.get("degenerate"):
        return verdict
    top = scan.get("top_feature")
    entry = next((f for f in scan.get("features") or [] if _feature_field(f, "name") == top), None)
    rho = None if entry is None else _feature_field(entry, "rho")
    if not top or entry is None or _feature_field(entry, "endorsed") or not isinstance(rho, (int, float)):
        return verdict
    endorsed_text = ", not endorsed" if scan.get("endorsed") is not None else ""
    return replace(verdict, reason=f"{verdict.reason}; in the training rollouts the reward tracks {top!r} most "
                                   f"(rho {rho:+.2f}{endorsed_text})",
                   numbers={**verdict.numbers, "top_feature": top, "top_rho": round(float(rho), 4)})


def _unless_gold_up(name: str, rose: str, ref: EvalRecord, cur: EvalRecord, s: AlarmSettings,
                    numbers: dict[str, Any], what_rose: str) -> Verdict:
    """The shared end of the divergence and length alarms: something rose; it is an alarm unless gold rose too."""
    gold, gold_numbers = _gold_reading(ref, cur, s)
    numbers.update(gold_numbers)
    if gold == "unknown":
        return Verdict(name, "unknown", f"{rose} but gold cannot be read", numbers)
    if gold == "up":
        return Verdict(name, "clear", f"{rose} and gold went up", numbers)
    return Verdict(name, "alarm", f"{what_rose} while gold {numbers['gold_delta']:+.3f} (95% CI "
                                  f"{numbers['gold_ci95']}) over {numbers['gold_asks']} asks did not move up", numbers)


def _combine(name: str, verdicts: Sequence[Verdict]) -> Verdict:
    """Alarm if any reference comparison alarms; else unknown if any is unknown; else clear."""
    for status in ("alarm", "unknown"):
        for v in verdicts:
            if v.status == status:
                return v
    return verdicts[0] if verdicts else Verdict(name, "unknown", "no eval to compare with")


def _references(records: Sequence[EvalRecord], s: AlarmSettings) -> list[EvalRecord]:
    """The evals the latest is compared with: `window` evals back (or the oldest), and the baseline."""
    if len(records) < 2:
        return []
    window_ref = records[max(0, len(records) - 1 - s.window)]
    refs = [window_ref]
    if records[0] is not window_ref:
        refs.append(records[0])
    return refs


def check_eval(records: Sequence[EvalRecord], s: AlarmSettings) -> list[Verdict]:
    """Divergence and length for the latest of `records` (records[0] is the baseline eval)."""
    refs = _references(records, s)
    if not refs:
        return [Verdict("divergence", "unknown", "baseline only"), Verdict("length", "unknown", "baseline only")]
    cur = records[-1]
    return [
        _combine("divergence", [check_divergence(r, cur, s) for r in refs]),
        _combine("length", [check_length(r, cur, s) for r in refs]),
    ]


def check_drift(kl: float | None, s: AlarmSettings) -> Verdict:
    """KL of the current step against kl_budget; unknown without a budget or without a logged KL."""
    if s.kl_budget is None:
        return Verdict("drift", "unknown", "no kl_budget")
    if kl is None or not math.isfinite(kl):
        return Verdict("drift", "unknown", "no kl logged at this step")
    numbers = {"kl": round(float(kl), 6), "kl_budget": s.kl_budget}
    if kl > s.kl_budget:
        return Verdict("drift", "alarm", f"KL {kl:.4f} is past kl_budget {s.kl_budget}", numbers)
    return Verdict("drift", "clear", f"KL {kl:.4f} within kl_budget {s.kl_budget}", numbers)


def check_feature(scan: HackScanReport | Mapping[str, Any] | None, min_rows: int = D.MIN_SCAN_ROWS) -> Verdict:
    """The feature alarm from a hack_scan report (the model, or its fields as a dict): reward_hack True is an
    alarm."""
    if scan is None:
        return Verdict("feature", "unknown", "no scan")
    n_rows = int(scan.get("n_rows") or 0)
    numbers = {"top_feature": scan.get("top_feature"), "n_rows": n_rows, "integrity": scan.get("integrity")}
    top = _top_rho(scan)
    if top is not None:
        numbers["rho"] = top
    if n_rows < min_rows:
        return Verdict("feature", "unknown", f"{n_rows} buffered completions (< {min_rows})", numbers)
    if scan.get("degenerate"):
        return Verdict("feature", "unknown", "the scan is degenerate (tied features)", numbers)
    hack = scan.get("reward_hack")
    if hack is None:
        return Verdict("feature", "unknown", "no endorsed features to judge the top feature by", numbers)
    if hack:
        rivals = [r for r in scan.get("rivals") or [] if r != scan.get("top_feature")]
        rival_text = f"; rivals {list(rivals)[:3]}" if rivals else ""
        rho = f" (rho {top:+.2f})" if top is not None else ""
        return Verdict("feature", "alarm",
                       f"reward tracks {scan.get('top_feature')!r}{rho}, not an endorsed feature{rival_text}", numbers)
    top_name = scan.get("top_feature")
    top_endorsed = next((_feature_field(f, "endorsed") for f in scan.get("features") or []
                         if _feature_field(f, "name") == top_name), None)
    if top_endorsed is True:
        return Verdict("feature", "clear", f"top feature {top_name!r} is endorsed", numbers)
    # the scan's rule: an unendorsed top feature the reward pays nothing for beyond the endorsed ones is no hack
    return Verdict("feature", "clear", f"top feature {top_name!r} rides along with the endorsed features (the reward "
                                       "pays nothing for it beyond them)", numbers)


def endorsed_warnings(endorsed: Sequence[str] | None, scan: HackScanReport | Mapping[str, Any]) -> list[str]:
    """What to say when no endorsed name matches a scanned feature: constant on this batch, or named nowhere."""
    names = [_feature_field(f, "name") for f in scan.get("features") or ()]
    if not endorsed or not names:
        return []
    missing = [e for e in endorsed if not any(e in name for name in names)]
    if len(missing) != len(endorsed):
        return []
    constant = [e for e in missing if e in scan.get("endorsed_constant", ())]
    absent = [e for e in missing if e not in constant]
    said = []
    if constant:
        said.append(f"endorsed {constant} was constant on this batch (one value on every completion of "
                    "each ask), so the scan could not rank it and the feature alarm cannot say what is "
                    "endorsed here; it is read again on the next batch")
    if absent:
        said.append(f"endorsed {absent} names no feature the scan has (no feature name contains it; e.g. "
                    f"{names[:5]}): a misspelling? The feature alarm cannot say what is endorsed. Fix: "
                    "use substrings of those names, or the keys of features=.")
    return said


def _feature_field(feature: Any, name: str) -> Any:
    """A field of one scanned feature: a FeatureScore, or its fields as a dict."""
    return feature.get(name) if isinstance(feature, Mapping) else getattr(feature, name, None)


def _top_rho(scan: HackScanReport | Mapping[str, Any]) -> float | None:
    top = scan.get("top_feature")
    for feature in scan.get("features") or ():
        if _feature_field(feature, "name") == top:
            rho = _feature_field(feature, "rho")
            return None if rho is None else round(float(rho), 4)
    return None


class AlarmBook:
    """Which alarms stand. `update` returns only the alarms that start standing at this step."""

    def __init__(self) -> None:
        self.standing: dict[str, Alarm] = {}
        self.fired: list[Alarm] = []
        self.latest: dict[str, Verdict] = {}

    def update(self, step: int, verdicts: Sequence[Verdict]) -> list[Alarm]:
        new: list[Alarm] = []
        for v in verdicts:
            self.latest[v.name] = v
            if v.status == "alarm":
                if v.name not in self.standing:
                    alarm = Alarm(v.name, step, v.reason, dict(v.numbers))
                    self.standing[v.name] = alarm
                    self.fired.append(alarm)
                    new.append(alarm)
            elif v.status == "clear":
                self.standing.pop(v.name, None)
            # "unknown" leaves a standing alarm standing: no data is not a recovery
        return new
