"""Big Claude Code project folders: listed and read session by session in linear time, with
the loose subagent files of the older layout grouped once per folder, not once per session."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from replay.core.readers import detect_reader, read_entry
from replay.core.readers.claude_code import READER, subagent_files

OTHER = Path(__file__).resolve().parents[2] / "sample_sessions" / "deploy-pivot.opencode.json"


def _session_id(number: int) -> str:
    return f"{number:08x}-0000-4000-a000-{number:012x}"


def _lines(session_id: str, number: int, agent: str | None = None) -> bytes:
    records = []
    for step in range(4):
        record: dict[str, object] = {
            "type": "user" if step % 2 == 0 else "assistant", "sessionId": session_id,
            "uuid": f"{session_id}-{agent or 'main'}-{step}", "parentUuid": None,
            "timestamp": f"2026-03-01T10:{number % 60:02d}:{step:02d}.000Z",
            "message": {"role": "user" if step % 2 == 0 else "assistant",
                        "content": f"turn {step} of {number}"}}
        if agent is not None:
            record["agentId"] = agent
        records.append(orjson.dumps(record))
    return b"\n".join(records) + b"\n"


def _project(folder: Path, sessions: int) -> Path:
    """A project folder; every fifth session has a loose `agent-*.jsonl` beside it."""
    folder.mkdir()
    for number in range(sessions):
        session_id = _session_id(number)
        (folder / f"{session_id}.jsonl").write_bytes(_lines(session_id, number))
        if number % 5 == 0:
            agent = f"{number:07x}"
            (folder / f"agent-{agent}.jsonl").write_bytes(_lines(session_id, number, agent))
    # A folder nobody is writing to: its listing may be reused (see _SETTLED_NS).
    past = time.time() - 60
    os.utime(folder, (past, past))
    return folder


def _read_every_session(folder: Path) -> int:
    """What `replay scan FOLDER` and the session list do: list, then read each session."""
    reader = detect_reader(folder)
    assert reader.list_sessions is not None
    entries = reader.list_sessions(folder)
    assert entries is not None
    sidechains = 0
    for entry in entries:
        sidechains += len(read_entry(reader, entry).sidechains)
    return sidechains


def _best_seconds(action: Callable[[], object]) -> float:
    best = float("inf")  # CPU seconds: waiting for other processes is not counted
    for _ in range(5):  # the best of five: other processes on the machine only add time
        start = time.process_time()
        action()
        best = min(best, time.process_time() - start)
    return best


def test_a_project_folder_reads_in_linear_time(tmp_path: Path) -> None:
    n = 60
    small, large = _project(tmp_path / "small", n), _project(tmp_path / "large", 4 * n)
    assert _read_every_session(small) == n // 5
    assert _read_every_session(large) == 4 * n // 5
    # The old reader listed and stat'ed the folder again for each session: 4x the files
    # took about 12x the time at these sizes, and 16x as they grow.
    ratio = _best_seconds(lambda: _read_every_session(large)) / _best_seconds(
        lambda: _read_every_session(small))
    assert ratio < 7


def test_a_mixed_folder_reads_in_linear_time(tmp_path: Path) -> None:
    n = 40
    small, large = _project(tmp_path / "small", n), _project(tmp_path / "large", 4 * n)
    for folder in (small, large):
        # A file of another format makes it the folder reader's, which detects each file.
        (folder / "other.opencode.json").write_bytes(OTHER.read_bytes())
        past = time.time() - 60
        os.utime(folder, (past, past))
        assert detect_reader(folder).name == "folder"
    ratio = _best_seconds(lambda: _read_every_session(large)) / _best_seconds(
        lambda: _read_every_session(small))
    assert ratio < 7


def test_a_loose_agent_file_added_later_is_found(tmp_path: Path) -> None:
    folder = _project(tmp_path / "p", 3)
    session = folder / f"{_session_id(1)}.jsonl"
    assert subagent_files(session) == []
    (folder / "agent-late.jsonl").write_bytes(_lines(_session_id(1), 1, "late"))
    assert subagent_files(session) == [folder / "agent-late.jsonl"]


def test_an_agent_file_empty_when_listed_is_looked_at_again(tmp_path: Path) -> None:
    folder = _project(tmp_path / "p", 3)
    late = folder / "agent-late.jsonl"
    late.write_bytes(b"")
    past = time.time() - 60
    os.utime(folder, (past, past))
    session = folder / f"{_session_id(2)}.jsonl"
    assert subagent_files(session) == []
    late.write_bytes(_lines(_session_id(2), 2, "late"))  # written: the folder's time stays
    os.utime(folder, (past, past))
    assert subagent_files(session) == [late]
    assert len(READER.read(session, None)[0].sidechains) == 1
