"""Issue 27, crashes and hangs: hostile records end one session's read, never a scan."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay.cli import main
from replay.core.corpus import pool
from replay.core.corpus import tasks as corpus
from replay.core.corpus.pool import WORKER_DIED, run_tasks
from replay.core.corpus.tasks import SessionTask, scan_task
from replay.core.readers import ReaderError, all_readers, load_sessions
from tests.conftest import REALDATA, SAMPLES

DEEP = "[" * 1000 + "]" * 1000


def _deep_claude(path: Path) -> Path:
    path.write_text('{"type":"user","sessionId":"s","x":' + DEEP
                    + ',"message":{"role":"user","content":"hi"}}\n', encoding="utf-8")
    return path


def _scan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict], str]:
    status = main(["scan", "--json", *args])
    out, err = capsys.readouterr()
    return status, [orjson.loads(line) for line in out.splitlines()], err


def test_a_deeply_nested_claude_code_record_is_a_warning_not_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, (report,), err = _scan(capsys, str(_deep_claude(tmp_path / "d.jsonl")))
    assert status == 0 and "Traceback" not in err
    assert report["skipped"] == 1 and report["warnings"] == ["line 1: nested too deeply to read"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_folder_scan_goes_past_a_deeply_nested_session(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: str) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    source = (SAMPLES / "refactor.claude-code.jsonl").read_bytes()
    for number in range(12):
        (folder / f"s{number:02d}.jsonl").write_bytes(source.replace(
            b'"sessionId":"', f'"sessionId":"{number:02d}-'.encode()))
    _deep_claude(folder / "s05.jsonl")
    status, reports, err = _scan(capsys, "--jobs", jobs, str(folder))
    assert "Traceback" not in err and len(reports) == 12


@pytest.mark.parametrize("reader", [r.name for r in all_readers() if r.name != "folder"])
def test_no_reader_raises_on_deep_nesting_in_a_real_file(tmp_path: Path, reader: str) -> None:
    """Every reader, given a real file of every format with a 1,000-deep value in a record."""
    sources = [p for p in sorted(REALDATA.rglob("*.json*")) if p.is_file()]
    sources += [p for p in sorted(SAMPLES.iterdir()) if p.suffix != ".md"]
    for source in sources:
        data = source.read_bytes()
        marker = b'"\\u0000deep"'
        try:
            value = json.loads(data)
            values, lines = [value], False
        except ValueError:
            values = [json.loads(line) for line in data.splitlines() if line.strip()]
            lines = True
        for record in values:
            if isinstance(record, dict):
                record["deep"] = "\u0000deep"
                for child in record.values():
                    if isinstance(child, list):
                        for item in child:
                            if isinstance(item, dict):
                                item["deep"] = "\u0000deep"
        text = (b"\n".join(json.dumps(v).encode() for v in values) if lines
                else json.dumps(values[0]).encode())
        path = tmp_path / source.name
        path.write_bytes(text.replace(marker, DEEP.encode()))
        try:
            load_sessions(path, reader)
        except ReaderError:
            pass
        scan_task(SessionTask(str(path), reader))  # a result, whatever it says


def test_an_unexpected_error_in_a_reader_is_that_sessions_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader's bug (or a MemoryError) is said as that file being unreadable; the other
    files of the scan are still read."""
    folder = tmp_path / "chats"
    folder.mkdir()
    for number in range(4):
        (folder / f"c{number}.json").write_text(json.dumps(
            {"id": f"conv-{number}", "messages": [{"role": "user", "content": "hi"}]}))
    def failing(real: Any) -> Any:
        def read(path: Any, *args: Any) -> Any:
            if Path(path).name == "c1.json":
                raise MemoryError
            if Path(path).name == "c2.json":
                raise KeyError("bug")
            return real(path, *args)
        return read

    # Both ways a file's sessions are read: whole, or fed record by record (chat JSON, whose
    # reader is found for its own file first).
    monkeypatch.setattr(corpus, "each_session", failing(corpus.each_session))
    monkeypatch.setattr(corpus, "_own_file", failing(corpus._own_file))
    status, reports, err = _scan(capsys, "--jobs", "1", str(folder))
    assert [r["session_id"] for r in reports] == ["conv-0", "conv-3"]
    assert status == 1 and "Traceback" not in err  # EXIT_SKIPPED
    assert "c1.json: could not be read (out of memory)" in err
    assert "c2.json: could not be read (KeyError: 'bug')" in err


def _chat_folder(tmp_path: Path, count: int) -> list[SessionTask]:
    folder = tmp_path / "corpus"
    folder.mkdir()
    tasks = []
    for number in range(count):
        path = folder / f"s{number:02d}.json"
        path.write_text(json.dumps({"id": f"conv-{number}", "messages": [
            {"role": "user", "content": f"task {number}"}, {"role": "assistant", "content": ""}]}))
        tasks.append(SessionTask(str(path), required=False))
    return tasks


def test_a_worker_killed_by_the_system_is_that_sessions_line_and_the_scan_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL (what the OOM killer sends) to the worker reading one session: that session
    is reported unreadable and every other is read, in order, as one job reads them."""
    tasks = _chat_folder(tmp_path, 40)
    parent = os.getpid()
    real = pool.scan_task

    def killing(task: SessionTask) -> Any:
        if task.source.endswith(("s07.json", "s31.json")) and os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(task)

    monkeypatch.setattr(pool, "scan_task", killing)  # the workers are forked: they see it
    with pool.local_pool(2) as started:
        results = list(run_tasks(tasks, 2, None, started))
    assert len(results) == 40
    read = [r.reports[0]["session_id"] if r.reports else None for r in results]
    assert read == [None if n in (7, 31) else f"conv-{n}" for n in range(40)]
    assert results[7].error == f"{tasks[7].source}: {WORKER_DIED}"
    assert results[31].error == f"{tasks[31].source}: {WORKER_DIED}"


class _CountingTurns(list):  # type: ignore[type-arg]
    """A turn list that counts the walks over it."""

    walks = 0

    def __iter__(self) -> Any:
        type(self).walks += 1
        return super().__iter__()


def test_empty_turn_evidence_walks_the_turns_once_not_once_per_empty_turn(
        tmp_path: Path) -> None:
    """3,000 messages, every third one empty: asking whether the session records completion
    times (the `no completion time` evidence) is one walk, not one per empty turn."""
    from replay.core.detection.empty import find_empty_turns

    messages = [{"role": "user" if n % 2 == 0 else "assistant",
                 "content": "" if n % 3 == 0 else f"message {n}"} for n in range(3000)]
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"id": "c", "messages": messages}))
    (session,) = load_sessions(path)
    session.turns = _CountingTurns(session.turns)
    found = find_empty_turns(session)
    assert len(found) == 1000
    assert _CountingTurns.walks <= 3


def _export(messages: list[dict[str, Any]]) -> bytes:
    return json.dumps({"info": {"id": "ses_bench", "title": "t"}, "messages": messages},
                      indent=1).encode()


def _message(number: int, role: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    info: dict[str, Any] = {"id": f"msg_{number:05d}", "role": role,
                            "time": {"created": 1771207970988 + number * 1000}}
    if role == "assistant":
        info["time"]["completed"] = info["time"]["created"] + 500
    return {"info": info, "parts": parts}


def test_the_suggester_reads_one_message_back_not_the_whole_export(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each empty turn's next-summary signal reads the long next reply back in full: from its
    own bytes, not by parsing the whole export again (item 3: 17 s on 7.5 MB)."""
    from replay.core.readers import base, opencode_export

    messages = []
    for number in range(0, 300, 3):
        messages += [
            _message(number, "user", [{"type": "text", "text": f"task {number}"}]),
            _message(number + 1, "assistant", []),
            _message(number + 2, "assistant",
                     [{"type": "text", "text": "## Summary\n" + "long words " * 600}]),
        ]
    path = tmp_path / "export.json"
    path.write_bytes(_export(messages))
    parsed: list[int] = []
    real = base.parse_document

    def counting(data: bytes) -> Any:
        parsed.append(len(data))
        return real(data)

    monkeypatch.setattr(base, "parse_document", counting)
    monkeypatch.setattr(opencode_export, "load_document",
                        lambda *a, **k: base.load_document(*a, **k))
    result = scan_task(SessionTask(str(path)))
    assert result.error is None
    (report,) = result.reports
    assert len(report["empty_turns"]) == 100
    assert parsed == []  # streamed once; every read-back was one message's bytes
    (session,) = load_sessions(path)
    long_turn = session.turns[2]
    assert long_turn.parts[0].shortened
    assert session.full_parts(long_turn)[0].text.endswith("long words ")


def test_an_opencode_run_of_one_message_id_over_many_events_reads_in_linear_time(
        tmp_path: Path) -> None:
    """50,000 text and tool events of one message (a hostile or very long run): each event
    costs the same, not more as the turn grows (820 s at 50 MB before)."""
    import time

    lines = []
    for number in range(25_000):
        part = {"id": f"prt_{number}", "messageID": "msg_1", "sessionID": "ses_1",
                "type": "text", "text": f"step {number}"}
        lines.append({"type": "text", "timestamp": 1771207970988 + number, "sessionID": "ses_1",
                      "part": part})
        call = {"id": f"prt_t{number}", "messageID": "msg_1", "sessionID": "ses_1",
                "type": "tool", "tool": "bash", "callID": f"call_{number}",
                "state": {"status": "completed", "input": {"command": "ls"}, "output": "ok"}}
        lines.append({"type": "tool_use", "timestamp": 1771207970988 + number,
                      "sessionID": "ses_1", "part": call})
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    started = time.perf_counter()
    (session,) = load_sessions(path)
    elapsed = time.perf_counter() - started
    assert len(session.turns) == 1 and len(session.turns[0].parts) == 50_000
    limit = 8.0 * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    assert elapsed < limit, elapsed


class _SlicingTurns(list):  # type: ignore[type-arg]
    """A turn list that counts the turns copied by slices of it."""

    copied = 0

    def __getitem__(self, key: Any) -> Any:
        found = super().__getitem__(key)
        if isinstance(key, slice):
            type(self).copied += len(found)
        return found


def test_the_run_end_evidence_does_not_copy_the_rest_of_the_session_per_empty_turn() -> None:
    """A trajectory's empty turns ask whether a step follows: walked from the turn, not a
    slice of every turn after it (22,561 turns: 0.6 s -> 2.9 s on doubling before)."""
    from replay.core.detection.empty import find_empty_turns
    from replay.core.session.model import Kind, Part, Session, Turn

    session = Session(path="run.traj", format="swe-agent")
    session.meta["exit_status"] = "submitted"
    for number in range(3000):
        role = "assistant" if number % 2 else "user"
        text = "" if number % 3 == 0 else f"step {number}"
        session.add(Turn(id=f"t{number}", role=role, parts=[Part(Kind.TEXT, text)]))
    session.turns = _SlicingTurns(session.turns)
    found = find_empty_turns(session)
    assert len(found) == 1000
    assert _SlicingTurns.copied < 60 * len(found)  # the look-ahead windows, not the rest
