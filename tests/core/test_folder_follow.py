"""FolderFollower: every session under a folder, new ones included, old ones left in peace.

Files are written the way the agents write them: a record per line, a reply's lines with
bookkeeping between them, a new file (or a new day's folder) appearing, a session ending.
A fake clock drives quiet times and stalls, so nothing waits.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay.core.live.folder import FolderFollower, FolderPoll
from tests.conftest import realdata
from tests.core.test_follow import (
    CODEX_META,
    SIDE_RECORDS,
    Clock,
    _append_bytes,
    _cc_line,
    _codex,
    _codex_prompt,
    _ended_claude,
    _write_json,
    user_line,
)

THINKING = {"type": "thinking", "thinking": "plan", "signature": "s"}
OLD = 1_700_000_000


def _empties(news: FolderPoll) -> list[tuple[str, str]]:
    return [(Path(item.key).name, empty.id) for item in news.updates
            for empty in item.update.new_empty]


def _stalls(news: FolderPoll) -> list[str]:
    return [Path(item.key).name for item in news.updates if item.update.stalled is not None]


def _old_project(tmp_path: Path) -> Path:
    """A project folder with an ended session, one left waiting for a reply long ago, and
    one holding an empty turn, all written long before watching begins."""
    project = tmp_path / "projects" / "-work-app"
    project.mkdir(parents=True)
    _ended_claude(project).rename(project / "ended.jsonl")
    (project / "waiting.jsonl").write_bytes(user_line(0, "are you there?"))
    (project / "had-empty.jsonl").write_bytes(
        user_line(0, "go") + _cc_line(1, "msg_1", {"type": "text", "text": ""}, "end_turn")
        + user_line(2, "and now?"))
    for file in project.iterdir():
        os.utime(file, (OLD, OLD))
    return project


def test_old_sessions_are_neither_stalled_nor_reported(tmp_path: Path) -> None:
    project = _old_project(tmp_path)
    clock = Clock()
    folder = FolderFollower([project.parent], clock=clock, stall=2)
    news = folder.poll()
    assert (news.updates, news.problems) == ([], [])
    clock.now += 10_000
    assert folder.tick().updates == [] and folder.poll().updates == []
    assert folder.followers() == []  # none of them was even read


def test_an_old_session_written_again_reports_only_what_is_new(tmp_path: Path) -> None:
    project = _old_project(tmp_path)
    clock = Clock()
    folder = FolderFollower([project], clock=clock, stall=5)
    folder.poll()
    target = project / "had-empty.jsonl"
    _append_bytes(target, _cc_line(3, "msg_3", THINKING, None))
    news = folder.poll([str(target)])
    assert _empties(news) == [] and news.updates[0].started is False
    assert news.updates[0].update.pending == 3
    _append_bytes(target, _cc_line(4, "msg_3", {"type": "text", "text": ""}, "end_turn"))
    news = folder.poll([str(target)])
    assert _empties(news) == [("had-empty.jsonl", "msg_3")]  # never the old msg_1
    session = news.updates[0].update.session
    assert session is not None and session.session_id and session.path == str(target)


def test_a_new_session_file_is_followed_from_its_first_line(tmp_path: Path) -> None:
    project = _old_project(tmp_path)
    clock = Clock()
    folder = FolderFollower([project.parent], clock=clock, stall=30)
    folder.poll()
    target = project / "new-session.jsonl"
    target.write_bytes(b"")
    assert folder.poll([str(target)]).updates == []  # nothing to judge yet
    _append_bytes(target, user_line(0, "hello"))
    news = folder.poll([str(target)])
    assert [item.started for item in news.updates] == [True]
    _append_bytes(target, _cc_line(1, "msg_1", THINKING, None))
    _append_bytes(target, orjson.dumps(SIDE_RECORDS["queue-operation"]) + b"\n")
    clock.now += 2
    news = folder.poll([str(target)])
    assert _empties(news) == [] and [item.started for item in news.updates] == [False]
    _append_bytes(target, _cc_line(3, "msg_1", {"type": "text", "text": " "}, "end_turn"))
    news = folder.poll(None)  # found by the idle walk as well as by an event
    assert _empties(news) == [("new-session.jsonl", "msg_1")]
    assert all(not item.update.retracted for item in news.updates)
    # It ended with a reply: the person is due, never a stall.
    clock.now += 10_000
    assert _stalls(folder.tick()) == []


def test_a_new_session_waiting_for_its_reply_stalls_since_its_last_write(
        tmp_path: Path) -> None:
    project = _old_project(tmp_path)
    clock = Clock()
    folder = FolderFollower([project], clock=clock, stall=30)
    folder.poll()
    target = project / "new.jsonl"
    target.write_bytes(user_line(0, "hello"))
    folder.poll([str(target)])
    clock.now += 29
    assert _stalls(folder.tick()) == []
    clock.now += 2
    news = folder.tick()
    assert _stalls(news) == ["new.jsonl"]
    stall = news.updates[0].update.stalled
    assert stall is not None and clock.now - stall.since == pytest.approx(31, abs=1)


def test_codex_day_folder_appearing(tmp_path: Path) -> None:
    sessions = tmp_path / ".codex-home" / "sessions"
    day = sessions / "2026" / "11" / "30"
    day.mkdir(parents=True)
    old = day / "rollout-2026-11-30T10-00-00-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    old.write_bytes(CODEX_META + _codex_prompt("hi"))
    os.utime(old, (OLD, OLD))
    clock = Clock()
    folder = FolderFollower([sessions], clock=clock, stall=2)
    assert folder.poll().updates == []
    new_day = sessions / "2026" / "12" / "01"
    new_day.mkdir(parents=True)
    target = new_day / "rollout-2026-12-01T00-00-01-019e1625-0000-76c0-80ab-3724b5ddb799.jsonl"
    target.write_bytes(CODEX_META + _codex_prompt("go"))
    news = folder.poll([str(new_day)])
    assert [Path(item.key).name for item in news.updates if item.started] == [target.name]
    _append_bytes(target, _codex("event_msg", {"type": "token_count", "info": None})
                  + _codex("response_item", {"type": "reasoning", "summary": []})
                  + _codex("event_msg", {"type": "task_complete", "last_agent_message": None}))
    news = folder.poll([str(target)])
    assert [empty.reason for item in news.updates for empty in item.update.new_empty] == [
        "reasoning-only"]
    clock.now += 10_000
    assert _stalls(folder.tick()) == []  # task complete: nothing due


def test_opencode_storage_new_session_is_followed(tmp_path: Path) -> None:
    root = tmp_path / "opencode" / "storage"
    created = 1_760_000_000_000

    def session(sid: str, n: int, role: str, parts: list[dict[str, Any]],
                completed: bool) -> None:
        _write_json(root / "session" / "prj_1" / f"{sid}.json",
                    {"id": sid, "time": {"created": created + (sid == "ses_new")}})
        time: dict[str, int] = {"created": created + n}
        if completed:
            time["completed"] = created + n + 1
        _write_json(root / "message" / sid / f"msg_{sid}_{n}.json",
                    {"id": f"msg_{sid}_{n}", "sessionID": sid, "role": role, "time": time})
        for k, part in enumerate(parts):
            _write_json(root / "part" / f"msg_{sid}_{n}" / f"prt_{n}_{k}.json",
                        {"id": f"prt_{n}_{k}", **part})

    session("ses_old", 0, "user", [{"type": "text", "text": "hi"}], False)
    session("ses_old", 1, "assistant", [{"type": "step-start"}], True)  # an old empty turn
    # Created at the same time, later by id: the newest when watching begins.
    session("ses_older", 0, "user", [{"type": "text", "text": "hello"}], False)
    clock = Clock()
    folder = FolderFollower([tmp_path / "opencode"], clock=clock, stall=2)
    assert _empties(folder.poll()) == []
    session("ses_new", 0, "user", [{"type": "text", "text": "go"}], False)
    session("ses_new", 1, "assistant", [{"type": "step-start"}], False)
    news = folder.poll([str(root / "message")])
    assert [item.key.rsplit("#", 1)[1] for item in news.updates if item.started] == ["ses_new"]
    assert _empties(news) == []
    session("ses_new", 1, "assistant", [{"type": "step-start"},
                                        {"type": "reasoning", "text": "hm"}], True)
    news = folder.poll([str(root / "part")])
    assert [e.id for item in news.updates for e in item.update.new_empty] == ["msg_ses_new_1"]
    clock.now += 10_000
    assert _stalls(folder.tick()) == []
    # An old session, not the newest, is continued: followed now, its old empty turn not told.
    assert all(not key.endswith("#ses_old") for key, _ in folder.followers())
    session("ses_old", 2, "user", [{"type": "text", "text": "and now?"}], False)
    session("ses_old", 3, "assistant", [{"type": "step-start"}], True)
    news = folder.poll([str(root / "message" / "ses_old")])
    assert [e.id for item in news.updates for e in item.update.new_empty] == ["msg_ses_old_3"]
    assert all(item.key.endswith("#ses_old") for item in news.updates)


def test_bad_input_is_one_line_and_following_goes_on(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    clock = Clock()
    folder = FolderFollower([project], clock=clock)
    folder.poll()
    first = project / "a.jsonl"
    first.write_bytes(user_line(0, "go"))
    folder.poll([str(first)])
    # Truncated and rewritten in place.
    first.write_bytes(user_line(0, "<local-command-stdout></local-command-stdout>"))
    news = folder.poll([str(first)])
    assert [line for line in news.problems if "truncated or replaced" in line] == [
        f"{first}: truncated or replaced; read again from its start"]
    assert _empties(news) == [("a.jsonl", "u-0")]
    # Not a transcript at all.
    junk = project / "notes.jsonl"
    junk.write_bytes(b'{"hello": "world"}\n')
    news = folder.poll([str(junk)])
    assert len(news.problems) == 1 and "notes.jsonl" in news.problems[0]
    assert folder.poll([str(junk)]).problems == []  # said once
    # A file that vanishes.
    first.unlink()
    news = folder.poll(None)
    assert news.problems == [f"{first}: gone (deleted or moved); the folder is still watched"]
    # A sub-folder that becomes unreadable, then readable again.
    if os.geteuid() != 0:
        locked = project / "locked"
        locked.mkdir()
        locked.chmod(0)
        try:
            news = folder.poll(None)
            assert [line for line in news.problems if "cannot be read" in line]
        finally:
            locked.chmod(0o755)
    # And the folder is still followed.
    later = project / "b.jsonl"
    later.write_bytes(user_line(0, "") + _cc_line(1, "msg_1", {"type": "text", "text": "ok"},
                                                  "end_turn"))
    assert _empties(folder.poll([str(later)])) == [("b.jsonl", "u-0")]


def test_from_start_reports_what_is_there(tmp_path: Path) -> None:
    project = _old_project(tmp_path)
    folder = FolderFollower([project], from_start=True, stall=2)
    news = folder.poll()
    assert ("had-empty.jsonl", "msg_1") in _empties(news)
    assert _stalls(news) == []  # old sessions, however silent


@pytest.mark.parametrize("when", ["there before", "read from the start", "appearing later"])
def test_fifty_finished_real_sessions_give_no_stall(tmp_path: Path, when: str) -> None:
    files = sorted(path for path in realdata("claude-code").glob("*.jsonl")
                   if path.stat().st_size)
    folder_path = tmp_path / "many"
    folder_path.mkdir()

    def copy_all() -> None:
        for n in range(50):
            shutil.copy(files[n % len(files)], folder_path / f"s{n:02d}.jsonl")

    if when != "appearing later":
        copy_all()
    clock = Clock()
    folder = FolderFollower([folder_path], clock=clock, stall=1,
                            from_start=when == "read from the start")
    news = folder.poll()
    if when == "appearing later":
        copy_all()
        news = folder.poll(None)
        assert len([item for item in news.updates if item.started]) == 50
    assert _stalls(news) == []
    clock.now += 3600
    assert _stalls(folder.tick()) == [] and _stalls(folder.poll()) == []


def test_opencode_database_in_a_followed_folder(tmp_path: Path) -> None:
    import sqlite3

    data = tmp_path / "opencode"
    data.mkdir()
    writer = sqlite3.connect(data / "opencode.db")
    writer.execute("PRAGMA journal_mode=WAL")
    writer.executescript(
        "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, slug TEXT, directory TEXT,"
        " title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER);"
        "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,"
        " time_updated INTEGER, data TEXT);"
        "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,"
        " time_created INTEGER, time_updated INTEGER, data TEXT);")
    created = 1_760_000_000_000

    def session(sid: str, n: int) -> None:
        writer.execute("INSERT INTO session VALUES (?, 'prj', 's', '/w', ?, '1.2', ?, ?)",
                       (sid, sid, created + n, created + n))
        writer.commit()

    def message(sid: str, n: int, role: str, parts: list[dict[str, Any]], *,
                completed: bool) -> None:
        time_info: dict[str, int] = {"created": created + n * 1000}
        if completed:
            time_info["completed"] = created + n * 1000 + 1
        writer.execute("INSERT OR REPLACE INTO message VALUES (?, ?, ?, ?, ?)",
                       (f"msg_{sid}_{n}", sid, created + n * 1000, created + n * 1000,
                        orjson.dumps({"role": role, "time": time_info}).decode()))
        for k, part in enumerate(parts):
            writer.execute("INSERT OR REPLACE INTO part VALUES (?, ?, ?, ?, ?, ?)",
                           (f"prt_{sid}_{n}_{k}", f"msg_{sid}_{n}", sid, created + n * 1000,
                            created + n * 1000, orjson.dumps(part).decode()))
        writer.commit()

    session("ses_a", 0)
    message("ses_a", 0, "user", [{"type": "text", "text": "hi"}], completed=False)
    message("ses_a", 1, "assistant", [{"type": "step-start"}], completed=True)  # old, empty
    clock = Clock()
    folder = FolderFollower([tmp_path], clock=clock, stall=2)
    assert _empties(folder.poll()) == []
    clock.now += 100
    assert _stalls(folder.tick()) == []
    session("ses_b", 5)
    message("ses_b", 5, "user", [{"type": "text", "text": "go"}], completed=False)
    message("ses_b", 6, "assistant", [{"type": "step-start"}], completed=False)
    news = folder.poll([str(data / "opencode.db-wal")])
    assert [item.key.rsplit("#", 1)[1] for item in news.updates if item.started] == ["ses_b"]
    assert _empties(news) == []
    message("ses_b", 6, "assistant", [{"type": "step-start"},
                                      {"type": "reasoning", "text": "hm"}], completed=True)
    news = folder.poll([str(data / "opencode.db-wal")])
    assert [e.id for item in news.updates for e in item.update.new_empty] == ["msg_ses_b_6"]
    clock.now += 1000
    assert _stalls(folder.tick()) == []
    writer.close()


def test_a_root_that_goes_away_and_comes_back(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    root.mkdir()
    folder = FolderFollower([root])
    folder.poll()
    first = root / "a.jsonl"
    first.write_bytes(user_line(0, "go"))
    folder.poll([str(first)])
    shutil.rmtree(root)
    news = folder.poll(None)
    assert news.problems == [f"{root}: not found; watching for it",
                             f"{first}: gone (deleted or moved); the folder is still watched"]
    assert folder.poll(None).problems == []  # said once
    root.mkdir()
    again = root / "b.jsonl"
    again.write_bytes(user_line(0, "") + user_line(1, "<local-command-stdout>x"
                                                    "</local-command-stdout>"))
    news = folder.poll(None)
    assert news.problems == [f"{root}: there again; watching it"]
    assert _empties(news) == [("b.jsonl", "u-0")]


def test_several_roots_as_discovery_gives_them(tmp_path: Path) -> None:
    claude = tmp_path / ".claude" / "projects"
    codex = tmp_path / ".codex" / "sessions"
    (claude / "-work").mkdir(parents=True)
    codex.mkdir(parents=True)
    missing = tmp_path / ".gemini" / "tmp"
    folder = FolderFollower([claude, codex, missing], stall=2)
    assert folder.poll().problems == [f"{missing}: not found; watching for it"]
    first = claude / "-work" / "a.jsonl"
    first.write_bytes(user_line(0, "") + user_line(1, "<local-command-stdout>x"
                                                    "</local-command-stdout>"))
    day = codex / "2026" / "12" / "01"
    day.mkdir(parents=True)
    second = day / "rollout-2026-12-01T00-00-01-019e1625-0000-76c0-80ab-3724b5ddb799.jsonl"
    second.write_bytes(CODEX_META + _codex_prompt("go")
                       + _codex("response_item", {"type": "reasoning", "summary": []})
                       + _codex("event_msg", {"type": "task_complete",
                                              "last_agent_message": None}))
    news = folder.poll([str(first), str(codex / "2026")])
    assert sorted(item.key for item in news.updates if item.started) == sorted(
        [str(first), str(second)])
    assert sorted(Path(item.key).name for item in news.updates
                  for _empty in item.update.new_empty) == sorted([first.name, second.name])


def test_fifos_links_and_loops_are_said_once_and_never_block(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    folder = FolderFollower([project])
    folder.poll()
    os.mkfifo(project / "pipe.jsonl")  # opening it for reading would block for ever
    (project / "loop.jsonl").symlink_to("loop.jsonl")
    (project / "dangling.jsonl").symlink_to(tmp_path / "nowhere")
    (project / "sub").mkdir()
    (project / "sub" / "up").symlink_to("..")  # a link to a parent folder: never walked
    (project / "linked.jsonl").symlink_to(project / "sub")
    target = project / "real.jsonl"
    target.write_bytes(user_line(0, "") + user_line(1, "<local-command-stdout>x"
                                                    "</local-command-stdout>"))
    (project / "alias.jsonl").symlink_to(target)  # a link to a session file is followed
    news = folder.poll([str(project / "pipe.jsonl"), str(target)])
    walked = folder.poll(None)
    news.problems += walked.problems
    news.updates += walked.updates
    assert sorted(line.split(":")[0] for line in news.problems) == [
        f"skipped {project / name}" for name in ("dangling.jsonl", "loop.jsonl", "pipe.jsonl")]
    assert "not a regular file" in next(line for line in news.problems if "pipe" in line)
    assert sorted(_empties(news)) == [("alias.jsonl", "u-0"), ("real.jsonl", "u-0")]
    assert folder.poll(None).problems == []


def test_an_older_opencode_database_session_continued_is_followed(tmp_path: Path) -> None:
    """`opencode -c` on a session of the database that is not the newest: followed from its
    new message on, its old empty turn not told (as a storage tree's is)."""
    import sqlite3

    data = tmp_path / "opencode"
    data.mkdir()
    writer = sqlite3.connect(data / "opencode.db")
    writer.execute("PRAGMA journal_mode=WAL")
    writer.executescript(
        "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, slug TEXT, directory TEXT,"
        " title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER);"
        "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,"
        " time_updated INTEGER, data TEXT);"
        "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,"
        " time_created INTEGER, time_updated INTEGER, data TEXT);")
    created = 1_760_000_000_000

    def message(sid: str, n: int, role: str, parts: list[dict[str, Any]], *,
                completed: bool) -> None:
        time_info: dict[str, int] = {"created": created + n * 1000}
        if completed:
            time_info["completed"] = created + n * 1000 + 1
        writer.execute("INSERT OR REPLACE INTO message VALUES (?, ?, ?, ?, ?)",
                       (f"msg_{sid}_{n}", sid, created + n * 1000, created + n * 1000,
                        orjson.dumps({"role": role, "time": time_info}).decode()))
        for k, part in enumerate(parts):
            writer.execute("INSERT OR REPLACE INTO part VALUES (?, ?, ?, ?, ?, ?)",
                           (f"prt_{sid}_{n}_{k}", f"msg_{sid}_{n}", sid, created + n * 1000,
                            created + n * 1000, orjson.dumps(part).decode()))
        writer.commit()

    for number, sid in enumerate(("ses_old", "ses_newest")):
        writer.execute("INSERT INTO session VALUES (?, 'prj', 's', '/w', ?, '1.2', ?, ?)",
                       (sid, sid, created + number, created + number))
    message("ses_old", 0, "user", [{"type": "text", "text": "hi [/] list[int]"}],
            completed=False)
    message("ses_old", 1, "assistant", [{"type": "step-start"}], completed=True)  # old, empty
    message("ses_newest", 2, "user", [{"type": "text", "text": "hello"}], completed=False)
    message("ses_newest", 3, "assistant", [{"type": "text", "text": "hi"}], completed=True)
    clock = Clock()
    folder = FolderFollower([tmp_path], clock=clock, stall=2)
    assert _empties(folder.poll()) == []
    assert all(not key.endswith("#ses_old") for key, _ in folder.followers())
    message("ses_old", 10, "user", [{"type": "text", "text": "and now?"}], completed=False)
    message("ses_old", 11, "assistant", [{"type": "step-start"}], completed=True)
    news = folder.poll([str(data / "opencode.db-wal")])
    assert [e.id for item in news.updates for e in item.update.new_empty] == ["msg_ses_old_11"]
    assert all(item.key.endswith("#ses_old") for item in news.updates)
    assert any(key.endswith("#ses_old") for key, _ in folder.followers())
    clock.now += 10_000
    assert _stalls(folder.tick()) == []  # its reply completed: nothing due
    writer.close()
