"""An alarm as one typed event: which alarm, at which step, why, and the numbers behind it.

The reward monitor (callbacks/) raises it; a run (runs/) sends it with the note that shows it to people, the
local store keeps it in its own table, and the runs API (server/) takes and returns the same model. Nothing
reads an alarm back out of a note's text or a point's key: the event is the one record of an alarm.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, JsonValue

__all__ = ["AlarmEvent"]

# An alarm's name is one of the monitor's (callbacks/monitor_defaults.ALARMS) or a user's own; a message is its
# one line. The caps keep one event inside a note's size on the wire (server/defaults.MAX_NOTE_CHARS is larger).
MAX_ALARM_NAME_CHARS = 64
MAX_ALARM_MESSAGE_CHARS = 2_000


class AlarmEvent(BaseModel):
    """One alarm that fired: `name` at `step`, `message` (its one line) and `evidence` (the numbers behind it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(min_length=1, max_length=MAX_ALARM_NAME_CHARS)]
    step: Annotated[int, Field(strict=True, ge=0, le=2**63 - 1)]
    message: Annotated[str, Field(max_length=MAX_ALARM_MESSAGE_CHARS)]
    evidence: dict[str, JsonValue] = Field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.name} alarm at step {self.step}: {self.message}"

    @property
    def note_markdown(self) -> str:
        """The note that shows this alarm on the run's page."""
        return f"**Alarm: {self.name}** at step {self.step}: {self.message}"
