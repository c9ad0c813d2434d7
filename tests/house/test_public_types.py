"""The public face is typed: a user's `mypy --strict` sees real types for every public name, none is `Any`.

Two checks. At run time, every type a public signature or a public report field mentions is itself public.
Statically, mypy --strict checks a small user script that uses every public name: no error, each call's
revealed type is the named type the docs promise, and no report field or result hands the user an `Any`
(JSON values excepted: a row's objects are `dict[str, Any]`, a tool's result and a row's privileged context
are any JSON value; and the two values that are not the package's own, to_dataset's datasets.Dataset and
the user's trainer.train() result, which the script pins as `Any`).

The script's mypy reads the package (its own findings silenced: they are not the user's) and skips the
training stack (torch, transformers, trl, datasets, accelerate, peft read as Any), which keeps the check
to seconds.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import typing
from pathlib import Path

import pydantic

import whileai_train as wai

# __init__ of a class users never construct themselves: what its parameters mention stays internal
_MADE_BY_A_FACTORY = {"Run": "wai.run() builds it (its sender, meter and credential are internal)"}

# report fields whose value is whatever JSON the row holds
_JSON_VALUES = {("Step", "result"), ("Row", "privileged")}


def _hints(thing: object) -> dict[str, object]:
    """typing.get_type_hints, also resolving the public names a module imports only for type checkers."""
    return typing.get_type_hints(thing, localns={name: getattr(wai, name) for name in wai.__all__})


def _our_types(annotation: object) -> set[type]:
    found: set[type] = set()
    if isinstance(annotation, type):
        if annotation.__module__.startswith("whileai_train"):
            found.add(annotation)
        return found
    origin = typing.get_origin(annotation)
    if isinstance(origin, type) and origin.__module__.startswith("whileai_train"):
        found.add(origin)
    for argument in typing.get_args(annotation):
        found |= _our_types(argument)
    return found


def _members(cls: type) -> dict[str, object]:
    """The public methods and properties a class defines itself (pydantic's own model_* excluded)."""
    out: dict[str, object] = {}
    for name, member in vars(cls).items():
        if name.startswith("_") and not (name == "__init__" and cls.__name__ not in _MADE_BY_A_FACTORY):
            continue
        if name.startswith("model_"):
            continue
        if isinstance(member, property):
            member = member.fget
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if inspect.isfunction(member):
            out[name] = member
    return out


def test_no_public_signature_or_report_field_mentions_an_unexported_type() -> None:
    public = {id(getattr(wai, name)) for name in wai.__all__}
    todo: list[type] = []
    mentioned: dict[type, str] = {}

    def note(types: set[type], where: str) -> None:
        for found in types:
            mentioned.setdefault(found, where)
            todo.append(found)

    for name in wai.__all__:
        value = getattr(wai, name)
        if inspect.isfunction(value):
            for parameter, annotation in _hints(value).items():
                note(_our_types(annotation), f"{name}({parameter})")
        elif inspect.isclass(value):
            todo.append(value)
    seen: set[type] = set()
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        if issubclass(cls, pydantic.BaseModel):
            for field, info in cls.model_fields.items():
                note(_our_types(info.annotation), f"{cls.__name__}.{field}")
        if issubclass(cls, tuple) and hasattr(cls, "_fields"):
            for field, annotation in _hints(cls).items():
                note(_our_types(annotation), f"{cls.__name__}.{field}")
        for method_name, method in _members(cls).items():
            for parameter, annotation in _hints(method).items():
                note(_our_types(annotation), f"{cls.__name__}.{method_name}({parameter})")
    hidden = sorted(f"{cls.__module__}.{cls.__name__} (in {where})" for cls, where in mentioned.items()
                    if id(cls) not in public)
    assert hidden == []


# --- the user script ----------------------------------------------------------------------------------------

# each line: an expression a user writes, and the type mypy must reveal for it
_CALLS: list[tuple[str, str]] = [
    ("wai.read_rows('rows.jsonl')", "list[dict[str, Any]]"),
    ("wai.task_key(rows[0])", "str"),
    ("wai.calibration_of(rows[0])", "whileai_train.rows.contract.Calibration | None"),
    ("wai.Row.model_validate(rows[0])", "whileai_train.rows.contract.Row"),
    ("wai.Message(role='user', content='hi')", "whileai_train.rows.contract.Message"),
    ("wai.ToolCall(name='lookup', arguments={})", "whileai_train.rows.contract.ToolCall"),
    ("wai.export_dataset(rows, 'sft.jsonl')", "whileai_train.exporters.report.ExportReport"),
    ("wai.training_rows(rows)[1]", "whileai_train.exporters.report.ExportReport"),
    ("wai.export_preference(rows, 'dpo.jsonl')", "whileai_train.exporters.report.ExportReport"),
    ("wai.export_prompts(rows, 'grpo.jsonl')", "whileai_train.exporters.report.ExportReport"),
    ("wai.export_dataset(rows).tool_call_roundtrip", "whileai_train.exporters.report.ToolCallRoundtrip"),
    ("wai.ExportOptions(format='openai', unroll=True)", "whileai_train.exporters.options.ExportOptions"),
    ("wai.training_rows(rows, options=wai.ExportOptions(), validate=False)[1]",
     "whileai_train.exporters.report.ExportReport"),
    ("wai.run('demo')", "whileai_train.runs.run.Run"),
    ("wai.run('demo').where", "str"),
    ("wai.SenderConfig.from_env()", "whileai_train.runs.config.SenderConfig"),
    ("wai.GPU_USD_PER_HOUR['H100']", "float"),
    ("wai.WhileCallback(name='sft')", "whileai_train.callbacks.while_callback.WhileCallback"),
    ("wai.track(trainer).run", "whileai_train.runs.run.Run | None"),
    ("wai.monitor(holdout)", "whileai_train.callbacks.monitor.RewardMonitor"),
    ("wai.RewardMonitor(holdout).summary()", "whileai_train.callbacks.monitor_report.MonitorSummary"),
    ("wai.monitor(holdout).wrap(reward_fn)", "def (completions: list[str], **kwargs: Any) -> "
     "list[float]"),
    ("wai.format_hack_monitor(wai.monitor(holdout).summary())", "str"),
    ("wai.hack_scan(rows)", "whileai_train.gates.hack_scan.HackScanReport"),
    ("wai.reward_correlations(rows)", "whileai_train.gates.hygiene.CorrelationsReport"),
    ("wai.dedupe_groups(rows)", "whileai_train.gates.hygiene.DedupeReport"),
    ("wai.length_report(rows)", "whileai_train.gates.hygiene.LengthReport"),
    ("wai.near_duplicate_prompts(rows)", "whileai_train.gates.near_duplicates.NearDuplicateReport"),
    ("wai.decontaminate(rows, 'eval.jsonl').report", "whileai_train.gates.decontaminate.DecontaminateReport"),
    ("wai.decontaminate(rows, 'eval.jsonl')[0]", "list[dict[str, Any]]"),
    ("wai.publish_gate(rows)", "whileai_train.gates.publish_gate.PublishGateReport"),
    ("wai.publish_gate(rows).hack_scan", "whileai_train.gates.hack_scan.HackScanReport | None"),
    ("wai.publish_gate(rows).near_duplicates",
     "whileai_train.gates.near_duplicates.NearDuplicateReport | None"),
    ("wai.publish_gate(rows).length", "whileai_train.gates.hygiene.LengthReport | None"),
    ("wai.publish_gate(rows).pass_at", "whileai_train.measure.pass_at.PassAtReport | None"),
    ("wai.optimize(rows)[1]", "whileai_train.select.select_rl.RLSelectionReport"),
    ("wai.optimize(rows, mode='rl').report", "whileai_train.select.select_rl.RLSelectionReport"),
    ("wai.optimize(rows, mode='sft').report", "whileai_train.select.select_sft.SFTSelectionReport"),
    ("wai.optimize(rows, mode=mode).report",
     "whileai_train.select.select_rl.RLSelectionReport | whileai_train.select.select_sft.SFTSelectionReport"),
    ("wai.select_for_rl(rows).report", "whileai_train.select.select_rl.RLSelectionReport"),
    ("wai.select_for_sft(rows).report", "whileai_train.select.select_sft.SFTSelectionReport"),
    ("wai.select_for_rl(rows).rows", "list[dict[str, Any]]"),
    ("wai.build_preference_pairs(rows).report",
     "whileai_train.select.preference_pairs.PreferencePairsReport"),
    ("wai.curriculum(rows)", "whileai_train.select.curriculum.CurriculumReport"),
    ("wai.attach_labels(rows, {'s1#0': 1})", "list[dict[str, Any]]"),
    ("wai.judge_trust(rows)", "whileai_train.judge.judge_trust.JudgeTrustReport"),
    ("wai.judge_probes(rows, judge)", "whileai_train.judge.judge_probes.JudgeProbesReport"),
    ("wai.format_judge_trust(wai.judge_trust(rows))", "str"),
    ("wai.pass_at(rows)", "whileai_train.measure.pass_at.PassAtReport"),
    ("wai.compare_runs(rows, rows)", "whileai_train.measure.compare_runs.CompareRunsReport"),
    # the two values that are not the package's own: a datasets.Dataset (datasets ships no type information)
    # and whatever the user's trainer.train() returns
    ("wai.to_dataset('sft.jsonl')", "Any"),
    ("wai.track(trainer).train()", "Any"),
]

# the classes each error carries users read
_ERROR_FIELDS: list[tuple[str, str, str]] = [
    ("RowError", "index", "int | None"),
    ("ToolArgumentsError", "field", "str | None"),
    ("ExportRefusedError", "rows", "list[int]"),
    ("PrivilegedLeakError", "rows", "list[int]"),
    ("PublishGateError", "report", "whileai_train.gates.publish_gate.PublishGateReport | None"),
]

_HEADER = '''\
from __future__ import annotations

from typing import Any

import whileai_train as wai


def reward_fn(completions: list[str], **kwargs: Any) -> list[float]:
    return [float(len(c)) for c in completions]


def judge(row: dict[str, Any]) -> float:
    return 1.0


def use(rows: list[dict[str, Any]], holdout: list[dict[str, Any]], trainer: object, mode: str) -> None:
'''


def _script() -> tuple[str, dict[int, tuple[str, str | None]]]:
    """The user script, and per line number what it reveals: (what, the exact type expected or None)."""
    lines = _HEADER.splitlines()
    reveals: dict[int, tuple[str, str | None]] = {}

    def reveal(expression: str, expected: str | None, indent: str = "    ", label: str | None = None) -> None:
        lines.append(f"{indent}reveal_type({expression})")
        reveals[len(lines)] = (label or expression, expected)

    for expression, expected in _CALLS:
        reveal(expression, expected)
    for name in wai.__all__:  # every public name is itself a real type to the checker
        reveal(f"wai.{name}", None)
    lines.append("")
    lines.append("")
    # every field of every public report, read off a value of that type
    for name in wai.__all__:
        cls = getattr(wai, name)
        if inspect.isclass(cls) and issubclass(cls, pydantic.BaseModel):
            lines.append(f"def read_{name}(value: wai.{name}) -> None:")
            for field in cls.model_fields:
                if (name, field) not in _JSON_VALUES:
                    reveal(f"value.{field}", None, label=f"{name}.{field}")
            lines.append("")
            lines.append("")
    for error, field, expected in _ERROR_FIELDS:
        lines.append(f"def read_{error}(value: wai.{error}) -> None:")
        reveal(f"value.{field}", expected, label=f"{error}.{field}")
        lines.append("")
        lines.append("")
    lines.append("def catch() -> None:")
    lines.append("    try:")
    lines.append("        pass")
    names = [name for name in wai.__all__
             if inspect.isclass(getattr(wai, name)) and issubclass(getattr(wai, name), Exception)]
    lines.append(f"    except ({', '.join('wai.' + n for n in names)}) as exc:")
    reveal("exc", None, indent="        ")
    return "\n".join(lines) + "\n", reveals


_CONFIG = """\
[mypy]
strict = True
warn_unreachable = True
# the package is read, its own findings are not the user's; the training stack is read as Any (fast)
follow_imports = silent
[mypy-torch,torch.*,transformers,transformers.*,trl,trl.*,datasets,datasets.*,accelerate,accelerate.*,peft,peft.*]
follow_imports = skip
"""

_JSON_OBJECT = "dict[str, Any]"


def test_mypy_strict_on_a_user_script_finds_real_types(tmp_path: Path) -> None:
    script, reveals = _script()
    (tmp_path / "user.py").write_text(script)
    (tmp_path / "mypy.ini").write_text(_CONFIG)
    package_root = str(Path(wai.__file__).resolve().parents[1])
    env = {**os.environ, "MYPYPATH": package_root}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", str(tmp_path / "cache"),
         "--no-color-output", "--show-error-codes", "user.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    output = done.stdout + done.stderr
    errors = [line for line in output.splitlines() if ": error:" in line]
    assert errors == [], output
    revealed: dict[int, str] = {}
    for line in output.splitlines():
        found = re.match(r"user\.py:(\d+): note: Revealed type is \"(.*)\"$", line)
        if found:
            revealed[int(found.group(1))] = found.group(2)
    assert sorted(revealed) == sorted(reveals), output
    wrong = {what: (revealed[line], expected) for line, (what, expected) in reveals.items()
             if expected is not None and revealed[line] != expected}
    assert wrong == {}
    leaking = {what: revealed[line] for line, (what, expected) in reveals.items()
               if expected is None and "Any" in revealed[line].replace(_JSON_OBJECT, "")}
    # a public class's signature may take JSON or a user's object as Any; the class itself is still real
    leaking = {what: shown for what, shown in leaking.items()
               if not (what.startswith("wai.") and shown != "Any" and what[4:] in wai.__all__)}
    assert leaking == {}
    assert done.returncode == 0, output
