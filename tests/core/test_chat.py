"""Generic chat readers: OpenAI-style JSON and JSON lines, and ShareGPT."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay.core.detection.empty import find_empty_turns
from replay.core.readers import ReaderError, detect_reader, get_reader, load_sessions
from replay.core.readers.base import iter_lines, read_spans
from replay.core.readers.chat_jsonl import ChatLineBuilder
from replay.core.session.model import Kind, Session, Turn
from tests.conftest import realdata


def _write(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


def _jsonl(tmp_path: Path, name: str, records: list[Any]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    return _write(tmp_path, name, "\n".join(lines) + "\n")


def _parts(turn: Turn) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    for part in turn.parts:
        if part.kind == Kind.TOOL_CALL:
            found.append((part.kind, part.name, part.input, part.output, part.call_id))
        elif part.kind in (Kind.IMAGE, Kind.FILE, Kind.OTHER):
            found.append((part.kind, part.name))
        else:
            found.append((part.kind, part.text))
    return found


def _turns(session: Session) -> list[tuple[str, str, list[tuple[Any, ...]]]]:
    return [(turn.id, turn.role, _parts(turn)) for turn in session.turns]


OPENAI = {
    "id": "conv-7",
    "model": "gpt-4o",
    "title": "listing",
    "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "developer", "content": [{"type": "input_text", "text": "no emojis"}]},
        {"role": "user", "content": "list files", "id": "u-1", "timestamp": "2024-05-01T10:00:00Z"},
        {"role": "assistant", "content": None, "model": "gpt-4.1", "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "ls", "arguments": "{\"path\": \".\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "pwd", "arguments": "{}"}},
        ]},
        {"role": "tool", "tool_call_id": "call_2", "content": "/work"},
        {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "a.py"}]},
        {"role": "assistant", "content": [{"type": "output_text", "text": "a.py"},
                                          {"type": "image_url", "image_url": {"url": "x.png"}}],
         "created": 1714557600},
        {"role": "user", "content": ""},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": None},
        {"role": "narrator", "content": "aside"},
        "not a message",
        {"role": "assistant", "content": 7},
    ],
}


def test_openai_json(tmp_path: Path) -> None:
    path = _write(tmp_path, "conv.json", OPENAI)
    assert detect_reader(path).name == "chat-json"
    [session] = load_sessions(path)
    assert (session.session_id, session.title, session.format) == ("conv-7", "listing", "chat-json")
    assert _turns(session) == [
        ("m0", "system", [(Kind.TEXT, "be brief")]),
        ("m1", "system", [(Kind.TEXT, "no emojis")]),
        ("u-1", "user", [(Kind.TEXT, "list files")]),
        ("m3", "assistant", [(Kind.TOOL_CALL, "ls", "{\"path\": \".\"}", "a.py", "call_1"),
                             (Kind.TOOL_CALL, "pwd", "{}", "/work", "call_2")]),
        ("m6", "assistant", [(Kind.TEXT, "a.py"), (Kind.IMAGE, "x.png")]),
        ("m7", "user", [(Kind.TEXT, "")]),
        ("m8", "assistant", [(Kind.TEXT, "")]),
        ("m9", "user", [(Kind.TEXT, "again")]),
        ("m10", "assistant", []),
        ("m13", "assistant", []),
    ]
    assert session.skipped == 2
    assert session.warnings == [
        "message 11: unknown role 'narrator'",
        "message 12: a str, expected an object",
        "message 13: content is a int, expected text or a list",
    ]
    turns = session.turns
    assert [t.model for t in turns if t.role == "assistant"] == ["gpt-4.1"] + ["gpt-4o"] * 4
    assert (turns[2].timestamp, turns[2].time) == ("2024-05-01T10:00:00Z", 1714557600.0)
    assert turns[4].time == 1714557600.0
    assert turns[3].source is not None and turns[3].source.record == "/messages/3"
    assert [(e.id, e.reason) for e in find_empty_turns(session)] == [
        ("m7", "blank-text"), ("m8", "blank-text"), ("m10", "no-content"), ("m13", "no-content")]


def test_harness_variant_found_by_shape(tmp_path: Path) -> None:
    doc = {"meta": {"agent": "x"}, "conversation": {"turns": 2, "log": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}}
    path = _write(tmp_path, "variant.json", doc)
    assert detect_reader(path).name == "chat-json"
    [session] = load_sessions(path)
    assert session.session_id is None
    assert _turns(session) == [("m0", "user", [(Kind.TEXT, "hi")]),
                               ("m1", "assistant", [(Kind.TEXT, "hello")])]
    assert session.turns[1].source is not None
    assert session.turns[1].source.record == "/conversation/log/1"


def test_list_of_conversations_and_bare_message_list(tmp_path: Path) -> None:
    several = [{"id": 41, "messages": [{"role": "user", "content": "a"}]},
               {"junk": True},
               {"messages": [{"role": "user", "content": "b"}]}]
    sessions = load_sessions(_write(tmp_path, "many.json", several))
    assert [(s.session_id, _turns(s)) for s in sessions] == [
        ("41", [("m0", "user", [(Kind.TEXT, "a")])]),
        ("#2", [("m0", "user", [(Kind.TEXT, "b")])]),
    ]
    assert sessions[1].turns[0].source is not None
    assert sessions[1].turns[0].source.record == "/2/messages/0"
    bare = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "r"}]
    [session] = load_sessions(_write(tmp_path, "bare.json", bare))
    assert session.session_id is None and len(session.turns) == 2


def test_anthropic_blocks_and_tool_only_user_lines(tmp_path: Path) -> None:
    doc = {"messages": [
        {"role": "user", "content": [{"type": "text", "text": "read it"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "tool_use", "id": "tu_1", "name": "Read", "input": {"path": "a"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1",
                                      "content": [{"type": "text", "text": "body"}]}]},
        {"role": "assistant", "content": [{"type": "text", "text": "\n\n"}]},
        {"role": "user", "content": [{"type": "mystery", "text": "?"}, 5]},
    ]}
    [session] = load_sessions(_write(tmp_path, "anthropic.json", doc))
    assert _turns(session) == [
        ("m0", "user", [(Kind.TEXT, "read it")]),
        ("m1", "assistant", [(Kind.REASONING, "hmm"),
                             (Kind.TOOL_CALL, "Read", "{\"path\":\"a\"}", "body", "tu_1")]),
        ("m3", "assistant", [(Kind.TEXT, "\n\n")]),
        ("m4", "user", [(Kind.OTHER, "mystery")]),
    ]
    assert session.skipped == 0 and session.warnings == ["message 4: content block is a int"]
    assert [(e.id, e.reason) for e in find_empty_turns(session)] == [
        ("m3", "blank-text"), ("m4", "no-content")]


def test_unmatched_tool_output_and_duplicate_ids(tmp_path: Path) -> None:
    doc = {"messages": [
        {"role": "tool", "content": "orphan", "tool_call_id": "zz"},
        {"role": "user", "content": "x", "id": "same"},
        {"role": "assistant", "content": "y", "id": "same"},
        {"role": "tool", "content": "late", "tool_call_id": "nope"},
        {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "1"}},
        {"role": "function", "name": "f", "content": "2"},
    ]}
    [session] = load_sessions(_write(tmp_path, "tools.json", doc))
    assert _turns(session) == [
        ("m0", "system", [(Kind.TOOL_RESULT, "orphan")]),
        ("same", "user", [(Kind.TEXT, "x")]),
        ("same@m2", "assistant", [(Kind.TEXT, "y"), (Kind.TOOL_RESULT, "late")]),
        ("m4", "assistant", [(Kind.TOOL_CALL, "f", "1", "2", None)]),
    ]


def test_gemini_parts_and_responses_items(tmp_path: Path) -> None:
    doc = {"contents": [
        {"role": "user", "parts": [{"text": "weather?"}]},
        {"role": "model", "parts": [{"text": "plan", "thought": True},
                                    {"functionCall": {"name": "get", "args": {"c": "Oslo"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get", "response": {"t": 3}}}]},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]},
        {"type": "function_call", "call_id": "c9", "name": "sh", "arguments": "ls"},
        {"type": "function_call_output", "call_id": "c9", "output": "a b"},
        {"type": "telemetry"},
        {"role": "assistant", "content": "done"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "trailing"}]},
    ]}
    [session] = load_sessions(_write(tmp_path, "gemini.json", doc))
    assert _turns(session) == [
        ("m0", "user", [(Kind.TEXT, "weather?")]),
        ("m1", "assistant", [(Kind.REASONING, "plan"),
                             (Kind.TOOL_CALL, "get", "{\"c\":\"Oslo\"}", "{\"t\":3}", None),
                             (Kind.REASONING, "think"),
                             (Kind.TOOL_CALL, "sh", "ls", "a b", "c9")]),
        ("m7", "assistant", [(Kind.TEXT, "done")]),
        ("m8", "assistant", [(Kind.REASONING, "trailing")]),
    ]
    assert session.events == 1
    assert [(e.id, e.reason) for e in find_empty_turns(session)] == [("m8", "reasoning-only")]


@pytest.mark.parametrize(
    "content",
    [b"not json at all", b'{"info": {}, "parts": []}', b"[1, 2, 3]", b'"just a string"'],
)
def test_chat_json_refuses_other_documents(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "other.json"
    path.write_bytes(content)
    with pytest.raises(ReaderError):
        get_reader("chat-json").read(path, None)
    assert get_reader("chat-json").sniff(path, content) is False


def test_large_file_sniffs_from_its_head(tmp_path: Path) -> None:
    big = {"messages": [{"role": "user", "content": "x" * 1000} for _ in range(100)]}
    path = _write(tmp_path, "big.json", json.dumps(big, indent=1))
    assert path.stat().st_size > 64 * 1024
    assert detect_reader(path).name == "chat-json"
    assert len(load_sessions(path)[0].turns) == 100
    lines = _jsonl(tmp_path, "big.jsonl", big["messages"])
    assert detect_reader(lines).name == "chat-jsonl"


JSONL = [
    {"role": "user", "content": "hi", "id": "u1", "session_id": "s-9"},
    {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]},
    {"role": "assistant", "content": "hello", "created_at": "2024-05-01T10:00:01Z"},
    "{broken",
    [1, 2],
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "function": {"name": "ls", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
    {"role": "user", "content": "   "},
    {"type": "reasoning", "summary": []},
]


def test_chat_jsonl(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, "chat.jsonl", JSONL)
    assert detect_reader(path).name == "chat-jsonl"
    [session] = load_sessions(path)
    assert (session.session_id, session.format, session.skipped) == ("s-9", "chat-jsonl", 2)
    assert session.warnings == ["line 4: not JSON", "message 4: a list, expected an object"]
    assert _turns(session) == [
        ("u1", "user", [(Kind.TEXT, "hi")]),
        ("m2", "assistant", [(Kind.REASONING, "think"), (Kind.TEXT, "hello")]),
        ("m5", "assistant", [(Kind.TOOL_CALL, "ls", "{}", "a.py", "c1")]),
        ("m7", "user", [(Kind.TEXT, "   ")]),
        ("m8", "assistant", [(Kind.REASONING, "")]),
    ]
    lines = [t.source.line for t in session.turns if t.source]
    assert lines == [1, 2, 6, 8, 9]
    merged = session.turns[1].source
    assert merged is not None and len(merged.spans) == 2
    raw = read_spans(merged.path, merged.spans)
    assert [json.loads(r)["type" if i == 0 else "role"] for i, r in enumerate(raw)] == [
        "reasoning", "assistant"]
    assert session.turns[2].source is not None and len(session.turns[2].source.spans) == 2
    assert [(e.id, e.reason) for e in find_empty_turns(session)] == [
        ("m7", "blank-text"), ("m8", "reasoning-only")]


@pytest.mark.parametrize("stop_every", [1, 2, 3])
def test_chat_jsonl_follow_matches_full_read(tmp_path: Path, stop_every: int) -> None:
    path = _jsonl(tmp_path, "chat.jsonl", JSONL)
    [expected] = load_sessions(path)
    builder = ChatLineBuilder(str(path))
    with open(path, "rb") as handle:
        for count, (line, offset, lineno) in enumerate(iter_lines(handle), start=1):
            builder.feed(line, offset, lineno)
            if count % stop_every == 0:
                builder.finish()  # follow mode settles whenever the writer pauses
    builder.finish()
    assert _turns(builder.session) == _turns(expected)
    assert [t.index for t in builder.session.turns] == list(range(len(expected.turns)))
    assert [t.source.spans for t in builder.session.turns if t.source] == [
        t.source.spans for t in expected.turns if t.source]
    assert get_reader("chat-jsonl").builder is not None


def test_chat_jsonl_conversation_per_line(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, "dataset.jsonl", [
        {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": ""}]},
        "oops",
        {"id": "x7", "messages": [{"role": "user", "content": "b"}]},
    ])
    assert detect_reader(path).name == "chat-jsonl"
    sessions = load_sessions(path)
    assert [(s.session_id, _turns(s)) for s in sessions] == [
        ("#1", [("m0", "user", [(Kind.TEXT, "a")]), ("m1", "assistant", [(Kind.TEXT, "")])]),
        ("x7", [("m0", "user", [(Kind.TEXT, "b")])]),
    ]
    assert sessions[0].skipped == 1
    assert sessions[1].turns[0].source is not None and sessions[1].turns[0].source.line == 3


SHAREGPT = [
    {"id": "conv_a", "conversations": [
        {"from": "human", "value": "2+2?"}, {"from": "gpt", "value": "4"},
        {"from": "human", "value": ""}, {"from": "gpt", "value": "Anything else?"}]},
    {"system": "you can call tools", "conversations": [
        {"from": "human", "value": "weather"},
        {"from": "function_call", "value": "{\"name\": \"get\", \"arguments\": {\"c\": 1}}"},
        {"from": "observation", "value": "sunny"},
        {"from": "gpt", "value": ""},
        {"from": "alien", "value": "?"},
        {"from": "gpt", "value": None}]},
]


def test_sharegpt_list(tmp_path: Path) -> None:
    path = _write(tmp_path, "sharegpt.json", SHAREGPT)
    assert detect_reader(path).name == "sharegpt"
    sessions = load_sessions(path)
    assert [s.session_id for s in sessions] == ["conv_a", "#2"]
    assert _turns(sessions[0]) == [
        ("m0", "user", [(Kind.TEXT, "2+2?")]), ("m1", "assistant", [(Kind.TEXT, "4")]),
        ("m2", "user", [(Kind.TEXT, "")]), ("m3", "assistant", [(Kind.TEXT, "Anything else?")])]
    assert _turns(sessions[1]) == [
        ("system", "system", [(Kind.TEXT, "you can call tools")]),
        ("m0", "user", [(Kind.TEXT, "weather")]),
        ("m1", "assistant", [(Kind.TOOL_CALL, "get", "{\"c\":1}", "sunny", None)]),
        ("m3", "assistant", [(Kind.TEXT, "")]),
        ("m5", "assistant", []),
    ]
    assert sessions[1].skipped == 1 and sessions[1].warnings == [
        "conversations 4: unknown speaker 'alien'"]
    assert sessions[1].turns[2].source is not None
    assert sessions[1].turns[2].source.record == "/1/conversations/1"
    assert [(e.id, e.reason) for e in find_empty_turns(sessions[0])] == [("m2", "blank-text")]
    assert [(e.id, e.reason) for e in find_empty_turns(sessions[1])] == [
        ("m3", "blank-text"), ("m5", "no-content")]


def test_sharegpt_single_and_jsonl(tmp_path: Path) -> None:
    single = _write(tmp_path, "one.json", SHAREGPT[0])
    [session] = load_sessions(single)
    assert session.format == "sharegpt" and session.session_id == "conv_a"
    lines = _jsonl(tmp_path, "many.jsonl", [SHAREGPT[1], "nope", SHAREGPT[0]])
    assert detect_reader(lines).name == "sharegpt"
    sessions = load_sessions(lines)
    assert [(s.session_id, len(s.turns)) for s in sessions] == [("#1", 5), ("conv_a", 4)]
    assert sessions[0].skipped == 2  # the unknown speaker and the bad line
    assert sessions[1].turns[0].source is not None and sessions[1].turns[0].source.line == 3


def test_sharegpt_function_call_value_not_json(tmp_path: Path) -> None:
    doc = {"conversations": [{"from": "function_call", "value": "get(1)"},
                             {"from": "function_call", "value": 12}]}
    [session] = load_sessions(_write(tmp_path, "odd.json", doc))
    assert _turns(session) == [("m0", "assistant", [(Kind.TOOL_CALL, None, "get(1)", None, None)]),
                               ("m1", "assistant", [(Kind.TOOL_CALL, None, "12", None, None)])]


def test_forced_formats_refuse_each_other(tmp_path: Path) -> None:
    sharegpt = _write(tmp_path, "s.json", SHAREGPT)
    with pytest.raises(ReaderError):
        load_sessions(sharegpt, format="chat-json")
    openai = _write(tmp_path, "o.json", OPENAI)
    with pytest.raises(ReaderError):
        load_sessions(openai, format="sharegpt")
    with pytest.raises(ReaderError):
        load_sessions(_jsonl(tmp_path, "x.jsonl", ["{", "nope"]), format="sharegpt")


def test_large_sharegpt_sniffs_from_its_head(tmp_path: Path) -> None:
    turns = [{"from": "human", "value": "y" * 1000} for _ in range(100)]
    path = _write(tmp_path, "big.json", [{"conversations": turns}])
    assert path.stat().st_size > 64 * 1024
    assert detect_reader(path).name == "sharegpt"
    # Tool arguments that merely mention from/value do not make a chat file ShareGPT.
    chat = {"messages": [{"role": "user", "content": "z" * 1000, "meta": {"from": 1, "value": 2}}
                         for _ in range(100)]}
    assert detect_reader(_write(tmp_path, "chat.json", json.dumps(chat, indent=1))).name == \
        "chat-json"


GENERIC = ("chat-json", "chat-jsonl", "sharegpt", "aider")


def test_generic_sniffers_leave_real_transcripts_alone() -> None:
    root = realdata("")
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != "SOURCES.md")
    assert len(files) == 21
    claimed = [(reader, path.name) for path in files for reader in GENERIC
               if get_reader(reader).sniff(path, path.read_bytes()[:64 * 1024])]
    assert claimed == []
