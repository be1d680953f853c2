"""Multi-session sources list their sessions without reading them, and each listed session
reads back as the same session a full read gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.core.readers import detect_reader, load_sessions, read_entry
from replay.core.session.model import Session
from tests.core.test_claude_code import _project
from tests.core.test_opencode import TURNS, build_database, split_into_storage


def shape(session: Session) -> tuple[object, ...]:
    return (session.session_id, session.title, len(session.turns),
            [s.session_id for s in session.sidechains], session.skipped)


def check_listing(path: Path) -> list[Session]:
    """Every listed session reads as one of the full read's, and none is missing."""
    reader = detect_reader(path)
    assert reader.list_sessions is not None
    entries = reader.list_sessions(path)
    listed = [read_entry(reader, entry) for entry in entries]
    full = load_sessions(path)
    assert sorted(map(shape, listed), key=repr) == sorted(map(shape, full), key=repr)
    for entry, session in zip(entries, listed, strict=True):
        if entry.title is not None:
            assert entry.title == session.title
        if entry.started is not None and session.started is not None:
            assert abs(entry.started - session.started) < 600  # a glance, not a read
    return listed


def test_a_claude_code_project_folder(tmp_path: Path) -> None:
    project = _project(tmp_path)
    listed = check_listing(project)
    # The nested subagent and the loose agent file of a listed session come with it.
    assert [len(s.sidechains) for s in listed if s.turns and len(s.turns) == 22] == [1]


def test_an_opencode_database_and_storage_folder(tmp_path: Path) -> None:
    check_listing(build_database(tmp_path / "opencode.db", list(TURNS)))
    check_listing(split_into_storage(tmp_path / "split", list(TURNS)))


def test_listing_reads_no_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.readers import claude_code, opencode_sqlite, opencode_storage

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a session was read while listing")

    monkeypatch.setattr(claude_code, "_read_file", refuse)
    monkeypatch.setattr(opencode_sqlite, "_read_session", refuse)
    monkeypatch.setattr(opencode_storage, "_session", refuse)
    assert len(claude_code.list_sessions(_project(tmp_path))) == 3
    database = build_database(tmp_path / "opencode.db", list(TURNS))
    assert len(opencode_sqlite.list_sessions(database)) == len(TURNS)
    storage = split_into_storage(tmp_path / "split", list(TURNS))
    assert len(opencode_storage.list_sessions(storage)) == len(TURNS)


def test_a_folder_of_projects_lists_every_session_inside(tmp_path: Path) -> None:
    from replay.core.readers import folder
    from tests.conftest import realdata

    projects = tmp_path / "projects"
    _project(projects)  # a Claude Code project folder, listed by its own reader
    codex = realdata("codex/codemie-code__src__agents__plugins__codex____tests____fixtures__"
                     "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
    (projects / "rollout.jsonl").write_bytes(codex.read_bytes())
    (projects / "opencode").mkdir()
    build_database(projects / "opencode" / "opencode.db", ["nimble-pixel", "jolly-eagle"])
    assert detect_reader(projects).name == "folder"
    listed = check_listing(projects)
    assert sorted(s.format for s in listed) == [
        "claude-code", "claude-code", "claude-code", "codex", "opencode-db", "opencode-db"]
    entries = folder.list_sessions(projects)
    assert entries is not None and {e.format for e in entries} == {
        "claude-code", "codex", "opencode-db"}


def test_a_folder_with_a_chat_dataset_is_read_whole(tmp_path: Path) -> None:
    from replay.core.readers import folder
    from tests.ui.sessions import write_chat_jsonl

    write_chat_jsonl(tmp_path / "chats.jsonl")
    _project(tmp_path / "cc")
    assert folder.list_sessions(tmp_path) is None


def test_scan_reads_a_listed_folder_one_session_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import orjson

    from replay.cli import main
    from replay.core.corpus import tasks as corpus
    from replay.core.readers import ReaderError

    project = _project(tmp_path)
    whole = {s.session_id: len(s.turns) for s in load_sessions(project)}
    alive: list[int] = []
    scan_file = corpus.scan_file

    # Each session file of the folder is streamed, as the same file given alone would be.
    def reading(reader: object, path: Path, rules: object) -> object:
        import gc

        report = scan_file(reader, path, rules)  # type: ignore[arg-type]
        gc.collect()
        alive.append(sum(isinstance(o, Session) and not o.parent_call
                         for o in gc.get_objects()))
        if report.session.session_id == "4227a68e-2b1f-4923-b824-6e04a67f77c1":
            raise ReaderError(f"{path}: cannot be read")
        return report

    monkeypatch.setattr(corpus, "scan_file", reading)
    # Some sessions read, one skipped (said on stderr): exit status 1.
    assert main(["scan", "--json", "--jobs", "1", str(project)]) == 1
    out, err = capsys.readouterr()
    reports = [orjson.loads(line) for line in out.splitlines()]
    assert {r["session_id"]: r["turns"] for r in reports} == {
        key: value for key, value in whole.items()
        if key != "4227a68e-2b1f-4923-b824-6e04a67f77c1"}
    assert err.count("\n") == 1 and "cannot be read" in err
    # One session in memory at a time: the previous one was let go before the next read.
    assert max(alive) - min(alive) <= 1
