"""The scan's own feed of the Claude Code builder builds what the builder's `feed` builds, as far
as a scan reads it: every turn, part, source span, warning and event, on the real files, the
samples and records made to trip a shortcut."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.core.readers.base import iter_lines
from replay.core.readers.claude_code_builder import ClaudeCodeBuilder
from replay.core.session.model import Part, Session, Turn, parse_time
from replay.core.session.text import shorten
from tests.conftest import REALDATA, SAMPLES

PART_FIELDS = ("kind", "text", "name", "status", "call_id", "synthetic", "duration", "mime",
               "shortened", "length", "hidden")
"""Everything of a part but its input and output text (a scan keeps neither)."""

TURN_FIELDS = ("id", "role", "timestamp", "time", "completed", "agent", "is_summary",
               "is_meta", "index", "note")
"""Everything of a turn but its model and token counts (nothing a scan reports)."""


def _part(part: Part) -> tuple[Any, ...]:
    return tuple(getattr(part, name) for name in PART_FIELDS)


def _turn(turn: Turn) -> tuple[Any, ...]:
    source = turn.source
    return (*(getattr(turn, name) for name in TURN_FIELDS),
            None if source is None else (source.path, source.line, source.spans),
            [_part(part) for part in turn.parts])


def _session(session: Session) -> tuple[Any, ...]:
    return (session.session_id, session.title, session.skipped, list(session.warnings),
            session.events, dict(session.meta), [_turn(turn) for turn in session.turns])


def _built(path: Path, scan: bool, limit: int | None = 2000) -> ClaudeCodeBuilder:
    builder = ClaudeCodeBuilder(str(path), limit=limit)
    scan_feed = builder.for_scan()
    feed = scan_feed if scan else builder.feed
    with open(path, "rb") as handle:
        for line, offset, lineno in iter_lines(handle, views=scan):
            feed(line, offset, lineno)
    builder.finish()  # (the scan's feed settles a reply's end time here, or when read)
    return builder


def _assert_same(path: Path, limit: int | None = 2000) -> Session:
    scanned, fed = _built(path, True, limit), _built(path, False, limit)
    assert _session(scanned.session) == _session(fed.session)
    return scanned.session


def _claude_files() -> list[Path]:
    files = [SAMPLES / "refactor.claude-code.jsonl"]
    return files + sorted((REALDATA / "claude-code").glob("*.jsonl"))


@pytest.mark.parametrize("path", _claude_files(), ids=lambda path: path.name[-40:])
def test_real_files_build_the_same(path: Path) -> None:
    _assert_same(path)
    _assert_same(path, limit=None)
    _assert_same(path, limit=40)


def _record(kind: str, uuid: str, message: Any = None, **fields: Any) -> bytes:
    record = {"type": kind, "uuid": uuid, "sessionId": "s-1", "parentUuid": None,
              "timestamp": f"2026-03-01T10:00:{int(uuid[1:]) % 60:02d}.250Z", **fields}
    if message is not None:
        record["message"] = message
    return orjson.dumps(record)


def _call(call_id: str, name: str, message_id: str, **input_: Any) -> dict[str, Any]:
    return {"role": "assistant", "id": message_id, "model": "claude-opus-4-6",
            "usage": {"input_tokens": 3, "output_tokens": 9},
            "content": [{"type": "tool_use", "id": call_id, "name": name, "input": input_}]}


def _result(call_id: str, content: Any, error: bool = False) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                         "content": content, "is_error": error}]}


TRICKY: list[bytes] = [
    _record("user", "u1", {"role": "user", "content": "please look at the reader"}),
    _record("assistant", "u2", _call("toolu_1", "Bash", "msg_1", command="ls")),
    # A result whose text holds the bytes of bookkeeping records and of other keys.
    _record("user", "u3", _result("toolu_1", '{"type":"progress"} "type" : "queue-operation" '
                                  '"tool_use_id":"toolu_9" "is_error":true'),
            toolUseResult={"type": "progress", "stdout": '"type":"user"'}),
    # Whitespace and escapes where a byte check would look.
    b'{"type" : "progress" , "uuid":"u4","sessionId":"s-1","data":{"type":"hook_progress"}}',
    b'{"\\u0074ype":"assistant","uuid":"u5","sessionId":"s-1","timestamp":'
    b'"2026-03-01T10:00:05.000Z","message":{"role":"assistant","id":"msg_2","content":'
    b'[{"type":"text","text":"escaped key"}]}}',
    b'{"type":"user","uuid":"u6","sessionId":"s-1","timestamp":"2026-03-01T10:00:06Z",'
    b'"message":{"role":"user","content":"\\u0070lease \\"go\\" on"}}',
    # An Agent call, its long result (the part is shortened), then a short one.
    _record("assistant", "u7", _call("toolu_2", "Task", "msg_3", prompt="find the tests")),
    _record("user", "u8", _result("toolu_2", [{"type": "text", "text": "agentId: a1 " * 40}]),
            toolUseResult={"agentId": "a1", "content": []}),
    _record("assistant", "u9", _call("toolu_3", "Agent", "msg_4", prompt="short")),
    _record("user", "u10", _result("toolu_3", "done", error=True)),
    # One response over several lines, a result in between, then its text.
    _record("assistant", "u11", {"role": "assistant", "id": "msg_5", "content": [
        {"type": "thinking", "thinking": "", "signature": "EqAbC"}]}),
    _record("assistant", "u12", _call("toolu_4", "Read", "msg_5", file_path="a.py")),
    _record("user", "u13", _result("toolu_4", "x" * 500)),
    _record("assistant", "u14", {"role": "assistant", "id": "msg_5", "content": [
        {"type": "text", "text": "word " * 600}, {"type": "server_tool_use", "id": "srv_1",
                                                  "name": "web_search", "input": {}},
        {"type": "redacted_thinking", "data": "abc"}, {"type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": "AAAA"}},
        {"type": "document", "title": "spec.pdf"}, {"type": "web_search_tool_result",
                                                    "tool_use_id": "srv_1", "content": []},
        {"type": "mystery"}]}),
    # Results without their call, mixed with text, twice for one call, with no id.
    _record("user", "u15", _result("toolu_missing", "orphan output")),
    _record("user", "u16", {"role": "user", "content": [
        {"type": "text", "text": "and also"},
        {"type": "tool_result", "tool_use_id": "toolu_4", "content": "again"},
        {"type": "tool_result", "content": None}]}),
    # Fields the decoder checks that a scan never reads, malformed: usage, model, role.
    _record("assistant", "u17", {"role": "assistant", "id": "msg_6", "model": 7,
                                 "usage": "lots", "content": [{"type": "text", "text": "a"}]}),
    _record("assistant", "u18", {"role": 5, "id": "msg_7", "usage": {"input_tokens": "x"},
                                 "content": "plain string reply"}),
    b'{"type":"assistant","uuid":"u19","message":{"role":"assistant","model":"\xff\xfe",'
    b'"content":[]}}',
    b'{"type":"assistant","uuid":"u20","message":{"role":"assistant","usage":'
    + b"[" * 3000 + b"]" * 3000 + b',"content":[]}}',
    b'{"type":"user","uuid":"u21","message":{"content":"x"},"toolUseResult":'
    + b"[" * 3000 + b"]" * 3000 + b"}",
    # Records that cannot be read, each one warning.
    b'{"type":"user","uuid":"u22","message":"a string"}',
    b'{"type":"assistant","uuid":"u23","message":{"role":"assistant"}}',
    b'{"type":"user","uuid":"u24","message":{"role":"user","content":[1, 2]}}',
    b'{"type":"user","uuid":"u25","message":{"role":"user","content":5}}',
    b'{"uuid":"u26","message":{}}',
    b'[1, 2, 3]',
    b'{"type":"user","uuid":"u27","message":{"role":"user","content":"cut',
    b'{"type":"user","isMeta":"yes","uuid":"u28","message":{"role":"user","content":"m"}}',
    # Meta and compaction flags, bookkeeping and titles.
    _record("user", "u29", {"role": "user", "content": "<local-command-stdout>"
                            "</local-command-stdout>"}, isMeta=True),
    _record("user", "u30", {"role": "user", "content": "summary of before"},
            isCompactSummary=True),
    b'{"type":"summary","summary":"First title","leafUuid":"u1"}',
    b'{"type":"custom-title","customTitle":"Named by the person","sessionId":"s-1"}',
    b'{"type":"file-history-snapshot","messageId":"u1","snapshot":{}}',
    b'{"type":"queue-operation","operation":"enqueue","sessionId":"s-1"}',
    _record("assistant", "u31", {"role": "assistant", "id": "msg_8", "content": [
        {"type": "thinking", "thinking": "t" * 300}, {"type": "text", "text": "\n\n"}]}),
    b'{"type":"assistant","uuid":"u32","timestamp":"yesterday","message":{"role":"assistant",'
    b'"content":[{"type":"text","text":"odd time"}]}}',
    b'{"type":"assistant","uuid":"u33","timestamp":"2026-03-01T10:00:33+02:00","message":'
    b'{"role":"assistant","id":"msg_9","content":[{"type":"text","text":"offset time"}]}}',
    # Records a byte check on a line's start would take for bookkeeping, and are not (or
    # the other way round): a later "type" key wins, keys in another order, escapes in the
    # type's value, quotes escaped as \u0022, white space around every token.
    b'{"type":"progress","uuid":"u34","type":"user","timestamp":"2026-03-01T10:00:34Z",'
    b'"message":{"role":"user","content":"a later type key wins"}}',
    b'{"message":{"role":"user","content":"the type comes last"},"uuid":"u35","type":"user"}',
    b'{"type":"progr\\u0065ss","uuid":"u36","data":{"type":"user"}}',
    b'{"type":"user","uuid":"u37","message":{"role":"user","content":'
    b'"quote \\u0022type\\u0022:\\u0022progress\\u0022 \\" done"}}',
    b'{"type":"summ\\u0061ry","summary":"Escaped kind","leafUuid":"u1"}',
    b'{\t"type"\t:\t"assistant" ,"uuid":"u38", "message" : {"role":"assistant","id":"msg_10",'
    b'"content":[ {"type" :"text","text":"spaced"} ]} }',
    b'\t{"type":"user","uuid":"u39","message":{"role":"user","content":"a tab first"}} ',
]
"""Records of every kind the scan's feed handles inline or hands on, and records that would
trip a shortcut taken by their bytes."""


def test_tricky_records_build_the_same(tmp_path: Path) -> None:
    path = tmp_path / "tricky.jsonl"
    path.write_bytes(b"\n".join(TRICKY) + b"\n")
    for limit in (40, None):
        _assert_same(path, limit)
    session = _assert_same(path)
    assert session.skipped >= 8 and session.events == 7
    assert session.title == "Named by the person"
    by_id = {turn.id: turn for turn in session.turns}
    assert by_id["u34"].parts[0].text == "a later type key wins"
    assert {"u35", "u37", "msg_10", "u39"} <= set(by_id) and "u36" not in by_id
    assert by_id["u37"].parts[0].text == 'quote "type":"progress" " done'
    kinds = {part.kind for turn in session.turns for part in turn.parts}
    assert {"text", "reasoning", "tool_call", "tool_result", "image", "file"} <= kinds
    agent_calls = [part for turn in session.turns for part in turn.parts if part.name == "Task"]
    assert agent_calls and agent_calls[0].shortened and agent_calls[0].status == "completed"


def test_many_responses_forget_old_messages_alike(tmp_path: Path) -> None:
    # More responses than the builder remembers for grouping, and one that comes back.
    lines = []
    for number in range(9000):
        lines.append(_record("assistant", f"u{number}", {"role": "assistant",
                                                         "id": f"msg_{number}", "content": [
                                                             {"type": "text", "text": "hi"}]}))
    lines.append(_record("assistant", "u9001", {"role": "assistant", "id": "msg_8990",
                                                "content": [{"type": "text", "text": "more"}]}))
    lines.append(_record("assistant", "u9002", {"role": "assistant", "id": "msg_3",
                                                "content": [{"type": "text", "text": "late"}]}))
    path = tmp_path / "many.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    session = _assert_same(path)
    assert len(session.turns) == 9001


def _reply_line(uuid: str, message_id: str, timestamp: str | None) -> bytes:
    record: dict[str, Any] = {"type": "assistant", "uuid": uuid, "sessionId": "s-1",
                              "message": {"role": "assistant", "id": message_id,
                                          "content": [{"type": "text", "text": uuid}]}}
    if timestamp is not None:
        record["timestamp"] = timestamp
    return orjson.dumps(record)


def test_a_replys_end_time_is_the_same_whenever_a_scan_reads_it(tmp_path: Path) -> None:
    # The scan's feed settles a reply's `completed` from its later lines only when asked
    # (`settle_times`, before a scan reads any turn): asked after every line, it must give
    # what `feed` gives at that line, whatever the later lines' times and order.
    lines = [
        _reply_line("a1", "msg_a", "2026-03-01T10:00:01.000Z"),
        _reply_line("a2", "msg_a", "2026-03-01T10:00:02.500Z"),
        _reply_line("a3", "msg_a", "yesterday"),  # unreadable: the time before it stays
        _reply_line("a4", "msg_a", None),
        _reply_line("b1", "msg_b", "2026-03-01T10:00:05.000Z"),
        _reply_line("a5", "msg_a", "2026-03-01T10:00:06.000Z"),  # an earlier reply again
        _record("user", "u1", {"role": "user", "content": "next"}),
        _reply_line("b2", "msg_b", "2026-03-01T10:00:08.000+02:00"),
        _reply_line("b3", "msg_b", ""),
        _reply_line("b4", "msg_b", "2026-03-01T10:00:09Z"),
        _reply_line("b5", "msg_b", "2026-13-01T10:00:10.000Z"),  # month 13: unreadable
    ]
    scanned, fed = ClaudeCodeBuilder("x.jsonl"), ClaudeCodeBuilder("x.jsonl")
    scan_feed = scanned.for_scan()
    offset = 0
    for number, line in enumerate(lines, 1):
        scan_feed(memoryview(line), offset, number)
        fed.feed(line, offset, number)
        offset += len(line) + 1
        scanned.settle_times()
        assert [_turn(turn) for turn in scanned.session.turns] == \
            [_turn(turn) for turn in fed.session.turns]
    completed = {turn.id: turn.completed for turn in fed.session.turns}
    assert completed["msg_a"] == parse_time("2026-03-01T10:00:06.000Z")[1]
    assert completed["msg_b"] == parse_time("2026-03-01T10:00:09Z")[1]


def test_a_scan_uses_the_scan_feed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.corpus.scan import scan_file
    from replay.core.readers import detect_reader

    fed: list[int] = []
    scan_feed = ClaudeCodeBuilder._scan_feed

    def counted(self: ClaudeCodeBuilder, line: bytes, offset: int, lineno: int) -> None:
        fed.append(lineno)
        scan_feed(self, line, offset, lineno)

    monkeypatch.setattr(ClaudeCodeBuilder, "_scan_feed", counted)
    path = SAMPLES / "refactor.claude-code.jsonl"
    report = scan_file(detect_reader(path), path)
    assert fed and len(fed) == len(path.read_bytes().splitlines())
    assert report.to_json()["turns"] > 0


@pytest.mark.parametrize("path", sorted(_claude_files(), key=lambda path: -path.stat().st_size)[:3],
                         ids=lambda path: path.name[-40:])
def test_feeding_makes_no_reference_cycles(path: Path, tmp_path: Path) -> None:
    # `acyclic` lets a scan skip the garbage collector: every object feeding makes must be
    # freed by reference counting alone, tricky and unreadable records included.
    import gc

    assert ClaudeCodeBuilder.acyclic
    tricky = tmp_path / "tricky.jsonl"
    tricky.write_bytes(b"\n".join(TRICKY) + b"\n")
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for source in (path, tricky):
            for scan in (True, False):
                builder = _built(source, scan)
                assert builder.session.turns
                del builder
        assert gc.collect() == 0
    finally:
        if was_enabled:
            gc.enable()


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(["a", "word", " ", "\n", "\t", "\u3000", "<", ">", "/", "<a>",
                                 "</a>", "<b x=1>", "</b>", "<br/>", "<a", "-->", "é"]),
                max_size=30),
       st.integers(min_value=1, max_value=24), st.booleans())
def test_a_long_texts_head_is_what_shorten_keeps(pieces: list[str], limit: int,
                                                 synthetic: bool) -> None:
    # `_text_part` keeps the head itself when words come before any tag (no pass over the
    # whole text); it must keep what `shorten` keeps, blank texts and heads included.
    text = "".join(pieces)
    part = ClaudeCodeBuilder("x.jsonl")._text_part("text", text, limit, synthetic)
    if len(text) <= limit:
        assert (part.text, part.shortened, part.length) == (text, False, -1)
        return
    short, _ = shorten(text, limit)
    assert (part.text, part.shortened, part.length, part.synthetic) == \
        (short or "", True, len(text), synthetic)


# ---------------------------------------------------------------- an Agent result's length

_TEXTS = st.text(alphabet=st.sampled_from(["a", " ", "é", "\n", '"', "\\", "😀", "\u2028",
                                           "<", "\x00"]), max_size=300)
_BLOCK = st.one_of(
    st.builds(lambda text: {"type": "text", "text": text}, _TEXTS),
    _TEXTS,
    st.builds(lambda text: {"text": text, "type": "image"}, _TEXTS),
    st.builds(lambda name: {"type": "tool_reference", "tool_name": name}, _TEXTS),
    st.just({}), st.just({"type": "text", "text": 5}), st.just([1, 2]), st.just(None),
    st.integers(-10, 10))


def _encodings(value: object) -> list[bytes]:
    import json

    return [orjson.dumps(value), json.dumps(value).encode(), json.dumps(value, indent=1,
            ensure_ascii=False).encode()]


@settings(max_examples=600, deadline=None)
@given(value=st.one_of(_TEXTS, st.lists(_BLOCK, max_size=6)),
       limit=st.sampled_from([0, 1, 5, 40, 120]), index=st.integers(0, 2))
def test_whether_an_agent_result_is_long_is_read_as_its_whole_text(
        value: object, limit: int, index: int) -> None:
    import msgspec

    from replay.core.readers.claude_code_builder import _full_content, _longer_than

    raw = msgspec.Raw(_encodings(value)[index])
    assert _longer_than(raw, limit) == (len(_full_content(raw)) > limit)


@pytest.mark.parametrize("raw", [
    # A later key wins (as orjson reads it): the first block is an image, not the text.
    b'[{"type":"text","text":"' + b"x" * 300 + b'","type":"image"}]',
    b'[{"type":"text","text":"' + b"x" * 300 + b'","text":"short"}]',
    # Bytes orjson refuses further on: the text is then the raw bytes, replaced.
    b'[{"type":"text","text":"' + b"x" * 300 + b'"},"\xff"]',
    b'"' + b"x" * 300 + b'\xff"',
    b'[{"type":"text","text":"' + b"x" * 300 + b'"},' + b"[" * 2000 + b"]" * 2000 + b"]",
    # Escapes at the head's cut, and a head of only escapes.
    b'"' + b"\\ud83d\\ude00" * 40 + b'"', b'"' + b"\\n" * 200 + b'"', b'"' + b"\\" * 2 + b'"',
    b'[' + b'{},' * 100 + b'{}]', b'[]', b'""', b'null', b'{"type":"text"}', b'7',
    b'[{"type":"text"}' + b',{}' * 100 + b']',
])
def test_an_agent_results_length_on_odd_contents(raw: bytes) -> None:
    import msgspec

    from replay.core.readers.claude_code_builder import _full_content, _longer_than

    for limit in (0, 3, 40, 120, 299, 300, 301):
        assert _longer_than(msgspec.Raw(raw), limit) == (
            len(_full_content(msgspec.Raw(raw))) > limit), limit
