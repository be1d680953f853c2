"""The journal file and the annotation store built on it (single process)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from replay.core.annotate.annotations import (
    Annotation,
    AnnotationStore,
    annotations_from_records,
    default_journal_path,
    default_reviewer,
    session_identity,
    session_key,
)
from replay.core.annotate.journal import Journal, JournalError, latest
from replay.core.paths import data_dir
from replay.core.session.model import Session


def _record(turn: str, label: str, reviewer: str = "ana", session: str = "s1") -> dict[str, object]:
    return Annotation(session, turn, 0, label, reviewer=reviewer, time="t").to_json()


def test_records_are_self_contained_lines(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "deep" / "folder" / "j.jsonl")
    journal.append(_record("m1", "approval"))
    journal.append(_record("m2", "continue"))
    lines = journal.path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    first = orjson.loads(lines[0])
    assert first == {"v": 1, "session_id": "s1", "turn_id": "m1", "turn_index": 0,
                     "label": "approval", "note": "", "confidence": "medium",
                     "reviewer": "ana", "time": "t"}
    loaded = journal.load()
    assert [r["turn_id"] for r in loaded.records] == ["m1", "m2"]
    assert loaded.warnings == []


def test_missing_journal_loads_empty(tmp_path: Path) -> None:
    loaded = Journal(tmp_path / "none.jsonl").load()
    assert loaded.records == [] and loaded.warnings == []


def test_torn_tail_is_ignored_with_a_warning_and_next_append_starts_a_fresh_line(
    tmp_path: Path,
) -> None:
    journal = Journal(tmp_path / "j.jsonl")
    journal.append(_record("m1", "approval"))
    with open(journal.path, "ab") as handle:
        handle.write(b'{"v": 1, "session_id": "s1", "turn_id": "m2", "lab')
    loaded = journal.load()
    assert [r["turn_id"] for r in loaded.records] == ["m1"]
    assert loaded.warnings == [
        f"{journal.path}:2: unreadable annotation line ignored (torn or not JSON)"]
    journal.append(_record("m3", "reflect"))
    loaded = journal.load()
    assert [r["turn_id"] for r in loaded.records] == ["m1", "m3"]
    assert len(loaded.warnings) == 1
    assert journal.path.read_bytes().count(b"\n") == 3


def test_lines_that_are_not_annotation_records_are_warned_about(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(
        b'[1, 2]\n'
        b'{"session_id": "s1", "turn_id": "m1"}\n'
        b'{"session_id": "s1", "turn_id": "m1", "label": "x", "turn_index": "3"}\n'
        b'\n'
        b'{"session_id": "s1", "turn_id": "m1", "label": "x", "future": true, "v": 2}\n'
    )
    loaded = Journal(path).load()
    assert len(loaded.records) == 1
    assert loaded.warnings == [
        f"{path}:1: not an annotation record (not a JSON object)",
        f"{path}:2: not an annotation record (missing text field 'label')",
        f"{path}:3: not an annotation record (field 'turn_index' is not an integer)",
    ]
    assert Annotation.from_json(loaded.records[0]) == Annotation("s1", "m1", -1, "x")


def test_latest_wins_per_reviewer_session_and_turn() -> None:
    records = [
        _record("m1", "approval"), _record("m1", "continue", reviewer="bo"),
        _record("m1", "reflect"), _record("m1", "other", session="s2"),
    ]
    chosen = latest(records)
    assert {key: record["label"] for key, record in chosen.items()} == {
        ("ana", "s1", "m1"): "reflect", ("bo", "s1", "m1"): "continue",
        ("ana", "s2", "m1"): "other",
    }
    assert [a.label for a in annotations_from_records(records, session_id="s1")] == [
        "reflect", "continue"]
    assert [a.label for a in annotations_from_records(records, reviewer="bo")] == ["continue"]


def _store(tmp_path: Path, reviewer: str = "ana") -> AnnotationStore:
    return AnnotationStore(Journal(tmp_path / "j.jsonl"), "s1", reviewer)


def test_commit_is_on_disk_when_it_returns_and_reload_restores_it(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.load() == []
    saved = store.commit("m1", 4, "approval", note="a plan, then silence", confidence="high")
    assert saved.reviewer == "ana" and saved.time.endswith("Z")
    assert Journal(tmp_path / "j.jsonl").load().records == [saved.to_json()]
    store.commit("m2", 9, "continue")
    store.commit("m1", 4, "reflect")
    again = _store(tmp_path)
    again.load()
    assert again.get("m1").label == "reflect"  # type: ignore[union-attr]
    assert again.annotated_ids == {"m1", "m2"}
    assert set(again.all()) == {"m1", "m2"}


def test_reviewers_share_a_journal_without_seeing_each_other(tmp_path: Path) -> None:
    _store(tmp_path, "ana").commit("m1", 1, "approval")
    bo = _store(tmp_path, "bo")
    bo.load()
    assert bo.get("m1") is None
    bo.commit("m1", 1, "breakdown")
    ana = _store(tmp_path, "ana")
    ana.load()
    assert ana.get("m1").label == "approval"  # type: ignore[union-attr]


def test_withdraw_and_undo_append_records(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.load()
    store.commit("m1", 1, "approval")
    store.commit("m1", 1, "continue")
    store.withdraw("m1", 1)
    assert store.get("m1") is None and store.annotated_ids == frozenset()
    restored = store.undo()
    assert restored is not None and restored.label == "continue"
    assert store.undo().label == "approval"  # type: ignore[union-attr]
    cleared = store.undo()
    assert cleared is not None and cleared.label == "" and store.get("m1") is None
    assert store.undo() is None
    labels = [r["label"] for r in Journal(tmp_path / "j.jsonl").load().records]
    assert labels == ["approval", "continue", "", "continue", "approval", ""]
    reloaded = _store(tmp_path)
    reloaded.load()
    assert reloaded.all() == {}


def test_undo_only_reverts_this_process(tmp_path: Path) -> None:
    _store(tmp_path).commit("m1", 1, "approval")
    store = _store(tmp_path)
    store.load()
    assert store.undo() is None
    store.commit("m1", 1, "artifact")
    assert store.undo().label == "approval"  # type: ignore[union-attr]


def test_bad_confidence_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="confidence must be one of low, medium, high"):
        _store(tmp_path).commit("m1", 1, "approval", confidence="sure")


def test_unsaved_records_are_written_first_once_the_journal_works(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    store = AnnotationStore(Journal(blocker / "j.jsonl"), "s1", "ana")
    with pytest.raises(JournalError, match="cannot create the folder"):
        store.commit("m1", 1, "approval")
    blocker.unlink()
    blocker.mkdir()
    store.commit("m2", 2, "continue")
    assert store.unsaved == []
    assert [r["turn_id"] for r in Journal(blocker / "j.jsonl").load().records] == ["m1", "m2"]


def test_session_keys_and_default_journal_path(tmp_path: Path) -> None:
    with_id = Session(path=str(tmp_path / "a.jsonl"), format="claude-code", session_id="abc-123")
    assert session_key(with_id) == "claude-code-abc-123"
    assert session_identity(with_id) == "abc-123"
    odd = Session(path="x", format="opencode", session_id="a/b c")
    assert session_key(odd).startswith("opencode-a_b_c-") and "/" not in session_key(odd)
    no_id = Session(path=str(tmp_path / "chat.json"), format="chat")
    same = Session(path=str(tmp_path / "." / "chat.json"), format="chat")
    assert session_key(no_id) == session_key(same)
    assert session_key(no_id).startswith("chat-path-")
    assert session_identity(no_id).startswith("path-")
    path = default_journal_path(with_id)
    assert path == data_dir() / "journals" / "claude-code-abc-123.jsonl"
    assert tmp_path not in path.parents


def test_default_reviewer(monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_reviewer(" ana ") == "ana"
    monkeypatch.setattr("getpass.getuser", lambda: "login")
    assert default_reviewer(None) == "login"
    assert default_reviewer("") == "login"

    def fails() -> str:
        raise OSError("no user")

    monkeypatch.setattr("getpass.getuser", fails)
    assert default_reviewer() == "reviewer"


def test_only_regular_files_are_read_as_journals(tmp_path: Path) -> None:
    with pytest.raises(JournalError) as caught:
        Journal("/dev/zero").load()
    assert str(caught.value) == ("cannot read annotations from /dev/zero: not a regular file "
                                 "(a character device)")
    # A FIFO with no writer: refused at once, where a plain open() would wait forever.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(JournalError, match=r"not a regular file \(a FIFO \(named pipe\)\)$"):
        Journal(fifo).load()
    with pytest.raises(JournalError, match="it is a folder$"):
        Journal(tmp_path).load()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert Journal(blocker / "j.jsonl").load().records == []
