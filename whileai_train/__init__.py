"""whileai_train: make the numbers in and out of a TRL training loop trustworthy.

``import whileai_train as wai``. The public face is exactly the names in ``__all__``; every other module is
internal and may change (docs/architecture.md). Public names resolve lazily from the module that owns them,
so ``import whileai_train`` stays fast and imports neither torch nor trl (a test pins both). Type checkers
and IDEs read the ``TYPE_CHECKING`` block below instead, so every public name keeps its real type.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "AgreementRate",
    "AlarmEntry",
    "AlarmEvent",
    "AlarmStatus",
    "Calibration",
    "ChatTemplateError",
    "CompareRunsReport",
    "ConfigError",
    "CorrelationsReport",
    "CurriculumReport",
    "DatasetReport",
    "DecontaminateReport",
    "DedupeReport",
    "DeltaReport",
    "DetectableEffectReport",
    "DroppedTasks",
    "DuplicateGroup",
    "EvalPoint",
    "EvalVarianceReport",
    "ExportOptions",
    "ExportRefusedError",
    "ExportReport",
    "FeatureScore",
    "FlagSummary",
    "GPU_USD_PER_HOUR",
    "GroundingReport",
    "GroupSignalReport",
    "HackScanReport",
    "HoldoutSizeReport",
    "InputError",
    "JudgeProbesReport",
    "JudgeTrustReport",
    "KeptRows",
    "LabelError",
    "LeakReport",
    "LengthBias",
    "LengthReport",
    "LengthStats",
    "MarkerSummary",
    "MarkerSummaryReport",
    "Message",
    "MetricDelta",
    "MonitorConfig",
    "MonitorSummary",
    "NearDuplicateGroup",
    "NearDuplicatePair",
    "NearDuplicateReport",
    "PassAtReport",
    "Policy",
    "PreferencePairs",
    "PreferencePairsReport",
    "PrivilegedLeakError",
    "ProbeResult",
    "PublishGateError",
    "PublishGateReport",
    "RLSelectionReport",
    "RefusalReport",
    "RewardFunctionError",
    "RewardMonitor",
    "Rollout",
    "Row",
    "RowError",
    "Run",
    "RunError",
    "SFTSelectionReport",
    "STAGES",
    "SenderConfig",
    "Sink",
    "Spec",
    "StageReport",
    "Step",
    "StyleReport",
    "TaskDifficulty",
    "TaskSignal",
    "TemplateDropError",
    "TierStats",
    "ToolArgumentsError",
    "ToolCall",
    "ToolCallRoundtrip",
    "TraceFlagReport",
    "TrainStepCheck",
    "TrainingSelectionError",
    "Trait",
    "WhileAIError",
    "WhileCallback",
    "attach_delta",
    "attach_holdout",
    "attach_labels",
    "build_preference_pairs",
    "calibration_of",
    "compare_runs",
    "curriculum",
    "dataset_report",
    "decontaminate",
    "dedupe_groups",
    "delta_report",
    "detectable_effect",
    "eval_variance",
    "evaluate",
    "export_dataset",
    "export_preference",
    "export_prompts",
    "format_delta_report",
    "format_hack_monitor",
    "format_judge_trust",
    "from_row",
    "get_completions",
    "get_run",
    "grounding_report",
    "group_signal",
    "hack_scan",
    "holdout_size",
    "judge_probes",
    "judge_trust",
    "leak_report",
    "length_report",
    "list_runs",
    "load_spec",
    "mark_grounding",
    "marker_summary",
    "metric_summary",
    "monitor",
    "near_duplicate_prompts",
    "optimize",
    "pass_at",
    "points_frame",
    "publish_gate",
    "read_rows",
    "refusal_report",
    "reward_correlations",
    "run",
    "select_for_rl",
    "select_for_sft",
    "stage_of",
    "stage_report",
    "stamp_spec",
    "stamp_stage",
    "style_markers",
    "style_report",
    "task_key",
    "tiny_model_and_tokenizer",
    "to_dataset",
    "to_row",
    "trace_flag_report",
    "trace_markers",
    "track",
    "trained_spans",
    "training_rows",
    "ungrounded_arguments",
]

# public name -> module that defines it; the TYPE_CHECKING block imports the same names from the same
# modules (tests/house/test_exported_members.py pins the three to one another)
_EXPORTS: dict[str, str] = {
    # errors
    "ChatTemplateError": "whileai_train.errors",
    "ConfigError": "whileai_train.errors",
    "ExportRefusedError": "whileai_train.errors",
    "InputError": "whileai_train.errors",
    "LabelError": "whileai_train.errors",
    "PrivilegedLeakError": "whileai_train.errors",
    "RewardFunctionError": "whileai_train.errors",
    "PublishGateError": "whileai_train.gates.publish_gate",
    "RowError": "whileai_train.errors",
    "RunError": "whileai_train.errors",
    "TemplateDropError": "whileai_train.errors",
    "ToolArgumentsError": "whileai_train.errors",
    "TrainingSelectionError": "whileai_train.errors",
    "WhileAIError": "whileai_train.errors",
    # the row contract
    "KeptRows": "whileai_train.report",
    "Calibration": "whileai_train.rows.contract",
    "Message": "whileai_train.rows.contract",
    "Policy": "whileai_train.rows.contract",
    "Row": "whileai_train.rows.contract",
    "Step": "whileai_train.rows.contract",
    "ToolCall": "whileai_train.rows.contract",
    "calibration_of": "whileai_train.rows.contract",
    "read_rows": "whileai_train.rows.files",
    "Rollout": "whileai_train.rows.rollout",
    "from_row": "whileai_train.rows.rollout",
    "to_row": "whileai_train.rows.rollout",
    "task_key": "whileai_train.rows.contract",
    # a model and tokenizer to try the library with (built in code, CPU)
    "tiny_model_and_tokenizer": "whileai_train.demos.tiny",
    # exporters
    "ExportOptions": "whileai_train.exporters.options",
    "trained_spans": "whileai_train.exporters.inspect",
    "ExportReport": "whileai_train.exporters.report",
    "ToolCallRoundtrip": "whileai_train.exporters.report",
    "TrainStepCheck": "whileai_train.exporters.report",
    "DroppedTasks": "whileai_train.exporters.report",
    "export_dataset": "whileai_train.exporters.training",
    "training_rows": "whileai_train.exporters.training",
    "export_preference": "whileai_train.exporters.preference",
    "export_prompts": "whileai_train.exporters.prompts",
    "LeakReport": "whileai_train.exporters.leaks",
    "leak_report": "whileai_train.exporters.leaks",
    "to_dataset": "whileai_train.exporters.dataset",
    # runs and callbacks
    "Run": "whileai_train.runs.run",
    "run": "whileai_train.runs.run",
    "SenderConfig": "whileai_train.runs.config",
    "Sink": "whileai_train.runs.sinks",
    "GPU_USD_PER_HOUR": "whileai_train.runs.cost",
    "WhileCallback": "whileai_train.callbacks.while_callback",
    "track": "whileai_train.callbacks.while_callback",
    # the reward monitor
    "RewardMonitor": "whileai_train.callbacks.monitor",
    "monitor": "whileai_train.callbacks.monitor",
    "AlarmEntry": "whileai_train.callbacks.monitor_report",
    "AlarmEvent": "whileai_train.alarm_event",
    "EvalPoint": "whileai_train.callbacks.monitor_report",
    "MonitorSummary": "whileai_train.callbacks.monitor_report",
    "MonitorConfig": "whileai_train.callbacks.monitor_options",
    "AlarmStatus": "whileai_train.callbacks.monitor_report",
    "format_hack_monitor": "whileai_train.callbacks.monitor_report",
    # gates (before a run, read-only)
    "FeatureScore": "whileai_train.gates.hack_scan",
    "HackScanReport": "whileai_train.gates.hack_scan",
    "hack_scan": "whileai_train.gates.hack_scan",
    "CorrelationsReport": "whileai_train.gates.hygiene",
    "DedupeReport": "whileai_train.gates.hygiene",
    "DuplicateGroup": "whileai_train.gates.hygiene",
    "LengthReport": "whileai_train.gates.hygiene",
    "LengthStats": "whileai_train.gates.hygiene",
    "dedupe_groups": "whileai_train.gates.hygiene",
    "length_report": "whileai_train.gates.hygiene",
    "reward_correlations": "whileai_train.gates.hygiene",
    "NearDuplicateGroup": "whileai_train.gates.near_duplicates",
    "NearDuplicatePair": "whileai_train.gates.near_duplicates",
    "NearDuplicateReport": "whileai_train.gates.near_duplicates",
    "near_duplicate_prompts": "whileai_train.gates.near_duplicates",
    "DecontaminateReport": "whileai_train.gates.decontaminate",
    "decontaminate": "whileai_train.gates.decontaminate",
    "PublishGateReport": "whileai_train.gates.publish_gate",
    "publish_gate": "whileai_train.gates.publish_gate",
    # selection (before a run, picks rows)
    "optimize": "whileai_train.select.optimize",
    "RLSelectionReport": "whileai_train.select.select_rl",
    "select_for_rl": "whileai_train.select.select_rl",
    "SFTSelectionReport": "whileai_train.select.select_sft",
    "select_for_sft": "whileai_train.select.select_sft",
    "PreferencePairs": "whileai_train.select.preference_pairs",
    "PreferencePairsReport": "whileai_train.select.preference_pairs",
    "build_preference_pairs": "whileai_train.select.preference_pairs",
    "CurriculumReport": "whileai_train.select.curriculum",
    "TaskDifficulty": "whileai_train.select.curriculum",
    "curriculum": "whileai_train.select.curriculum",
    # judge trust
    "attach_labels": "whileai_train.judge.labels",
    "AgreementRate": "whileai_train.judge.judge_trust",
    "JudgeTrustReport": "whileai_train.judge.judge_trust",
    "LengthBias": "whileai_train.judge.judge_trust",
    "format_judge_trust": "whileai_train.judge.judge_trust",
    "judge_trust": "whileai_train.judge.judge_trust",
    "JudgeProbesReport": "whileai_train.judge.judge_probes",
    "ProbeResult": "whileai_train.judge.judge_probes",
    "judge_probes": "whileai_train.judge.judge_probes",
    # measurement (after a run)
    "PassAtReport": "whileai_train.measure.pass_at",
    "GroupSignalReport": "whileai_train.measure.group_signal",
    "TaskSignal": "whileai_train.measure.group_signal",
    "group_signal": "whileai_train.measure.group_signal",
    "DatasetReport": "whileai_train.measure.dataset_report",
    "TierStats": "whileai_train.measure.dataset_report",
    "dataset_report": "whileai_train.measure.dataset_report",
    "pass_at": "whileai_train.measure.pass_at",
    "CompareRunsReport": "whileai_train.measure.compare_runs",
    "compare_runs": "whileai_train.measure.compare_runs",
    "DeltaReport": "whileai_train.measure.delta_reading",
    "delta_report": "whileai_train.measure.delta_report",
    "format_delta_report": "whileai_train.measure.delta_reading",
    "eval_variance": "whileai_train.measure.eval_variance",
    "metric_summary": "whileai_train.measure.marker_summary",
    "marker_summary": "whileai_train.measure.marker_summary",
    "holdout_size": "whileai_train.measure.holdout_size",
    "detectable_effect": "whileai_train.measure.holdout_size",
    "get_completions": "whileai_train.runs.completions",
    "get_run": "whileai_train.runs.records",
    "list_runs": "whileai_train.runs.listing",
    "points_frame": "whileai_train.runs.listing",
    "attach_holdout": "whileai_train.runs.verdicts",
    "attach_delta": "whileai_train.runs.verdicts",
    # behaviour markers read from the trajectory
    "mark_grounding": "whileai_train.markers.grounding",
    "ungrounded_arguments": "whileai_train.markers.grounding",
    "grounding_report": "whileai_train.markers.grounding",
    "trace_markers": "whileai_train.markers.trace_flags",
    "trace_flag_report": "whileai_train.markers.trace_report",
    "style_markers": "whileai_train.markers.style",
    "style_report": "whileai_train.markers.style",
    "refusal_report": "whileai_train.markers.style",
    "STAGES": "whileai_train.markers.stages",
    "stamp_stage": "whileai_train.markers.stages",
    "stage_of": "whileai_train.markers.stages",
    "stage_report": "whileai_train.markers.stages",
    "Spec": "whileai_train.markers.spec",
    "load_spec": "whileai_train.markers.spec",
    "stamp_spec": "whileai_train.markers.spec",
    "MarkerSummary": "whileai_train.tables.marker_column",
    "GroundingReport": "whileai_train.markers.grounding",
    "Trait": "whileai_train.markers.spec",
    "StageReport": "whileai_train.markers.stages",
    "RefusalReport": "whileai_train.markers.style",
    "StyleReport": "whileai_train.markers.style",
    "FlagSummary": "whileai_train.markers.trace_report",
    "TraceFlagReport": "whileai_train.markers.trace_report",
    "MetricDelta": "whileai_train.measure.delta_reading",
    "EvalVarianceReport": "whileai_train.measure.eval_variance",
    "DetectableEffectReport": "whileai_train.measure.holdout_size",
    "HoldoutSizeReport": "whileai_train.measure.holdout_size",
    "MarkerSummaryReport": "whileai_train.measure.marker_summary",
    # evaluation: sample a model on tasks, grade with reward functions
    "evaluate": "whileai_train.sampling.evaluate",
}

# old public name -> the name it now is: still resolved, with a DeprecationWarning, for one release
_DEPRECATED: dict[str, str] = {
    "MetricSummary": "MarkerSummary",
    "OptimizeResult": "KeptRows",
    "Kept": "KeptRows",
    "Reading": "AlarmStatus",
    "Selection": "TrainStepCheck",
    "export_training": "export_dataset",
}

if TYPE_CHECKING:
    from whileai_train.alarm_event import AlarmEvent
    from whileai_train.callbacks.monitor import RewardMonitor, monitor
    from whileai_train.callbacks.monitor_options import MonitorConfig
    from whileai_train.callbacks.monitor_report import (
        AlarmEntry,
        AlarmStatus,
        EvalPoint,
        MonitorSummary,
        format_hack_monitor,
    )
    from whileai_train.callbacks.while_callback import WhileCallback, track
    from whileai_train.demos.tiny import tiny_model_and_tokenizer
    from whileai_train.errors import (
        ChatTemplateError,
        ConfigError,
        ExportRefusedError,
        InputError,
        LabelError,
        PrivilegedLeakError,
        RewardFunctionError,
        RowError,
        RunError,
        TemplateDropError,
        ToolArgumentsError,
        TrainingSelectionError,
        WhileAIError,
    )
    from whileai_train.exporters.dataset import to_dataset
    from whileai_train.exporters.inspect import trained_spans
    from whileai_train.exporters.leaks import LeakReport, leak_report
    from whileai_train.exporters.options import ExportOptions
    from whileai_train.exporters.preference import export_preference
    from whileai_train.exporters.prompts import export_prompts
    from whileai_train.exporters.report import DroppedTasks, ExportReport, ToolCallRoundtrip, TrainStepCheck
    from whileai_train.exporters.training import export_dataset, training_rows
    from whileai_train.gates.decontaminate import DecontaminateReport, decontaminate
    from whileai_train.gates.hack_scan import FeatureScore, HackScanReport, hack_scan
    from whileai_train.gates.hygiene import (
        CorrelationsReport,
        DedupeReport,
        DuplicateGroup,
        LengthReport,
        LengthStats,
        dedupe_groups,
        length_report,
        reward_correlations,
    )
    from whileai_train.gates.near_duplicates import (
        NearDuplicateGroup,
        NearDuplicatePair,
        NearDuplicateReport,
        near_duplicate_prompts,
    )
    from whileai_train.gates.publish_gate import PublishGateError, PublishGateReport, publish_gate
    from whileai_train.judge.judge_probes import JudgeProbesReport, ProbeResult, judge_probes
    from whileai_train.judge.judge_trust import (
        AgreementRate,
        JudgeTrustReport,
        LengthBias,
        format_judge_trust,
        judge_trust,
    )
    from whileai_train.judge.labels import attach_labels
    from whileai_train.markers.grounding import (
        GroundingReport,
        grounding_report,
        mark_grounding,
        ungrounded_arguments,
    )
    from whileai_train.markers.spec import Spec, Trait, load_spec, stamp_spec
    from whileai_train.markers.stages import STAGES, StageReport, stage_of, stage_report, stamp_stage
    from whileai_train.markers.style import (
        RefusalReport,
        StyleReport,
        refusal_report,
        style_markers,
        style_report,
    )
    from whileai_train.markers.trace_flags import trace_markers
    from whileai_train.markers.trace_report import FlagSummary, TraceFlagReport, trace_flag_report
    from whileai_train.measure.compare_runs import CompareRunsReport, compare_runs
    from whileai_train.measure.dataset_report import DatasetReport, TierStats, dataset_report
    from whileai_train.measure.delta_reading import DeltaReport, MetricDelta, format_delta_report
    from whileai_train.measure.delta_report import delta_report
    from whileai_train.measure.eval_variance import EvalVarianceReport, eval_variance
    from whileai_train.measure.group_signal import GroupSignalReport, TaskSignal, group_signal
    from whileai_train.measure.holdout_size import (
        DetectableEffectReport,
        HoldoutSizeReport,
        detectable_effect,
        holdout_size,
    )
    from whileai_train.measure.marker_summary import MarkerSummaryReport, marker_summary, metric_summary
    from whileai_train.measure.pass_at import PassAtReport, pass_at
    from whileai_train.report import KeptRows
    from whileai_train.rows.contract import (
        Calibration,
        Message,
        Policy,
        Row,
        Step,
        ToolCall,
        calibration_of,
        task_key,
    )
    from whileai_train.rows.files import read_rows
    from whileai_train.rows.rollout import Rollout, from_row, to_row
    from whileai_train.runs.completions import get_completions
    from whileai_train.runs.config import SenderConfig
    from whileai_train.runs.cost import GPU_USD_PER_HOUR
    from whileai_train.runs.listing import list_runs, points_frame
    from whileai_train.runs.records import get_run
    from whileai_train.runs.run import Run, run
    from whileai_train.runs.sinks import Sink
    from whileai_train.runs.verdicts import attach_delta, attach_holdout
    from whileai_train.sampling.evaluate import evaluate
    from whileai_train.select.curriculum import CurriculumReport, TaskDifficulty, curriculum
    from whileai_train.select.optimize import optimize
    from whileai_train.select.preference_pairs import (
        PreferencePairs,
        PreferencePairsReport,
        build_preference_pairs,
    )
    from whileai_train.select.select_rl import RLSelectionReport, select_for_rl
    from whileai_train.select.select_sft import SFTSelectionReport, select_for_sft
    from whileai_train.tables.marker_column import MarkerSummary
else:

    def __getattr__(name: str) -> Any:
        if name in _DEPRECATED:
            new_name = _DEPRECATED[name]
            warnings.warn(f"whileai_train.{name} is deprecated: use whileai_train.{new_name} (the same object)",
                          DeprecationWarning, stacklevel=2)
            return __getattr__(new_name)
        module_name = _EXPORTS.get(name)
        if module_name is None:
            raise AttributeError(f"module 'whileai_train' has no attribute {name!r}")
        value = getattr(importlib.import_module(module_name), name)
        globals()[name] = value  # resolve once
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
