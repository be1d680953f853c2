"""The Gemini CLI reader: the older JSON document, the newer JSONL records, and empty turns."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.core.detection.empty import find_empty_turns
from replay.core.readers import gemini
from replay.core.readers.base import iter_lines, read_head
from replay.core.session.model import Kind, Session
from tests.conftest import realdata

DOCUMENT = ("gemini-cli/codemie-code__tests__integration__metrics__fixtures__gemini__"
            "session-2025-12-01T21-45-5b959dae.json")


def load(path: Path) -> Session:
    sessions = gemini.read(path)
    assert len(sessions) == 1
    return sessions[0]


def write_jsonl(tmp_path: Path, records: list[Any]) -> Path:
    path = tmp_path / "session-2026-03-01T10-00-abcd1234.jsonl"
    path.write_text("".join(
        (record if isinstance(record, str) else json.dumps(record)) + "\n" for record in records
    ))
    return path


def stamp(second: int) -> str:
    return f"2026-03-01T10:00:{second:02d}.000Z"


def shape(session: Session) -> list[tuple[Any, ...]]:
    return [
        (turn.index, turn.id, turn.role, turn.is_meta, turn.timestamp, turn.tokens,
         turn.source.spans if turn.source else None,
         [(p.kind, p.text, p.name, p.input, p.output, p.status) for p in turn.parts])
        for turn in session.turns
    ]


# -- the real, older single-document recording -------------------------------------------


def test_document_recording_has_three_prompts_and_eleven_replies() -> None:
    path = realdata(DOCUMENT)
    session = load(path)
    raw = json.loads(path.read_text())
    assert session.skipped == 0 and session.warnings == []
    assert session.session_id == "5b959dae-8655-4cd1-b10f-720b8c336ea2"
    assert session.meta["projectHash"].startswith("fb8e242a")
    assert len(session.turns) == 14
    assert Counter(turn.role for turn in session.turns) == {"user": 3, "assistant": 11}
    assert [turn.id for turn in session.turns] == [m["id"] for m in raw["messages"]]
    assert [turn.index for turn in session.turns if turn.role == "user"] == [0, 2, 9]
    assert find_empty_turns(session) == []


def test_tool_only_replies_are_not_empty() -> None:
    session = load(realdata(DOCUMENT))
    silent = [turn for turn in session.turns if turn.role == "assistant"
              and not any(part.kind == Kind.TEXT for part in turn.parts)]
    # Eight replies have content "" and carry only tool calls and thoughts.
    assert [turn.index for turn in silent] == [3, 4, 5, 6, 7, 10, 11, 12]
    assert all(any(p.kind == Kind.TOOL_CALL for p in turn.parts) for turn in silent)
    first = silent[0]
    assert [(p.kind, p.name, p.status) for p in first.parts] == [
        (Kind.REASONING, None, None), (Kind.TOOL_CALL, "list_directory", "completed")]
    assert first.parts[0].text.startswith("Considering Directory Structure\nI'm currently")
    assert json.loads(first.parts[1].input or "") == {
        "dir_path": "/Users/Jane_Smith/Documents/projects/epm-cdme/assistants/"}
    assert (first.parts[1].output or "").startswith("Directory listing for")
    assert first.tokens == {"input": 2811, "output": 32, "cache_read": 0, "reasoning": 35,
                            "tool": 0, "total": 2878}
    assert first.model == "gemini-3-pro-image-preview"


def test_shortened_tool_result_reads_back_whole() -> None:
    session = load(realdata(DOCUMENT))
    turn = session.turns[10]
    first_call = next(p for p in turn.parts if p.kind == Kind.TOOL_CALL)
    assert first_call.shortened and len(first_call.output or "") == 400
    assert turn.source is not None and turn.source.record == "/messages/10"
    full = session.full_parts(turn)
    full_call = next(p for p in full if p.kind == Kind.TOOL_CALL)
    assert len(full_call.output or "") == 4540 and not full_call.shortened


def test_sniff_accepts_recordings_only(tmp_path: Path) -> None:
    path = realdata(DOCUMENT)
    assert gemini.sniff(path, read_head(path))
    for relative in (
        "codex/localpush__src-tauri__tests__fixtures__codex__2026-02-23__raw__sessions__"
        "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
        "claude-code/codemie-code__tests__integration__session__fixtures__session-9eda1058.jsonl",
        "opencode/dark-factory__docs__chats__opencode__session__jolly-eagle__"
        "ses_39b5d713cffeRgAoxPIwS3Plus.json",
    ):
        other = realdata(relative)
        assert not gemini.sniff(other, read_head(other)), relative
    headless = write_jsonl(tmp_path, [{"id": "m1", "timestamp": stamp(1), "type": "gemini",
                                       "content": "hi"}])
    assert gemini.sniff(headless, read_head(headless))


# -- the newer JSONL records ---------------------------------------------------------------


def jsonl_records() -> list[Any]:
    call = {"id": "t1", "name": "list_directory", "args": {"dir_path": "."},
            "status": "executing", "timestamp": stamp(2)}
    reply = {"id": "m2", "timestamp": stamp(2), "type": "gemini", "content": "",
             "toolCalls": [call], "model": "gemini-2.5-pro",
             "thoughts": [{"subject": "Planning", "description": "Look at the tree.",
                           "timestamp": stamp(2)}]}
    done = {**call, "status": "success", "resultDisplay": "Listed 2 item(s).",
            "result": [{"functionResponse": {"id": "t1", "name": "list_directory",
                                             "response": {"output": "a.txt\nb.txt"}}}]}
    return [
        {"sessionId": "g-1", "projectHash": "ph", "startTime": stamp(0),
         "lastUpdated": stamp(0), "kind": "main"},
        {"id": "m1", "timestamp": stamp(1), "type": "user", "content": [{"text": "list files"}]},
        reply,
        {**reply, "toolCalls": [done], "tokens": {"input": 10, "output": 2, "cached": 0,
                                                  "thoughts": 5, "total": 17}},
        {"$set": {"lastUpdated": stamp(3)}},
        {"id": "m3", "timestamp": stamp(4), "type": "info", "content": "Switched model."},
        {"id": "m4", "timestamp": stamp(5), "type": "gemini", "content": "Two files."},
        {"id": "m5", "timestamp": stamp(6), "type": "error", "content": "API error: 429"},
        {"id": "m6", "timestamp": stamp(7), "type": "user", "content": "delete b.txt"},
        {"id": "m7", "timestamp": stamp(8), "type": "gemini", "content": ""},
        {"$rewindTo": "m6"},
        {"id": "m8", "timestamp": stamp(9), "type": "user", "content": "keep both"},
        "{broken",
        {"$set": {"summary": "Listing files", "messages": [
            {"id": "m1", "type": "user", "content": "[masked]"},
            {"id": "m9", "type": "user", "content": "Summary of the chat so far."}]}},
    ]


def test_jsonl_recording_turns(tmp_path: Path) -> None:
    session = load(write_jsonl(tmp_path, jsonl_records()))
    assert session.session_id == "g-1" and session.title == "Listing files"
    assert session.skipped == 1 and session.warnings == ["line 13: not valid JSON"]
    assert session.events == 4  # header, two $set records, the rewind
    assert [(t.id, t.role, t.is_meta) for t in session.turns] == [
        ("m1", "user", False), ("m2", "assistant", False), ("m3", "system", False),
        ("m4", "assistant", False), ("m5", "system", False), ("m6", "user", False),
        ("m7", "assistant", False), ("rewind-11", "system", True), ("m8", "user", False),
        ("m9", "user", True)]
    # The second write of m2 replaced the first, in place.
    reply = session.turns[1]
    assert [(p.kind, p.name, p.output, p.status) for p in reply.parts] == [
        (Kind.REASONING, None, None, None),
        (Kind.TOOL_CALL, "list_directory", "a.txt\nb.txt", "completed")]
    assert reply.parts[0].text == "Planning\nLook at the tree."
    assert reply.tokens == {"input": 10, "output": 2, "cache_read": 0, "reasoning": 5,
                            "total": 17}
    assert reply.source is not None and reply.source.line == 4
    assert session.turns[0].parts[0].text == "list files"  # masking does not overwrite
    assert [(p.kind, p.text) for p in session.turns[4].parts] == [(Kind.ERROR, "API error: 429")]
    assert session.turns[7].parts[0].text == (
        "Rewound to message m6: Gemini CLI discarded 2 messages from there on.")


def test_blank_gemini_message_is_empty_but_a_tool_only_one_is_not(tmp_path: Path) -> None:
    session = load(write_jsonl(tmp_path, jsonl_records()))
    empty = find_empty_turns(session)
    assert [(e.index, e.id, e.role, e.reason) for e in empty] == [
        (6, "m7", "assistant", "no-content")]


def test_builder_fed_in_two_halves_equals_the_whole_read(tmp_path: Path) -> None:
    for path in (write_jsonl(tmp_path, jsonl_records()), realdata(DOCUMENT)):
        whole = load(path)
        with open(path, "rb") as handle:
            records = list(iter_lines(handle))
        builder = gemini.GeminiBuilder(str(path))
        middle = len(records) // 2
        for record, offset, lineno in records[:middle]:
            builder.feed(record, offset, lineno)
        builder.finish()
        for record, offset, lineno in records[middle:]:
            builder.feed(record, offset, lineno)
        builder.finish()
        assert shape(builder.session) == shape(whole), path.name
        assert builder.session.skipped == whole.skipped


def test_jsonl_full_parts_read_the_latest_write(tmp_path: Path) -> None:
    records = jsonl_records()
    records[3]["toolCalls"][0]["result"][0]["functionResponse"]["response"]["output"] = "x" * 900
    session = load(write_jsonl(tmp_path, records))
    call = session.turns[1].parts[1]
    assert call.shortened and len(call.output or "") == 400
    full = session.full_parts(session.turns[1])
    assert full[1].output == "x" * 900


def test_malformed_document_is_counted_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "session-broken.json"
    path.write_text('{\n  "sessionId": "x",\n  "projectHash": "y",\n  "messages": [\n')
    session = load(path)
    assert (session.turns, session.skipped) == ([], 1)
    assert session.warnings == ["the JSON document is cut off at byte 60 (truncated while "
                                "copied or written?): 0 turns read"]


def test_an_id_back_after_a_rewind_gets_a_turn_of_its_own(tmp_path: Path) -> None:
    session = load(write_jsonl(tmp_path, [
        {"sessionId": "g-2", "projectHash": "ph"},
        {"id": "a", "type": "user", "content": "first try"},
        {"$rewindTo": "a"},
        {"id": "a", "type": "user", "content": "second try"},
        {"$rewindTo": "nowhere"},
    ]))
    assert [(t.id, t.role) for t in session.turns] == [
        ("a", "user"), ("rewind-3", "system"), ("a@line-4", "user"), ("rewind-5", "system")]
    assert session.turns[3].parts[0].text == (
        "Rewound to the start: Gemini CLI discarded 1 messages from there on.")


_LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4),
                  st.sampled_from(["m1", "m2", "success"]))
_KEYS = st.sampled_from(["type", "content", "text", "toolCalls", "thoughts", "tokens", "result",
                         "resultDisplay", "args", "status", "messages", "sessionId", "id",
                         "displayContent", "functionResponse", "response", "inlineData",
                         "fileData", "functionCall", "subject", "description", "summary"])
_JSON = st.recursive(_LEAF, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4)), max_leaves=16)
_RECORD = st.one_of(
    st.builds(lambda kind, ident, rest: {**rest, "id": ident, "type": kind},
              st.sampled_from(["user", "gemini", "info", "error", "warning", "other"]),
              st.sampled_from(["m1", "m2", "m3"]), st.dictionaries(_KEYS, _JSON, max_size=4)),
    st.builds(lambda ident: {"$rewindTo": ident}, st.sampled_from(["m1", "m2", "zz"])),
    st.builds(lambda values: {"$set": values}, st.dictionaries(_KEYS, _JSON, max_size=3)),
    _JSON)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_RECORD, max_size=10))
def test_any_records_are_read_without_raising(records: list[Any]) -> None:
    builder = gemini.GeminiBuilder("unused.jsonl")
    offset = 0
    for number, record in enumerate([{"sessionId": "s", "projectHash": "p"}, *records], 1):
        data = json.dumps(record).encode()
        builder.feed(data, offset, number)
        offset += len(data) + 1
    builder.finish()
    turns = builder.session.turns
    assert [turn.index for turn in turns] == list(range(len(turns)))
    assert len({turn.id for turn in turns}) == len(turns)
    find_empty_turns(builder.session)


def test_rewritten_history_with_odd_ids_is_read(tmp_path: Path) -> None:
    """Found by the property test: an unhashable id in a `$set` history crashed the reader."""
    path = tmp_path / "session.jsonl"
    path.write_text(
        '{"sessionId": "s", "projectHash": "p"}\n'
        '{"$set": {"messages": [{"id": [], "type": "user", "content": "hi"},'
        ' {"id": {"x": 1}, "type": "gemini", "content": "", "toolCalls":'
        ' [{"id": [], "name": "ls", "args": {}}]}]}}\n', encoding="utf-8")
    session = gemini.READER.read(path, None)[0]
    assert [turn.role for turn in session.turns] == ["user", "assistant"]
    assert session.turns[1].parts[0].call_id is None
