"""Several reward functions (a format reward beside a correctness reward, as TRL's recipes write them): the holdout
scores each one (EvalRecord.fns), each function's holdout mean is a reading on the run (proxy_reward/<fn>), and
the divergence alarm names the function whose mean rose while gold did not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from whileai_train.callbacks.alarms import EvalRecord, Verdict

__all__ = ["fn_means", "name_rising_function"]


def fn_means(record: EvalRecord) -> dict[str, float]:
    """Each reward function's holdout mean over asks (empty with one function)."""
    out: dict[str, float] = {}
    for name, values in (record.fns or {}).items():
        finite = [v for v in values if v is not None and math.isfinite(v)]
        if finite:
            out[name] = float(np.mean(finite))
    return out


def _rise(ref: EvalRecord, cur: EvalRecord, name: str) -> float | None:
    """The paired mean change of one function's per-ask means between two evals."""
    a, b = (ref.fns or {}).get(name), (cur.fns or {}).get(name)
    if a is None or b is None:
        return None
    index = {ask: i for i, ask in enumerate(cur.asks)}
    pairs = [(a[i], b[index[ask]]) for i, ask in enumerate(ref.asks)
             if ask in index and math.isfinite(a[i]) and math.isfinite(b[index[ask]])]
    return float(np.mean([y - x for x, y in pairs])) if pairs else None


def name_rising_function(verdicts: Sequence[Verdict], evals: Sequence[EvalRecord]) -> list[Verdict]:
    """A divergence alarm with several reward functions says which one rose most since the eval it compared with."""
    out = []
    for v in verdicts:
        cur = evals[-1] if evals else None
        if v.name == "divergence" and v.status == "alarm" and cur is not None and len(cur.fns or {}) > 1:
            since = v.numbers.get("since")
            ref = next((r for r in evals if (r.step == 0 and since == "baseline") or since == f"step {r.step}"),
                       evals[0])
            rises = {name: _rise(ref, cur, name) for name in cur.fns or {}}
            known = {name: d for name, d in rises.items() if d is not None}
            if known:
                top = max(known, key=lambda name: known[name])
                others = ", ".join(f"{name} {d:+.3f}" for name, d in known.items() if name != top)
                deltas = {k: round(d, 4) for k, d in known.items()}
                v = replace(v, reason=f"{v.reason}; the reward function that rose: {top} ({known[top]:+.3f}; "
                                      f"{others})", numbers={**v.numbers, "rose": top, "function_deltas": deltas})
        out.append(v)
    return out
