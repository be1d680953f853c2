"""One scan-cache row per session for every consumer: `replay scan DIR` fills what
`replay sessions` and the app's lists read, and the other way round; the rules in force are
part of the row's key wherever they come from (flags, the config); a session deleted inside
a database leaves the cache when the database is listed again."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import orjson
import pytest

from replay.cli import main
from replay.core.corpus import pool
from replay.core.corpus.cache import cache_path
from replay.core.corpus.tasks import SessionTask
from replay.core.discovery import counts
from tests.core.homes import build_home

OLD = 1_700_000_000
"""A modification time long past (a file written a moment ago is not cached)."""


def _age(root: Path) -> None:
    for folder, _, files in os.walk(root):
        for name in files:
            os.utime(Path(folder) / name, (OLD, OLD))
    os.utime(root, (OLD, OLD))


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(who, file) for every session read: `scan` (its tasks, in this process with --jobs 1)
    and the session lists' counts."""
    seen: list[tuple[str, str]] = []
    scanned, counted = pool.scan_task, getattr(counts, "scan_task", None)

    def by_scan(task: SessionTask):  # type: ignore[no-untyped-def]
        seen.append(("scan", str(task.entry.path if task.entry else task.source)))
        return scanned(task)

    def by_list(task: SessionTask):  # type: ignore[no-untyped-def]
        seen.append((task.format or "", str(task.entry.path if task.entry else task.source)))
        assert counted is not None
        return counted(task)

    monkeypatch.setattr(pool, "scan_task", by_scan)
    monkeypatch.setattr(counts, "scan_task", by_list, raising=False)
    if hasattr(counts, "read_entry"):  # (how the lists read before they scanned)
        read = counts.read_entry

        def by_reading(reader, entry, **options):  # type: ignore[no-untyped-def]
            seen.append((reader.name, str(entry.path)))
            return read(reader, entry, **options)

        monkeypatch.setattr(counts, "read_entry", by_reading)
    return seen


def _run(capsysbinary: pytest.CaptureFixture[bytes], *args: str) -> bytes:
    main(list(args))
    out, _ = capsysbinary.readouterr()
    return out


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    made = build_home(tmp_path / "home")
    monkeypatch.setenv("HOME", str(made.root))
    _age(made.root)
    return made


def _roots(home) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(home.claude_projects), str(home.codex_home / "sessions"),
            str(home.data_home / "opencode"), str(home.gemini_tmp)]


def test_a_scan_of_the_agents_folders_makes_replay_sessions_read_nothing(  # type: ignore[no-untyped-def]
        home, reads, capsysbinary) -> None:
    expected = _run(capsysbinary, "sessions", "--json", "--jobs", "1", "--no-cache")
    reads.clear()
    _run(capsysbinary, "scan", "--json", "--jobs", "1", *_roots(home))
    assert reads and all(who == "scan" for who, _ in reads)
    reads.clear()
    listed = _run(capsysbinary, "sessions", "--json", "--jobs", "1")
    assert listed == expected
    # Only what the scan did not cover is read: opencode's storage folder and the archived
    # Codex rollout (not under the folders scanned).
    assert sorted(Path(path).name for _, path in reads) == sorted(
        ["ses_39b4c1891ffezxPVc5OPmcqF33.json",
         "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"])


def test_replay_sessions_then_a_scan_reads_nothing_and_prints_the_same_bytes(  # type: ignore[no-untyped-def]
        home, reads, capsysbinary, monkeypatch) -> None:
    roots = _roots(home)
    expected = _run(capsysbinary, "scan", "--json", "--jobs", "1", "--no-cache", *roots)
    _run(capsysbinary, "sessions", "--json", "--jobs", "1")
    reads.clear()
    assert _run(capsysbinary, "scan", "--json", "--jobs", "1", *roots) == expected
    assert reads == []
    # The same folders named from elsewhere (relative paths): still nothing read, and the
    # reports name the paths as given.
    monkeypatch.chdir(home.root)
    relative = [os.path.relpath(root, home.root) for root in roots]
    named = _run(capsysbinary, "scan", "--json", "--jobs", "1", "--no-cache", *relative)
    reads.clear()
    assert _run(capsysbinary, "scan", "--json", "--jobs", "1", *relative) == named
    assert reads == []
    assert b'"path":".claude/projects/' in named and b'"path":"/' not in named


def _missing_reply_session(path: Path) -> Path:
    """A Claude Code session whose first request got no reply before the next one."""
    session = "0f0f0f0f-0000-4000-8000-000000000001"

    def user(number: int, text: str) -> dict[str, object]:
        return {"type": "user", "uuid": f"u{number}", "sessionId": session,
                "timestamp": f"2026-11-30T10:0{number}:00Z",
                "message": {"role": "user", "content": text}}

    lines = [user(1, "please fix the failing tests in the parser"),
             user(2, "hello? can you please answer"),
             {"type": "assistant", "uuid": "a1", "sessionId": session,
              "timestamp": "2026-11-30T10:03:00Z",
              "message": {"role": "assistant", "id": "m1", "model": "x",
                          "content": [{"type": "text", "text": "Fixed."}]}}]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    os.utime(path, (OLD, OLD))
    return path


def _empty_counts(out: bytes) -> dict[str, int]:
    return {row["session_id"]: row["empty"] for row in map(orjson.loads, out.splitlines())}


def test_the_rules_of_the_config_are_the_rules_of_replay_sessions_and_share_rows(  # type: ignore[no-untyped-def]
        tmp_path, monkeypatch, reads, capsysbinary) -> None:
    home = tmp_path / "home"
    folder = home / ".claude" / "projects" / "-work-parser"
    session = _missing_reply_session(folder / "0f0f0f0f-0000-4000-8000-000000000001.jsonl")
    monkeypatch.setenv("HOME", str(home))
    sid = "0f0f0f0f-0000-4000-8000-000000000001"
    plain = _empty_counts(_run(capsysbinary, "sessions", "--json", "--jobs", "1"))
    config = Path(os.environ["REPLAY_CONFIG_FILE"])
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("missing_replies = true\n")
    reads.clear()
    with_config = _empty_counts(_run(capsysbinary, "sessions", "--json", "--jobs", "1"))
    assert with_config[sid] == plain[sid] + 1  # never the default rules' count kept
    assert len(reads) == 1
    reads.clear()
    # The same rules again, from the config or from a flag of scan: the row is shared.
    assert _empty_counts(_run(capsysbinary, "sessions", "--json", "--jobs", "1")) == with_config
    scanned = _run(capsysbinary, "scan", "--json", "--jobs", "1", "--missing-replies",
                   str(folder))
    assert reads == []
    assert len(orjson.loads(scanned)["empty_turns"]) == with_config[sid]
    # The config changed back: the other rules' row, never the one just used.
    config.write_text("")
    assert _empty_counts(_run(capsysbinary, "sessions", "--json", "--jobs", "1")) == plain
    assert reads == []  # (that row was kept by the first count)
    assert _empty_counts(_run(capsysbinary, "sessions", "--json", "--jobs", "1",
                              "--missing-replies")) == with_config
    assert reads == [] and session.exists()


def _rows_of(database: Path) -> int:
    """The cache's rows kept under a database for its sessions (one per session of it; the
    database's own facts, such as its format, aside)."""
    with sqlite3.connect(cache_path()) as db:
        return db.execute("SELECT count(*) FROM results WHERE path = ? AND entry IS NOT NULL",
                          (os.fsencode(database),)).fetchone()[0]


def _delete_session(database: Path, session_id: str) -> None:
    with sqlite3.connect(database) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master "
                                                 "WHERE type = 'table'")}
        for table in ("part", "message"):
            if table in tables:
                db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
        db.execute("DELETE FROM session WHERE id = ?", (session_id,))
    database_wal = Path(f"{database}-wal")
    for file in (database, database_wal):
        if file.exists():
            os.utime(file, (OLD + 10, OLD + 10))


@pytest.mark.parametrize("consumer", ["sessions", "scan"])
def test_a_session_deleted_inside_a_database_leaves_the_cache_when_it_is_listed_again(  # type: ignore[no-untyped-def]
        home, capsysbinary, consumer) -> None:
    database = home.data_home / "opencode" / "opencode.db"
    command = ["sessions", "--json", "--jobs", "1", "--agent", "opencode"] \
        if consumer == "sessions" else ["scan", "--json", "--jobs", "1", str(database)]
    _run(capsysbinary, *command)
    assert _rows_of(database) == 2
    _delete_session(database, "ses_39b3d0892ffeaCoiaHPszzRI8d")
    out = _run(capsysbinary, *command)
    assert b"ses_39b3d0892ffeaCoiaHPszzRI8d" not in out and b"ses_39b5d713cffe" in out
    # The database changed: its one session left is read again, and the deleted one's row
    # is gone (not left to age out).
    assert _rows_of(database) == 1


def test_one_session_picked_from_a_database_keeps_the_others_rows(  # type: ignore[no-untyped-def]
        home, capsysbinary) -> None:
    database = home.data_home / "opencode" / "opencode.db"
    _run(capsysbinary, "scan", "--json", "--jobs", "1", str(database))
    _run(capsysbinary, "sessions", "--json", "--jobs", "1", "--agent", "opencode",
         "--project", "no such project")
    _run(capsysbinary, "scan", "--json", "--jobs", "1", "ses_39b5d713cffe")
    assert _rows_of(database) == 2


def test_a_row_filled_by_the_scan_says_what_reading_the_session_said(home) -> None:  # type: ignore[no-untyped-def]
    # The lists' summaries once came from each session read whole (indexed): the scan's row
    # gives the same label, start, turns, empty turns, subagents, title, id and skipped.
    import dataclasses

    from replay.core.corpus.rows import summary_of
    from replay.core.corpus.scan import summarize
    from replay.core.corpus.tasks import scan_task
    from replay.core.detection.empty import DEFAULT_RULES
    from replay.core.discovery import discover
    from replay.core.readers import get_reader, read_entry

    rules = DEFAULT_RULES.with_options(missing_replies=True)
    options = (("missing_replies", True),)
    found = discover().sessions
    assert len(found) == 10
    for session in found:
        entry = session.entry
        assert session.format is not None
        read = summarize(read_entry(get_reader(session.format), entry, indexed=True), rules)
        result = scan_task(SessionTask(str(entry.path), session.format, entry, options))
        assert result.error is None and result.started is not None
        (report,) = result.reports
        assert summary_of(report, result.started[0], entry.path, entry.own_file) == \
            dataclasses.asdict(read), entry.path


def test_on_every_real_file_the_scan_s_summary_is_the_whole_read_s() -> None:
    import dataclasses

    from replay.core.corpus.rows import summary_of
    from replay.core.corpus.scan import summarize
    from replay.core.corpus.tasks import scan_task
    from replay.core.readers import ReaderError, detect_reader, read_entry
    from replay.core.readers.base import SessionEntry
    from tests.conftest import REALDATA

    checked = 0
    for path in sorted(REALDATA.rglob("*")):
        if not path.is_file() or path.name == "SOURCES.md":
            continue
        try:
            reader = detect_reader(path)
        except ReaderError:
            continue
        entry = SessionEntry(key=path.name, path=path, own_file=True, format=reader.name)
        result = scan_task(SessionTask(str(path), reader.name, entry))
        try:
            read = summarize(read_entry(reader, entry, indexed=True))
        except ReaderError:
            assert result.error is not None, path
            continue
        assert result.error is None and result.started is not None, path
        assert summary_of(result.reports[0], result.started[0], path, True) == \
            dataclasses.asdict(read), path.name
        checked += 1
    assert checked >= 20


def test_an_unchanged_folder_is_not_listed_again_and_a_change_under_it_is_seen(  # type: ignore[no-untyped-def]
        tmp_path, monkeypatch, capsysbinary) -> None:
    import shutil

    from replay.core.corpus import tasks
    from tests.conftest import SAMPLES

    listings: list[str] = []
    real = tasks.plan

    def listing(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        listings.append(str(source))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(tasks, "plan", listing)
    folder = tmp_path / "project"
    (folder / "deeper").mkdir(parents=True)
    shutil.copy(SAMPLES / "refactor.claude-code.jsonl", folder / "a.jsonl")
    shutil.copy(SAMPLES / "refactor.claude-code.jsonl", folder / "deeper" / "b.jsonl")
    _age(folder)
    os.utime(folder / "deeper", (OLD, OLD))
    first = _run(capsysbinary, "scan", "--json", "--jobs", "1", str(folder))
    assert listings and first.count(b"\n") == 2
    listings.clear()
    assert _run(capsysbinary, "scan", "--json", "--jobs", "1", str(folder)) == first
    assert listings == []
    # A file added deep down, one made unreadable: the folder is listed again, each seen.
    shutil.copy(SAMPLES / "refactor.claude-code.jsonl", folder / "deeper" / "c.jsonl")
    os.utime(folder / "deeper" / "c.jsonl", (OLD, OLD))
    os.utime(folder / "deeper", (OLD + 5, OLD + 5))
    third = _run(capsysbinary, "scan", "--json", "--jobs", "1", str(folder))
    assert listings and third.count(b"\n") == 3
    assert third == _run(capsysbinary, "scan", "--json", "--jobs", "1", "--no-cache",
                         str(folder))
