"""The public face is pinned: nothing becomes public by accident, and every public name resolves."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import whileai_train as wai

EXPECTED = {
    # errors
    "ChatTemplateError", "ConfigError", "ExportRefusedError", "InputError", "LabelError", "PrivilegedLeakError",
    "PublishGateError", "RewardFunctionError", "RowError", "RunError", "TemplateDropError", "ToolArgumentsError", "TrainingSelectionError", "WhileAIError",
    # rows
    "Calibration", "Message", "Policy", "Row", "Step", "ToolCall", "calibration_of", "read_rows", "task_key",
    "Rollout", "from_row", "to_row",
    # exporters
    "ExportReport", "ToolCallRoundtrip", "Selection", "DroppedTasks", "export_dataset", "export_training",
    "training_rows",
    "export_preference", "export_prompts", "to_dataset", "leak_report", "LeakReport",
    # runs and callbacks
    "Run", "run", "SenderConfig", "Sink", "GPU_USD_PER_HOUR", "WhileCallback", "track",
    # reward monitor
    "RewardMonitor", "monitor", "format_hack_monitor", "MonitorSummary", "MonitorConfig", "AlarmEntry", "EvalPoint", "Reading",
    # gates
    "hack_scan", "HackScanReport", "FeatureScore", "reward_correlations", "CorrelationsReport",
    "dedupe_groups", "DedupeReport", "DuplicateGroup", "near_duplicate_prompts", "NearDuplicateReport",
    "NearDuplicateGroup", "NearDuplicatePair", "length_report", "LengthReport", "LengthStats",
    "decontaminate", "DecontaminateReport", "publish_gate", "PublishGateReport",
    # selection
    "optimize", "OptimizeResult", "select_for_rl", "RLSelectionReport", "select_for_sft",
    "SFTSelectionReport", "build_preference_pairs", "PreferencePairs", "PreferencePairsReport", "curriculum",
    "CurriculumReport", "TaskDifficulty",
    # judge trust
    "attach_labels", "judge_trust", "JudgeTrustReport", "AgreementRate", "LengthBias", "format_judge_trust",
    "judge_probes", "JudgeProbesReport", "ProbeResult",
    # measurement
    "evaluate", "pass_at", "PassAtReport", "compare_runs", "CompareRunsReport", "DeltaReport", "delta_report", "format_delta_report", "eval_variance",
    "metric_summary", "marker_summary", "holdout_size", "detectable_effect",
    "group_signal", "GroupSignalReport", "TaskSignal", "dataset_report", "DatasetReport", "TierStats",
    # run records
    "get_run", "attach_holdout", "attach_delta", "list_runs", "points_frame",
    # behaviour markers
    "mark_grounding", "ungrounded_arguments", "grounding_report", "trace_markers", "trace_flag_report",
    "style_markers", "style_report", "refusal_report", "STAGES", "stamp_stage", "stage_of", "stage_report", "Spec",
    "load_spec", "stamp_spec",
    # their report types
    "MarkerSummary", "GroundingReport", "Trait", "StageReport", "RefusalReport", "StyleReport", "FlagSummary",
    "TraceFlagReport", "MetricDelta", "EvalVarianceReport", "DetectableEffectReport", "HoldoutSizeReport",
    "MarkerSummaryReport", "MetricSummary",
    # what every function that keeps rows returns: (rows, report)
    "Kept",
    # a model and tokenizer to try the library with
    "tiny_model_and_tokenizer",
}


def test_all_is_sorted_and_pinned() -> None:
    assert wai.__all__ == sorted(wai.__all__)
    assert set(wai.__all__) == EXPECTED


def _init_tree() -> ast.Module:
    return ast.parse(Path(wai.__file__).read_text())


def test_all_is_a_literal_list() -> None:
    assigned = [node.value for node in _init_tree().body if isinstance(node, ast.Assign)
                and [getattr(target, "id", None) for target in node.targets] == ["__all__"]]
    assert len(assigned) == 1
    assert isinstance(assigned[0], ast.List)
    assert [ast.literal_eval(item) for item in assigned[0].elts] == wai.__all__


def test_lazy_names_and_the_type_checking_mirror_agree() -> None:
    """`_EXPORTS` (what runs) and the TYPE_CHECKING imports (what type checkers read) agree, name by name."""
    mirror: dict[str, str] = {}
    for node in _init_tree().body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom)
                for alias in statement.names:
                    assert alias.asname is None
                    mirror[alias.name] = str(statement.module)
    assert mirror == wai._EXPORTS
    assert sorted(mirror) == wai.__all__
    for name, module in mirror.items():
        assert getattr(importlib.import_module(module), name) is getattr(wai, name)


def test_every_public_name_resolves() -> None:
    missing = [name for name in wai.__all__ if getattr(wai, name, None) is None]
    assert not missing


def test_export_training_is_export_dataset() -> None:
    assert wai.export_training is wai.export_dataset


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        wai.not_a_thing  # noqa: B018
    except AttributeError as exc:
        assert "not_a_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")
