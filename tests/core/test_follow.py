"""SessionFollower: every turn once, in order, through partial lines, rewrites and replacement.

Every test ends with the same check: the turn ids seen while following (after applying
resets) are those of a fresh `load_sessions` of the final content, and the empty turns
reported while following are those a fresh `find_empty_turns` finds.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay.core.detection.empty import find_empty_turns
from replay.core.live.follow import FollowUpdate, SessionFollower
from replay.core.readers import UnknownFormat, load_sessions
from replay.core.session.model import Session
from tests.conftest import realdata

WRITER = Path(__file__).with_name("writer_proc.py")
SESSION_ID = "5b1c7a52-3f0e-4f6b-9d0c-2a4e8f1d7c11"


class FollowLog:
    """What a follower reported, with resets applied, as a viewer would keep it."""

    def __init__(self, follower: SessionFollower) -> None:
        self.follower = follower
        self.ids: list[str] = []
        self.empty_ids: list[str] = []
        self.resets = 0
        self.dropped = 0
        self.changed = 0
        self.sidechain_updates = 0

    def poll(self) -> FollowUpdate:
        return self.apply(self.follower.poll())

    def settle(self) -> FollowUpdate:
        return self.apply(self.follower.settle())

    def apply(self, update: FollowUpdate) -> FollowUpdate:
        if update.reset:
            self.resets += 1
            self.ids = []
        if update.dropped:
            self.dropped += update.dropped
            del self.ids[len(self.ids) - update.dropped :]
        self.ids.extend(turn.id for turn in update.new_turns)
        self.empty_ids.extend(empty.id for empty in update.new_empty)
        self.changed += len(update.changed)
        self.sidechain_updates += update.sidechains_changed
        return update

    def check_against_fresh_load(self, path: Path, *, empties: bool = True) -> Session:
        """The no-gaps-no-duplicates check."""
        fresh = load_sessions(path)[-1]
        assert self.ids == [turn.id for turn in fresh.turns]
        assert len(set(self.empty_ids)) == len(self.empty_ids)
        if empties:
            assert self.empty_ids == [empty.id for empty in find_empty_turns(fresh)]
        return fresh


# -- Claude Code records, built here ------------------------------------------------------------

def _stamp(n: int) -> str:
    return f"2026-03-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"


def _record(kind: str, uuid: str, n: int, message: dict[str, Any], **extra: Any) -> bytes:
    record = {"parentUuid": None, "isSidechain": False, "type": kind, "sessionId": SESSION_ID,
              "version": "2.1.42", "cwd": "/work", "uuid": uuid, "timestamp": _stamp(n),
              "message": message, **extra}
    return orjson.dumps(record) + b"\n"


def user_line(n: int, content: Any, **extra: Any) -> bytes:
    return _record("user", f"u-{n}", n, {"role": "user", "content": content}, **extra)


def assistant_lines(n: int, blocks: list[dict[str, Any]]) -> list[bytes]:
    """One API response written as one line per block, as Claude Code does."""
    return [
        _record("assistant", f"a-{n}-{k}", n, {"id": f"msg_{n}", "role": "assistant",
                                               "model": "claude-test", "content": [block]})
        for k, block in enumerate(blocks)
    ]


def claude_session(exchanges: int, seed: int) -> tuple[bytes, int]:
    """A session with tool calls, multi-line replies, events and some empty turns.

    Returns the bytes and the number of empty turns built in (the last turn is never empty,
    so a follower that waits for completion can report them all).
    """
    generator = random.Random(seed)
    lines: list[bytes] = []
    empty = 0
    for n in range(exchanges):
        shape = generator.random()
        if shape < 0.12:
            lines.append(user_line(n, "<local-command-stdout></local-command-stdout>"))
            empty += 1
        else:
            words = " ".join(generator.choice(["déjà", "vu", "naïve", "🙂", "go", "on"])
                             for _ in range(generator.randrange(1, 40)))
            lines.append(user_line(n, f"request {n}: {words}"))
        thinking = "x" * generator.randrange(0, 500)
        blocks: list[dict[str, Any]] = [{"type": "thinking", "thinking": thinking,
                                         "signature": "sig"}]
        if generator.random() < 0.1 and n < exchanges - 1:
            empty += 1  # thinking only: an empty assistant turn
        else:
            if generator.random() < 0.4:
                call = f"toolu_{n}"
                blocks.append({"type": "tool_use", "id": call, "name": "Bash",
                               "input": {"command": f"ls {n}"}})
                lines.extend(assistant_lines(n, blocks))
                lines.append(user_line(10_000 + n, [{"type": "tool_result", "tool_use_id": call,
                                                     "content": f"file-{n}\nžluťoučký"}]))
                blocks = []
                lines.extend(assistant_lines(20_000 + n, [{"type": "text", "text": f"done {n}"}]))
            else:
                answer = f"answer {n} " + "y" * generator.randrange(1, 300)
                blocks.append({"type": "text", "text": answer})
        if blocks:
            lines.extend(assistant_lines(n, blocks))
        if generator.random() < 0.2:
            lines.append(orjson.dumps({"type": "system", "subtype": "turn_duration",
                                       "sessionId": SESSION_ID, "uuid": f"s-{n}",
                                       "timestamp": _stamp(n)}) + b"\n")
    return b"".join(lines), empty


def follow_until(log: FollowLog, process: subprocess.Popen[bytes]) -> int:
    """Poll while the writer runs, then once more; returns the number of polls."""
    polls = 0
    while process.poll() is None:
        log.poll()
        polls += 1
    assert process.returncode == 0
    log.poll()
    return polls + 1


def run_writer(source: bytes, target: Path, tmp_path: Path, seed: int,
               max_chunk: int = 400) -> subprocess.Popen[bytes]:
    source_file = tmp_path / f"source-{seed}.bin"
    source_file.write_bytes(source)
    return subprocess.Popen([sys.executable, str(WRITER), str(source_file), str(target),
                             "--seed", str(seed), "--max-chunk", str(max_chunk),
                             "--max-pause-ms", "3"])


# -- tests --------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_writer_in_random_chunks_is_followed_without_gaps_or_duplicates(
    tmp_path: Path, seed: int
) -> None:
    data, built_empty = claude_session(120, seed)
    target = tmp_path / f"{SESSION_ID}.jsonl"
    target.write_bytes(b"")
    log = FollowLog(SessionFollower(target))
    polls = follow_until(log, run_writer(data, target, tmp_path, seed))
    assert polls > 10  # the follower really saw the file grow
    fresh = log.check_against_fresh_load(target)
    assert len(log.empty_ids) == built_empty
    assert log.resets == 0
    assert len(fresh.turns) == len(log.ids)
    assert log.follower.session is not None
    assert log.follower.session.session_id == SESSION_ID


def test_reply_growing_over_lines_changes_its_turn(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(user_line(0, "hello"))
    log = FollowLog(SessionFollower(target))
    assert [t.id for t in log.poll().new_turns] == ["u-0"]
    thinking, text, call = assistant_lines(0, [
        {"type": "thinking", "thinking": "hmm", "signature": "s"},
        {"type": "text", "text": "hi there"},
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}},
    ])
    with open(target, "ab") as handle:
        handle.write(thinking + text[:20])
    update = log.poll()
    assert [t.id for t in update.new_turns] == ["msg_0"]
    assert update.new_empty == []  # thinking only so far, but not complete
    with open(target, "ab") as handle:
        handle.write(text[20:])
    update = log.poll()
    assert (update.new_turns, update.changed) == ([], [1])
    with open(target, "ab") as handle:
        handle.write(call + user_line(1, [{"type": "tool_result", "tool_use_id": "toolu_1",
                                           "content": "contents"}]))
    update = log.poll()
    assert (update.new_turns, update.changed) == ([], [1])  # a tool result joins its call
    assert update.session is not None
    assert update.session.turns[1].parts[-1].output == "contents"
    log.check_against_fresh_load(target)


def test_empty_turn_is_reported_once_when_complete(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(user_line(0, "start") + b"".join(assistant_lines(0, [
        {"type": "text", "text": "ok"}])))
    log = FollowLog(SessionFollower(target))
    log.poll()
    with open(target, "ab") as handle:
        handle.write(user_line(1, "<local-command-stdout></local-command-stdout>"))
    # A Claude Code user line is complete the moment it is written.
    update = log.poll()
    assert [(e.id, e.index, e.reason) for e in update.new_empty] == [("u-1", 2, "empty-wrapper")]
    with open(target, "ab") as handle:
        handle.write(b"".join(assistant_lines(1, [{"type": "text", "text": "\n\n"}])))
    update = log.poll()
    assert (update.new_empty, update.pending) == ([], 3)  # msg_1 may still grow
    with open(target, "ab") as handle:
        handle.write(b"".join(assistant_lines(1, [{"type": "text", "text": "now words"}])))
    update = log.poll()
    # msg_1 started blank and gained text while it was the last turn: never reported.
    assert (update.new_empty, update.changed) == ([], [3])
    with open(target, "ab") as handle:
        handle.write(user_line(2, "thanks"))
    assert log.poll().new_empty == []
    assert log.settle().has_news is False
    assert log.poll().has_news is False
    log.check_against_fresh_load(target)


def test_settle_reports_an_empty_last_turn(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(user_line(0, "start") + b"".join(assistant_lines(0, [
        {"type": "thinking", "thinking": "hm", "signature": "s"}])))
    follower = SessionFollower(target)
    assert follower.poll().new_empty == []  # the last turn: maybe still being written
    assert [e.id for e in follower.settle().new_empty] == ["msg_0"]
    assert follower.settle().new_empty == []


def test_truncate_and_rewrite_resets(tmp_path: Path) -> None:
    first, _ = claude_session(30, 11)
    second, _ = claude_session(45, 12)
    target = tmp_path / "s.jsonl"
    target.write_bytes(first)
    log = FollowLog(SessionFollower(target))
    log.poll()
    assert len(log.ids) == len(load_sessions(target)[0].turns)
    with open(target, "r+b") as handle:
        handle.truncate(0)
        handle.write(second[: len(second) // 2])
    update = log.poll()
    assert update.reset is True
    assert update.changed == []
    with open(target, "ab") as handle:
        handle.write(second[len(second) // 2 :])
    assert log.poll().reset is False
    assert log.resets == 1
    log.check_against_fresh_load(target, empties=False)


def test_shrinking_rewrite_resets(tmp_path: Path) -> None:
    data, _ = claude_session(30, 21)
    target = tmp_path / "s.jsonl"
    target.write_bytes(data)
    log = FollowLog(SessionFollower(target))
    log.poll()
    lines = data.splitlines(keepends=True)
    target.write_bytes(b"".join(lines[:5]))
    assert log.poll().reset is True
    log.check_against_fresh_load(target, empties=False)


def test_replace_by_rename_resets_and_keeps_following(tmp_path: Path) -> None:
    data, _ = claude_session(40, 31)
    lines = data.splitlines(keepends=True)
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"".join(lines[:30]))
    log = FollowLog(SessionFollower(target))
    log.poll()
    temporary = tmp_path / "s.jsonl.tmp"
    temporary.write_bytes(b"".join(lines[:60]))
    os.replace(temporary, target)
    update = log.poll()
    assert update.reset is True
    with open(target, "ab") as handle:
        handle.write(b"".join(lines[60:]))
    assert log.poll().reset is False
    assert log.resets == 1
    log.check_against_fresh_load(target, empties=False)
    # Empty turns already reported before the replace are not reported again.
    assert len(set(log.empty_ids)) == len(log.empty_ids)


def test_file_that_appears_later_and_empty_file(tmp_path: Path) -> None:
    target = tmp_path / "later.jsonl"
    follower = SessionFollower(target)
    assert follower.poll().session is None
    target.write_bytes(b"")
    assert follower.poll().session is None
    target.write_bytes(user_line(0, "hi")[:30])  # a first line still being written
    assert follower.poll().session is None
    with open(target, "ab") as handle:
        handle.write(user_line(0, "hi")[30:])
    assert [t.id for t in follower.poll().new_turns] == ["u-0"]
    assert follower.reader is not None and follower.reader.name == "claude-code"


def test_unknown_content_raises_a_clean_error(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_bytes(b"just some notes\nnothing more\n")
    with pytest.raises(UnknownFormat):
        SessionFollower(target).poll()


def test_subagent_file_appearing_is_attached(tmp_path: Path) -> None:
    main_source = realdata("claude-code/claude-code-log__test_data__real_projects__"
                           "-experiments-worktrees__ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl")
    agent_source = realdata("claude-code/claude-code-log__test_data__real_projects__"
                            "-experiments-worktrees__ef958aa1-0e93-49f0-bb71-150f63befcd1"
                            "__subagents__agent-a36efb2a1231c41e2.jsonl")
    main_lines = main_source.read_bytes().splitlines(keepends=True)
    agent_lines = agent_source.read_bytes().splitlines(keepends=True)
    target = tmp_path / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    target.write_bytes(b"".join(main_lines[:40]))
    log = FollowLog(SessionFollower(target))
    log.poll()
    assert log.follower.session is not None and log.follower.session.sidechains == []
    agent_dir = tmp_path / "ef958aa1-0e93-49f0-bb71-150f63befcd1" / "subagents"
    agent_dir.mkdir(parents=True)
    shutil.copyfile(agent_source.with_name(agent_source.name.replace(".jsonl", ".meta.json")),
                    agent_dir / "agent-a36efb2a1231c41e2.meta.json")
    agent_file = agent_dir / "agent-a36efb2a1231c41e2.jsonl"
    agent_file.write_bytes(b"".join(agent_lines[:5]))
    update = log.poll()
    assert update.sidechains_changed is True
    assert len(update.session.sidechains) == 1 if update.session else False
    with open(agent_file, "ab") as handle:
        handle.write(b"".join(agent_lines[5:]))
    with open(target, "ab") as handle:
        handle.write(b"".join(main_lines[40:]))
    assert log.poll().sidechains_changed is True
    assert log.poll().sidechains_changed is False
    fresh = log.check_against_fresh_load(target)
    followed = log.follower.session
    assert followed is not None
    assert [s.path for s in followed.sidechains] == [s.path for s in fresh.sidechains]
    assert len(fresh.sidechains) == 1
    assert [t.id for t in followed.sidechains[0].turns] == [t.id for t in fresh.sidechains[0].turns]
    assert followed.sidechains[0].parent_call == fresh.sidechains[0].parent_call
    assert followed.sidechains[0].parent_call is not None
    assert followed.sidechains[0].title == "Round 2: alice comparison"
    assert followed.session_id == fresh.session_id


# -- whole-document formats ---------------------------------------------------------------------

OPENCODE_EXPORT = ("opencode/dark-factory__docs__chats__opencode__session__silent-panda__"
                   "ses_39b3d0892ffeaCoiaHPszzRI8d.json")


def test_opencode_export_rewritten_as_it_grows(tmp_path: Path) -> None:
    document = orjson.loads(realdata(OPENCODE_EXPORT).read_bytes())
    messages = document["messages"]
    target = tmp_path / "export.json"

    def write(count: int, *, drop_completion: bool = False) -> None:
        shown = [dict(m) for m in messages[:count]]
        if drop_completion and shown and shown[-1]["info"].get("role") == "assistant":
            info = dict(shown[-1]["info"])
            info["time"] = {k: v for k, v in info.get("time", {}).items() if k != "completed"}
            shown[-1] = {"info": info, "parts": shown[-1]["parts"][:1]}
        temporary = tmp_path / "export.tmp"
        temporary.write_bytes(orjson.dumps({**document, "messages": shown},
                                           option=orjson.OPT_INDENT_2))
        os.replace(temporary, target)

    write(10)
    log = FollowLog(SessionFollower(target))
    log.poll()
    assert len(log.ids) == 10
    changed_seen = 0
    for count in range(11, len(messages) + 1):
        write(count, drop_completion=True)  # the last message still streaming
        log.poll()
        write(count)  # then complete
        update = log.poll()
        changed_seen += len(update.changed)
    assert log.resets == 0
    assert changed_seen > 0
    # The export ends with a reply still in flight (no completion time, nothing after it):
    # not complete, so reported only when the caller settles.
    assert len(log.empty_ids) == 2
    last = messages[-1]["info"]["id"]
    assert last not in log.empty_ids
    assert [empty.id for empty in log.settle().new_empty] == [last]
    fresh = log.check_against_fresh_load(target)
    assert len(fresh.turns) == 64


def test_half_written_document_is_retried(tmp_path: Path) -> None:
    source = realdata(OPENCODE_EXPORT).read_bytes()
    target = tmp_path / "export.json"
    target.write_bytes(source)
    log = FollowLog(SessionFollower(target))
    log.poll()
    target.write_bytes(source[: len(source) // 2])
    update = log.poll()
    assert (update.new_turns, update.reset) == ([], False)
    assert log.follower.last_error is not None
    target.write_bytes(source)
    assert log.poll().has_news is False
    assert log.follower.last_error is None
    log.settle()  # the in-flight last reply
    log.check_against_fresh_load(target)


def _write_json(path: Path, value: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name("." + path.name + ".tmp")
    temporary.write_bytes(orjson.dumps(value))
    os.replace(temporary, path)


def test_opencode_storage_gaining_messages_and_parts(tmp_path: Path) -> None:
    root = tmp_path / "storage"
    session_id = "ses_follow1"
    _write_json(root / "session" / "prj_1" / f"{session_id}.json",
                {"id": session_id, "title": "followed", "time": {"created": 1_760_000_000_000}})
    (root / "message" / session_id).mkdir(parents=True)
    (root / "part").mkdir()

    def message(n: int, role: str, *, completed: bool) -> None:
        time: dict[str, int] = {"created": 1_760_000_000_000 + n * 1000}
        if completed:
            time["completed"] = time["created"] + 500
        _write_json(root / "message" / session_id / f"msg_{n:04d}.json",
                    {"id": f"msg_{n:04d}", "sessionID": session_id, "role": role, "time": time})

    def part(n: int, k: int, kind: str, text: str = "") -> None:
        _write_json(root / "part" / f"msg_{n:04d}" / f"prt_{n:04d}_{k}.json",
                    {"id": f"prt_{n:04d}_{k}", "type": kind, "text": text})

    log = FollowLog(SessionFollower(root))
    log.poll()
    assert log.ids == []
    expected_empty = []
    for n in range(0, 24, 2):
        message(n, "user", completed=False)
        part(n, 0, "text", "" if n % 8 == 4 else f"prompt {n}")
        if n % 8 == 4:
            expected_empty.append(f"msg_{n:04d}")
        log.poll()
        message(n + 1, "assistant", completed=False)
        part(n + 1, 0, "step-start")
        update = log.poll()
        # The user turn is complete once a reply exists; the reply is still in flight.
        assert [e.id for e in update.new_empty] == ([f"msg_{n:04d}"] if n % 8 == 4 else [])
        if n % 6 == 0:
            part(n + 1, 1, "reasoning", "thinking")  # no visible text: an empty reply
            expected_empty.append(f"msg_{n + 1:04d}")
        else:
            part(n + 1, 1, "text", f"reply {n}")
        message(n + 1, "assistant", completed=True)
        update = log.poll()
        assert update.changed == [n + 1]
    assert log.resets == 0
    fresh = log.check_against_fresh_load(root)
    assert fresh.session_id == session_id
    assert len(fresh.turns) == 24
    assert log.empty_ids == expected_empty



def test_opencode_storage_changes_of_other_sessions_are_not_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.readers import opencode_storage

    root = tmp_path / "storage"
    for number, session_id in enumerate(("ses_old", "ses_new")):
        _write_json(root / "session" / "prj_1" / f"{session_id}.json",
                    {"id": session_id, "time": {"created": 1_760_000_000_000 + number}})
        _write_json(root / "message" / session_id / f"msg_{session_id}.json",
                    {"role": "user", "time": {"created": 1_760_000_000_000 + number}})
        _write_json(root / "part" / f"msg_{session_id}" / "prt_1.json",
                    {"type": "text", "text": f"hello from {session_id}"})
    reads: list[str] = []
    session = opencode_storage._session

    def counting(root: Path, session_id: str, session_file: Path | None) -> Any:
        reads.append(session_id)
        return session(root, session_id, session_file)

    monkeypatch.setattr(opencode_storage, "_session", counting)
    follower = SessionFollower(root)
    assert follower.poll().session.session_id == "ses_new"  # type: ignore[union-attr]
    reads.clear()
    _write_json(root / "part" / "msg_ses_old" / "prt_2.json", {"type": "text", "text": "more"})
    _write_json(root / "message" / "ses_old" / "msg_2.json", {"role": "user"})
    assert not follower.poll().has_news and reads == []
    _write_json(root / "part" / "msg_ses_new" / "prt_2.json", {"type": "text", "text": "more"})
    update = follower.poll()
    assert reads == ["ses_new"] and update.changed == [0]

# -- generic chat JSON lines --------------------------------------------------------------------

def chat_session(exchanges: int, seed: int) -> tuple[bytes, int]:
    """OpenAI-style messages, one per line, with reasoning items, tool messages and empty replies.

    Reasoning items come on their own line before the step they belong to, so a poll that
    lands between them sees a provisional reasoning-only turn that the step then takes over.
    """
    generator = random.Random(seed)
    records: list[dict[str, Any]] = []
    empty = 0
    for n in range(exchanges):
        if generator.random() < 0.1:
            records.append({"role": "user", "content": "   ", "session_id": "chat-1"})
            empty += 1
        else:
            question = f"ask {n} ünïcödé " + "z" * generator.randrange(200)
            records.append({"role": "user", "content": question, "session_id": "chat-1"})
        if generator.random() < 0.5:
            records.append({"type": "reasoning", "summary": [{"type": "summary_text",
                                                              "text": f"thinking about {n}"}]})
        shape = generator.random()
        if shape < 0.3:
            call = f"call_{n}"
            records.append({"role": "assistant", "content": None, "id": f"a{n}",
                            "tool_calls": [{"id": call, "type": "function",
                                            "function": {"name": "ls", "arguments": "{}"}}]})
            records.append({"role": "tool", "tool_call_id": call, "content": f"out {n}"})
            records.append({"role": "assistant", "content": f"after tool {n}", "id": f"b{n}"})
        elif shape < 0.4 and n < exchanges - 1:
            records.append({"role": "assistant", "content": "", "id": f"a{n}"})
            empty += 1
        else:
            records.append({"role": "assistant", "content": f"reply {n}", "id": f"a{n}"})
    return b"".join(orjson.dumps(record) + b"\n" for record in records), empty


@pytest.mark.parametrize("seed", [4, 5])
def test_chat_jsonl_writer_is_followed_without_gaps_or_duplicates(
    tmp_path: Path, seed: int
) -> None:
    data, built_empty = chat_session(150, seed)
    target = tmp_path / "chat.jsonl"
    # The first record is written whole, so the format is known from the first look.
    first_line = data.index(b"\n") + 1
    target.write_bytes(data[:first_line])
    log = FollowLog(SessionFollower(target))
    log.poll()
    follow_until(log, run_writer(data[first_line:], target, tmp_path, seed, max_chunk=120))
    fresh = log.check_against_fresh_load(target)
    assert log.follower.reader is not None and log.follower.reader.name == "chat-jsonl"
    assert fresh.session_id == "chat-1"
    assert len(log.empty_ids) == built_empty
    assert log.resets == 0


def test_provisional_reasoning_turn_is_dropped_not_reset(tmp_path: Path) -> None:
    target = tmp_path / "chat.jsonl"
    lines = [orjson.dumps(record) + b"\n" for record in (
        {"role": "user", "content": "hi"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hmm"}]},
        {"role": "assistant", "content": "hello", "id": "r1"},
    )]
    target.write_bytes(lines[0] + lines[1])
    log = FollowLog(SessionFollower(target))
    update = log.poll()
    assert [t.id for t in update.new_turns] == ["m0", "m1"]  # the reasoning, provisionally
    with open(target, "ab") as handle:
        handle.write(lines[2])
    update = log.poll()
    assert (update.reset, update.dropped, [t.id for t in update.new_turns]) == (False, 1, ["r1"])
    assert update.new_empty == []
    log.check_against_fresh_load(target)


# -- every real line-based transcript, appended in random chunks --------------------------------

REAL_LINE_FILES = [
    "claude-code/claude-code-log__test_data__real_projects__-experiments-ideas__"
    "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl",
    "claude-code/claude-code-log__test_data__real_projects__-Users-dain-workspace-JSSoundRecorder__"
    "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",
    "claude-code/claude-code-log__test_data__real_projects__-Users-dain-workspace-claude-code-log-"
    "sample__fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl",
    "claude-code/codemie-code__tests__integration__session__fixtures__session-9eda1058.jsonl",
    "claude-code/claude-code-log__test_data__edge_cases.jsonl",
    "codex/codemie-code__src__agents__plugins__codex____tests____fixtures__rollout-2026-05-11T11-"
    "26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
    "codex/localpush__src-tauri__tests__fixtures__codex__2026-02-23__raw__sessions__rollout-2026-"
    "02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
    "codex/localpush__src-tauri__tests__fixtures__codex__2026-02-23__raw__sessions__rollout-2026-"
    "02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
]


@pytest.mark.parametrize("relative", REAL_LINE_FILES, ids=lambda r: r.split("__")[-1][:40])
def test_real_file_appended_in_random_chunks(tmp_path: Path, relative: str) -> None:
    data = realdata(relative).read_bytes()
    target = tmp_path / Path(relative).name
    generator = random.Random(len(data))
    first_line = data.index(b"\n") + 1
    target.write_bytes(data[:first_line])
    log = FollowLog(SessionFollower(target))
    log.poll()
    written = first_line
    while written < len(data):
        step = generator.randrange(1, 3000)
        with open(target, "ab") as handle:
            handle.write(data[written : written + step])
        written += step
        log.poll()
    fresh = load_sessions(target)[0]
    log.settle()  # the writer is done: judge the last turn, take a last line with no newline
    log.check_against_fresh_load(target)
    assert log.resets == 0
    followed = log.follower.session
    assert followed is not None
    assert followed.skipped == fresh.skipped
    assert followed.events == fresh.events


def test_document_still_being_written_is_waited_for(tmp_path: Path) -> None:
    source = realdata(OPENCODE_EXPORT).read_bytes()
    target = tmp_path / "export.json"
    target.write_bytes(source[:300])  # `opencode export > file` caught early
    follower = SessionFollower(target)
    assert follower.poll().session is None
    target.write_bytes(source)
    update = follower.poll()
    assert len(update.new_turns) == 64
    assert follower.reader is not None and follower.reader.name == "opencode"


def test_conversation_per_line_file_is_followed_as_a_document(tmp_path: Path) -> None:
    target = tmp_path / "data.jsonl"
    rows = [{"id": f"c{n}", "messages": [{"role": "user", "content": f"q{n}"},
                                         {"role": "assistant", "content": "" if n == 1 else "a"}]}
            for n in range(3)]
    target.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows[:2]))
    log = FollowLog(SessionFollower(target))
    assert log.poll().session is not None
    assert log.follower.session is not None and log.follower.session.session_id == "c1"
    with open(target, "ab") as handle:
        handle.write(orjson.dumps(rows[2]) + b"\n")
    log.poll()
    # The newest conversation stays the followed one until asked otherwise.
    assert log.follower.session.session_id == "c1"
    assert log.ids == ["m0", "m1"]
    assert [e.id for e in log.settle().new_empty] == ["m1"]


# -- the watchfiles wake-up loop (replay.watching, outside the core) ------------------------------

def test_watch_plan_for_files_directories_and_subagents(tmp_path: Path) -> None:
    from replay.watching import plan_watch

    session = tmp_path / f"{SESSION_ID}.jsonl"
    session.write_bytes(b"")
    plan = plan_watch(session)
    assert (plan.roots, plan.recursive) == ((str(tmp_path),), False)
    subagents = tmp_path / SESSION_ID / "subagents"
    assert plan.accepts(None, str(session))
    assert plan.accepts(None, str(tmp_path / SESSION_ID))  # the folder appearing re-plans
    assert plan.accepts(None, str(tmp_path / "agent-abc.jsonl"))
    assert not plan.accepts(None, str(tmp_path / "other-session.jsonl"))
    subagents.mkdir(parents=True)
    later = plan_watch(session)
    assert later.recursive is True and later != plan
    assert later.accepts(None, str(subagents / "agent-1.jsonl"))
    database = tmp_path / "opencode.db"
    database.write_bytes(b"")
    assert plan_watch(database).accepts(None, f"{database}-wal")
    assert plan_watch(tmp_path).recursive is True


async def test_follow_async_delivers_updates_and_stops(tmp_path: Path) -> None:
    import asyncio

    from replay.watching import follow_async

    target = tmp_path / f"{SESSION_ID}.jsonl"
    target.write_bytes(user_line(0, "hello"))
    follower = SessionFollower(target)
    follower.poll()
    updates: asyncio.Queue[FollowUpdate] = asyncio.Queue()
    stop = asyncio.Event()
    task = asyncio.create_task(follow_async(follower, updates.put_nowait, stop))
    ids: list[str] = []
    empties: list[str] = []
    probe = 0
    while not empties:  # the watcher starts a moment after the task: write until it sees one
        probe += 1
        with open(target, "ab") as handle:
            handle.write(user_line(100 + 2 * probe, "") + user_line(101 + 2 * probe, "ping"))
        try:
            update = await asyncio.wait_for(updates.get(), timeout=3)
        except TimeoutError:
            assert probe < 5, "follow_async never delivered an update"
            continue
        ids += [turn.id for turn in update.new_turns]
        empties += [empty.id for empty in update.new_empty]
    stop.set()
    await asyncio.wait_for(task, timeout=10)
    updates.put_nowait(follower.poll())  # whatever the last wake-up had not seen yet
    while not updates.empty():
        update = updates.get_nowait()
        ids += [turn.id for turn in update.new_turns]
        empties += [empty.id for empty in update.new_empty]
    fresh = load_sessions(target)[0]
    assert ["u-0", *ids] == [turn.id for turn in fresh.turns]
    assert empties == [empty.id for empty in find_empty_turns(fresh)]
    assert empties[0] == "u-102"


def test_opencode_storage_session_file_sees_its_messages(tmp_path: Path) -> None:
    root = tmp_path / "storage"
    session_file = root / "session" / "prj_1" / "ses_one.json"
    _write_json(session_file, {"id": "ses_one", "time": {"created": 1_760_000_000_000}})
    _write_json(root / "message" / "ses_one" / "msg_0001.json",
                {"id": "msg_0001", "role": "user", "time": {"created": 1_760_000_001_000}})
    _write_json(root / "part" / "msg_0001" / "prt_1.json", {"id": "prt_1", "type": "text",
                                                            "text": "hi"})
    log = FollowLog(SessionFollower(session_file))
    log.poll()
    assert log.ids == ["msg_0001"]
    _write_json(root / "message" / "ses_one" / "msg_0002.json",
                {"id": "msg_0002", "role": "assistant",
                 "time": {"created": 1_760_000_002_000, "completed": 1_760_000_003_000}})
    update = log.poll()
    assert [t.id for t in update.new_turns] == ["msg_0002"]
    assert [e.id for e in update.new_empty] == ["msg_0002"]  # completed, with no parts at all
    log.check_against_fresh_load(session_file)


def test_opencode_database_in_wal_mode_gaining_rows(tmp_path: Path) -> None:
    import sqlite3

    database = tmp_path / "opencode.db"
    writer = sqlite3.connect(database)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.executescript(
        "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, slug TEXT, directory TEXT,"
        " title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER);"
        "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,"
        " time_updated INTEGER, data TEXT);"
        "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,"
        " time_created INTEGER, time_updated INTEGER, data TEXT);")
    created = 1_760_000_000_000
    writer.execute("INSERT INTO session VALUES ('ses_db', 'prj', 's', '/w', 'db', '1.2', ?, ?)",
                   (created, created))
    writer.commit()

    def add(n: int, role: str, parts: list[dict[str, Any]], *, completed: bool = True) -> None:
        time_info = {"created": created + n * 1000}
        if completed and role == "assistant":
            time_info["completed"] = created + n * 1000 + 500
        data = orjson.dumps({"role": role, "time": time_info}).decode()
        writer.execute("INSERT OR REPLACE INTO message VALUES (?, 'ses_db', ?, ?, ?)",
                       (f"msg_{n:04d}", created + n * 1000, created + n * 1000, data))
        for k, part in enumerate(parts):
            writer.execute("INSERT OR REPLACE INTO part VALUES (?, ?, 'ses_db', ?, ?, ?)",
                           (f"prt_{n:04d}_{k}", f"msg_{n:04d}", created + n * 1000,
                            created + n * 1000, orjson.dumps(part).decode()))
        writer.commit()

    add(0, "user", [{"type": "text", "text": "hello"}])
    log = FollowLog(SessionFollower(database))
    log.poll()
    assert log.ids == ["msg_0000"]
    add(1, "assistant", [{"type": "step-start"}], completed=False)
    update = log.poll()
    assert ([t.id for t in update.new_turns], update.new_empty) == (["msg_0001"], [])
    add(1, "assistant", [{"type": "step-start"}, {"type": "reasoning", "text": "hm"}])
    update = log.poll()
    assert update.changed == [1]
    assert [e.id for e in update.new_empty] == ["msg_0001"]  # its reply ended with nothing shown
    add(2, "user", [{"type": "text", "text": "and?"}])
    add(3, "assistant", [{"type": "text", "text": "here"}])
    assert [t.id for t in log.poll().new_turns] == ["msg_0002", "msg_0003"]
    assert log.follower.reader is not None and log.follower.reader.name == "opencode-db"
    log.check_against_fresh_load(database)
    writer.close()


def test_session_asked_for_by_id_is_waited_for(tmp_path: Path) -> None:
    target = tmp_path / "data.jsonl"
    row = {"id": "c0", "messages": [{"role": "user", "content": "q"},
                                    {"role": "assistant", "content": "a"}]}
    target.write_bytes(orjson.dumps(row) + b"\n")
    follower = SessionFollower(target, session_id="c1")
    assert follower.poll().session is None
    with open(target, "ab") as handle:
        handle.write(orjson.dumps({**row, "id": "c1"}) + b"\n")
    update = follower.poll()
    # One line was also a JSON document (chat-json); the second line shows what it really is.
    assert follower.reader is not None and follower.reader.name == "chat-jsonl"
    assert update.session is not None and update.session.session_id == "c1"
    assert [t.id for t in update.new_turns] == ["m0", "m1"]


# -- completeness by format, stalls, retractions (a fake clock: no waiting) -------------------

class Clock:
    """Epoch seconds that move only when told to."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def _cc_line(n: int, message_id: str, block: dict[str, Any], stop: str | None) -> bytes:
    return _record("assistant", f"a-{n}", n, {"id": message_id, "role": "assistant",
                                               "model": "claude-test", "content": [block],
                                               "stop_reason": stop})


def _append_bytes(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def test_claude_code_stop_reasons_complete_a_reply_only_when_they_fit(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    thinking = {"type": "thinking", "thinking": "", "signature": "s"}
    # Older versions copy the final stop reason onto every line, the thinking line too.
    target.write_bytes(user_line(0, "go") + _cc_line(1, "msg_1", thinking, "tool_use"))
    clock = Clock()
    follower = SessionFollower(target, clock=clock)
    update = follower.poll()
    assert (update.new_empty, update.pending) == ([], 1)
    clock.now += 3600  # however long the pause
    assert follower.tick().new_empty == []
    _append_bytes(target, _cc_line(2, "msg_1", {"type": "tool_use", "id": "t1", "name": "Bash",
                                                "input": {}}, "tool_use"))
    update = follower.poll()
    assert (update.new_empty, update.pending) == ([], None)  # complete, and not empty
    # A thinking-only message that ends with end_turn on a later, non-thinking line.
    _append_bytes(target, user_line(3, "and?") + _cc_line(4, "msg_2", thinking, None))
    assert follower.poll().pending == 3
    _append_bytes(target, _cc_line(5, "msg_2", {"type": "text", "text": " "}, "end_turn"))
    update = follower.poll()
    assert [(e.id, e.reason) for e in update.new_empty] == [("msg_2", "reasoning-only")]
    assert update.pending is None


def test_stall_waits_for_the_threshold_and_a_write_resumes(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(user_line(0, "hello"))
    clock = Clock()
    follower = SessionFollower(target, clock=clock, stall=300)
    assert follower.poll().stalled is None
    clock.now = follower.last_write + 299.9
    assert follower.tick().stalled is None
    clock.now += 0.1
    update = follower.tick()
    assert update.stalled is not None and update.stalled.turn.id == "u-0"
    assert update.stalled.since == follower.last_write
    clock.now += 60
    assert follower.tick().has_news is False  # one stalled event per silence
    _append_bytes(target, b"".join(assistant_lines(1, [{"type": "text", "text": "Hi."}])))
    clock.now += 1
    update = follower.poll()
    assert update.resumed is not None
    assert (update.resumed.turn.id, update.resumed.duration) == ("u-0", 361.0)
    clock.now += 10_000  # a finished reply: the person is due, not the agent
    assert follower.tick().stalled is None and follower.stalled is None


def test_a_session_already_silent_when_following_starts_is_stalled_at_once(
    tmp_path: Path
) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(user_line(0, "hello"))
    os.utime(target, (1_000_000_000, 1_000_000_000))
    update = SessionFollower(target, stall=300).poll()
    assert update.stalled is not None and update.stalled.since == 1_000_000_000


def test_settle_completes_a_user_message_of_a_multi_record_format(tmp_path: Path) -> None:
    target = tmp_path / "chat.jsonl"
    target.write_bytes(b'{"role": "user", "content": "hi"}\n'
                       b'{"role": "assistant", "content": "Hello."}\n'
                       b'{"role": "user", "content": ""}\n')
    clock = Clock()
    follower = SessionFollower(target, clock=clock, settle=0.3)
    update = follower.poll()
    assert (update.new_empty, update.pending) == ([], 2)
    clock.now = follower.last_write + 0.29
    assert follower.tick().new_empty == []
    clock.now = follower.last_write + 0.31
    update = follower.tick()
    assert [e.index for e in update.new_empty] == [2] and update.completed


def test_a_turn_reported_empty_that_grows_content_is_retracted(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(user_line(0, "go") + _cc_line(1, "msg_1", {"type": "text", "text": ""},
                                                     "end_turn"))
    follower = SessionFollower(target)
    assert [e.id for e in follower.poll().new_empty] == ["msg_1"]
    _append_bytes(target, _cc_line(2, "msg_1", {"type": "text", "text": "words"}, "end_turn"))
    update = follower.poll()
    assert [(r.id, r.index) for r in update.retracted] == [("msg_1", 1)]
    assert update.new_empty == [] and follower.poll().retracted == []


# -- bookkeeping completes nothing; a session that ended never stalls (#20) ------------------

SIDE_RECORDS: dict[str, dict[str, Any]] = {
    "queue-operation": {"type": "queue-operation", "operation": "enqueue",
                        "timestamp": _stamp(2), "sessionId": SESSION_ID, "content": "and tests"},
    "attachment": {"type": "attachment", "uuid": "att-1", "timestamp": _stamp(2),
                   "sessionId": SESSION_ID, "attachment": {"type": "todo", "content": []}},
    "progress": {"type": "progress", "uuid": "p-1", "timestamp": _stamp(2),
                 "sessionId": SESSION_ID, "data": {"type": "hook_progress"}},
    "file-history-snapshot": {"type": "file-history-snapshot", "messageId": "m",
                              "snapshot": {"trackedFileBackups": {}}},
    "system": {"type": "system", "subtype": "stop_hook_summary", "uuid": "s-1",
               "timestamp": _stamp(2), "sessionId": SESSION_ID},
}


@pytest.mark.parametrize("side", sorted(SIDE_RECORDS))
def test_bookkeeping_between_a_replys_lines_completes_nothing(tmp_path: Path, side: str) -> None:
    target = tmp_path / "s.jsonl"
    thinking = {"type": "thinking", "thinking": "plan", "signature": "s"}
    target.write_bytes(user_line(0, "go") + _cc_line(1, "msg_1", thinking, None))
    clock = Clock()
    follower = SessionFollower(target, clock=clock)
    assert follower.poll().pending == 1
    _append_bytes(target, orjson.dumps(SIDE_RECORDS[side]) + b"\n")
    clock.now += 2
    update = follower.poll()
    assert (update.new_empty, update.retracted, update.pending) == ([], [], 1)
    assert follower.tick().new_empty == []
    _append_bytes(target, _cc_line(3, "msg_1", {"type": "text", "text": "Done."}, "end_turn"))
    clock.now += 2
    update = follower.poll()
    assert (update.new_empty, update.retracted, update.pending) == ([], [], None)
    # The next message does complete it, bookkeeping or not.
    _append_bytes(target, orjson.dumps(SIDE_RECORDS[side]) + b"\n" + user_line(4, "thanks"))
    assert follower.poll().new_empty == []


def _codex(kind: str, payload: dict[str, Any]) -> bytes:
    return orjson.dumps({"timestamp": "2026-05-11T08:27:17.490Z", "type": kind,
                         "payload": payload}) + b"\n"


CODEX_META = _codex("session_meta", {"id": "019e1625-789d-76c0-80ab-3724b5ddb799",
                                     "timestamp": "2026-05-11T08:26:55.042Z", "cwd": "/w",
                                     "originator": "codex_cli_rs", "cli_version": "0.125.0"})


def _codex_prompt(text: str) -> bytes:
    return _codex("response_item", {"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": text}]})


def test_codex_token_counts_complete_no_prompt(tmp_path: Path) -> None:
    target = tmp_path / "rollout-2026-05-11T08-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    target.write_bytes(CODEX_META + _codex_prompt(""))
    clock = Clock()
    follower = SessionFollower(target, clock=clock, settle=5)
    assert follower.poll().pending == 0
    _append_bytes(target, _codex("event_msg", {"type": "token_count", "info": None})
                  + _codex("turn_context", {"cwd": "/w"}))
    assert follower.poll().pending == 0  # bookkeeping: the prompt's second copy may follow
    _append_bytes(target, _codex("response_item", {"type": "reasoning", "summary": []}))
    update = follower.poll()
    assert update.pending == 1 and [e.index for e in update.new_empty] == [0]


def _ended_claude(tmp_path: Path) -> Path:
    target = tmp_path / "ended.jsonl"
    target.write_bytes(
        user_line(0, "go")
        + _cc_line(1, "msg_1", {"type": "text", "text": "Done."}, "end_turn")
        + user_line(2, "<local-command-caveat>Caveat: generated by local commands."
                       "</local-command-caveat>", isMeta=True)
        + user_line(3, "<command-name>/exit</command-name>\n<command-message>exit"
                       "</command-message>\n<command-args></command-args>")
        + user_line(4, "<local-command-stdout>See ya!</local-command-stdout>"))
    os.utime(target, (1_000_000_000, 1_000_000_000))
    return target


def test_a_session_that_ended_with_exit_never_stalls(tmp_path: Path) -> None:
    target = _ended_claude(tmp_path)
    clock = Clock()
    follower = SessionFollower(target, clock=clock, stall=2)
    assert follower.poll().stalled is None
    clock.now += 10_000
    assert follower.tick().stalled is None and follower.stalled is None
    # `/exit` alone (its output not written yet) ends it too.
    lines = target.read_bytes().splitlines(keepends=True)
    target.write_bytes(b"".join(lines[:-1]))
    assert SessionFollower(target, stall=2).poll().stalled is None


@pytest.mark.parametrize("last", ["end_turn", "codex task_complete", "opencode completed"])
def test_a_final_reply_waits_for_the_person_not_a_stall(tmp_path: Path, last: str) -> None:
    if last == "end_turn":
        target = tmp_path / "s.jsonl"
        thinking = {"type": "thinking", "thinking": "done", "signature": "s"}
        target.write_bytes(user_line(0, "go") + _cc_line(1, "msg_1", thinking, None)
                           + _cc_line(2, "msg_1", {"type": "text", "text": ""}, "end_turn"))
    elif last == "codex task_complete":
        target = tmp_path / "rollout-2026-05-11T08-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
        target.write_bytes(CODEX_META + _codex_prompt("go")
                           + _codex("event_msg", {"type": "user_message", "message": "go"})
                           + _codex("response_item", {"type": "reasoning", "summary": []})
                           + _codex("event_msg", {"type": "task_complete",
                                                  "last_agent_message": None}))
    else:
        target = tmp_path / "export.json"
        _write_json(target, {"info": {"id": "ses_1", "time": {"created": 1, "updated": 2}},
                             "messages": [
            {"info": {"id": "msg_1", "role": "user", "sessionID": "ses_1",
                      "time": {"created": 1}},
             "parts": [{"id": "p1", "type": "text", "text": "go"}]},
            {"info": {"id": "msg_2", "role": "assistant", "sessionID": "ses_1",
                      "time": {"created": 2, "completed": 3}},
             "parts": [{"id": "p2", "type": "step-start"}]}]})
    os.utime(target, (1_000_000_000, 1_000_000_000))
    clock = Clock()
    follower = SessionFollower(target, clock=clock, stall=2)
    update = follower.poll()
    assert update.session is not None and update.stalled is None
    clock.now += 10_000
    assert follower.tick().stalled is None


def test_stall_since_is_the_last_write_not_when_following_began(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(user_line(0, "go"))
    os.utime(target, (1_700_000_000, 1_700_000_000))
    clock = Clock()
    follower = SessionFollower(target, clock=clock, stall=300)
    update = follower.poll()
    assert update.stalled is not None and update.stalled.since == 1_700_000_000
