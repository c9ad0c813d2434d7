"""The exception tree. Every message names the cause and the fix.

    WhileAIError                      base of everything this library raises on purpose
    ├── ConfigError (ValueError)      a constructor or call got arguments that cannot work together
    ├── InputError (ValueError)       the input as a whole is unusable: empty, unreadable, truncated file
    │   └── RowError                  one row is wrong; carries .index (0-based) and .field
    │       └── ToolArgumentsError    a tool call's arguments are not a JSON object
    ├── ChatTemplateError (ValueError)  the tokenizer's chat template cannot render what the export needs
    │   └── TemplateDropError         it renders the rows but loses agent text or calls (.rows, .drops by cause)
    ├── ExportRefusedError            an export would train something it must not; nothing was written
    │   ├── PrivilegedLeakError       a reply quotes its own privileged context (.rows names them)
    │   └── TrainingSelectionError    SFT rows with a failing reward, refused (.tasks, .selection)
    ├── LabelError (ValueError)       attach_labels: keys name no row, or one key names two rows
    ├── RewardFunctionError (ValueError)  a reward function raised or returned the wrong number of rewards
    ├── PublishGateError              publish_gate refuses the set (defined beside its report, gates/publish_gate.py)
    └── RunError                      a run cannot be opened as asked (bad url, bad key format, ...)
        ├── RunFinishedError          the run is already finished: a second finish or later points are refused
        └── RunLimitError             a write would pass one of the store's per-run limits, or mix numbered and
                                      unnumbered points; nothing was written

Logging failures are never raised into a training loop: the sender warns and spools instead. errors.py imports
nothing of the package.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "ChatTemplateError",
    "ConfigError",
    "ExportRefusedError",
    "InputError",
    "LabelError",
    "PrivilegedLeakError",
    "RewardFunctionError",
    "RowError",
    "RunError",
    "RunFinishedError",
    "RunLimitError",
    "TemplateDropError",
    "ToolArgumentsError",
    "TrainingSelectionError",
    "WhileAIError",
    "name_list",
]


class WhileAIError(Exception):
    """Base class of every error whileai_train raises on purpose."""


class ConfigError(WhileAIError, ValueError):
    """Arguments that cannot work together; raised at construction, with the fix."""


def name_list(option: str, value: Any) -> list[str]:
    """An option that takes names (endorsed=, ignore_keys=, allow=, ...) as a list of non-empty strings, or a
    ConfigError with the fix: a bare string is refused, since it would be read letter by letter."""
    if isinstance(value, (str, bytes)):
        raise ConfigError(f"{option}={value!r} is a string; a list is expected (a string would be read letter by "
                          f"letter). Fix: pass {option}=[{value!r}]")
    if not isinstance(value, Iterable):
        raise ConfigError(f"{option}={value!r} must be a list of strings. Fix: pass {option}=['...']")
    items = list(value)
    for item in items:
        if not isinstance(item, str) or not item:
            raise ConfigError(f"{option} has {item!r}; every entry must be a non-empty string. Fix: pass "
                              f"{option}=['...']")
    return items


class InputError(WhileAIError, ValueError):
    """The input as a whole is unusable (empty, unreadable, truncated)."""


class RowError(InputError):
    """One row is wrong. `index` is the 0-based row number, `field` the key at fault."""

    def __init__(self, index: int | None, field: str | None, problem: str, fix: str) -> None:
        self.index = index
        self.field = field
        self.problem = problem
        self.fix = fix
        where = []
        if index is not None:
            where.append(f"row {index}")
        if field:
            where.append(f"field {field!r}")
        prefix = (", ".join(where) + ": ") if where else ""
        super().__init__(f"{prefix}{problem}. Fix: {fix}")


class ToolArgumentsError(RowError):
    """A tool call's `arguments` is not a JSON object (dict, or a string holding one)."""


class ChatTemplateError(WhileAIError, ValueError):
    """The tokenizer's chat template cannot render what the export needs."""


class TemplateDropError(ChatTemplateError):
    """The chat template that will train the rows loses part of them (a second tool call, text beside a call ...);
    nothing was written. `rows` names them, `drops` counts what is lost by cause. Fix: reshape the rows, use
    another template, or pass validate=False to train them without it."""

    def __init__(self, message: str, rows: Sequence[int] = (), drops: dict[str, int] | None = None) -> None:
        self.rows = list(rows)
        self.drops = dict(drops or {})
        super().__init__(message)


class ExportRefusedError(WhileAIError):
    """The export would train something it must not; nothing was written."""

    def __init__(self, message: str, rows: Sequence[int] = ()) -> None:
        self.rows = list(rows)
        super().__init__(message)


class PrivilegedLeakError(ExportRefusedError):
    """A reply quotes its own privileged context (privileged_leak); `rows` names them."""


class TrainingSelectionError(ExportRefusedError):
    """The train-step check refuses an SFT set with failing rows: SFT imitates every row, so a failing
    rollout would be trained as an example to follow. `rows` are their indices, `tasks` maps each of their
    tasks to its failing rows, `selection` is the export report's selection block. Fix: select the passes,
    or pass check="warn" to train on them on purpose."""

    def __init__(self, message: str, rows: Sequence[int] = (), tasks: dict[str, int] | None = None,
                 selection: object | None = None) -> None:
        self.tasks = dict(tasks or {})
        self.selection = selection
        super().__init__(message, rows=rows)


class LabelError(WhileAIError, ValueError):
    """attach_labels: no key names a row, or one key names two rows."""


class RewardFunctionError(WhileAIError, ValueError):
    """A reward function raised, or returned the wrong number of rewards. `function` is its name, `rows` the rows
    it was scoring (0-based positions in the input)."""

    def __init__(self, function: str, rows: Sequence[int], problem: str, fix: str) -> None:
        self.function = function
        self.rows = list(rows)
        shown = ", ".join(str(r) for r in self.rows[:5]) + (", ..." if len(self.rows) > 5 else "")
        super().__init__(f"reward function {function!r} {problem} (scoring rows {shown}). Fix: {fix}")


class RunError(WhileAIError):
    """A run cannot be opened as asked. Never raised from inside a training step."""


class RunFinishedError(RunError):
    """The run is already finished (done, failed or stopped): a finished run is final, so a second finish or
    points, notes and progress sent after the finish are refused. `run_id` names the run, `status` its final status."""

    def __init__(self, run_id: str, status: str, what: str = "a second finish") -> None:
        self.run_id = run_id
        self.status = status
        super().__init__(f"run {run_id} is already finished ({status}); a finished run is final, so {what} was "
                         "refused. Fix: resume it explicitly (wai.run(resume=state)), log to a new run, or send late "
                         "results with update_summary (PATCH /runs/{id})")


class RunLimitError(RunError):
    """A write the store refuses whole: it would pass a per-run limit (metric names, notes, summary size,
    sequence numbers) or mix points numbered by the client with points the store numbers. `code` names which."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        super().__init__(message)
