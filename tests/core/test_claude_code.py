"""The Claude Code reader: real files, response grouping, tool results, sidechains, laziness."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay.core.detection.empty import find_empty_turns, is_empty
from replay.core.readers import ReaderError, detect_reader, load_sessions
from replay.core.readers.base import HEAD_BYTES, iter_lines, read_head, read_spans
from replay.core.readers.claude_code import READER, sniff
from replay.core.readers.claude_code_builder import SIDE_PREVIEW_CHARS, ClaudeCodeBuilder
from replay.core.session.model import Kind, Part, Session, Turn
from replay.core.session.text import PREVIEW_CHARS
from tests.conftest import REALDATA, realdata

PROJECTS = "claude-code/claude-code-log__test_data__real_projects__"
EDGE = "claude-code/claude-code-log__test_data__edge_cases.jsonl"
RECORDER_DIR = PROJECTS + "-Users-dain-workspace-JSSoundRecorder__"
EMPTY_FILE = RECORDER_DIR + "2c5941bd-b9de-41d6-9414-221d175776f7.jsonl"
RECORDER = RECORDER_DIR + "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"
SAMPLE_DIR = PROJECTS + "-Users-dain-workspace-claude-code-log-sample__"
SUMMARY_ONLY = SAMPLE_DIR + "4e27c414-a885-46a0-b5c8-d58e1417377d.jsonl"
SAMPLE = SAMPLE_DIR + "fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl"
OLD_AGENT = PROJECTS + "-Users-dain-workspace-coderabbit-review-helper__agent-5e37fdd5.jsonl"
IDEAS = PROJECTS + "-experiments-ideas__03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
WORKTREES_ID = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
WORKTREES = PROJECTS + f"-experiments-worktrees__{WORKTREES_ID}.jsonl"
SUBAGENT_STEM = (PROJECTS + f"-experiments-worktrees__{WORKTREES_ID}__subagents__"
                 "agent-a36efb2a1231c41e2")
SUBAGENT = SUBAGENT_STEM + ".jsonl"
CODEMIE = "claude-code/codemie-code__tests__integration__session__fixtures__session-9eda1058.jsonl"

# file: (turns, user turns, assistant turns, events, skipped), counted by hand from the
# lines: assistant turns = distinct message.id; user turns = user lines not made only of
# tool results; events = every other typed line.
COUNTS = {
    EDGE: (10, 6, 4, 1, 7),
    EMPTY_FILE: (0, 0, 0, 0, 0),
    RECORDER: (44, 8, 36, 12, 0),
    SUMMARY_ONLY: (0, 0, 0, 1, 0),
    SAMPLE: (39, 5, 34, 15, 0),
    OLD_AGENT: (1, 0, 1, 0, 0),
    IDEAS: (19, 10, 9, 27, 0),
    WORKTREES: (22, 5, 17, 73, 0),
    SUBAGENT: (7, 1, 6, 0, 0),
    CODEMIE: (9, 4, 5, 21, 0),
}

SESSION_ID = "5b0d6c1e-2f64-4c1b-9a55-6f1f0a4f7e21"


def load(relative: str) -> Session:
    sessions = load_sessions(realdata(relative))
    assert len(sessions) == 1
    return sessions[0]


def turn_by_id(session: Session, turn_id: str) -> Turn:
    return next(turn for turn in session.turns if turn.id == turn_id)


# --- writing small sessions ------------------------------------------------------------------


class Lines:
    """Builds Claude Code records the way the tool writes them."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any] | str] = []
        self.second = 0

    def _envelope(self, kind: str, uuid: str, **fields: Any) -> dict[str, Any]:
        self.second += 1
        return {"parentUuid": None, "isSidechain": False, "type": kind, "sessionId": SESSION_ID,
                "version": "2.1.0", "cwd": "/work", "gitBranch": "main", "uuid": uuid,
                "timestamp": f"2026-01-01T10:00:{self.second:02d}.000Z", **fields}

    def user(self, uuid: str, content: Any, **fields: Any) -> Lines:
        self.records.append(self._envelope(
            "user", uuid, message={"role": "user", "content": content}, **fields))
        return self

    def assistant(self, uuid: str, message_id: str, *blocks: dict[str, Any],
                  output_tokens: int = 10) -> Lines:
        self.records.append(self._envelope("assistant", uuid, message={
            "id": message_id, "type": "message", "role": "assistant", "model": "claude-test",
            "content": list(blocks),
            "usage": {"input_tokens": 3, "output_tokens": output_tokens,
                      "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0}}))
        return self

    def result(self, uuid: str, call_id: str, content: Any, *, is_error: bool = False,
               tool_use_result: Any = None) -> Lines:
        fields = {} if tool_use_result is None else {"toolUseResult": tool_use_result}
        return self.user(uuid, [{"type": "tool_result", "tool_use_id": call_id,
                                 "content": content, "is_error": is_error}], **fields)

    def raw(self, record: dict[str, Any] | str) -> Lines:
        self.records.append(record)
        return self

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(
            (record if isinstance(record, str) else json.dumps(record)) + "\n"
            for record in self.records), encoding="utf-8")
        return path


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(call_id: str, name: str = "Bash", **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments or {"x": 1}}


def read_one(path: Path) -> Session:
    sessions = READER.read(path, None)
    assert len(sessions) == 1
    return sessions[0]


# --- the real files --------------------------------------------------------------------------


@pytest.mark.parametrize("relative", sorted(COUNTS), ids=lambda name: name[-40:])
def test_real_files_group_as_claude_code_does(relative: str) -> None:
    path = realdata(relative)
    assert detect_reader(path).name == "claude-code"
    session = load(relative)
    roles = [turn.role for turn in session.turns]
    assert (len(session.turns), roles.count("user"), roles.count("assistant"), session.events,
            session.skipped) == COUNTS[relative]
    assert [turn.index for turn in session.turns] == list(range(len(session.turns)))


def test_every_real_claude_code_file_is_covered() -> None:
    if not REALDATA.is_dir():
        pytest.skip("../shared/realdata is not beside the repository")
    names = {f"claude-code/{path.name}" for path in (REALDATA / "claude-code").glob("*.jsonl")}
    assert names == set(COUNTS)


def test_exactly_one_empty_turn_in_all_the_real_files() -> None:
    found = [(relative, empty) for relative in sorted(COUNTS)
             for empty in find_empty_turns(load(relative))]
    assert len(found) == 1
    relative, empty = found[0]
    assert relative == SAMPLE
    assert (empty.id, empty.role, empty.reason) == (
        "fe37cae6-5eb1-4f62-b2e5-b7f7425aedbb", "user", "empty-wrapper")
    turn = turn_by_id(load(SAMPLE), empty.id)
    assert [part.text for part in turn.parts] == ["<local-command-stdout></local-command-stdout>"]


def test_edge_cases_count_each_bad_line() -> None:
    session = load(EDGE)
    assert session.skipped == 7
    assert [warning.split(":")[0] for warning in session.warnings] == [
        "line 10", "line 11", "line 13", "line 14", "line 15", "line 16", "line 18"]
    failing = turn_by_id(session, "edge_004").parts[0]
    assert (failing.kind, failing.name, failing.status) == (Kind.TOOL_CALL, "FailingTool", "error")
    assert failing.output is not None and failing.output.startswith("Error: Tool execution failed")
    # Its result line misspells `content`: the call never got a readable result.
    assert [p.status for p in turn_by_id(session, "edge_009").parts] == [None, "pending"]


def test_blank_text_lines_join_their_response() -> None:
    session = load(IDEAS)
    blank_only = ["msg_01UHi2Lt3JY6hKT2YohPo25U", "msg_01Ed6t7MQDew7A8RnvCXfoQx",
                  "msg_01CAgUXyPMrcZLbyeRW4W25K", "msg_01F9RwXxPTymSnjvME4X7w8K",
                  "msg_01S5L7Tj3zt7QYuhzqtQj2qJ", "msg_01EfSS5axx8kM8Dm5gmuojYA"]
    for message_id in blank_only:
        turn = turn_by_id(session, message_id)
        assert turn.parts[0].text == "\n\n"
        assert [p.kind for p in turn.parts[1:3]] == [Kind.REASONING, Kind.TEXT]
        assert not is_empty(turn)
    assert len(turn_by_id(session, blank_only[0]).source.spans) == 5  # type: ignore[union-attr]
    assert [t.id for t in session.turns if t.is_meta] == ["d008e68d-eb7f-42d3-8ed1-137c9eb25eb3"]


def test_signature_only_thinking_is_reasoning_of_length_zero() -> None:
    session = load(WORKTREES)
    reasoning = [p for t in session.turns for p in t.parts if p.kind == Kind.REASONING]
    assert len(reasoning) == 14
    assert {p.text_length for p in reasoning} == {0}


def test_session_facts_and_first_response() -> None:
    session = load(WORKTREES)
    assert session.session_id == WORKTREES_ID
    assert session.meta == {"version": "2.1.114", "cwd": "-experiments/worktrees",
                            "gitBranch": "master"}
    first, response = session.turns[0], session.turns[1]
    assert (first.id, first.role, first.timestamp) == (
        "0ae44287-6fb8-4325-acd4-934696671e09", "user", "2026-04-18T13:18:42.368Z")
    assert (response.id, response.model, response.tokens) == (
        "msg_01XwTPVdM5y8bf1EDKvGBV35", "claude-opus-4-7",
        {"input": 6, "output": 2201, "cache_read": 0, "cache_creation": 27860})
    assert [p.kind for p in response.parts] == [Kind.REASONING, Kind.TEXT, Kind.TOOL_CALL]
    assert response.source is not None and response.source.line == 9
    # Three lines of the response plus the line holding its tool result.
    lines = read_spans(str(realdata(WORKTREES)), response.source.spans)
    records = [orjson.loads(line) for line in lines]
    assert [r["type"] for r in records] == ["assistant", "assistant", "assistant", "user"]
    assert records[3]["message"]["content"][0]["tool_use_id"] == response.parts[2].call_id
    assert response.time is not None and response.completed is not None
    assert response.completed >= response.time


def test_tool_results_land_on_their_calls() -> None:
    session = load(RECORDER)
    calls = [p for t in session.turns for p in t.parts if p.kind == Kind.TOOL_CALL]
    assert len(calls) == 71
    assert not [p for t in session.turns for p in t.parts if p.kind == Kind.TOOL_RESULT]
    assert sum(p.status == "error" for p in calls) == 6
    assert sum(p.status == "completed" for p in calls) == 65
    assert sum(p.output == "" for p in calls) == 3  # results written with content ""
    assert [t.id for t in session.turns if t.is_meta] == ["b4562b56-a53d-47b5-9fce-af88de53eb9c"]


# --- grouping and tool results ---------------------------------------------------------------


def test_lines_of_one_response_are_one_turn(tmp_path: Path) -> None:
    path = (Lines()
            .user("u1", "list the files")
            .assistant("a1", "msg_1", {"type": "thinking", "thinking": "", "signature": "x"})
            .assistant("a2", "msg_1", text("Looking."))
            .assistant("a3", "msg_1", tool_use("call_1", command="ls"))
            .assistant("a4", "msg_1", tool_use("call_2", command="pwd"), output_tokens=42)
            .result("u2", "call_1", "a.txt")
            .result("u3", "call_2", [text("/work"), {"type": "image"}], is_error=True)
            .raw({"type": "progress", "sessionId": SESSION_ID, "uuid": "p1"})
            .assistant("a5", "msg_2", text("Done."))
            .write(tmp_path / "s.jsonl"))
    session = read_one(path)
    assert [(t.id, t.role) for t in session.turns] == [
        ("u1", "user"), ("msg_1", "assistant"), ("msg_2", "assistant")]
    response = session.turns[1]
    assert [p.kind for p in response.parts] == [Kind.REASONING, Kind.TEXT, Kind.TOOL_CALL,
                                                Kind.TOOL_CALL]
    first, second = response.parts[2:]
    assert (first.call_id, first.input, first.output, first.status) == (
        "call_1", '{"command": "ls"}', "a.txt", "completed")
    assert (second.output, second.status) == ("/work\n[image]", "error")
    assert response.tokens == {"input": 3, "output": 42, "cache_read": 100, "cache_creation": 0}
    assert response.source is not None and len(response.source.spans) == 6
    assert session.events == 1 and session.skipped == 0


def test_results_without_a_known_call(tmp_path: Path) -> None:
    path = (Lines()
            .result("u0", "call_before", "orphan at the start")
            .assistant("a1", "msg_1", text("Hello"))
            .result("u1", "call_elsewhere", "late result", is_error=True)
            .user("u2", [text("and this"), {"type": "tool_result", "tool_use_id": "zz",
                                             "content": "mixed"}])
            .write(tmp_path / "s.jsonl"))
    session = read_one(path)
    # A result whose call is not in the session is harness output of its own (a system turn),
    # never attached to an unrelated reply; a line that also holds text stays the person's.
    assert [(t.id, t.role) for t in session.turns] == [
        ("u0", "system"), ("msg_1", "assistant"), ("u1", "system"), ("u2", "user")]
    orphan = session.turns[0].parts[0]
    assert (orphan.kind, orphan.text, orphan.call_id) == (
        Kind.TOOL_RESULT, "orphan at the start", "call_before")
    assert session.turns[0].is_meta and session.turns[2].is_meta
    assert [p.kind for p in session.turns[1].parts] == [Kind.TEXT]
    late = session.turns[2].parts
    assert [(p.kind, p.text, p.status) for p in late] == [
        (Kind.TOOL_RESULT, "late result", "error")]
    mixed = session.turns[3].parts
    assert [(p.kind, p.text) for p in mixed] == [(Kind.TEXT, "and this"),
                                                  (Kind.TOOL_RESULT, "mixed")]


def test_an_orphan_result_after_compaction_leaves_the_empty_reply_before_it_empty(
        tmp_path: Path) -> None:
    path = (Lines()
            .assistant("a1", "msg_1", text(""))
            .result("u1", "call_from_before_the_compaction", "output")
            .write(tmp_path / "s.jsonl"))
    session = read_one(path)
    assert [(t.id, t.role) for t in session.turns] == [("msg_1", "assistant"), ("u1", "system")]
    assert [e.id for e in find_empty_turns(session)] == ["msg_1"]


def test_bookkeeping_compaction_and_meta(tmp_path: Path) -> None:
    path = (Lines()
            .raw({"type": "summary", "summary": "Old work", "leafUuid": "elsewhere"})
            .raw({"type": "file-history-snapshot", "messageId": "m", "snapshot": {}})
            .user("u1", "first")
            .raw({"type": "system", "subtype": "compact_boundary", "sessionId": SESSION_ID,
                  "uuid": "s1", "compactMetadata": {"trigger": "auto", "preTokens": 155979}})
            .user("u2", "This session is being continued. Summary: ...", isCompactSummary=True)
            .user("u3", "Caveat: injected", isMeta=True)
            .raw({"type": "brand-new-kind", "sessionId": SESSION_ID, "uuid": "n1"})
            .raw({"type": "system", "subtype": "turn_duration", "durationMs": 5})
            .write(tmp_path / "s.jsonl"))
    session = read_one(path)
    assert [(t.id, t.is_summary, t.is_meta) for t in session.turns] == [
        ("u1", False, False), ("u2", True, False), ("u3", False, True)]
    assert session.turns[2].parts[0].synthetic
    assert (session.events, session.skipped) == (5, 0)
    assert session.session_id == SESSION_ID


def test_images_documents_and_unknown_blocks(tmp_path: Path) -> None:
    path = (Lines()
            .user("u1", [text("see"), {"type": "image", "source": {
                "type": "base64", "media_type": "image/png", "data": "iVBOR"}}])
            .assistant("a1", "msg_1", {"type": "redacted_thinking", "data": "zz"},
                       {"type": "document", "title": "spec.pdf"}, {"type": "future_block"})
            .write(tmp_path / "s.jsonl"))
    session = read_one(path)
    image = session.turns[0].parts[1]
    assert (image.kind, image.mime) == (Kind.IMAGE, "image/png")
    assert [(p.kind, p.name) for p in session.turns[1].parts] == [
        (Kind.REASONING, None), (Kind.FILE, "spec.pdf"), (Kind.OTHER, "future_block")]


# --- laziness ----------------------------------------------------------------------------------


def test_long_texts_are_shortened_and_read_back_whole(tmp_path: Path) -> None:
    prose = "word " * 1000
    output = "line of output\n" * 400
    path = (Lines()
            .user("u1", prose)
            .assistant("a1", "msg_1", {"type": "thinking", "thinking": "hmm " * 300,
                                       "signature": "s"})
            .assistant("a2", "msg_1", tool_use("call_1", "Write", content="x" * 3000))
            .result("u2", "call_1", output)
            .write(tmp_path / "s.jsonl"))
    session = read_one(path)
    prompt = session.turns[0].parts[0]
    assert (prompt.shortened, len(prompt.text), prompt.length) == (True, PREVIEW_CHARS, 5000)
    reasoning, call = session.turns[1].parts
    assert (reasoning.shortened, len(reasoning.text), reasoning.text_length) == (
        True, SIDE_PREVIEW_CHARS, 1200)
    assert call.shortened and call.input is not None and call.output is not None
    assert (len(call.input), len(call.output)) == (SIDE_PREVIEW_CHARS, SIDE_PREVIEW_CHARS)
    assert output.startswith(call.output)

    full_prompt = session.full_parts(session.turns[0])[0]
    assert (full_prompt.text, full_prompt.shortened) == (prose, False)
    full_reasoning, full_call = session.full_parts(session.turns[1])
    assert full_reasoning.text == "hmm " * 300
    assert json.loads(full_call.input or "") == {"content": "x" * 3000}
    assert full_call.output == output and full_call.status == "completed"


def test_full_parts_of_every_shortened_real_turn() -> None:
    session = load(RECORDER)
    shortened = [t for t in session.turns if any(p.shortened for p in t.parts)]
    assert len(shortened) == 36
    for turn in shortened:
        full = session.full_parts(turn)
        assert [(p.kind, p.call_id) for p in full] == [(p.kind, p.call_id) for p in turn.parts]
        assert not any(p.shortened for p in full)
        for kept, whole in zip(turn.parts, full, strict=True):
            assert whole.text.startswith(kept.text) and len(whole.text) == kept.text_length
            assert (whole.output or "").startswith(kept.output or "")
            assert (whole.input or "").startswith(kept.input or "")


def test_a_tool_output_cut_inside_an_escape_keeps_a_clean_head(tmp_path: Path) -> None:
    # Escapes everywhere: any cut point of the raw JSON string lands in or next to one.
    output = "é\"\\\n\t😀" * 200
    path = (Lines()
            .assistant("a1", "msg_1", tool_use("call_1"))
            .result("u1", "call_1", output)
            .write(tmp_path / "s.jsonl"))
    call = read_one(path).turns[0].parts[0]
    assert call.shortened and call.output is not None
    assert len(call.output) == SIDE_PREVIEW_CHARS and output.startswith(call.output)


# --- incremental building ----------------------------------------------------------------------


def _shape(session: Session) -> list[tuple[Any, ...]]:
    return [(t.id, t.role, t.timestamp, t.completed, t.tokens, t.is_meta,
             t.source.spans if t.source else None,
             [(p.kind, p.text, p.input, p.output, p.status, p.call_id, p.length)
              for p in t.parts]) for t in session.turns]


def test_builder_fed_in_two_halves_equals_a_whole_read() -> None:
    path = realdata(WORKTREES)
    whole = load(WORKTREES)
    with open(path, "rb") as handle:
        records = list(iter_lines(handle))
    # Line 11 is the middle of the first response (lines 9-12 share its message.id).
    cut = next(i for i, (_, _, lineno) in enumerate(records) if lineno == 11)
    builder = READER.builder(str(path)) if READER.builder else None
    assert isinstance(builder, ClaudeCodeBuilder)
    for line, offset, lineno in records[:cut]:
        builder.feed(line, offset, lineno)
    builder.finish()
    growing = builder.session.turns[-1]
    assert growing.id == "msg_01XwTPVdM5y8bf1EDKvGBV35"
    assert [p.kind for p in growing.parts] == [Kind.REASONING, Kind.TEXT]
    for line, offset, lineno in records[cut:]:
        builder.feed(line, offset, lineno)
    builder.finish()
    assert builder.session.turns[1] is growing
    assert [p.kind for p in growing.parts] == [Kind.REASONING, Kind.TEXT, Kind.TOOL_CALL]
    assert growing.parts[2].status == "completed"
    assert _shape(builder.session) == _shape(whole)
    assert (builder.session.events, builder.session.skipped) == (whole.events, whole.skipped)


# --- files, folders and sidechains -----------------------------------------------------------


def _project(tmp_path: Path) -> Path:
    """A project folder laid out as Claude Code does, made of links to the real files."""
    project = tmp_path / "-experiments-worktrees"
    subagents = project / WORKTREES_ID / "subagents"
    subagents.mkdir(parents=True)
    os.symlink(realdata(WORKTREES), project / f"{WORKTREES_ID}.jsonl")
    for suffix in (".jsonl", ".meta.json"):
        os.symlink(realdata(SUBAGENT_STEM + suffix), subagents / f"agent-a36efb2a1231c41e2{suffix}")
    os.symlink(realdata(OLD_AGENT), project / "agent-5e37fdd5.jsonl")
    os.symlink(realdata(EMPTY_FILE), project / "2c5941bd-b9de-41d6-9414-221d175776f7.jsonl")
    (project / "notes.txt").write_text("not a session")
    return project


def test_a_project_folder_gives_one_session_per_file_with_sidechains(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert detect_reader(project).name == "claude-code"
    sessions = load_sessions(project)
    # Sorted by first timestamp; the empty session has none and comes last. The old-layout
    # agent file's parent session is not in the folder, so it stands alone.
    assert [(s.session_id, len(s.turns)) for s in sessions] == [
        ("4227a68e-2b1f-4923-b824-6e04a67f77c1", 1), (WORKTREES_ID, 22),
        ("2c5941bd-b9de-41d6-9414-221d175776f7", 0)]
    (sidechain,) = sessions[1].sidechains
    assert sidechain.parent_call == "toolu_017y4gSjMWeQ3L2DAKiygU2y"
    assert (sidechain.title, sidechain.meta["agentType"], sidechain.meta["agentId"]) == (
        "Round 2: alice comparison", "general-purpose", "a36efb2a1231c41e2")
    assert len(sidechain.turns) == 7
    call = next(p for t in sessions[1].turns for p in t.parts if p.call_id == sidechain.parent_call)
    assert call.name == "Agent"


def test_a_session_file_brings_its_subagents_and_a_subagent_file_reads_alone(
        tmp_path: Path) -> None:
    project = _project(tmp_path)
    (session,) = load_sessions(project / f"{WORKTREES_ID}.jsonl")
    assert [s.parent_call for s in session.sidechains] == ["toolu_017y4gSjMWeQ3L2DAKiygU2y"]
    (alone,) = load_sessions(project / WORKTREES_ID / "subagents" / "agent-a36efb2a1231c41e2.jsonl")
    assert (len(alone.turns), alone.parent_call, alone.sidechains) == (7, None, [])
    assert alone.title == "Round 2: alice comparison"


def test_old_layout_subagents_link_by_prompt(tmp_path: Path) -> None:
    prompt = "Find every reader and list its priority."
    (Lines()
     .user("u1", "delegate please")
     .assistant("a1", "msg_1", tool_use("call_task", "Task", description="find", prompt=prompt))
     .result("u2", "call_task", [text("Found them.")], tool_use_result={"status": "completed"})
     .write(tmp_path / f"{SESSION_ID}.jsonl"))
    (Lines()
     .user("s1", prompt, isSidechain=True)
     .assistant("s2", "msg_side", text("Searching."))
     .write(tmp_path / "agent-0badf00d.jsonl"))
    (Lines().user("x1", "unrelated").write(tmp_path / "agent-feedbeef.jsonl"))
    sessions = load_sessions(tmp_path)
    # agent-feedbeef shares the session id too, but no call sent its prompt.
    assert [s.path.rsplit("/", 1)[-1] for s in sessions] == [f"{SESSION_ID}.jsonl"]
    links = {s.path.rsplit("/", 1)[-1]: s.parent_call for s in sessions[0].sidechains}
    assert links == {"agent-0badf00d.jsonl": "call_task", "agent-feedbeef.jsonl": None}


# --- recognising the format --------------------------------------------------------------------


def test_sniffing_by_content(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert sniff(empty, b"")
    other = tmp_path / "empty.txt"
    other.write_bytes(b"")
    assert not sniff(other, b"")
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"role": "user", "content": "hi"}\n')
    assert not sniff(chat, read_head(chat))
    codex = realdata("codex/localpush__src-tauri__tests__fixtures__codex__2026-02-23__raw__"
                     "sessions__rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-"
                     "f30553347322.jsonl")
    assert not sniff(codex, read_head(codex))
    assert sniff(realdata(SUMMARY_ONLY), read_head(realdata(SUMMARY_ONLY)))
    assert not sniff(tmp_path, b"")  # a folder without sessions


def test_a_first_line_longer_than_the_head_is_still_recognised(tmp_path: Path) -> None:
    path = Lines().user("u1", "x" * (2 * HEAD_BYTES)).write(tmp_path / "big.log")
    assert detect_reader(path).name == "claude-code"
    assert read_one(path).turns[0].parts[0].length == 2 * HEAD_BYTES


def test_unreadable_paths_fail_cleanly(tmp_path: Path) -> None:
    with pytest.raises(ReaderError):
        load_sessions(tmp_path / "missing.jsonl", format="claude-code")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\xff\xfe{not json\n[1,2]\n")
    session = read_one(garbage)
    assert (session.turns, session.skipped) == ([], 2)


def test_parts_are_plain_model_objects(tmp_path: Path) -> None:
    session = read_one(Lines().user("u1", "hi").write(tmp_path / "s.jsonl"))
    assert isinstance(session.turns[0].parts[0], Part)
    assert session.format == "claude-code"


def test_odd_field_types_take_the_lenient_path(tmp_path: Path) -> None:
    path = (Lines()
            .user("u1", "typed as usual")
            .raw({"type": "user", "uuid": "u2", "isMeta": "yes", "timestamp": 17,
                  "message": {"role": "user", "content": [text("still read")]}})
            .raw({"type": "assistant", "uuid": "a1", "message": {
                "id": "msg_1", "content": [text("ok"), {"type": "tool_use", "id": 5}],
                "usage": {"input_tokens": "many", "output_tokens": 4}}})
            .write(tmp_path / "s.jsonl"))
    session = read_one(path)
    assert [(t.id, t.is_meta, t.timestamp) for t in session.turns] == [
        ("u1", False, "2026-01-01T10:00:01.000Z"), ("u2", False, None), ("msg_1", False, None)]
    assert [p.text for p in session.turns[1].parts] == ["still read"]
    assert [(p.kind, p.call_id) for p in session.turns[2].parts] == [
        (Kind.TEXT, None), (Kind.TOOL_CALL, None)]
    assert session.turns[2].tokens == {"output": 4}
    assert session.skipped == 0


def test_reading_leaves_objects_someone_froze_frozen() -> None:
    import gc

    kept = [{"frozen": number} for number in range(100)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        load_sessions(realdata(WORKTREES))
        assert gc.get_freeze_count() >= frozen and kept
        assert gc.isenabled()
    finally:
        gc.unfreeze()
