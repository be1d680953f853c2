"""Discovery of every agent's sessions in its standard places, on homes built from the real
files of ../shared/realdata (nothing reads the home of the machine running the tests)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from replay.cli import main
from replay.core.discovery import discover, discovery_roots
from replay.core.discovery.resolve import AmbiguousSession, SessionNotFound, find_session
from tests.core.homes import CLAUDE_IDEAS, CODEX_CUT, GEMINI_CHAT, build_home, place

MAIN = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
TUI = "019e1625-789d-76c0-80ab-3724b5ddb799"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    built = build_home(tmp_path / "home")
    monkeypatch.setenv("HOME", str(built.root))
    return built


def by_id(env: dict[str, str] | None = None) -> dict[str, object]:
    return {s.session_id: s for s in discover(env).sessions}


def test_every_agent_is_found_in_its_standard_place(home) -> None:  # type: ignore[no-untyped-def]
    found = discover().sessions
    agents = sorted(s.agent for s in found)
    assert agents.count("claude-code") == 3  # the subagent file is its session's, not a row
    assert agents.count("codex") == 3  # archived_sessions included
    assert agents.count("opencode") == 3  # jolly-eagle is in the database and storage: once
    assert agents.count("gemini-cli") == 1
    assert all(s.problem is None for s in found)
    sessions = {s.session_id: s for s in found}
    main = sessions[MAIN]
    assert main.project == "-experiments/worktrees" and main.format == "claude-code"
    assert main.size == main.path.stat().st_size
    assert sessions[TUI].title == "plugin fixture review"  # the index's latest name
    assert sessions[TUI].project == "/Users/Sample_User/repos/codemie-ai/codemie-code"
    jolly = sessions["ses_39b5d713cffeRgAoxPIwS3Plus"]
    assert jolly.format == "opencode-db" and jolly.project == "/Users/alex/repos/vfp/dark-factory"
    assert sessions["ses_39b4c1891ffezxPVc5OPmcqF33"].format == "opencode-storage"
    gemini = next(s for s in found if s.agent == "gemini-cli")
    assert gemini.project == "/home/me/myproject"
    assert gemini.session_id == "5b959dae-8655-4cd1-b10f-720b8c336ea2"
    # Newest first.
    assert [s.newest for s in found] == sorted((s.newest for s in found), reverse=True)


def test_each_tool_override_variable_moves_its_place(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    built = build_home(tmp_path / "elsewhere")
    monkeypatch.setenv("HOME", str(tmp_path / "empty"))
    assert discover().sessions == []
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(built.root / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(built.codex_home))
    monkeypatch.setenv("XDG_DATA_HOME", str(built.data_home))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(built.root))
    found = discover()
    assert len(found.sessions) == 10
    assert "(from $CODEX_HOME)" in found.looked_in
    assert set(discovery_roots()) == {p.path for p in found.places}
    # Set but empty: each tool ignores it, and so does discovery.
    monkeypatch.setenv("CODEX_HOME", "")
    assert not any(s.agent == "codex" for s in discover().sessions)


def test_a_home_without_any_agent_folder_is_no_error(tmp_path: Path) -> None:
    found = discover({"HOME": str(tmp_path)})
    assert found.sessions == [] and len(found.places) == 5
    assert discovery_roots({"HOME": str(tmp_path)}) == []
    assert "~/.claude/projects" in found.looked_in or str(tmp_path) in found.looked_in


def test_unreadable_and_foreign_files_are_rows_with_their_reason(home) -> None:  # type: ignore[no-untyped-def]
    project = home.claude_projects / "-experiments-ideas"
    (project / "notes.jsonl").write_text('{"hello": "not a session"}\n')
    (project / "loop.jsonl").symlink_to(project / "loop.jsonl")
    day = home.codex_home / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    (day / "rollout-2026-11-30T10-00-00-019e0000-0000-7000-8000-000000000000.jsonl.zst"
     ).write_bytes(b"\x28\xb5\x2f\xfd")
    (home.data_home / "opencode" / "opencode-beta.db").write_bytes(b"not sqlite at all")
    found = discover().sessions
    problems = {s.path.name: s.problem for s in found if s.problem}
    assert "not a Claude Code session file" in problems["notes.jsonl"]
    assert "loop.jsonl" in problems
    assert "compressed rollout" in next(v for k, v in problems.items() if k.endswith(".zst"))
    assert "opencode-beta.db" in problems
    assert len([s for s in found if s.problem is None]) == 10


def test_gemini_old_and_new_files_subagents_and_hash_folders(home) -> None:  # type: ignore[no-untyped-def]
    chats = home.gemini_tmp / "myproject" / "chats"
    old = next(chats.glob("*.json"))
    # Resuming an old session migrates it to the same name + l: one session.
    migrated = old.with_name(old.name + "l")
    migrated.write_text(json.dumps({"sessionId": "5b959dae-8655-4cd1-b10f-720b8c336ea2",
                                    "projectHash": "x", "startTime": "2025-12-01T21:45:00Z"})
                        + "\n")
    sub = chats / "5b959dae-8655-4cd1-b10f-720b8c336ea2"
    sub.mkdir()
    (sub / "child.jsonl").write_text("{}\n")
    # An older, hash-named project folder, named by another agent's working folder.
    import hashlib

    folder = hashlib.sha256(b"/home/user/project").hexdigest()
    place(GEMINI_CHAT,
          home.gemini_tmp / folder / "chats" / "session-2025-12-02T10-00-aaaaaaaa.json")
    gemini = [s for s in discover().sessions if s.agent == "gemini-cli"]
    assert sorted(s.path.name for s in gemini) == [
        "session-2025-12-01T21-45-5b959dae.jsonl", "session-2025-12-02T10-00-aaaaaaaa.json"]
    assert {s.project for s in gemini} == {"/home/me/myproject", "/home/user/project"}


def test_an_id_or_a_unique_prefix_names_one_session(home) -> None:  # type: ignore[no-untyped-def]
    found = discover()
    assert find_session(MAIN, found.sessions, "").session_id == MAIN
    assert find_session("ef958a", found.sessions, "").session_id == MAIN
    assert find_session("ses_39b3d0", found.sessions, "").format == "opencode-db"
    with pytest.raises(AmbiguousSession, match="2 sessions .*019c8a70.*019c8a59"):
        find_session("019c8a", found.sessions, "")
    with pytest.raises(SessionNotFound, match="no session id starts with it"):
        find_session("zzzzzz", found.sessions, "")
    with pytest.raises(SessionNotFound):
        find_session("ef958", found.sessions, "")  # under 6 characters: no prefix


def run(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(arguments)
    out, err = capsys.readouterr()
    return status, out, err


def test_sessions_json_counts_come_from_the_scan(home, capsys) -> None:  # type: ignore[no-untyped-def]
    status, out, err = run(["sessions", "--json", "--jobs", "1"], capsys)
    assert status == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 10
    for field in ("agent", "format", "session_id", "path", "title", "project", "started",
                  "updated", "turns", "empty"):
        assert all(field in row for row in rows), field
    main_row = next(row for row in rows if row["session_id"] == MAIN)
    status, out, _ = run(["scan", "--json", "--jobs", "1", main_row["path"]], capsys)
    scanned = json.loads(out)
    assert (main_row["turns"], main_row["empty"]) == (scanned["turns"],
                                                      len(scanned["empty_turns"]))
    assert sum(row["empty"] for row in rows if row["agent"] == "opencode") == 4
    status, out, _ = run(["sessions", "--json", "--agent", "codex", "--project", "codemie"],
                         capsys)
    assert [json.loads(line)["session_id"] for line in out.splitlines()] == [TUI]
    status, out, _ = run(["sessions", "--json", "--since", "2026-02-16T00:00:00Z",
                          "--agent", "opencode"], capsys)
    assert len(out.splitlines()) == 3
    status, out, _ = run(["sessions", "--json", "--since", "2030-01-01"], capsys)
    assert out == "" and status == 0


def test_sessions_table_greys_an_unreadable_file(home, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COLUMNS", "200")
    project = home.claude_projects / "-experiments-ideas"
    (project / "notes.jsonl").write_text('{"hello": "[/] not a session"}\n')
    status, out, err = run(["sessions", "--jobs", "1"], capsys)
    assert status == 0 and "Traceback" not in err
    assert "unreadable: not a Claude Code session file" in out and "notes" in out
    assert "claude" in out and "codex" in out and "gemini" in out and "opencode" in out


def test_an_empty_home_lists_nothing_and_says_where_it_looked(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    status, out, err = run(["sessions"], capsys)
    assert status == 0 and out == ""
    assert "no sessions found" in err and ".claude/projects" in err


def test_every_path_taking_command_takes_an_id(home, capsys, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    status, by_path, _ = run(["scan", "--json", "--jobs", "1",
                              str(home.claude_projects / "-experiments-worktrees" /
                                  f"{MAIN}.jsonl")], capsys)
    status, by_prefix, _ = run(["scan", "--json", "--jobs", "1", "ef958aa1"], capsys)
    assert status == 0 and by_prefix == by_path
    # One session of a database: only that one is scanned.
    status, out, _ = run(["scan", "--json", "--jobs", "1", "ses_39b3d0"], capsys)
    assert [json.loads(line)["session_id"] for line in out.splitlines()] == [
        "ses_39b3d0892ffeaCoiaHPszzRI8d"]
    # label and export of one session of a database: that session, as if it were a file.
    status, out, err = run(["label", "ses_39b3d0", "--turn", "#27", "--label", "artifact"],
                           capsys)
    assert status == 0, err
    status, out, err = run(["export", "ses_39b3d0", "-o", "-"], capsys)
    assert status == 0, err
    assert "ses_39b3d0892ffeaCoiaHPszzRI8d" in out and ",artifact," in out
    assert "ses_39b5d713" not in out
    # share takes one session: a database session named by id is one.
    status, out, err = run(["share", "ses_39b3d0", "--as", "md", "-o", "-"], capsys)
    assert status == 0, err
    assert "DuckDB-backed core DB client plan" in out
    status, out, err = run(["export", "019c8a"], capsys)
    assert status == 2 and out == "" and len(err.splitlines()) == 1
    assert "019c8a70" in err and "019c8a59" in err
    status, out, err = run(["label", "zzzzzzzz", "--turn", "#1", "--label", "continue"], capsys)
    assert status == 2 and "no session id starts with it" in err
    # An existing path wins over an id.
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(home.claude_projects / "-experiments-ideas" /
                    "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl", tmp_path / "ef958aa1")
    status, out, _ = run(["scan", "--json", "--jobs", "1", "ef958aa1"], capsys)
    assert json.loads(out)["session_id"] == "03eb5929-52b3-4b13-ada3-b93ae35806b8"


def test_local_scans_every_discovered_session(home, capsys) -> None:  # type: ignore[no-untyped-def]
    status, out, err = run(["scan", "--local", "--json", "--jobs", "1"], capsys)
    assert status == 0, err
    ids = {json.loads(line)["session_id"] for line in out.splitlines()}
    assert len(ids) == 10 and MAIN in ids
    (home.claude_projects / "-experiments-ideas" / "bad.jsonl").write_text("not json\n")
    status, out, err = run(["report", "--local", "--jobs", "1"], capsys)
    assert status == 1 and "bad.jsonl" in err and "10" in out
    status, out, err = run(["review", "--local", "--json"], capsys)
    assert status == 0 and len(out.splitlines()) == 4  # the opencode empty turns


def test_scan_without_path_or_local_is_one_line(capsys) -> None:  # type: ignore[no-untyped-def]
    status, out, err = run(["scan"], capsys)
    assert status == 2 and "--local" in err and len(err.splitlines()) == 1


def test_discovery_never_reads_the_machine_home_in_tests() -> None:
    assert "home" in os.environ["HOME"]
    assert all(name not in os.environ for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR"))
    assert discover().sessions == []


def test_unused_helpers_are_real_files() -> None:
    for relative in (CLAUDE_IDEAS, CODEX_CUT):
        from tests.conftest import realdata

        assert realdata(relative).is_file()


def test_titles_and_projects_are_text_not_markup(home, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COLUMNS", "220")
    folder = home.claude_projects / "-tmp-x"
    folder.mkdir()
    record = {"type": "custom-title", "customTitle": "[/] [link=x]list[int] \x1b]0;pwned\x07",
              "sessionId": "abcdef12-0000-4000-8000-000000000000"}
    user = {"type": "user", "uuid": "u1", "sessionId": "abcdef12-0000-4000-8000-000000000000",
            "cwd": "/tmp/[bold]x\u202e", "timestamp": "2026-11-30T10:00:00Z",
            "message": {"role": "user", "content": "hello"}}
    (folder / "abcdef12-0000-4000-8000-000000000000.jsonl").write_text(
        json.dumps(record) + "\n" + json.dumps(user) + "\n")
    status, out, err = run(["sessions", "--jobs", "1", "--agent", "claude-code"], capsys)
    assert status == 0, err
    line = next(line for line in out.splitlines() if "abcdef12" in line)
    assert "[/] [link=x]list[int]" in line and "\x1b" not in line and "\x07" not in line
    assert "[bold]" in line and "\u202e" not in line and "<U+202E>" in line


def test_sessions_reads_an_unchanged_session_once_through_the_scan_cache(  # type: ignore[no-untyped-def]
        home, capsys, monkeypatch) -> None:
    import replay.core.discovery.counts as counts

    # The cache keeps no file written in the last seconds (it may still be growing).
    for path in home.root.rglob("*"):
        if path.is_file():
            os.utime(path, (1_700_000_000, 1_700_000_000))
    read: list[int] = []
    real = counts.scan_task

    def counting(task):  # type: ignore[no-untyped-def]
        read.append(1)
        return real(task)

    monkeypatch.setattr(counts, "scan_task", counting)
    status, first, err = run(["sessions", "--json", "--jobs", "1"], capsys)
    assert status == 0, err
    assert sum(read) == len(first.splitlines()) == 10
    status, second, _ = run(["sessions", "--json", "--jobs", "1"], capsys)
    assert second == first and sum(read) == 10  # nothing read again
    status, third, _ = run(["sessions", "--json", "--jobs", "1", "--no-cache"], capsys)
    assert third == first and sum(read) == 20
