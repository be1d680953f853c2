"""mini-swe-agent trajectories, Aider histories and opencode databases in bounded memory: the
scan keeps a window of turns (`Reader.stream`, `scan_stream`) and reports exactly what a
scan of the whole session reports; the app's compact index (`Reader.read_indexed`) reads
back the turns the full reader makes, and finds what a search of them finds."""

from __future__ import annotations

import dataclasses
import json
import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from replay.core.corpus import scan as scan_module
from replay.core.corpus.scan import LOOK_AHEAD, LOOK_BACK, scan_session, scan_stream
from replay.core.corpus.tasks import SessionTask, scan_task
from replay.core.detection.empty import DEFAULT_RULES, is_stop
from replay.core.index.navigation import Navigator
from replay.core.index.turn_index import TurnIndex
from replay.core.readers import detect_reader, load_sessions, mini_swe_agent
from replay.core.session.model import Session, Turn
from replay.core.suggest import default_suggester

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "sample_sessions" / "paginate-fix.mini-swe-agent.traj.json"
RULES = (DEFAULT_RULES,
         DEFAULT_RULES.with_options(tool_only_is_empty=True, missing_replies=True))


# ---------------------------------------------------------------- files

_STEPS = [
    "THOUGHT: look around.\n\n```bash\nls -la /testbed\n```",
    "THOUGHT: read it.\n\n```sh\ncat /testbed/a.py\n```",
    "",
    "THOUGHT: no command this time, just thinking about list[int] and [/] [link=x].",
    "THOUGHT: run it.\n\n```\npython -m pytest -q\n```",
    "   ",
    "THOUGHT: caf\u00e9 \u00df \"quoted\" back\\slash.\n\n```bash\necho 'Stra\u00dfe'\n```",
]
_OUTPUTS = ["<returncode>0</returncode>\n<output>\nfine\n</output>",
            "<returncode>1</returncode>\n<output>\nTraceback: boom\n</output>",
            "Your reply did not contain a single ```bash block.", ""]


def _mini_messages(count: int, seed: int) -> list[dict[str, Any]]:
    """A varied run: steps with and without commands, tool-calling steps, empty replies,
    format errors, timestamps on some messages, and an `exit` message at the end."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an agent in a shell."},
        {"role": "user", "content": [{"type": "text", "text": "<pr_description>\nFix the "
                                      "paging</pr_description>"}]},
    ]
    clock = 1_760_000_000
    for number in range(count):
        clock += rng.choice([1, 5, 90, 4000])
        stamp = {"timestamp": clock} if rng.random() < 0.5 else {}
        kind = rng.random()
        if kind < 0.12:
            call = f"call_{number}"
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": call, "type": "function", "function": {
                    "name": "bash", "arguments": json.dumps({"command": f"ls {number}"})}}],
                **stamp})
            messages.append({"role": "tool", "tool_call_id": call,
                             "content": rng.choice(_OUTPUTS)})
        elif kind < 0.15:
            messages.append({"role": "tool", "tool_call_id": "nobody", "content": "stray"})
        else:
            message: dict[str, Any] = {"role": "assistant", "content": rng.choice(_STEPS),
                                       **stamp}
            if rng.random() < 0.1:
                message["reasoning_content"] = "hmm " * rng.randrange(0, 4)
            if rng.random() < 0.2:
                message["model"] = "claude"
            messages.append(message)
            if rng.random() < 0.9:
                messages.append({"role": "user", "content": rng.choice(_OUTPUTS)})
    messages.append({"role": "exit", "content": "", "extra": {"exit_status": "Submitted"}})
    return messages


def _mini(path: Path, count: int, seed: int, *, indent: int | None = 1,
          status: str | None = "LimitsExceeded") -> Path:
    info: dict[str, Any] = {"mini_version": "1.14.2", "config": {"model": {
        "model_name": "anthropic/claude"}}}
    if status is not None:
        info |= {"exit_status": status, "submission": ""}
    document = {"info": info, "messages": _mini_messages(count, seed),
                "trajectory_format": "mini-swe-agent-1"}
    path.write_text(json.dumps(document, indent=indent), encoding="utf-8")
    return path


def _mini_files(tmp_path: Path) -> list[Path]:
    text_around = tmp_path / "around.traj.json"
    text_around.write_bytes(b"$ mini -o run.json\n" + MINI.read_bytes())
    return [
        MINI,
        _mini(tmp_path / "long.traj.json", 1_500, 1),
        _mini(tmp_path / "compact.traj.json", 600, 2, indent=None),
        _mini(tmp_path / "no-info.traj.json", 300, 3, status=None),
        _mini(tmp_path / "ended.traj.json", 200, 4, status="Submitted"),
        text_around,
    ]


# ---------------------------------------------------------------- the scan

def _full(report: Any) -> list[Any]:
    return [report.to_json(), [(e.suggestion_confidence, e.suggestion_reasons,
                                e.suggestion_rule) for e in report.empty_turns]]


def _same_as_whole(path: Path) -> list[Any]:
    reader = detect_reader(path)
    assert reader.stream is not None
    found = []
    for rules in RULES:
        whole = [_full(scan_session(session, rules, default_suggester()))
                 for session in load_sessions(path)]
        streamed = [_full(report) for report in scan_stream(reader, path, rules)]
        assert streamed == whole, path.name
        found.append(streamed)
    return found


def test_mini_swe_agent_scans_the_same_streamed(tmp_path: Path) -> None:
    for path in _mini_files(tmp_path):
        _same_as_whole(path)


def test_a_long_run_ending_in_system_turns_gets_its_run_end_evidence(tmp_path: Path) -> None:
    # The outcome is read before the steps: an empty step followed only by the
    # environment's complaints, judged long before the end, still sees how the run ended.
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"},
                {"role": "assistant", "content": ""}]
    messages += [{"role": "user", "content": f"format error {n}"} for n in range(300)]
    path = tmp_path / "tail.traj.json"
    path.write_text(json.dumps({"info": {"exit_status": "LimitsExceeded", "submission": ""},
                                "messages": messages, "trajectory_format": "mini-swe-agent-1"}))
    [[report, _]] = _same_as_whole(path)[0]
    [empty] = report["empty_turns"]
    assert "run ended: LimitsExceeded" in empty["evidence"]


def test_the_scan_task_goes_through_the_stream(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    path = _mini(tmp_path / "a.traj.json", 400, 5)
    calls = []
    original = scan_module.scan_stream

    def watched(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[1])
        return original(*args, **kwargs)

    monkeypatch.setattr("replay.core.corpus.tasks.scan_stream", watched)
    result = scan_task(SessionTask(str(path)))
    assert calls == [path] and result.error is None
    [session] = load_sessions(path)
    assert result.reports == [scan_session(session, DEFAULT_RULES,
                                           default_suggester()).to_json()]


def test_the_window_stays_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _mini(tmp_path / "long.traj.json", 3_000, 6)
    kept: list[int] = []
    advance = scan_module._WindowScan.advance

    def watched(self: Any, final: bool = False) -> None:
        advance(self, final)
        kept.append(len(self.window._turns))

    monkeypatch.setattr(scan_module._WindowScan, "advance", watched)
    [report] = scan_stream(detect_reader(path), path)
    assert report.to_json()["turns"] > 4 * (LOOK_BACK + LOOK_AHEAD)
    assert max(kept) <= 2 * (LOOK_BACK + LOOK_AHEAD) + 64


def _peak(path: Path) -> int:
    reader = detect_reader(path)
    tracemalloc.start()
    try:
        for _ in scan_stream(reader, path):
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _steady(path: Path, steps: int) -> Path:
    """A run as bench_hostile makes one: steps and their outputs, one empty step in 50."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "s"},
                                      {"role": "user", "content": "the task"}]
    for number in range(steps):
        text = "" if number % 50 == 7 else f"THOUGHT: step {number}.\n\n```bash\nls\n```"
        messages += [{"role": "assistant", "content": text},
                     {"role": "user", "content": "<returncode>0</returncode>\n<output>\nok"
                      "\n</output>"}]
    path.write_text(json.dumps({"info": {"exit_status": "Submitted", "submission": "x"},
                                "messages": messages, "trajectory_format": "mini-swe-agent-1"},
                               indent=1))
    return path


def test_a_big_trajectory_is_scanned_in_memory_that_does_not_grow_with_it(
        tmp_path: Path) -> None:
    small = _steady(tmp_path / "small.traj.json", 4_000)
    big = _steady(tmp_path / "big.traj.json", 16_000)
    grown = _peak(big) - _peak(small)
    # The turns are let go (what stays: 16 bytes of span per message, the empty turns'
    # reports): a fraction of the bytes added, where holding the turns cost 4-5 times them.
    assert grown < 0.5 * (big.stat().st_size - small.stat().st_size), grown


# ---------------------------------------------------------------- the app's index

def _turn(turn: Turn) -> tuple[Any, ...]:
    return (turn.index, *(getattr(turn, field.name) for field in dataclasses.fields(Turn)
                          if field.name not in ("parts", "index")),
            [dataclasses.astuple(part) for part in turn.parts])


def _same_turns(indexed: Session, whole: Session) -> None:
    turns = indexed.turns
    assert isinstance(turns, TurnIndex)
    assert len(turns) == len(whole.turns)
    # Backwards too: read back out of order, past the small cache.
    for index in [*range(len(turns)), *reversed(range(len(turns)))]:
        assert _turn(turns[index]) == _turn(whole.turns[index]), index
    assert (indexed.session_id, indexed.title, indexed.skipped, indexed.warnings,
            indexed.meta) == (whole.session_id, whole.title, whole.skipped, whole.warnings,
                              whole.meta)
    for rules in RULES:
        assert turns.stops(0, len(turns), rules) == [
            turn.index for turn in whole.turns if is_stop(whole, turn.index, rules)]
    assert [turns.id_at(i) for i in range(len(turns))] == [t.id for t in whole.turns]


NEEDLES = ("bash", "BASH", "returncode", "m12", "assistant", "system", "stra\u00dfe",
           "strasse", "\"quoted\"", "back\\slash", "list[int]", "[link=x]", "ls 7",
           "COMPLETE", "paging", "traceback: boom", "exit status", "nothing-like-it",
           "\n", "thought: run")


def _same_search(indexed: Session, whole: Session) -> None:
    for needle in NEEDLES:
        assert Navigator(indexed).matches(needle) == Navigator(whole).matches(needle), needle
    assert Navigator(indexed).search("fine", 3) == Navigator(whole).search("fine", 3)
    assert Navigator(indexed).search("fine", 3, forward=False) == \
        Navigator(whole).search("fine", 3, forward=False)


def test_the_index_reads_back_the_full_readers_turns(tmp_path: Path) -> None:
    for path in _mini_files(tmp_path)[:-1]:  # (text around the document: read whole)
        [whole] = load_sessions(path)
        for sizes in ({"tail": 1, "cache": 1}, {"tail": 4, "cache": 3}):
            [indexed] = mini_swe_agent.read_indexed(path, **sizes)
            _same_turns(indexed, whole)
            if len(whole.turns) > 100:
                assert indexed.turns.materialised > 0  # read back, not kept whole
        _same_search(indexed, whole)


def test_a_document_not_streamed_keeps_its_turns_whole(tmp_path: Path) -> None:
    path = _mini_files(tmp_path)[-1]
    [whole] = load_sessions(path)
    [plain] = mini_swe_agent.read_indexed(path)
    assert isinstance(plain.turns, list)
    assert [_turn(t) for t in plain.turns] == [_turn(t) for t in whole.turns]


def test_the_raw_record_of_an_indexed_turn_names_its_messages(tmp_path: Path) -> None:
    from replay.core.readers.raw import raw_record_text

    [indexed] = mini_swe_agent.read_indexed(MINI, tail=1, cache=1)
    text = raw_record_text(indexed.turns[5])
    assert '"content": ""' in text and "/messages/8" in text.splitlines()[0]


# ---------------------------------------------------------------- Aider

EXTERNAL = REPO.parent / "eval-cache"


def _aider_files(tmp_path: Path) -> list[Path]:
    from tests.core.test_aider import HISTORY

    many = tmp_path / "many.chat.history.md"
    many.write_text(HISTORY * 300, encoding="utf-8")  # 900 chats (three a copy)
    cut = tmp_path / "cut.chat.history.md"
    cut.write_bytes(many.read_bytes()[:-7])
    pasted = tmp_path / "pasted.md"
    pasted.write_bytes(b"\xef\xbb\xbf#### hi\r\n> Tokens: 1 sent\r\n> Applied edit to x\r\nreply"
                       b"\r\n\r\n# aider chat started at 2024-05-01 10:00:00\n#### again\nok")
    long = tmp_path / "long.chat.history.md"
    body = "".join(f"#### step {n}\n\nreply {n}\n\n> Tokens: 1k sent, 2 received.\n\n"
                   + ("#### <blank>\n\n" if n % 9 == 0 else "") for n in range(3_000))
    long.write_text("# aider chat started at 2024-05-01 10:00:00\n\n" + body, encoding="utf-8")
    return [many, cut, pasted, long,
            *sorted(EXTERNAL.glob("*/*/.aider.chat.history.md"))]


def test_aider_histories_scan_the_same_streamed(tmp_path: Path) -> None:
    for path in _aider_files(tmp_path):
        _same_as_whole(path)


def test_an_aider_history_of_many_chats_reports_each_one(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.corpus import spill

    monkeypatch.setattr(spill, "MEMORY_BYTES", 10_000)  # past it: the reports go to disk
    path = _aider_files(tmp_path)[0]
    result = scan_task(SessionTask(str(path)))
    assert isinstance(result.reports, spill.SpilledReports)
    expected = [scan_session(session, DEFAULT_RULES, default_suggester()).to_json()
                for session in load_sessions(path)]
    assert len(result.reports) == len(expected) == 900
    assert list(result.reports) == expected
    assert list(result.reports) == expected  # read again: the same
    import pickle

    assert pickle.loads(pickle.dumps(result.reports)) == expected  # from a worker: a list


def test_a_long_aider_chat_is_scanned_through_a_window(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = _aider_files(tmp_path)[3]
    kept: list[int] = []
    advance = scan_module._WindowScan.advance

    def watched(self: Any, final: bool = False) -> None:
        advance(self, final)
        kept.append(len(self.window._turns))

    monkeypatch.setattr(scan_module._WindowScan, "advance", watched)
    [report] = scan_stream(detect_reader(path), path)
    assert report.to_json()["turns"] > 4 * (LOOK_BACK + LOOK_AHEAD)
    assert max(kept) <= 2 * (LOOK_BACK + LOOK_AHEAD) + 256


def test_the_app_holds_an_aider_history_as_counts_and_reads_a_chat_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.readers import aider

    monkeypatch.setattr(aider, "RECENT_CHATS", 3)
    for path in _aider_files(tmp_path):
        whole = load_sessions(path)
        indexed = load_sessions(path, indexed=True)
        assert len(indexed) == len(whole)
        for _ in range(2):  # the second time, most chats were let go and are read again
            for mine, theirs in zip(indexed, whole, strict=True):
                assert len(mine.turns) == len(theirs.turns)
                assert [_turn(t) for t in mine.turns] == [_turn(t) for t in theirs.turns]
                assert (mine.session_id, mine.title, mine.meta, mine.warnings,
                        mine.skipped) == (theirs.session_id, theirs.title, theirs.meta,
                                          theirs.warnings, theirs.skipped)
        held = sum(1 for session in indexed
                   if getattr(session.turns, "_turns", None) is not None)
        assert held <= 3
        if len(whole) > 1:
            assert Navigator(indexed[1]).matches("tokens") == \
                Navigator(whole[1]).matches("tokens")


def test_a_chat_whose_file_changed_says_so(tmp_path: Path) -> None:
    path = _aider_files(tmp_path)[0]
    indexed = load_sessions(path, indexed=True)
    path.write_text("# aider chat started at 2024-05-01 10:00:00\n", encoding="utf-8")
    turns = indexed[5].turns
    assert len(turns) == len(list(turns)) > 0
    assert all(turn.parts[0].name == "unreadable" for turn in turns)


# ---------------------------------------------------------------- opencode.db

def _database(path: Path, messages: int, seed: int, *, part_bytes: int = 200) -> Path:
    """One session: messages whose ids do not sort as their times, a few rows of bad JSON
    (messages and parts), tool parts with long outputs."""
    import sqlite3

    from tests.core.test_opencode import SCHEMA

    rng = random.Random(seed)
    connection = sqlite3.connect(path)
    connection.executescript(SCHEMA)
    connection.execute("INSERT INTO session (id, project_id, parent_id, slug, directory, title, "
                       "version, time_created, time_updated) VALUES "
                       "('ses_a', 'p', NULL, 's', '/', 'one', '1', 1, 1)")
    for number in range(messages):
        message_id = f"msg_{rng.randrange(10**9):09d}_{number}"
        role = "user" if number % 2 == 0 else "assistant"
        data = "{not json" if rng.random() < 0.02 else json.dumps(
            {"role": role, "time": {"created": 1_760_000_000_000 + number * 1000}})
        connection.execute("INSERT INTO message (id, session_id, time_created, time_updated, "
                           "data) VALUES (?, 'ses_a', ?, ?, ?)", (message_id, number, number, data))
        for _ in range(rng.randrange(0, 3)):
            if rng.random() < 0.05:
                part = "[1, 2"
            elif rng.random() < 0.5:
                part = json.dumps({"type": "text", "text": "" if rng.random() < 0.2
                                   else "words " * rng.randrange(1, 20)})
            else:
                part = json.dumps({"type": "tool", "tool": "bash", "callID": f"c{number}",
                                   "state": {"status": "completed", "input": {"command": "ls"},
                                             "output": "x" * part_bytes}})
            connection.execute("INSERT INTO part (id, message_id, session_id, time_created, "
                               "time_updated, data) VALUES (?, ?, 'ses_a', ?, ?, ?)",
                               (f"prt_{rng.randrange(10**9):09d}", message_id, number, number,
                                part))
    connection.commit()
    connection.close()
    return path


def test_an_opencode_session_read_in_chunks_is_the_session_read_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.readers import opencode_sqlite

    path = _database(tmp_path / "opencode.db", 1_300, 8)
    monkeypatch.setattr(opencode_sqlite, "CHUNK", 10**6)  # every message at once
    [whole] = opencode_sqlite.read(path)
    assert whole.skipped > 10  # bad message and part rows, said as warnings
    for chunk in (1, 7, 64):
        monkeypatch.setattr(opencode_sqlite, "CHUNK", chunk)
        [chunked] = opencode_sqlite.read(path)
        assert [_turn(t) for t in chunked.turns] == [_turn(t) for t in whole.turns]
        assert (chunked.warnings, chunked.skipped) == (whole.warnings, whole.skipped)


def test_an_opencode_session_of_big_parts_is_read_without_all_of_them_parsed(
        tmp_path: Path) -> None:
    from replay.core.readers import opencode_sqlite

    small = _database(tmp_path / "small.db", 300, 9, part_bytes=20_000)
    big = _database(tmp_path / "big.db", 1_200, 9, part_bytes=20_000)
    peaks = []
    for path in (small, big):
        tracemalloc.start()
        try:
            opencode_sqlite.read(path)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    # The long outputs are kept shortened; only a chunk's are whole at once.
    assert peaks[1] - peaks[0] < 0.5 * (big.stat().st_size - small.stat().st_size), peaks


# ---------------------------------------------------------------- SWE-agent's scan

def _swe_run(path: Path, steps: int) -> Path:
    """A SWE-agent run of `steps` steps with long observations, one empty step in 50."""
    trajectory = [{"thought": "" if number % 50 == 7 else f"step {number}",
                   "action": "" if number % 50 == 7 else "ls -la",
                   "observation": f"total {number}\n" + "drwxr-xr-x  file\n" * 40,
                   "execution_time": 0.5} for number in range(steps)]
    history = [{"role": "system", "content": "You are an agent."},
               {"role": "user", "content": "ISSUE:\nthe tests fail\n"}]
    path.write_text(json.dumps({"trajectory": trajectory, "history": history,
                                "info": {"exit_status": "submitted", "submission": "x"}},
                               indent=1))
    return path


def _swe_peak(path: Path) -> int:
    from replay.core.corpus.tasks import SessionTask, scan_task

    tracemalloc.start()
    try:
        result = scan_task(SessionTask(str(path), None, None, ()))
        assert result.error is None and result.reports, result.error
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_swe_agent_run_is_scanned_without_holding_its_observations(tmp_path: Path) -> None:
    # The scan read the whole run into turns: 1.5-1.7x the file at 50 MB. Its steps are
    # now held as columns of an index and read back a few at a time.
    from replay.core.readers import swe_agent

    small = _swe_run(tmp_path / "small.traj", 5_000)
    big = _swe_run(tmp_path / "big.traj", 20_000)
    grown = _swe_peak(big) - _swe_peak(small)
    assert grown < 0.3 * (big.stat().st_size - small.stat().st_size), grown
    # ... and says what the whole read says, under every rule set.
    assert swe_agent.READER.iter_sessions is not None
    for rules in RULES:
        [whole] = swe_agent.read(big)
        [indexed] = swe_agent.READER.iter_sessions(big)
        assert (_full(scan_session(indexed, rules, default_suggester()))
                == _full(scan_session(whole, rules, default_suggester())))


def test_a_swe_agent_scan_parses_each_step_once(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # The scan indexed the run's steps and then parsed each one again to judge it (read
    # back from its element): 1.46 -> 2.19 s of CPU at 53 MB. It now judges each step as it
    # is read, in a window (`Reader.stream`), with the same report as the whole read.
    from replay.core.corpus.tasks import SessionTask, scan_task
    from replay.core.readers import swe_agent

    path = _swe_run(tmp_path / "run.traj", 3_000)
    made = []
    step = swe_agent._step

    def counted(session: Any, value: Any, index: int, span: Any = None) -> None:
        made.append(index)
        step(session, value, index, span)

    def no_read_back(*args: Any) -> Any:
        raise AssertionError("a step was parsed again to be judged")

    monkeypatch.setattr(swe_agent, "_step", counted)
    monkeypatch.setattr(swe_agent, "read_back", no_read_back)
    result = scan_task(SessionTask(str(path)))
    assert result.error is None
    assert sorted(made) == list(range(3_000))  # every step made once
    monkeypatch.undo()
    [whole] = swe_agent.read(path)
    assert result.reports == [scan_session(whole, DEFAULT_RULES, default_suggester()).to_json()]
    for rules in RULES:
        assert [_full(r) for r in scan_stream(swe_agent.READER, path, rules)] == [
            _full(scan_session(whole, rules, default_suggester()))]
