"""What the reward monitor carries across a checkpoint resume: its evals, its alarms and what it has said.

A resumed attempt that started the monitor afresh would take a new baseline at the resume step (the alarms
would then compare against a policy already partway through training), print again the alarms that already
fired, and log points the first attempt never logged (so its sequence numbers would part from the first
attempt's). The state rides in the checkpoint's trainer_state.json (TrainerCallback state), so it is JSON:
plain lists, dicts and numbers. The training-completion buffer of the feature scan is not carried (it can
hold thousands of completions); it refills within `buffer` completions of the resume.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from whileai_train.callbacks.alarms import Alarm, AlarmBook, EvalRecord, Verdict

__all__ = ["MonitorState", "json_safe"]


def json_safe(value: Any) -> Any:
    """`value` as plain JSON types (numpy scalars become numbers, tuples lists, anything else its text)."""
    def plain(item: Any) -> Any:
        tolist = getattr(item, "tolist", None)
        return tolist() if callable(tolist) else str(item)

    return json.loads(json.dumps(value, default=plain))


@dataclasses.dataclass
class MonitorState:
    """The monitor's history at a checkpoint: evals, the alarm book, marker means and the lines said."""

    evals: list[EvalRecord]
    book: AlarmBook
    marker_means: dict[int, dict[str, float]]
    warnings: list[str]
    top_feature: str | None
    eval_seconds: float
    last_eval_step: int
    first_step: int
    said_endorsed: bool

    def to_json(self) -> dict[str, Any]:
        book = self.book
        data: dict[str, Any] = json_safe({
            "evals": [dataclasses.asdict(record) for record in self.evals],
            "standing": {name: dataclasses.asdict(alarm) for name, alarm in book.standing.items()},
            "fired": [dataclasses.asdict(alarm) for alarm in book.fired],
            "latest": {name: dataclasses.asdict(verdict) for name, verdict in book.latest.items()},
            "marker_means": {str(step): means for step, means in self.marker_means.items()},
            "warnings": list(self.warnings), "top_feature": self.top_feature, "eval_seconds": self.eval_seconds,
            "last_eval_step": self.last_eval_step, "first_step": self.first_step,
            "said_endorsed": self.said_endorsed,
        })
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MonitorState:
        book = AlarmBook()
        fired = [Alarm(**alarm) for alarm in data.get("fired") or []]
        book.fired = fired
        # a standing alarm is one of the fired ones (the same object, as AlarmBook keeps it)
        by_key = {(alarm.name, alarm.step): alarm for alarm in fired}
        book.standing = {name: by_key.get((alarm["name"], alarm["step"])) or Alarm(**alarm)
                         for name, alarm in (data.get("standing") or {}).items()}
        book.latest = {name: Verdict(**verdict) for name, verdict in (data.get("latest") or {}).items()}
        return cls(evals=[EvalRecord(**record) for record in data.get("evals") or []], book=book,
                   marker_means={int(step): dict(means) for step, means in (data.get("marker_means") or {}).items()},
                   warnings=list(data.get("warnings") or []), top_feature=data.get("top_feature"),
                   eval_seconds=float(data.get("eval_seconds") or 0.0),
                   last_eval_step=int(data.get("last_eval_step", -1)), first_step=int(data.get("first_step", 0)),
                   said_endorsed=bool(data.get("said_endorsed")))
