"""Formats other than Claude Code whose turns the app holds in a `TurnIndex` (issue 27: the
app's memory on huge files): an index-backed session answers as the whole list of turns,
turn for turn, on the real and sample files and on files made to be awkward."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from replay.core.detection.empty import DEFAULT_RULES, describe_empty, gap_before, is_empty, is_stop
from replay.core.index.navigation import Navigator
from replay.core.index.turn_index import TurnIndex
from replay.core.readers import get_reader
from replay.core.readers import opencode_run as opencode_run_reader
from replay.core.readers.base import iter_lines
from replay.core.session.model import Kind, Session, first_prompt
from replay.core.suggest import default_suggester
from replay.core.suggest.signals import _compute_stats
from tests.core.test_turn_index import RULE_SETS, _resolved, describe_words, whole_form

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_sessions"
REALDATA = REPO.parent / "shared" / "realdata"


def read(format_name: str, path: Path, indexed: bool, **sizes: int) -> Session:
    """The session of a file, its turns whole or in an index (as the app reads it)."""
    reader = get_reader(format_name)
    assert reader.builder is not None and reader.index_turns is not None
    builder = reader.builder(str(path))
    if indexed:
        reader.index_turns(builder, **sizes)
    with open(path, "rb") as handle:
        for line, offset, lineno in iter_lines(handle):
            builder.feed(line, offset, lineno)
    builder.finish()
    if reader.complete is not None:
        return reader.complete(path, builder)
    return builder.session


def _event(kind: str, message: str | None, number: int, **part: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"id": f"prt_{number}", "sessionID": "ses_x", "type": kind, **part}
    if message is not None:
        body["messageID"] = message
    return {"type": kind.replace("-", "_") if kind != "tool" else "tool_use",
            "timestamp": 1_700_000_000_000 + number * 1000, "sessionID": "ses_x",
            "part": body}


def awkward_run(path: Path) -> Path:
    """Steps of text, reasoning and tools; an empty step; a tool written twice (running,
    then completed); a message whose events come back much later; errors inside a step and
    after one; an event without a message id; a line that is no event."""
    events: list[dict[str, Any]] = []
    number = 0

    def add(kind: str, message: str | None, **part: Any) -> None:
        nonlocal number
        number += 1
        events.append(_event(kind, message, number, **part))

    for step in range(150):
        message = f"msg_{step:04d}"
        add("step-start", message)
        if step % 7 == 3:
            add("step-finish", message, reason="stop")  # nothing shown: an empty turn
            continue
        add("reasoning", message, text=f"thinking about step {step} " * 3)
        tool = {"callID": f"call_{step}", "tool": "bash"}
        add("tool", message, **tool, state={"status": "running", "input": {"cmd": "ls"}})
        add("tool", message, **tool, state={"status": "completed", "input": {"cmd": "ls"},
                                            "output": f"file{step}.txt\n" * 20})
        add("text", message, text=f"Step {step} done: [/] [link=x] list[int] é")
        if step % 11 == 5:
            events.append({"type": "error", "timestamp": 1, "sessionID": "ses_x",
                           "error": {"name": "APIError", "data": {"message": "overloaded"}}})
        add("step-finish", message, reason="stop")
        if step % 13 == 12:
            events.append({"type": "error", "timestamp": 2, "sessionID": "ses_x",
                           "error": {"name": "ProviderError", "data": {"message": "gone"}}})
        if step % 37 == 36:
            add("text", "msg_0001", text=f"a late word for the first step, {step}")
        if step % 50 == 10:
            add("text", None, text="a part of no message")
            events.append({"type": "note", "sessionID": "ses_x"})
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    return path


def _run_files(tmp_path: Path) -> list[Path]:
    return [SAMPLES / "dry-run-flag.opencode-run.jsonl", awkward_run(tmp_path / "awkward.jsonl")]


def _codex_line(number: int, kind: str, payload: dict[str, Any]) -> str:
    stamp = f"2026-03-01T{10 + number // 3600 % 10:02d}:{number // 60 % 60:02d}:" \
            f"{number % 60:02d}.000Z"
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload}) + "\n"


def awkward_codex(path: Path, tasks: int = 160) -> Path:
    """A rollout with what makes a Codex turn depend on later lines: tool outputs written
    many turns after their call, prompts demoted to injected context when their event never
    comes, token counts and aborts landing on the last step, model switches; also events
    before items and items before events, orphan outputs, compactions, reused item ids, a
    line that is not JSON and one of no type, markup and escapes in the text."""
    lines: list[str] = []
    number = 0

    def add(kind: str, **payload: Any) -> None:
        nonlocal number
        number += 1
        lines.append(_codex_line(number, kind, payload))

    add("session_meta", id="sess-1", cwd="/w", cli_version="0.1", model="gpt-a",
        git={"branch": "main"})
    late: list[str] = []
    for task in range(tasks):
        if task % 50 == 0:
            add("turn_context", model=f"gpt-{task // 50}")
        if task % 11 == 0:
            add("response_item", type="message", role="developer",
                content=[{"type": "input_text", "text": "<permissions instructions> x"}])
        prompt = f"task {task}: fix [/] [link=x] list[int] \x1b[31mred\x1b[0m é"
        if task % 4 == 0:  # the event first, its item after
            add("event_msg", type="user_message", message=prompt)
            add("response_item", type="message", role="user",
                content=[{"type": "input_text", "text": prompt}])
        elif task % 4 == 1:  # the item first, its event after; an unconfirmed one demoted
            add("response_item", type="message", role="user",
                content=[{"type": "input_text", "text": "context the harness added"}])
            add("response_item", type="message", role="user", id="dup" if task % 8 == 1
                else f"u{task}", content=[{"type": "input_text", "text": prompt}])
            add("event_msg", type="user_message", message=prompt)
        elif task % 4 == 2:  # an item whose event never comes: demoted by the next step
            add("response_item", type="message", role="user",
                content=[{"type": "input_text", "text": prompt}])
        else:
            add("event_msg", type="user_message", message=prompt)
        for step in range(1 + task % 3):
            call = f"call_{task}_{step}"
            if task % 5 != 4:
                add("response_item", type="reasoning", summary=[
                    {"type": "summary_text", "text": f"thinking {task}.{step} [b]x[/b]"}])
            add("response_item", type="function_call", name="shell", call_id=call,
                arguments=json.dumps({"command": ["ls", f"dir{task}"]}), id="dup")
            if (task + step) % 6 == 0:
                late.append(call)  # its output comes many turns later
            else:
                add("response_item", type="function_call_output", call_id=call,
                    output=json.dumps({"output": f"file{task}.txt\n" * 3,
                                       "metadata": {"duration_seconds": 0.5}}))
            if task % 9 == 3 and step == 0:
                add("response_item", type="custom_tool_call", name="apply_patch",
                    call_id=f"patch_{task}", input="*** Begin Patch [/]")
                add("response_item", type="custom_tool_call_output",
                    call_id=f"patch_{task}", output="Done!")
            if task % 7 == 6:
                add("response_item", type="function_call_output", call_id=f"nobody_{task}",
                    output="an output of no call")
            add("event_msg", type="token_count", info={"last_token_usage": {
                "input_tokens": 100 + task, "output_tokens": 7, "total_tokens": 107 + task}})
            if step == task % 3:
                if task % 10 == 7:
                    add("event_msg", type="turn_aborted", reason="interrupted")
                    continue
                if task % 13 != 12:  # else a step of only calls, closed by the next prompt
                    add("response_item", type="message", role="assistant", content=[
                        {"type": "output_text", "text": f"done {task}.{step}: list[int] [/]"}])
                add("event_msg", type="token_count", info={"last_token_usage": {
                    "input_tokens": 5, "cached_input_tokens": 2}})
        while len(late) > 12:  # outputs of calls from a dozen tasks (tens of turns) ago
            add("response_item", type="function_call_output", call_id=late.pop(0),
                output=f"late output [/] for an old call, task {task}")
        if task % 45 == 44:
            add("compacted", message="summary of the work so far", replacement_history=[{}])
        if task % 17 == 5:
            add("event_msg", type="task_complete")
        if task == 30:
            lines.append("not json at all\n")
            lines.append(json.dumps({"payload": {}}) + "\n")
        if task % 23 == 0:
            add("event_msg", type="agent_message", message="copy")
    for call in late:
        add("response_item", type="function_call_output", call_id=call, output="the very end")
    path.write_text("".join(lines))
    return path


def _codex_files(tmp_path: Path) -> list[Path]:
    return [*sorted((REALDATA / "codex").glob("*.jsonl")), SAMPLES / "flaky-test.codex.jsonl",
            awkward_codex(tmp_path / "awkward-codex.jsonl")]


def _gemini_message(number: int, kind: str, message_id: str | None = None,
                    **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": message_id or f"m{number}", "type": kind,
        "timestamp": f"2026-03-01T10:{number // 60 % 60:02d}:{number % 60:02d}.000Z",
        "content": f"message {number} [/] [link=x] list[int] \x1b[31mred\x1b[0m é", **extra}
    if kind == "gemini":
        message.setdefault("thoughts", [{"subject": "Plan", "description": f"think {number}"}])
        message.setdefault("tokens", {"input": number, "output": 3, "total": number + 3})
        message["model"] = "gemini-x"
    return message


def awkward_gemini_lines(path: Path, count: int = 300) -> Path:
    """A JSONL recording whose messages are written again (tool results arriving, a message
    from long ago rewritten), a `$set` history of new and known messages, rewinds, info,
    warning and error messages, empty replies, a line that is not JSON."""
    records: list[Any] = [{"sessionId": "g1", "projectHash": "h", "startTime": "2026-03-01"}]
    for number in range(count):
        kind = ("user", "gemini", "gemini", "info", "warning", "error")[number % 6] \
            if number % 5 else ("user" if number % 2 else "gemini")
        extra: dict[str, Any] = {}
        if kind == "gemini" and number % 4 == 1:
            extra = {"content": "", "thoughts": []}  # an empty reply
        records.append(_gemini_message(number, kind, **extra))
        if kind == "gemini" and number % 3 == 0:
            call = {"id": f"t{number}", "name": "run_shell", "args": {"cmd": "ls [/]"},
                    "status": "executing"}
            records.append(_gemini_message(number, kind, toolCalls=[call]))
            done = {**call, "status": "success", "result": [{"functionResponse": {
                "id": f"t{number}", "name": "run_shell",
                "response": {"output": f"out {number} list[int]\n" * 4}}}]}
            records.append(_gemini_message(number, kind, toolCalls=[done]))
        if number % 97 == 96:  # a message from ninety messages ago, written again
            records.append(_gemini_message(number - 90, "gemini", content=f"rewritten {number}"))
        if number == 150:
            records.append({"$set": {"messages": [
                _gemini_message(3, "user"), _gemini_message(9000, "gemini"),
                {"id": "h2", "type": "user", "content": "only in the history"}, "junk"]}})
        if number in (120, 240):
            records.append({"$rewindTo": f"m{number - 4}"})
            records.append(_gemini_message(number - 3, "user", content="after the rewind"))
        if number == 200:
            records.append("not an object")
            records.append({"other": 1})
    path.write_text("".join(json.dumps(record) + "\n" for record in records)
                    + "{not json\n")
    return path


def awkward_gemini_document(path: Path, count: int = 300) -> Path:
    """An older recording: one pretty-printed document of messages, one not an object."""
    messages: list[Any] = [_gemini_message(number, ("user", "gemini", "info")[number % 3],
                                           **({"content": ""} if number % 7 == 4 else {}))
                           for number in range(count)]
    messages.insert(40, "not a message")
    path.write_text(json.dumps({"sessionId": "g2", "projectHash": "h", "startTime": "x",
                                "lastUpdated": "y", "messages": messages}, indent=2))
    return path


def _gemini_files(tmp_path: Path) -> list[Path]:
    return [*sorted((REALDATA / "gemini-cli").glob("*.json*")),
            awkward_gemini_lines(tmp_path / "awkward.jsonl"),
            awkward_gemini_document(tmp_path / "awkward.json")]


FILES: dict[str, Callable[[Path], list[Path]]] = {
    "opencode-run": _run_files,
    "codex": _codex_files,
    "gemini": _gemini_files,
}


@pytest.mark.parametrize("format_name", list(FILES))
@pytest.mark.parametrize("tail", [1, 64])
def test_the_index_answers_as_the_whole_list(tmp_path: Path, format_name: str,
                                             tail: int) -> None:
    suggester = default_suggester()
    for path in FILES[format_name](tmp_path):
        whole = read(format_name, path, indexed=False)
        indexed = read(format_name, path, indexed=True, tail=tail, cache=3)
        index = indexed.turns
        assert isinstance(index, TurnIndex)
        assert len(index) == len(whole.turns) > 0, path
        assert indexed.warnings == whole.warnings and indexed.events == whole.events
        assert (indexed.title, indexed.session_id, indexed.meta) == (
            whole.title, whole.session_id, whole.meta)
        for turn in whole.turns:
            at = turn.index
            assert turn.source is not None
            assert (index.role_at(at), index.id_at(at), index.time_at(at),
                    index.completed_at(at), index.spans_at(at), index.is_request_at(at)) == (
                turn.role, turn.id, turn.time, turn.completed, turn.source.spans,
                bool(turn.role == "user" and describe_words(turn))), (path, at)
            assert index.text_size_at(at) == sum(p.text_length for p in turn.parts
                                                 if p.kind == Kind.TEXT)
            assert index.kinds_at(at) == {part.kind for part in turn.parts}
            for rules in RULE_SETS:
                assert index.stop_at(at, rules) == is_stop(whole, at, rules), (path, at, rules)
                assert index.empty_at(at, rules) == is_empty(turn, rules)
            assert whole_form(index[at]) == whole_form(turn), (path, at)
            assert index[at].source.record == turn.source.record, (path, at)
            assert indexed.full_parts(index[at]) == whole.full_parts(turn)
            assert gap_before(indexed, at) == gap_before(whole, at)
        for rules in RULE_SETS:
            ours, theirs = Navigator(indexed, rules), Navigator(whole, rules)
            assert (ours.empty_indices, ours.placeholders) == (
                theirs.empty_indices, theirs.placeholders)
        assert [whole_form(turn) for turn in index] == [whole_form(t) for t in whole.turns]
        assert first_prompt(index) == first_prompt(whole.turns)  # type: ignore[arg-type]
        assert _compute_stats(indexed) == _compute_stats(whole)
        for at in Navigator(whole, DEFAULT_RULES).empty_indices[:20]:
            assert describe_empty(indexed, index[at], DEFAULT_RULES, suggester) == \
                describe_empty(whole, whole.turns[at], DEFAULT_RULES, suggester)
        for turn in whole.turns[:40]:
            for text in (turn.id, turn.id[:5], f"#{turn.index + 1}"):
                assert _resolved(index, text) == _resolved(whole.turns, text), (path, text)
        ours, theirs = Navigator(indexed), Navigator(whole)
        for needle in ["the", "STEP 3", "ok", "é", "[/]", "list[int]", "overloaded",
                       "zzz-not-there", "assist", "msg_00", "file12"]:
            assert ours.matches(needle) == theirs.matches(needle), (path, needle)


def test_a_run_message_of_more_events_than_its_spans_hold_is_kept_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(opencode_run_reader, "MAX_SPANS", 5)
    path = awkward_run(tmp_path / "awkward.jsonl")
    whole = read("opencode-run", path, indexed=False)
    indexed = read("opencode-run", path, indexed=True, tail=1, cache=1)
    # Every step has more than five events: each is kept whole, and answers as before.
    assert [repr(turn.parts) for turn in indexed.turns] == [
        repr(turn.parts) for turn in whole.turns]


def _big_run(path: Path, steps: int) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for step in range(steps):
            message = f"msg_{step:06d}"
            for number, (kind, part) in enumerate((
                    ("step-start", {}),
                    ("text", {"text": f"step {step} " + "word " * 40}),
                    ("tool", {"callID": f"c{step}", "tool": "read", "state": {
                        "status": "completed", "input": {"filePath": "/x"},
                        "output": "line\n" * 60}}),
                    ("step-finish", {"reason": "stop"}))):
                handle.write(json.dumps(_event(kind, message, step * 4 + number, **part))
                             + "\n")
    return path


def test_a_big_run_holds_few_whole_turns(tmp_path: Path) -> None:
    """The memory an indexed run session holds grows by columns, not by whole turns."""
    path = _big_run(tmp_path / "big.jsonl", 20_000)
    gc.collect()
    tracemalloc.start()
    try:
        session = read("opencode-run", path, indexed=True)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    index = session.turns
    assert isinstance(index, TurnIndex) and len(index) == 20_000
    whole_now = sum(index.whole_now(at) is not None for at in range(len(index)))
    assert whole_now <= 64 + 512
    # About 200 bytes a turn (columns, the id map); whole turns cost several kilobytes.
    assert held < 20_000 * 400, held
    last = index[len(index) - 1]
    assert last.id == "msg_019999" and last.parts[1].text.startswith("step 19999 ")


def test_search_candidates_of_document_elements_cover_every_match(tmp_path: Path) -> None:
    """An element of a pretty-printed JSON document starts inside a line and spans many:
    `lines_with` must still name every turn whose record holds the needle (it named none,
    looking for records starting at the start of a matching line)."""
    from replay.core.index.navigation import turn_search_text
    from replay.core.readers.json_stream import stream_document
    from replay.core.session.model import Part, Source, Turn

    texts = [f"message {number} about {'apples' if number % 3 else 'pears'}"
             for number in range(300)]
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"messages": [{"role": "user" if n % 2 else "assistant",
                                              "content": {"text": text}}
                                             for n, text in enumerate(texts)]}, indent=2))
    document, _, _ = stream_document(path, frozenset({"messages"}))
    elements = document["messages"]

    def rebuild(path_: str, spans: tuple[tuple[int, int], ...], records: list[bytes],
                line: int | None, turn_id: str, role: str) -> Turn:
        message = json.loads(records[0])
        return Turn(turn_id, role, parts=[Part(Kind.TEXT, message["content"]["text"])])

    index = TurnIndex(str(path), rebuild, tail=1, cache=1)
    for number, message in enumerate(elements):
        turn = Turn(f"m{number}", message["role"], parts=[
            Part(Kind.TEXT, message["content"]["text"])],
            source=Source(str(path), spans=(elements.span(number),)))
        turn.index = number
        index.append(turn)
    for needle in ("pears", "APPLES", "message 29", "zzz"):
        candidates = index.lines_with(needle)
        assert candidates is not None
        truth = [at for at in range(len(index))
                 if needle.casefold() in turn_search_text(index[at]).casefold()]
        assert set(truth) <= set(candidates), needle
        # And it still narrows: a needle in one record names few turns.
        assert needle != "message 29" or len(candidates) <= 11 + 2  # 29, 290-299


def awkward_trajectory(path: Path) -> Path:
    """A SWE-agent run: a demonstration and the task in its history, steps with thoughts,
    actions and outputs, steps with neither (empty turns), a step that is no object, markup
    and escapes in the text."""
    steps: list[Any] = []
    for number in range(400):
        if number % 9 == 4:
            steps.append({"action": "", "observation": "", "thought": "", "response": ""})
            continue
        steps.append({"action": f"open file{number}.py" if number % 2 else "ls -la",
                      "observation": f"[/] [link=x] list[int] é line {number}\n" * 5,
                      "thought": f"Step {number}: look at \"file{number}\" next",
                      "response": "DISCUSSION\n...", "execution_time": number / 10,
                      "state": "{}"})
    steps.insert(77, "not a step")
    path.write_text(json.dumps({
        "environment": "swe_main",
        "history": [{"role": "system", "content": "You are an agent."},
                    {"role": "user", "content": "a demo", "is_demo": True},
                    {"role": "user", "content": "ISSUE:\nThe cache expires too early\n"}],
        "trajectory": steps,
        "info": {"exit_status": "submitted", "submission": "diff"}}, indent=2))
    return path


def _document_files(format_name: str, tmp_path: Path) -> list[Path]:
    if format_name == "swe-agent":
        return [SAMPLES / "cache-expiry.swe-agent.traj",
                awkward_trajectory(tmp_path / "awkward.traj")]
    messages = [{"role": "user" if number % 2 == 0 else "assistant",
                 "content": "" if number % 7 == 3 else f"message {number} [/] é \"quoted\""}
                for number in range(500)]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"id": "c1", "messages": messages}, indent=2))
    return [SAMPLES / "support-bot.chat.json", path]


@pytest.mark.parametrize("format_name", ["swe-agent", "chat-json"])
def test_the_app_reads_documents_into_an_index_answering_as_the_whole_read(
        tmp_path: Path, format_name: str) -> None:
    """`load_sessions(indexed=True)` (the app's whole-file load) gives an index for a
    document format (SWE-agent's `read_indexed`; chat JSON's record feed), turn for turn the
    whole read's, with the same empty turns and search matches."""
    from replay.core.readers import load_sessions

    for path in _document_files(format_name, tmp_path):
        [whole] = load_sessions(path, format_name)
        [indexed] = load_sessions(path, format_name, indexed=True)
        index = indexed.turns
        assert isinstance(index, TurnIndex), path
        assert len(index) == len(whole.turns) > 0
        assert (indexed.warnings, indexed.title, indexed.session_id, indexed.meta) == (
            whole.warnings, whole.title, whole.session_id, whole.meta)
        assert [whole_form(turn) for turn in index] == [whole_form(t) for t in whole.turns]
        assert [whole_form(index[at]) for at in reversed(range(len(index)))] == [
            whole_form(t) for t in reversed(whole.turns)]
        for rules in RULE_SETS:
            ours, theirs = Navigator(indexed, rules), Navigator(whole, rules)
            assert ours.empty_indices == theirs.empty_indices, (path, rules)
        ours, theirs = Navigator(indexed), Navigator(whole)
        for needle in ["the", "STEP 3", "é", "[/]", "list[int]", '"quoted"', 'file12"',
                       "zzz-not-there", "message 4", "assist", "ls", "step-1"]:
            assert ours.matches(needle) == theirs.matches(needle), (path, needle)
        if len(index) > 600:
            assert index.materialised > 0  # read back, not kept whole


def _tiny_codex(path: Path, tasks: int) -> Path:
    """Tasks of a prompt (event and item), a call with its output, a token count and a
    one-word reply: two tiny turns each."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(_codex_line(0, "session_meta", {"id": "s", "model": "m"}))
        for task in range(tasks):
            call = f"call_{task:08d}"
            for kind, payload in (
                    ("event_msg", {"type": "user_message", "message": f"p{task}"}),
                    ("response_item", {"type": "message", "role": "user",
                                       "content": [{"type": "input_text", "text": f"p{task}"}]}),
                    ("response_item", {"type": "function_call", "name": "shell",
                                       "call_id": call, "arguments": "{}"}),
                    ("response_item", {"type": "function_call_output", "call_id": call,
                                       "output": "ok"}),
                    ("event_msg", {"type": "token_count", "info": {"last_token_usage": {
                        "input_tokens": 5, "output_tokens": 1}}}),
                    ("response_item", {"type": "message", "role": "assistant",
                                       "content": [{"type": "output_text",
                                                    "text": f"a{task}"}]})):
                handle.write(_codex_line(task, kind, payload))
    return path


def _tiny_gemini(path: Path, messages: int) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"sessionId": "g", "projectHash": "h"}) + "\n")
        for number in range(messages):
            handle.write(json.dumps({"id": f"msg-{number:08d}",
                                     "type": "user" if number % 2 else "gemini",
                                     "content": f"m{number}",
                                     "timestamp": "2026-03-01T10:00:00Z"}) + "\n")
    return path


@pytest.mark.parametrize(("format_name", "make", "count"), [
    ("codex", _tiny_codex, 10_000), ("gemini", _tiny_gemini, 20_000)])
def test_a_file_of_many_tiny_turns_holds_columns_not_turns(
        tmp_path: Path, format_name: str, make: Callable[[Path, int], Path],
        count: int) -> None:
    """Codex and Gemini in the app: what an indexed session holds grows by columns (under
    300 bytes a turn), not by whole turns (a kilobyte and more each, shortened)."""
    path = make(tmp_path / "tiny.jsonl", count)
    held = {}
    for indexed in (False, True):
        gc.collect()
        tracemalloc.start()
        try:
            session = read(format_name, path, indexed=indexed)
            held[indexed], _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        turns = len(session.turns)
        assert turns == 20_000
        if indexed:
            index = session.turns
            assert isinstance(index, TurnIndex)
            assert sum(index.whole_now(at) is not None for at in range(turns)) <= 64 + 512
            last = index[turns - 1]
            assert last.parts and last.parts[-1].text in ("a9999", "m19999")
        del session
    assert held[True] < 20_000 * 300, held
    assert held[False] > 20_000 * 700, held  # what the whole read holds, for scale
