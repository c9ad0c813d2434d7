"""The public face is pinned: nothing becomes public by accident, and every public name resolves."""

from __future__ import annotations

import whileai_train as wai

EXPECTED = {
    # errors
    "ChatTemplateError", "ConfigError", "ExportRefusedError", "InputError", "LabelError", "PrivilegedLeakError",
    "PublishGateError", "RowError", "RunError", "ToolArgumentsError", "TrainingSelectionError", "WhileAIError",
    # rows
    "Calibration", "Message", "Row", "ToolCall", "calibration_of", "read_rows", "task_key",
    # exporters
    "ExportReport", "export_dataset", "export_training", "training_rows", "export_preference", "export_prompts",
    "to_dataset",
    # runs and callbacks
    "Run", "run", "GPU_USD_PER_HOUR", "WhileCallback", "track",
    # reward monitor
    "RewardMonitor", "monitor", "format_hack_monitor",
    # gates
    "hack_scan", "reward_correlations", "dedupe_groups", "near_duplicate_prompts", "length_report", "optimize",
    "select_for_rl", "select_for_sft", "build_preference_pairs", "curriculum", "attach_labels", "judge_trust",
    "judge_probes", "format_judge_trust", "decontaminate", "publish_gate",
    # measurement
    "pass_at", "compare_runs",
}


def test_all_is_sorted_and_pinned() -> None:
    assert wai.__all__ == sorted(wai.__all__)
    assert set(wai.__all__) == EXPECTED


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
