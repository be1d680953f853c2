"""Chat JSON, chat JSONL and ShareGPT read record by record (`Reader.record_feed`): the
windowed scan reports exactly what a scan of the whole session does, in memory bounded by
the window, and a `TurnIndex` reads back turns identical to the full reader's."""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from replay.core.corpus import scan as scan_module
from replay.core.corpus.scan import LOOK_AHEAD, LOOK_BACK, scan_records, scan_session
from replay.core.corpus.tasks import SessionTask, scan_task
from replay.core.detection.empty import DEFAULT_RULES
from replay.core.readers import ReaderError, detect_reader, load_sessions
from replay.core.session.model import Session, Turn
from replay.core.suggest import default_suggester
from tests.conftest import REALDATA, SAMPLES
from tests.core.test_chat import JSONL, OPENAI, SHAREGPT

FORMATS = ("chat-json", "chat-jsonl", "sharegpt")


def _full(report: Any) -> list[Any]:
    return [report.to_json(), report.session.events,
            [(e.suggestion_confidence, e.suggestion_reasons, e.suggestion_rule)
             for e in report.empty_turns]]


def _same_as_whole(path: Path, tool_only: bool = False, missing: bool = False) -> Any:
    rules = DEFAULT_RULES.with_options(tool_only_is_empty=tool_only, missing_replies=missing)
    reader = detect_reader(path)
    assert reader.record_feed is not None
    feed = reader.record_feed(path)
    assert feed is not None, f"{path.name} is not read record by record"
    whole = scan_session(load_sessions(path)[0], rules, default_suggester())
    streamed = scan_records(feed, rules)
    assert _full(streamed) == _full(whole)
    return streamed


def _write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, indent=1), encoding="utf-8")
    return path


def _jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n"
                            for r in records), encoding="utf-8")
    return path


def _messages(count: int, seed: int) -> list[Any]:
    """Chat messages of every shape the builder joins or splits: tool calls answered late,
    early, twice or never, results for calls of an older turn, reasoning items before a
    step or alone, own ids that repeat or look made up, empty replies and prompts."""
    rng = random.Random(seed)
    clock = 1_760_000_000.0
    found: list[Any] = [{"role": "user", "content": "start"}]  # (sniffed from the head)
    calls: list[str] = []
    for number in range(count):
        clock += rng.choice([1, 3, 30, 900])
        stamp = {"timestamp": clock} if rng.random() < 0.7 else {}
        pick = rng.random()
        if pick < 0.18:
            found.append({"role": "user", "content": rng.choice(
                ["fix the reader", "", "continue", "hello?", "   ", "[/] [link=x] list[int]"]),
                **stamp})
        elif pick < 0.36:
            found.append({"role": "assistant", "content": rng.choice(
                ["done", "", None, "Shall I go on?", "## Goal\n" + "summary " * 50]), **stamp})
        elif pick < 0.48:
            call = f"call_{number}"
            calls.append(call)
            found.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": call, "type": "function",
                 "function": {"name": "ls", "arguments": "{}"}},
                {"id": f"{call}b", "type": "function",
                 "function": {"name": "pwd", "arguments": "{}"}}], **stamp})
        elif pick < 0.62:
            call = rng.choice(calls[-3:] + ["nope"]) if calls else "nope"
            found.append({"role": "tool", "tool_call_id": call, "content": f"out {number}"})
        elif pick < 0.68:
            found.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": rng.choice(calls[-2:] + ["zz"])
                 if calls else "zz", "content": "r"},
                {"type": "tool_result", "tool_use_id": "zz", "content": "orphan"}]})
        elif pick < 0.76:
            found.append({"type": "reasoning", "summary": [
                {"type": "summary_text", "text": rng.choice(["think", ""])}]})
        elif pick < 0.82:
            found.append({"type": "function_call", "call_id": f"fc{number}", "name": "sh",
                          "arguments": "ls"})
        elif pick < 0.86:
            found.append({"type": "function_call_output", "call_id": f"fc{number - 1}",
                          "output": "a b"})
        elif pick < 0.92:
            found.append({"role": rng.choice(["user", "assistant"]), "content": "again",
                          "id": rng.choice(["same", f"m{number + 1}", f"m{number - 2}",
                                            f"own{number}"]), **stamp})
        elif pick < 0.95:
            found.append({"type": "telemetry"})
        elif pick < 0.97:
            found.append({"role": "narrator", "content": "aside"})
        else:
            found.append("not a message")
    return found


def _sharegpt(count: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    turns: list[Any] = [{"from": "human", "value": "start"}]
    for number in range(count):
        pick = rng.random()
        if pick < 0.35:
            turns.append({"from": "human", "value": rng.choice(["2+2?", "", "go on"])})
        elif pick < 0.75:
            turns.append({"from": "gpt", "value": rng.choice(["4", "", None, "more?"])})
        elif pick < 0.85:
            turns.append({"from": "function_call",
                          "value": json.dumps({"name": "get", "arguments": {"n": number}})})
        elif pick < 0.95:
            turns.append({"from": "observation", "value": f"sunny {number}"})
        else:
            turns.append({"from": "alien", "value": "?"})
    return {"id": f"conv{seed}", "system": "you can call tools", "conversations": turns}


def _format(path: Path) -> str | None:
    try:
        return detect_reader(path).name
    except ReaderError:
        return None


def _files(tmp_path: Path) -> list[Path]:
    """Every file of these formats in the samples and ../shared/realdata, the chat tests'
    documents, and long generated sessions of each format."""
    files = [path for folder in (SAMPLES, REALDATA) if folder.is_dir()
             for path in sorted(folder.rglob("*"))
             if path.is_file() and path.suffix in (".json", ".jsonl") and _format(path) in FORMATS]
    assert files, "a sample of these formats"
    files.append(_write(tmp_path / "openai.json", OPENAI))
    files.append(_write(tmp_path / "bare.json", OPENAI["messages"]))
    files.append(_jsonl(tmp_path / "chat.jsonl", JSONL))
    files.append(_write(tmp_path / "one.sharegpt.json", SHAREGPT[0]))
    files.append(_write(tmp_path / "system.sharegpt.json", SHAREGPT[1]))
    length = 4 * (LOOK_BACK + LOOK_AHEAD)
    for seed in (1, 2):
        files.append(_write(tmp_path / f"long{seed}.json",
                            {"id": "x", "model": "m", "messages": _messages(length, seed)}))
        files.append(_jsonl(tmp_path / f"long{seed}.jsonl", _messages(length, seed + 10)))
        files.append(_write(tmp_path / f"long{seed}.sharegpt.json", _sharegpt(length, seed)))
    return files


def test_these_files_scan_the_same_streamed(tmp_path: Path) -> None:
    files = _files(tmp_path)
    assert {detect_reader(path).name for path in files} == set(FORMATS)
    for path in files:
        _same_as_whole(path)
        _same_as_whole(path, tool_only=True, missing=True)


def test_other_shapes_are_read_whole(tmp_path: Path) -> None:
    several = _write(tmp_path / "many.json", [{"id": 1, "messages": [
        {"role": "user", "content": "a"}]}, {"messages": [{"role": "user", "content": "b"}]}])
    nested = _write(tmp_path / "nested.json", {"conversation": {"log": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": ""}]}})
    lines = _jsonl(tmp_path / "per-line.jsonl", [{"messages": [
        {"role": "user", "content": "a"}]}, {"messages": [{"role": "user", "content": "b"}]}])
    texty = tmp_path / "texty.json"
    texty.write_text("Exporting...\n" + json.dumps(OPENAI), encoding="utf-8")
    sharegpt_lines = _jsonl(tmp_path / "s.jsonl", SHAREGPT)
    sharegpt_list = _write(tmp_path / "s.json", SHAREGPT)
    for path in (several, nested, lines, texty, sharegpt_lines, sharegpt_list):
        reader = detect_reader(path)
        assert reader.record_feed is not None and reader.record_feed(path) is None, path.name
        # ... and the scan still reports them, read whole.
        result = scan_task(SessionTask(str(path)))
        assert result.error is None and result.reports
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert [r["warnings"] for r in scan_task(SessionTask(str(empty))).reports] == [
        ["the file is empty: 0 turns read"]]


def test_scan_task_takes_the_record_feed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "long.json", {"messages": _messages(300, 5)})
    fed: list[int] = []
    scan = scan_module.scan_records

    def watched(feed: Any, *args: Any, **kwargs: Any) -> Any:
        fed.append(1)
        return scan(feed, *args, **kwargs)

    monkeypatch.setattr("replay.core.corpus.tasks.scan_records", watched)
    [report] = scan_task(SessionTask(str(path))).reports
    assert fed == [1]
    whole = scan_session(load_sessions(path)[0], DEFAULT_RULES, default_suggester())
    assert report == whole.to_json()


@pytest.mark.parametrize("name", FORMATS)
def test_the_window_stays_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  name: str) -> None:
    count = 10 * (LOOK_BACK + LOOK_AHEAD)
    path = {"chat-json": lambda: _write(tmp_path / "a.json", {"messages": _messages(count, 7)}),
            "chat-jsonl": lambda: _jsonl(tmp_path / "a.jsonl", _messages(count, 7)),
            "sharegpt": lambda: _write(tmp_path / "a.json", _sharegpt(count, 7))}[name]()
    kept: list[int] = []
    advance = scan_module._WindowScan.advance

    def watched(self: Any, final: bool = False) -> None:
        advance(self, final)
        kept.append(len(self.window._turns))

    monkeypatch.setattr(scan_module._WindowScan, "advance", watched)
    reader = detect_reader(path)
    assert reader.name == name and reader.record_feed is not None
    feed = reader.record_feed(path)
    assert feed is not None
    report = scan_records(feed)
    assert report.to_json()["turns"] > 4 * (LOOK_BACK + LOOK_AHEAD)
    assert max(kept) <= 2 * (LOOK_BACK + LOOK_AHEAD) + 64


def _mostly_empty(path: Path, copies: int) -> Path:
    """A ShareGPT file as bench_hostile makes it from the support-bot sample: a reply that
    only called tools has no text, so nearly half the turns are empty."""
    messages = json.loads((SAMPLES / "support-bot.chat.json").read_bytes())["messages"]
    turns = [{"from": "human" if m["role"] == "user" else "gpt",
              "value": m["content"] if isinstance(m.get("content"), str) else ""}
             for m in messages if m["role"] in ("user", "assistant")]
    return _write(path, {"id": "bench", "conversations": turns * copies})


def test_memory_per_turn_stays_small_on_a_file_of_empty_turns(tmp_path: Path) -> None:
    # The scan lets the turns go and keeps each empty turn's report and signals packed until
    # the session's end: the Python memory it adds per byte of file is 1.6 bytes (the
    # reports it returns, 330 bytes of file per empty turn); it was four, with a kilobyte
    # of report and signal objects held for each empty turn until the end.
    small, big = (_mostly_empty(tmp_path / f"{n}.json", n) for n in (300, 1200))
    peaks = []
    for path in (small, big):
        reader = detect_reader(path)
        assert reader.record_feed is not None
        tracemalloc.start()
        feed = reader.record_feed(path)
        assert feed is not None
        report = scan_records(feed)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert len(report.empty_turns) > report.to_json()["turns"] // 3
    per_byte = (peaks[1] - peaks[0]) / (big.stat().st_size - small.stat().st_size)
    assert per_byte < 2.5, per_byte


def test_packed_reports_come_back_equal() -> None:
    from replay.core.detection.packed import PackedList, pack, unpack
    from replay.core.suggest.signals import NextMessage, Repeat

    values = (Repeat(3, 1, 0.5), NextMessage(4, "go on\udc80", None), (1, "a", None), -0.0)
    assert unpack(pack(*values)) == values
    packed = PackedList()
    for number in range(1000):
        packed.append((number, f"m{number}", ("text is blank",)), Repeat(number, 0, 1.0))
    assert len(packed) == 1000
    drained = list(packed.drain())
    assert drained[999] == ((999, "m999", ("text is blank",)), Repeat(999, 0, 1.0))
    assert len(drained) == 1000 and len(packed) == 0 and list(packed.drain()) == []
    with pytest.raises(TypeError):
        pack([1, 2])
    with pytest.raises(TypeError):
        pack(object())


def test_a_consumed_report_is_the_same_json(tmp_path: Path) -> None:
    path = _mostly_empty(tmp_path / "s.json", 20)
    reader = detect_reader(path)
    assert reader.record_feed is not None
    feeds = [reader.record_feed(path), reader.record_feed(path)]
    assert feeds[0] is not None and feeds[1] is not None
    kept, consumed = scan_records(feeds[0]), scan_records(feeds[1])
    assert consumed.to_json(consume=True) == kept.to_json()
    assert consumed.empty_turns == [] and kept.empty_turns


# ---------------------------------------------------------------- the app's turn index

def _turn(turn: Turn) -> tuple[Any, ...]:
    source = turn.source
    return (turn.index, turn.id, turn.role, turn.timestamp, turn.time, turn.completed,
            turn.model, [(p.kind, p.text, p.name, p.input, p.output, p.call_id, p.status)
                         for p in turn.parts],
            None if source is None else (source.path, source.line, source.spans, source.record))


def _indexed(path: Path, tail: int, cache: int) -> Session:
    reader = detect_reader(path)
    assert reader.record_feed is not None and reader.index_turns is not None
    feed = reader.record_feed(path)
    assert feed is not None
    reader.index_turns(feed.builder, tail=tail, cache=cache)
    for record, offset, number in feed.records:
        feed.builder.feed(record, offset, number)
    feed.builder.finish()
    return feed.builder.session


def test_the_turn_index_reads_back_the_full_readers_turns(tmp_path: Path) -> None:
    from replay.core.index.turn_index import TurnIndex

    for path in _files(tmp_path):
        [whole] = load_sessions(path)
        for tail, cache in ((1, 1), (4, 3)):
            session = _indexed(path, tail, cache)
            turns = session.turns
            assert isinstance(turns, TurnIndex)
            assert len(turns) == len(whole.turns), path.name
            # Backwards too: read back out of order, past the small cache.
            for index in [*range(len(turns)), *reversed(range(len(turns)))]:
                assert _turn(turns[index]) == _turn(whole.turns[index]), (path.name, index)
            assert (session.session_id, session.title, session.skipped, session.warnings) == (
                whole.session_id, whole.title, whole.skipped, whole.warnings)
            if len(whole.turns) > 100:
                assert turns.materialised > 0  # read back, not kept whole


def test_the_turn_index_answers_the_columns_as_the_turns(tmp_path: Path) -> None:
    from replay.core.session.model import TurnColumns

    path = _write(tmp_path / "long.json", {"messages": _messages(600, 9)})
    [whole] = load_sessions(path)
    session = _indexed(path, 2, 2)
    turns = session.turns
    assert isinstance(turns, TurnColumns)
    rules = DEFAULT_RULES
    assert turns.stops(0, len(turns), rules) == [
        turn.index for turn in whole.turns if scan_module.is_stop(whole, turn.index, rules)]
    assert [turns.id_at(i) for i in range(len(turns))] == [t.id for t in whole.turns]
    assert turns.find_id(whole.turns[-5].id) == whole.turns.index(
        next(t for t in whole.turns if t.id == whole.turns[-5].id))


def test_the_turn_index_finds_and_stops_as_the_full_read(tmp_path: Path) -> None:
    from replay.core.index.navigation import Navigator

    needles = ["the", "again", "é", "[/]", "list[int]", "out 1", "orphan", "sunny 3",
               "assist", "system", "m1", "same@", "zzz-not-there", "Shall I", "think"]
    for path in _files(tmp_path):
        [whole] = load_sessions(path)
        indexed = _indexed(path, 2, 2)
        for rules in (DEFAULT_RULES, DEFAULT_RULES.with_options(
                tool_only_is_empty=True, missing_replies=True)):
            assert Navigator(indexed, rules).empty_indices == Navigator(
                whole, rules).empty_indices, path.name
        ours, theirs = Navigator(indexed), Navigator(whole)
        for needle in needles:
            assert ours.matches(needle) == theirs.matches(needle), (path.name, needle)
