"""The store the server writes through: finished runs are final, late summary updates merge, points without
seq are numbered, alarms are read with their text, and a store written by the earlier version opens with its
runs' alarm counts and last loss filled in."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from whileai_train.alarm_event import AlarmEvent
from whileai_train.errors import RunError, RunFinishedError
from whileai_train.runs.store import LocalStore

_OLD_SCHEMA = """
CREATE TABLE runs (id TEXT PRIMARY KEY, client_id TEXT UNIQUE, name TEXT NOT NULL, dataset_id TEXT,
    base_model TEXT, total_steps INTEGER, step INTEGER, status TEXT NOT NULL, created REAL NOT NULL,
    finished REAL, summary TEXT, error TEXT, owner TEXT);
CREATE TABLE points (run_id TEXT NOT NULL, seq INTEGER NOT NULL, step INTEGER, ts REAL, data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
CREATE TABLE notes (run_id TEXT NOT NULL, seq INTEGER NOT NULL, ts REAL, markdown TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
"""


def test_a_finished_run_is_final_in_the_store(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "runs.db")
    run_id = store.create_run({"name": "r"})
    store.add_points(run_id, [{"seq": 0, "step": 1, "loss": 1.0}])
    store.finish(run_id, "stopped", {"stop_reason": "first"}, error=None)
    with pytest.raises(RunFinishedError, match="final"):
        store.finish(run_id, "done", {"stop_reason": "second"})
    with pytest.raises(RunFinishedError):
        store.add_points(run_id, [{"seq": 1, "step": 2, "loss": 0.5}])
    with pytest.raises(RunFinishedError):
        store.add_note(run_id, 0, "late")
    with pytest.raises(RunFinishedError):
        store.set_progress(run_id, 9, 10)
    assert issubclass(RunFinishedError, RunError)
    record = store.get_run(run_id)
    assert record is not None
    assert (record["status"], record["summary"], record["points_count"], record["notes"], record["step"]) == \
        ("stopped", {"stop_reason": "first"}, 1, [], 0)


def test_update_summary_merges_top_level_keys_after_finish(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "runs.db")
    run_id = store.create_run({"name": "r"})
    store.finish(run_id, "done", {"cost_usd": 0.2, "holdout": {"old": 1}})
    store.update_summary(run_id, {"holdout": {"before": 0.4, "after": 0.6}, "delta": {"verdict": "moved"},
                                  "nan": float("nan")})
    record = store.get_run(run_id)
    assert record is not None and record["status"] == "done"
    assert record["summary"] == {"cost_usd": 0.2, "holdout": {"before": 0.4, "after": 0.6},
                                 "delta": {"verdict": "moved"}, "nan": None}
    with pytest.raises(RunError, match="no run run-missing"):
        store.update_summary("run-missing", {"a": 1})


def test_points_without_seq_follow_the_highest(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "runs.db")
    run_id = store.create_run({"name": "r"})
    assert store.add_points(run_id, [{"step": 1}]) == 1
    assert store.add_points(run_id, [{"step": 2}, (None, 3, None, '{"step":3}'), {"seq": None, "step": 4}]) == 3
    assert [(p["seq"], p["step"]) for p in store.points(run_id)] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    store.add_points(run_id, [{"step": 5}])
    page, cursor = store.points_page(run_id, after_seq=0, limit=2)
    assert [p["seq"] for p in page] == [1, 2] and cursor == 2
    assert store.points_page(run_id, after_seq=cursor, limit=2) == (store.points(run_id)[3:], None)


def test_alarms_carry_their_step_text_and_evidence(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "runs.db")
    run_id = store.create_run({"name": "r"})
    divergence = AlarmEvent(name="divergence", step=7, message="proxy +0.30 while gold -0.01",
                            evidence={"proxy_delta": 0.3, "gold_ci95": [-0.05, 0.02]})
    drift = AlarmEvent(name="drift", step=9, message="KL 0.4 is past kl_budget 0.2")
    store.add_points(run_id, [{"seq": 0, "step": 5, "loss": 2.0}, {"seq": 1, "step": 9, "loss": 1.5}])
    store.add_note(run_id, 0, drift.note_markdown, alarm=drift)
    store.add_note(run_id, 1, divergence.note_markdown, alarm=divergence)
    store.add_note(run_id, 2, "**Alarm: length** at step 8: a note that only looks like one")
    record = store.get_run(run_id)
    assert record is not None
    assert record["alarms"] == [divergence.model_dump(), drift.model_dump()]  # in step order
    assert (record["alarm_count"], record["last_loss"]) == (2, 1.5)
    assert store.add_note(run_id, 1, divergence.note_markdown, alarm=divergence) is False  # a re-send counts once
    assert store.list_runs()[0]["alarm_count"] == 2
    assert store.alarms_by_note(run_id) == {0: drift, 1: divergence}


def test_an_older_store_opens_with_its_digest_filled(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(_OLD_SCHEMA)
        conn.execute("INSERT INTO runs (id, name, status, created, step) VALUES ('run-old', 'old', 'done', 1.0, 3)")
        for seq, data in enumerate([{"step": 1, "loss": 3.0}, {"step": 2, "alarm/length": 1.0},
                                    {"step": 3, "loss": 1.0}, {"step": 3, "gold_reward": 0.2}]):
            conn.execute("INSERT INTO points VALUES ('run-old', ?, ?, 0, ?)", (seq, data["step"], json.dumps(data)))
    store = LocalStore(path)
    (row,) = store.list_runs()
    assert (row["id"], row["alarm_count"], row["last_loss"]) == ("run-old", 1, 1.0)
    assert store.alarms("run-old") == [AlarmEvent(name="length", step=2, message="length alarm at step 2")]


def test_an_older_stores_alarm_points_and_notes_become_alarms(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store = LocalStore(path)
    run_id = store.create_run({"name": "written before alarms had a table"})
    store.add_points(run_id, [{"seq": 0, "step": 7, "alarm/divergence": 1.0, "alarm/length": 0.0},
                              {"seq": 1, "step": 9, "alarm/drift": 1.0}])
    store.add_note(run_id, 0, "**Alarm: divergence** at step 7: proxy +0.30 while gold -0.01\nmore detail")
    store.close()
    with sqlite3.connect(path) as conn:  # as an earlier version left it: no alarm rows, its own count
        conn.execute("DELETE FROM alarms")
        conn.execute("UPDATE runs SET alarm_count = 2")
        conn.execute("PRAGMA user_version = 0")
    reopened = LocalStore(path)
    assert reopened.alarms(run_id) == [
        AlarmEvent(name="divergence", step=7, message="proxy +0.30 while gold -0.01"),
        AlarmEvent(name="drift", step=9, message="drift alarm at step 9")]
    assert reopened.alarms_by_note(run_id) == {0: reopened.alarms(run_id)[0]}
    assert reopened.list_runs()[0]["alarm_count"] == 2


def test_an_older_stores_notes_keep_their_numbers_for_re_sends(tmp_path: Path) -> None:
    """An earlier version stored each note under the sender's number: after the upgrade a re-send of one is
    still stored once, and a note without a number (a PATCH) takes none that the sender will use next."""
    path = tmp_path / "runs.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(_OLD_SCHEMA)
        conn.execute("INSERT INTO runs (id, name, status, created) VALUES ('run-old', 'old', 'running', 1.0)")
        conn.executemany("INSERT INTO notes VALUES ('run-old', ?, 1.0, ?)", [(0, "zero"), (1, "one")])
    store = LocalStore(path)
    assert store.add_note("run-old", 1, "one") is False
    store.append_note("run-old", "a late remark")
    assert store.add_note("run-old", 2, "two") is True and store.add_note("run-old", 2, "two") is False
    record = store.get_run("run-old")
    assert record is not None
    assert [(n["seq"], n["markdown"]) for n in record["notes"]] == [(0, "zero"), (1, "one"), (2, "a late remark"),
                                                                    (3, "two")]
    store.close()
    assert LocalStore(path).add_note("run-old", 0, "zero") is False  # opened again: nothing migrates twice
