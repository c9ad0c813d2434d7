"""optimize(rows, mode="rl" | "sft"): prune graded rollouts before training.

mode="rl" is :func:`select_for_rl` (junk, duplicates, truncation, unanimous and out-of-band asks; whole asks
round-robin across fault kinds and pass rates; calibration stamps; hack_scan with `endorsed=`). mode="sft" is
:func:`select_for_sft` (rejection sampling with `select=` and `min_reward`). Any other mode is a ConfigError:
an unknown mode never falls through to RL.

Both return :class:`~whileai_train.report.KeptRows` (``rows, report = wai.optimize(...)``): the kept rows as new
dicts (the input rows are never modified) and a pydantic report readable as
``report["hack_scan"]``.
"""

from __future__ import annotations

import inspect
from typing import Any, Literal, overload

from whileai_train.errors import ConfigError
from whileai_train.report import KeptRows
from whileai_train.select.select_rl import RLSelectionReport, select_for_rl
from whileai_train.select.select_sft import SFTSelectionReport, select_for_sft

__all__ = ["RLSelectionReport", "SFTSelectionReport", "optimize", "select_for_rl",
           "select_for_sft"]

_SELECTORS = {"rl": select_for_rl, "sft": select_for_sft}


def _options(selector: Any) -> set[str]:
    return {name for name, parameter in inspect.signature(selector).parameters.items()
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY}


@overload
def optimize(rows: Any, mode: Literal["rl"] = "rl", **options: Any) -> KeptRows[RLSelectionReport]: ...
@overload
def optimize(rows: Any, mode: Literal["sft"], **options: Any) -> KeptRows[SFTSelectionReport]: ...
@overload
def optimize(rows: Any, mode: str, **options: Any) -> KeptRows[RLSelectionReport | SFTSelectionReport]: ...
def optimize(rows: Any, mode: str = "rl", **options: Any) -> KeptRows[RLSelectionReport | SFTSelectionReport]:
    """Prune `rows` for an RL (`mode="rl"`) or SFT (`mode="sft"`) run; return KeptRows(rows, report).

    rl options: band=(0.2, 0.8), truncated="drop" | "penalize" | "keep", order="round_robin" | "middle",
    max_rows=, max_asks=, endorsed=, features=, seed=. sft options: select="top_per_prompt" |
    "top_k_overall" | "random_per_prompt" | "random_k_overall", min_reward=0.5 (the SFT export's pass threshold,
    so what it keeps the export accepts), k=, per_prompt=1, group_by="task" | "prompt", seed=.
    """
    selector: Any = _SELECTORS.get(mode) if isinstance(mode, str) else None
    if selector is None:
        raise ConfigError(f"optimize: mode={mode!r} is not a mode. Fix: pass mode='rl' (grouped RL: GRPO, DAPO) "
                          "or mode='sft' (rejection sampling for supervised fine-tuning)")
    known = _options(selector)
    unknown = sorted(set(options) - known)
    if unknown:
        other = "sft" if mode == "rl" else "rl"
        belongs = [name for name in unknown if name in _options(_SELECTORS[other])]
        hint = f" ({', '.join(belongs)} {'is' if len(belongs) == 1 else 'are'} for mode={other!r})" if belongs else ""
        raise ConfigError(f"optimize(mode={mode!r}) takes no {', '.join(unknown)}{hint}. "
                          f"Fix: use one of {', '.join(sorted(known))}")
    result: KeptRows[RLSelectionReport | SFTSelectionReport] = selector(rows, **options)
    return result
