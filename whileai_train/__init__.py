"""whileai_train: make the numbers in and out of a TRL training loop trustworthy.

``import whileai_train as wai``. Public names resolve lazily from the module that owns them, so
``import whileai_train`` stays fast and imports neither torch nor trl (a test pins both).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it (one place; tests/test_exported_members.py pins the set)
_EXPORTS: dict[str, str] = {
    # errors
    "ChatTemplateError": "whileai_train.errors",
    "ConfigError": "whileai_train.errors",
    "ExportRefusedError": "whileai_train.errors",
    "InputError": "whileai_train.errors",
    "LabelError": "whileai_train.errors",
    "PrivilegedLeakError": "whileai_train.errors",
    "PublishGateError": "whileai_train.errors",
    "RowError": "whileai_train.errors",
    "RunError": "whileai_train.errors",
    "ToolArgumentsError": "whileai_train.errors",
    "TrainingSelectionError": "whileai_train.errors",
    "WhileAIError": "whileai_train.errors",
    # the row contract
    "Calibration": "whileai_train.rows",
    "Message": "whileai_train.rows",
    "Row": "whileai_train.rows",
    "ToolCall": "whileai_train.rows",
    "calibration_of": "whileai_train.rows",
    "read_rows": "whileai_train.rows",
    "task_key": "whileai_train.rows",
    # exporters
    "ExportReport": "whileai_train.exporters.report",
    "export_dataset": "whileai_train.exporters.training",
    "export_training": "whileai_train.exporters.training",
    "training_rows": "whileai_train.exporters.training",
    "export_preference": "whileai_train.exporters.preference",
    "export_prompts": "whileai_train.exporters.prompts",
    "to_dataset": "whileai_train.exporters.dataset",
    # runs and callbacks
    "Run": "whileai_train.runs.run",
    "run": "whileai_train.runs.run",
    "GPU_USD_PER_HOUR": "whileai_train.runs.cost",
    "WhileCallback": "whileai_train.callbacks.while_callback",
    "track": "whileai_train.callbacks.while_callback",
    # the reward monitor
    "RewardMonitor": "whileai_train.callbacks.monitor",
    "monitor": "whileai_train.callbacks.monitor",
    "format_hack_monitor": "whileai_train.callbacks.monitor_report",
    # gates
    "hack_scan": "whileai_train.gates.hack_scan",
    "reward_correlations": "whileai_train.gates.hygiene",
    "dedupe_groups": "whileai_train.gates.hygiene",
    "near_duplicate_prompts": "whileai_train.gates.near_duplicates",
    "length_report": "whileai_train.gates.hygiene",
    "optimize": "whileai_train.select.optimize",
    "select_for_rl": "whileai_train.select.optimize",
    "select_for_sft": "whileai_train.select.optimize",
    "build_preference_pairs": "whileai_train.select.preference_pairs",
    "curriculum": "whileai_train.select.curriculum",
    "attach_labels": "whileai_train.judge.labels",
    "judge_trust": "whileai_train.judge.judge_trust",
    "judge_probes": "whileai_train.judge.judge_probes",
    "format_judge_trust": "whileai_train.judge.judge_trust",
    "decontaminate": "whileai_train.gates.decontaminate",
    "publish_gate": "whileai_train.gates.publish_gate",
    # measurement
    "pass_at": "whileai_train.measure.pass_at",
    "compare_runs": "whileai_train.measure.compare_runs",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'whileai_train' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value  # resolve once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
