"""The holdout completions the reward monitor keeps at each eval: what the model wrote, beside its scores.

At each holdout eval, every rank puts on each completion's score its prompt and completion as text (cut to
MAX_COMPLETION_CHARS, runs/defaults.py), and the tool calls it made (name, failed or not), before the scores are
gathered; rank 0 then keeps the eval's rows on the run (runs/completions.py: a batch that travels the notes path
and is stored apart), and, where trackio or wandb holds a run in this process, logs them there as the tracker's
own Table under `monitor/holdout_completions` with `train/global_step`, as the trainer's reporters log.

    a row: step, ask, prompt, completion, proxy, gold, tools [{name, failed}], features, cut

`features` are the behaviour markers (monitor(markers=...)) that fired on the completion (a non-zero value),
named marker:<name>: the monitor reads markers on the holdout already, while hack_scan's feature tiers read the
training completions, so the holdout row carries its markers.

Bounded per run: at most MAX_COMPLETIONS_PER_RUN rows are kept; past it the rows are counted as dropped, and a
text past the character cap is cut and counted. Each cap, the first time it bites, is said once on the run (a
note) and in the monitor's warnings; the totals are in MonitorSummary.completions. Nothing here may cost the
eval: a completion that cannot be read as text is kept as its repr, and a tracker that refuses the table is one
warning.
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from whileai_train.rows.content import as_text
from whileai_train.rows.trajectory import CALLED, read_trajectory
from whileai_train.runs.completions import completions_note, cut_text, finite_score
from whileai_train.runs.defaults import MAX_COMPLETION_CHARS, MAX_COMPLETIONS_PER_RUN
from whileai_train.sampling.samples import Samples, trajectory_row

__all__ = ["TABLE_COLUMNS", "TABLE_KEY", "CompletionsKeeper", "add_texts", "readable", "tool_calls_of"]

logger = logging.getLogger("whileai_train.callbacks")

TABLE_KEY = "monitor/holdout_completions"
TABLE_COLUMNS = ("step", "ask", "prompt", "completion", "proxy", "gold", "tools", "features", "cut")
_TEXTS = "texts"  # the key of a score that carries its completion's texts from the rank that sampled it


def readable(value: Any) -> str:
    """A prompt or completion as a person reads it: a string as it is; chat messages as "role: text" blocks, a
    tool call as "-> name(arguments)"."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return as_text(value)
    blocks = []
    for message in value:
        if not isinstance(message, Mapping):
            blocks.append(as_text(message))
            continue
        content = message.get("content")
        text = content if isinstance(content, str) else ("" if content is None else as_text(content))
        for call in message.get("tool_calls") or []:
            function = call.get("function", call) if isinstance(call, Mapping) else {}
            arguments = function.get("arguments") if isinstance(function, Mapping) else None
            name = function.get("name") if isinstance(function, Mapping) else None
            args = arguments if isinstance(arguments, str) else as_text(arguments or {})
            text += ("\n" if text else "") + f"-> {name}({args})"
        blocks.append(f"{message.get('role', '?')}: {text}")
    return "\n\n".join(blocks)


def tool_calls_of(prompt: Any, completion: Any) -> list[dict[str, Any]]:
    """The completion's tool calls, in order: {"name", "failed"} (a result that reports failure, by the rows'
    one failure rule)."""
    trajectory = read_trajectory(trajectory_row(prompt, completion))
    prompt_calls = 0
    if isinstance(prompt, list):  # calls already in the prompt are the conversation's, not this completion's
        prompt_calls = sum(1 for kind, _ in read_trajectory(trajectory_row(prompt, [])).events if kind == CALLED)
    calls = [event for kind, event in trajectory.events if kind == CALLED]
    return [{"name": str(call.name), "failed": bool(call.failed)} for call in calls[prompt_calls:]]


def add_texts(samples: Samples, scored: list[dict[str, Any]], limit: int = MAX_COMPLETION_CHARS) -> None:
    """Put each completion's texts (cut to `limit`) and tool calls on its score, on the rank that sampled it (the
    scores are what the ranks gather). A completion that cannot be read keeps its repr and no tool calls."""
    if len(scored) != len(samples.samples):
        return  # not one score per completion: nothing to pair the texts with (the eval goes on without them)
    for score, sample in zip(scored, samples.samples, strict=True):
        try:
            prompt, completion = readable(sample.prompt), readable(sample.completion)
            tools = tool_calls_of(sample.prompt, sample.completion) if sample.tool_calls else []
        except Exception:  # noqa: BLE001  (a record of the eval never costs the eval)
            prompt, completion, tools = repr(sample.prompt), repr(sample.completion), []
        prompt, prompt_cut = cut_text(prompt, limit)
        completion, completion_cut = cut_text(completion, limit)
        score[_TEXTS] = {"prompt": prompt, "completion": completion, "tools": tools,
                         "cut": prompt_cut or completion_cut}


def _fired(markers: Mapping[str, Any] | None) -> list[str]:
    return [f"marker:{name}" for name, value in (markers or {}).items()
            if isinstance(value, (int, float)) and math.isfinite(value) and value != 0]


def _row(step: int, score: Mapping[str, Any]) -> dict[str, Any]:
    texts = score.get(_TEXTS) or {}
    return {"step": step, "ask": str(score.get("ask") or ""), "prompt": texts.get("prompt", ""),
            "completion": texts.get("completion", ""), "proxy": finite_score(score.get("proxy")),
            "gold": finite_score(score.get("gold")),
            "tools": list(texts.get("tools") or []), "features": _fired(score.get("markers")),
            "cut": bool(texts.get("cut"))}


class CompletionsKeeper:
    """Rank 0: keeps each eval's completions on the run and in the trackers, within the per-run caps."""

    def __init__(self, max_rows: int = MAX_COMPLETIONS_PER_RUN, max_chars: int = MAX_COMPLETION_CHARS) -> None:
        self.max_rows = max_rows
        self.max_chars = max_chars
        self.kept = 0
        self.cut = 0
        self.dropped = 0
        self._tracker_failed: set[str] = set()

    def totals(self) -> dict[str, int]:
        """Rows kept, texts cut to the character cap, rows dropped past the row cap, and the two caps."""
        return {"kept": self.kept, "cut": self.cut, "dropped": self.dropped, "max_rows": self.max_rows,
                "max_chars": self.max_chars}

    def keep(self, step: int, scored: Sequence[Mapping[str, Any]], run: Any) -> list[str]:
        """Keep the eval's rows (on `run` when given, and in the trackers); the warnings to say (a cap the first
        time it bites, or why this eval's rows could not be kept). Never raises: a record never costs training."""
        try:
            return self._keep(step, scored, run)
        except Exception as exc:  # noqa: BLE001  (a record of the eval never reaches the training loop)
            why = f"{type(exc).__name__}: {exc}"
            return [f"the holdout completions at step {step} could not be kept ({why}); the eval's scores are on the run"]

    def _keep(self, step: int, scored: Sequence[Mapping[str, Any]], run: Any) -> list[str]:
        rows = [_row(step, s) for s in scored]
        room = max(0, self.max_rows - self.kept)
        kept, dropped = rows[:room], len(rows) - min(room, len(rows))
        cut = sum(1 for r in kept if r["cut"])
        warnings = []
        if cut and not self.cut:
            warnings.append(f"a holdout completion (or its prompt) at step {step} was longer than {self.max_chars} "
                            "characters and was cut to that (MAX_COMPLETION_CHARS); each cut one is counted in "
                            "the run's completions (cut)")
        if dropped and not self.dropped:
            warnings.append(f"the run keeps at most {self.max_rows} holdout completions (MAX_COMPLETIONS_PER_RUN); "
                            f"from step {step} on they are counted (dropped), not kept")
        self.kept, self.cut, self.dropped = self.kept + len(kept), self.cut + cut, self.dropped + dropped
        if run is not None and (kept or dropped):
            run.note(completions_note(step, kept, cut=cut, dropped=dropped))
        if kept:
            self._log_tables(step, kept)
        return warnings

    # -- trackio / wandb ---------------------------------------------------------------------------------
    def _log_tables(self, step: int, rows: Sequence[Mapping[str, Any]]) -> None:
        cells = [[_cell(r[c]) if c in ("tools", "features") else r[c] for c in TABLE_COLUMNS] for r in rows]
        for name, log in (("trackio", _trackio_table), ("wandb", _wandb_table)):
            try:
                log(step, cells)
            except Exception as exc:  # noqa: BLE001  (a tracker's failure never reaches training)
                if name not in self._tracker_failed:
                    self._tracker_failed.add(name)
                    logger.warning("whileai: could not log the holdout completions to %s as a table (%s: %s); "
                                   "they are on the run", name, type(exc).__name__, exc)


def _cell(value: Any) -> str:
    """A list cell (tool calls, features) as one line of text: a table cell holds one value."""
    if not value:
        return ""
    if isinstance(value[0], Mapping):
        return ", ".join(f"{t['name']}{' (failed)' if t.get('failed') else ''}" for t in value)
    return ", ".join(str(v) for v in value)


def _trackio_table(step: int, cells: list[list[Any]]) -> None:
    trackio = sys.modules.get("trackio")
    if trackio is None or trackio.context_vars.current_run.get() is None:
        return
    table = trackio.Table(columns=list(TABLE_COLUMNS), data=cells)
    # a row of its own, as TRL logs its completions table (trackio has no commit=False); the trainer's rows and this
    # one carry train/global_step, the step to plot against
    trackio.log({TABLE_KEY: table, "train/global_step": step})


def _wandb_table(step: int, cells: list[list[Any]]) -> None:
    wandb = sys.modules.get("wandb")
    run = getattr(wandb, "run", None) if wandb is not None else None
    if wandb is None or run is None:
        return
    # commit=False: the table joins the trainer's next row instead of taking a step of wandb's own counter
    run.log({TABLE_KEY: wandb.Table(columns=list(TABLE_COLUMNS), data=cells), "train/global_step": step}, commit=False)
