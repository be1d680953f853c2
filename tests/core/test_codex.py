"""The Codex CLI reader: real rollouts, turn grouping, doubled prompts and injected context."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.core.detection.empty import evidence_for, find_empty_turns
from replay.core.readers import codex
from replay.core.readers.base import iter_lines, read_head
from replay.core.session.model import Kind, Session
from tests.conftest import realdata

TUI = ("codex/codemie-code__src__agents__plugins__codex____tests____fixtures__"
       "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
LOCALPUSH = "codex/localpush__src-tauri__tests__fixtures__codex__2026-02-23__raw__sessions__"
SANITISED = LOCALPUSH + "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
TRUNCATED = LOCALPUSH + "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"


def load(relative: str) -> Session:
    sessions = codex.read(realdata(relative))
    assert len(sessions) == 1
    return sessions[0]


def write_rollout(tmp_path: Path, records: list[Any], name: str = "rollout.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(
        (record if isinstance(record, str) else json.dumps(record)) + "\n" for record in records
    ))
    return path


def line(kind: str, payload: dict[str, Any], second: int = 0) -> dict[str, Any]:
    return {"timestamp": f"2026-01-01T10:00:{second:02d}.000Z", "type": kind, "payload": payload}


def user_item(text: str) -> dict[str, Any]:
    return line("response_item", {"type": "message", "role": "user",
                                  "content": [{"type": "input_text", "text": text}]})


def user_event(text: str) -> dict[str, Any]:
    return line("event_msg", {"type": "user_message", "message": text, "images": []})


def assistant(text: str, second: int = 0) -> dict[str, Any]:
    return line("response_item", {"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text", "text": text}]}, second)


def reasoning(summary: str | None = None) -> dict[str, Any]:
    texts = [{"type": "summary_text", "text": summary}] if summary else []
    return line("response_item", {"type": "reasoning", "summary": texts, "content": None,
                                  "encrypted_content": "gAAAA"})


def call(call_id: str, name: str = "exec_command") -> dict[str, Any]:
    return line("response_item", {"type": "function_call", "name": name,
                                  "arguments": "{\"cmd\": \"ls\"}", "call_id": call_id})


def output(call_id: str, text: str = "a.txt") -> dict[str, Any]:
    return line("response_item", {"type": "function_call_output", "call_id": call_id,
                                  "output": text})


def shape(session: Session) -> list[tuple[Any, ...]]:
    """Everything a reader decides about a session's turns, for equality checks."""
    return [
        (turn.index, turn.id, turn.role, turn.is_meta, turn.is_summary, turn.timestamp,
         turn.completed, turn.tokens, turn.source.spans if turn.source else None,
         [(p.kind, p.text, p.name, p.input, p.output, p.status, p.call_id, p.synthetic,
           p.shortened, p.length) for p in turn.parts])
        for turn in session.turns
    ]


# -- the real rollouts ------------------------------------------------------------------


def test_tui_rollout_groups_into_two_prompts_and_thirteen_steps() -> None:
    session = load(TUI)
    assert session.skipped == 0 and session.warnings == []
    assert session.session_id == "019e1625-789d-76c0-80ab-3724b5ddb799"
    assert session.meta["cli_version"] == "0.125.0"
    assert session.meta["originator"] == "codex-tui"
    assert session.meta["model"] == "gpt-5.5"
    assert len(session.turns) == 17
    assert Counter(turn.role for turn in session.turns) == {
        "assistant": 13, "user": 2, "system": 2}
    users = [turn for turn in session.turns if turn.role == "user"]
    assert [turn.id for turn in users] == ["line-6", "line-22"]
    assert users[0].parts[0].text == "show tools"
    # The response item and the user_message event are one turn with two records.
    assert [len(turn.source.spans) for turn in users if turn.source] == [2, 2]
    system = [turn for turn in session.turns if turn.role == "system"]
    assert [turn.id for turn in system] == ["line-3", "line-4"]
    assert all(turn.is_meta for turn in system)
    assert system[1].parts[0].text.startswith("# AGENTS.md instructions")
    # session_meta + 2 turn_context + 132 bookkeeping event_msg lines
    assert session.events == 135


def test_tui_rollout_steps_end_at_assistant_messages() -> None:
    session = load(TUI)
    steps = [turn for turn in session.turns if turn.role == "assistant"]
    assert all(turn.parts[-1].kind == Kind.TEXT for turn in steps)
    assert all(turn.completed is not None for turn in steps)
    assert [turn.id for turn in steps[:3]] == ["line-8", "line-24", "line-27"]
    assert [part.kind for part in steps[0].parts] == [
        Kind.REASONING, Kind.TOOL_CALL, Kind.TOOL_CALL, Kind.TEXT]
    reasoning = [p for t in steps for p in t.parts if p.kind == Kind.REASONING]
    assert len(reasoning) == 25
    assert {part.text for part in reasoning} == {""}  # encrypted only
    calls = [p for t in steps for p in t.parts if p.kind == Kind.TOOL_CALL]
    assert len(calls) == 105  # 99 function, 3 custom (apply_patch), 3 web searches
    assert Counter(part.name for part in calls)["apply_patch"] == 3
    assert {part.status for part in calls} == {"completed"}
    assert steps[0].model == "gpt-5.5"
    assert steps[0].tokens == {"input": 57906, "cache_read": 37120, "output": 374,
                               "reasoning": 62, "total": 58280}


def test_real_rollouts_hold_no_empty_turn_although_items_look_empty() -> None:
    for relative in (TUI, SANITISED, TRUNCATED):
        session = load(relative)
        assert find_empty_turns(session) == [], relative
    # Per line, the 25 encrypted reasoning items of the TUI file would each look empty.
    lines = realdata(TUI).read_text().splitlines()
    assert sum('"type":"reasoning"' in text for text in lines) == 25


def test_sanitised_rollout_counts_and_compaction() -> None:
    session = load(SANITISED)
    assert session.skipped == 0
    assert session.session_id == "019c8a59-e9dd-71f0-9ae3-4079fe9726a9"
    assert session.meta["cli_version"] == "0.104.0-alpha.1"
    assert len(session.turns) == 353
    # 38 prompts (one per user_message event), 45 developer + 8 injected + 1 compaction
    assert Counter(turn.role for turn in session.turns) == {
        "assistant": 261, "user": 38, "system": 54}
    summaries = [turn for turn in session.turns if turn.is_summary]
    assert [(turn.id, turn.index, turn.role) for turn in summaries] == [
        ("line-1788", 225, "system")]
    assert summaries[0].parts[0].kind == Kind.COMPACTION
    assert summaries[0].parts[0].text == "history replaced by 40 items"
    assert session.events == 1382


def test_truncated_rollout_ends_with_a_pending_call() -> None:
    session = load(TRUNCATED)
    assert session.skipped == 0
    assert len(session.turns) == 10
    assert Counter(turn.role for turn in session.turns) == {
        "system": 7, "user": 1, "assistant": 2}
    last = session.turns[-1]
    assert (last.id, last.role, last.completed) == ("line-18", "assistant", None)
    assert [(p.kind, p.name, p.output, p.status) for p in last.parts] == [
        (Kind.TOOL_CALL, "exec_command", None, "pending")]


def test_shortened_output_reads_back_whole() -> None:
    path = realdata(TUI)
    longest = max(
        (json.loads(text)["payload"] for text in path.read_text().splitlines()
         if '"function_call_output"' in text),
        key=lambda payload: len(payload.get("output") or ""),
    )
    session = load(TUI)
    owner, part = next((turn, part) for turn in session.turns for part in turn.parts
                       if part.call_id == longest["call_id"])
    assert part.shortened and len(part.output or "") == 400
    assert len(longest["output"]) == 40157
    full = session.full_parts(owner)
    assert [p.kind for p in full] == [p.kind for p in owner.parts]
    restored = next(p for p in full if p.call_id == longest["call_id"])
    assert restored.output == longest["output"] and not restored.shortened


def test_builder_fed_in_two_halves_equals_the_whole_read() -> None:
    for relative in (TUI, SANITISED):
        path = realdata(relative)
        whole = codex.read(path)[0]
        with open(path, "rb") as handle:
            records = list(iter_lines(handle))
        builder = codex.CodexBuilder(str(path))
        middle = len(records) // 2
        for record, offset, lineno in records[:middle]:
            builder.feed(record, offset, lineno)
        builder.finish()
        for record, offset, lineno in records[middle:]:
            builder.feed(record, offset, lineno)
        builder.finish()
        assert shape(builder.session) == shape(whole), relative


def test_sniff_accepts_rollouts_only() -> None:
    for relative in (TUI, SANITISED, TRUNCATED):
        path = realdata(relative)
        assert codex.sniff(path, read_head(path)), relative
    for relative in (
        "gemini-cli/codemie-code__tests__integration__metrics__fixtures__gemini__"
        "session-2025-12-01T21-45-5b959dae.json",
        "claude-code/codemie-code__tests__integration__session__fixtures__session-9eda1058.jsonl",
        "opencode/dark-factory__docs__chats__opencode__session__jolly-eagle__"
        "ses_39b5d713cffeRgAoxPIwS3Plus.json",
    ):
        path = realdata(relative)
        assert not codex.sniff(path, read_head(path)), relative


# -- constructed rollouts ---------------------------------------------------------------


def test_reasoning_only_step_before_a_prompt_is_an_empty_turn(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, [
        line("session_meta", {"id": "s1", "cli_version": "0.200.0"}),
        user_item("fix the test"), user_event("fix the test"),
        reasoning("Looking at the failing assertion"),
        user_item("hello?"), user_event("hello?"),
        assistant("Here I am."),
    ])
    session = codex.read(path)[0]
    assert [(t.id, t.role) for t in session.turns] == [
        ("line-2", "user"), ("line-4", "assistant"), ("line-5", "user"), ("line-7", "assistant")]
    empty = find_empty_turns(session)
    assert [(e.index, e.id, e.role, e.reason) for e in empty] == [
        (1, "line-4", "assistant", "reasoning-only")]
    assert empty[0].evidence == ["reasoning: 32 chars", "no completion time"]


def test_reasoning_belongs_to_the_step_it_precedes(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, [
        user_item("go"), user_event("go"),
        reasoning(), assistant("Plan: read the file.", 1),
        reasoning(), call("c1"), output("c1", "text"),
        line("response_item", {"type": "message", "role": "developer",
                               "content": [{"type": "input_text", "text": "approved"}]}),
        reasoning(), assistant("Done.", 2),
    ])
    session = codex.read(path)[0]
    assert [(t.id, t.role, [p.kind for p in t.parts]) for t in session.turns] == [
        ("line-1", "user", [Kind.TEXT]),
        ("line-3", "assistant", [Kind.REASONING, Kind.TEXT]),
        ("line-5", "assistant", [Kind.REASONING, Kind.TOOL_CALL, Kind.REASONING, Kind.TEXT]),
        ("line-8", "system", [Kind.TEXT]),
    ]
    assert session.turns[2].parts[1].output == "text"
    assert session.turns[2].parts[1].status == "completed"
    assert find_empty_turns(session) == []


def test_prompt_event_before_its_item_is_one_turn(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, [
        user_event("rename the module"), user_item("rename the module"), assistant("Renamed."),
    ])
    session = codex.read(path)[0]
    assert [(t.id, t.role) for t in session.turns] == [("line-1", "user"), ("line-3", "assistant")]
    assert session.turns[0].source is not None and len(session.turns[0].source.spans) == 2


def test_injected_context_becomes_system_turns(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, [
        user_item("<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"),
        user_item("[REDACTED_TEXT len=900 sha=aaaa]"),  # hidden wrapper: judged by its event
        user_item("[REDACTED_TEXT len=12 sha=bbbb]"),
        user_event("[REDACTED_MESSAGE len=12 sha=bbbb]"),
        user_item("[REDACTED_TEXT len=300 sha=cccc]"),  # a skill text after the prompt
        assistant("On it."),
    ])
    session = codex.read(path)[0]
    assert [(t.id, t.role, t.is_meta) for t in session.turns] == [
        ("line-1", "system", True), ("line-2", "system", True), ("line-3", "user", False),
        ("line-5", "system", True), ("line-6", "assistant", False)]
    assert all(p.synthetic for t in session.turns if t.is_meta for p in t.parts)


def test_rollout_without_events_keeps_every_user_item(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, [
        user_item("first"), assistant("one"), user_item("second"), assistant("two"),
    ])
    session = codex.read(path)[0]
    assert [t.role for t in session.turns] == ["user", "assistant", "user", "assistant"]


def test_turn_aborted_is_evidence_on_the_step(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, [
        user_item("build it"), user_event("build it"),
        reasoning(), call("c1"),
        line("event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
        user_item("stop"), user_event("stop"),
        reasoning(),
        line("event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
    ])
    session = codex.read(path)[0]
    first, last = session.turns[1], session.turns[3]
    assert [(p.kind, p.name, p.text) for p in first.parts if p.kind == Kind.ERROR] == [
        (Kind.ERROR, "turn_aborted", "interrupted")]
    assert first.parts[1].status == "pending"
    empty = find_empty_turns(session)
    assert [(e.id, e.reason) for e in empty] == [("line-8", "aborted")]
    assert evidence_for(session, last)[:2] == ["error: turn_aborted", "reasoning: encrypted (5 B)"]
    assert session.events == 2


def test_compacted_line_with_a_message_adds_a_summary_turn(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, [
        user_item("go"), user_event("go"), assistant("ok"),
        line("compacted", {"message": "Summary: the tests pass.", "replacement_history": []}),
        line("event_msg", {"type": "context_compacted"}),
    ])
    session = codex.read(path)[0]
    summary = session.turns[-1]
    assert (summary.id, summary.role, summary.is_summary) == ("line-4", "system", True)
    assert [(p.kind, p.text) for p in summary.parts] == [
        (Kind.COMPACTION, ""), (Kind.TEXT, "Summary: the tests pass.")]
    assert session.events == 2


def test_old_rollout_without_envelopes(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, [
        {"id": "0a1b", "timestamp": "2025-05-01T09:00:00Z", "instructions": None,
         "git": {"branch": "main"}},
        {"record_type": "state"},
        {"type": "message", "id": None, "role": "user",
         "content": [{"type": "input_text", "text": "list files"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"},
        {"type": "local_shell_call", "id": "lc_1", "call_id": "c9", "status": "completed",
         "action": {"type": "exec", "command": ["ls", "-a"]}},
        {"type": "function_call_output", "call_id": "c9",
         "output": json.dumps({"output": "a\nb", "metadata": {"exit_code": 0,
                                                              "duration_seconds": 1.5}})},
        {"type": "message", "id": "msg_1", "role": "assistant",
         "content": [{"type": "output_text", "text": "Two files."}]},
    ])
    assert codex.sniff(path, read_head(path))
    session = codex.read(path)[0]
    assert session.session_id == "0a1b" and session.meta["git_branch"] == "main"
    assert [(t.id, t.role) for t in session.turns] == [("line-3", "user"), ("rs_1", "assistant")]
    shell = session.turns[1].parts[1]
    assert (shell.name, shell.input, shell.output, shell.status, shell.duration) == (
        "local_shell", "ls -a", "a\nb", "completed", 1.5)
    assert session.events == 2 and session.skipped == 0


def test_bad_lines_are_counted_not_fatal(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, [
        line("session_meta", {"id": "s2"}), "{not json", "[1, 2]", "{\"no\": \"type\"}",
        user_item("hi"), assistant("hello"), line("brand_new_kind", {"x": 1}),
    ])
    session = codex.read(path)[0]
    assert session.skipped == 3
    assert [w.split(":")[0] for w in session.warnings] == ["line 2", "line 3", "line 4"]
    assert [t.role for t in session.turns] == ["user", "assistant"]
    assert session.events == 2


def test_turn_ids_are_unique_and_stable(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, [
        {"type": "message", "id": "dup", "role": "user", "content": "a"},
        {"type": "message", "id": "dup", "role": "assistant", "content": "b"},
    ])
    session = codex.read(path)[0]
    assert [t.id for t in session.turns] == ["dup", "line-2"]


@pytest.mark.parametrize("content", [b"", b"\n\n"])
def test_empty_file_reads_as_an_empty_session(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(content)
    session = codex.read(path)[0]
    assert (session.turns, session.skipped) == ([], 0)


_LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4),
                  st.sampled_from(["c1", "<environment_context>", '{"output": 1}']))
_KEYS = st.sampled_from(["type", "role", "content", "text", "summary", "call_id", "output",
                         "arguments", "message", "images", "info", "last_token_usage", "id",
                         "status", "action", "command", "replacement_history", "reason"])
_JSON = st.recursive(_LEAF, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4)), max_leaves=16)
_PAYLOAD = st.builds(
    lambda kind, rest: {**rest, "type": kind},
    st.sampled_from(["message", "reasoning", "function_call", "custom_tool_call",
                     "local_shell_call", "function_call_output", "user_message",
                     "turn_aborted", "token_count", "task_complete", "new_call"]),
    st.dictionaries(_KEYS, _JSON, max_size=4))
_RECORD = st.one_of(
    st.builds(lambda kind, payload: {"type": kind, "payload": payload},
              st.sampled_from(["session_meta", "response_item", "event_msg", "compacted"]),
              _PAYLOAD),
    _PAYLOAD, _JSON)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_RECORD, max_size=10))
def test_any_records_are_read_without_raising(records: list[Any]) -> None:
    builder = codex.CodexBuilder("unused.jsonl")
    offset = 0
    for number, record in enumerate(records, 1):
        data = json.dumps(record).encode()
        builder.feed(data, offset, number)
        offset += len(data) + 1
    builder.finish()
    turns = builder.session.turns
    assert [turn.index for turn in turns] == list(range(len(turns)))
    assert len({turn.id for turn in turns}) == len(turns)
    find_empty_turns(builder.session)
