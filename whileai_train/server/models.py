"""The runs API's request and response bodies, as pydantic models (the OpenAPI schema is built from these).

Numbers are strict: a string, a boolean or an object where a number belongs is refused with the field's
name, and integers are bounded to 64 bits (SQLite's). Metric values are numbers or null; the server reads
NaN / Infinity (not JSON, but some encoders write them) as null before these models see the body.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from whileai_train.alarm_event import AlarmEvent
from whileai_train.runs.defaults import MAX_COMPLETIONS_PER_RUN, MAX_SEQ
from whileai_train.server.defaults import (
    MAX_ERROR_CHARS,
    MAX_KEY_CHARS,
    MAX_METRICS_PER_POINT,
    MAX_NAME_CHARS,
    MAX_NOTE_CHARS,
    MAX_POINTS_PER_CALL,
)

__all__ = [
    "CompletionRow",
    "CompletionsAdded",
    "CompletionsBody",
    "CompletionsPage",
    "ErrorBody",
    "FinishBody",
    "Finished",
    "LogBody",
    "Logged",
    "NoteAdded",
    "NoteBody",
    "OpenRun",
    "OpenedRun",
    "PatchBody",
    "Point",
    "PointsPage",
    "Progress",
    "RunRecord",
    "RunRow",
    "RunsList",
]

Int64 = Annotated[int, Field(strict=True, ge=-(2**63), le=2**63 - 1)]
Count = Annotated[int, Field(strict=True, ge=0, le=2**63 - 1)]
# A sequence number stays exact in a browser (Number.MAX_SAFE_INTEGER, runs/defaults.py).
Seq = Annotated[int, Field(strict=True, ge=0, le=MAX_SEQ)]
Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
Text = Annotated[str, Field(max_length=MAX_NAME_CHARS)]
Status = Literal["running", "done", "failed", "stopped"]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OpenRun(_Body):
    """POST /runs: the platform's run fields, plus the client's id so a re-sent open is the same run, and
    `resume` when a checkpoint resume continues that run (a finished run is reopened; nothing else reopens it)."""

    model_config = ConfigDict(extra="ignore")
    name: Name
    dataset_id: Text | None = None
    base_model: Text | None = None
    total_steps: Count | None = None
    client_run_id: Text | None = None
    resume: bool = False  # a checkpoint resume: reopen the client's run if it was finished, then continue it


class OpenedRun(BaseModel):
    runId: str


class Point(BaseModel):
    """One logged point: `step`, optional `ts` and `seq`, and metric name -> number (or null)."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, Number | None] = Field(init=False)  # type: ignore[assignment]
    seq: Seq | None = Field(None, description="the client's sequence number; points are de-duplicated on "
                                                "(run, seq). Without it the server numbers points in arrival order. "
                                                "A run is numbered one way: mixing answers 409 seq_mixed.")
    step: Int64 | None = None
    ts: Number | None = None

    @model_validator(mode="after")
    def _bounded(self) -> Point:
        extra = self.__pydantic_extra__ or {}
        if len(extra) > MAX_METRICS_PER_POINT:
            raise ValueError(f"{len(extra)} metrics in one point; at most {MAX_METRICS_PER_POINT}")
        for key in extra:
            if len(key) > MAX_KEY_CHARS or not key:
                raise ValueError(f"metric name {key[:40]!r}... must be 1 to {MAX_KEY_CHARS} characters")
        return self


class Progress(_Body):
    step: Int64
    total: Count | None = None


class LogBody(_Body):
    """POST /runs/{id}/log: up to 500 points a call (runs/defaults.MAX_POINTS_PER_CALL) and optional progress."""

    points: Annotated[list[Point], Field(max_length=MAX_POINTS_PER_CALL)] = []
    progress: Progress | None = None


class Logged(BaseModel):
    accepted: int
    new: int


class NoteBody(_Body):
    """POST /runs/{id}/notes: markdown of at most 8192 characters (server/defaults.MAX_NOTE_CHARS)."""

    seq: Seq | None = Field(None, description="the sender's own number for this note: a re-send with the same "
                                              "number is stored once. The run lists notes in arrival order.")
    markdown: Annotated[str, Field(max_length=MAX_NOTE_CHARS)]
    ts: Number | None = None
    alarm: AlarmEvent | None = Field(None, description="the alarm this note shows, as the reward monitor raised "
                                                       "it: the run's alarms list it")


class NoteAdded(BaseModel):
    new: bool


class ToolCallCell(_Body):
    name: str
    failed: bool = False


class CompletionRow(_Body):
    """One holdout completion (runs/completions.py); a prompt or completion past the character cap is cut and
    counted by the store, not refused."""

    ask: str = ""
    prompt: str = ""
    completion: str = ""
    proxy: Number | None = None
    gold: Number | None = None
    tools: list[ToolCallCell] = []
    features: list[str] = []
    cut: bool = False
    step: Int64 | None = None


class CompletionsBody(_Body):
    """POST /runs/{id}/completions: one holdout eval's completions. `batch` is the sender's number for it (a
    re-send with the same number is stored once); `cut` and `dropped` count what the sender's caps removed."""

    batch: Seq
    step: Int64 | None = None
    rows: Annotated[list[CompletionRow], Field(max_length=MAX_COMPLETIONS_PER_RUN)]
    cut: Count = 0
    dropped: Count = 0


class CompletionsAdded(BaseModel):
    new: int


class CompletionsPage(BaseModel):
    """GET /runs/{id}/completions?step=: the run's holdout completions, the eval steps, what the caps removed."""

    run_id: str
    completions: list[dict[str, Any]]
    steps: list[int]
    kept: int
    cut: int
    dropped: int
    max_rows: int
    max_chars: int


class FinishBody(_Body):
    """POST /runs/{id}/finish: status, optional summary, error and adapter."""

    status: Literal["done", "failed", "stopped"]
    summary: dict[str, Any] | None = None
    error: Annotated[str, Field(max_length=MAX_ERROR_CHARS)] | None = None
    adapter: Annotated[str, Field(max_length=MAX_NAME_CHARS)] | dict[str, Any] | None = None


class Finished(BaseModel):
    status: str


class PatchBody(_Body):
    """PATCH /runs/{id}: late results, allowed after finish. `summary` keys merge into the summary;
    `holdout` and `delta` land as summary["holdout"] / summary["delta"]; `note` adds a note."""

    summary: dict[str, Any] | None = None
    holdout: dict[str, Any] | None = None
    delta: dict[str, Any] | None = None
    note: Annotated[str, Field(max_length=MAX_NOTE_CHARS)] | None = None


class RunRow(BaseModel):
    """A run as the runs list shows it."""

    model_config = ConfigDict(extra="allow")
    id: str
    name: str
    status: Status
    step: int | None = None
    total_steps: int | None = None
    created: float
    finished: float | None = None
    error: str | None = None
    stop_reason: str | None = None
    summary: dict[str, Any] | None = Field(None, description="in the runs list, a digest: the summary's top-level "
                                                             "numbers, flags and short texts; GET /runs/{id} has it all")
    alarm_count: int = 0
    last_loss: float | None = None


class RunsList(BaseModel):
    runs: list[RunRow]


class RunRecord(RunRow):
    """GET /runs/{id}: the run, its notes, its alarms (name, step, one-line text, evidence) and its last points."""

    points_count: int
    notes: list[dict[str, Any]]
    alarms: list[AlarmEvent]
    points: list[dict[str, Any]] = []


class PointsPage(BaseModel):
    """GET /runs/{id}/points: points in seq order after `after_seq`; `next_after_seq` reads the next page."""

    points: list[dict[str, Any]]
    next_after_seq: int | None
    points_count: int


class ErrorBody(BaseModel):
    """Every refusal: what was wrong, a stable code, and the field at fault when there is one."""

    error: str
    code: str
    field: str | None = None
