"""The compact turn index answers as the whole list of turns does: columns, whole turns read
back from the file, empty turns under every rule set, ids, search, figures."""

from __future__ import annotations

import gc
import os
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay.core.detection.empty import DEFAULT_RULES, describe_empty, gap_before, is_empty, is_stop
from replay.core.index.navigation import Navigator
from replay.core.index.turn_index import TurnIndex
from replay.core.readers.base import iter_lines
from replay.core.readers.claude_code_builder import ClaudeCodeBuilder, index_turns
from replay.core.session.model import Kind, Session, Turn, first_prompt
from replay.core.session.turn_ref import TurnReferenceError, resolve_turn
from replay.core.suggest import default_suggester
from replay.core.suggest.signals import _compute_stats
from tests.conftest import REALDATA
from tests.core.test_scan_stream import _long_session

REPO = Path(__file__).resolve().parents[2]

RULE_SETS = [
    DEFAULT_RULES,
    DEFAULT_RULES.with_options(tool_only_is_empty=True),
    DEFAULT_RULES.with_options(missing_replies=True),
    DEFAULT_RULES.with_options(roles=frozenset({"user"}),
                               visible_kinds=frozenset({Kind.TEXT, Kind.TOOL_CALL})),
]


def read(path: Path, indexed: bool, **sizes: int) -> Session:
    """The session of a Claude Code file, its turns whole or in an index."""
    builder = ClaudeCodeBuilder(str(path))
    if indexed:
        index_turns(builder, **sizes)
    with open(path, "rb") as handle:
        for line, offset, lineno in iter_lines(handle):
            builder.feed(line, offset, lineno)
    builder.finish()
    return builder.session


def whole_form(turn: Turn) -> tuple[Any, ...]:
    assert turn.source is not None
    return (turn.id, turn.role, repr(turn.parts), turn.timestamp, turn.time, turn.completed,
            turn.model, turn.tokens, turn.agent, turn.is_summary, turn.is_meta, turn.index,
            turn.source.path, turn.source.line, turn.source.spans)


def _tool_session(path: Path) -> None:
    """Tool calls whose results come late (after later turns), a reply written over lines
    with a turn between them, a line mixing a prompt with results for earlier calls, an
    orphan result, a compaction summary, a meta line, requests left without a reply (some
    interrupted)."""
    records: list[dict[str, Any]] = []
    clock = [0]

    def add(kind: str, content: Any, uuid: str, message_id: str | None = None,
            **extra: Any) -> None:
        clock[0] += 7
        message: dict[str, Any] = {"role": kind, "content": content}
        if message_id:
            message["id"] = message_id
            message["usage"] = {"input_tokens": clock[0], "output_tokens": 3}
            message["model"] = "claude-x"
        records.append({"type": kind, "uuid": uuid, "sessionId": "s", "parentUuid": None,
                        "timestamp": f"2026-03-01T10:{clock[0] // 60 % 60:02d}:"
                                     f"{clock[0] % 60:02d}.000Z",
                        "message": message, **extra})

    def call(call_id: str, name: str = "Bash") -> dict[str, Any]:
        return {"type": "tool_use", "id": call_id, "name": name, "input": {"cmd": "x" * 300}}

    def result(call_id: str, text: str = "ok") -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": call_id, "content": text * 80}

    for round_ in range(12):
        r = f"r{round_}"
        add("user", f"please look at step {round_}", f"{r}-p")
        add("assistant", [{"type": "thinking", "thinking": "hmm " * 50, "signature": "s"}],
            f"{r}-a1", f"msg-{r}")
        add("assistant", [call(f"{r}-c1"), call(f"{r}-c2", "Read")], f"{r}-a2", f"msg-{r}")
        add("user", "<local-command-stdout></local-command-stdout>", f"{r}-q")
        add("user", [result(f"{r}-c1")], f"{r}-res1")
        add("assistant", [{"type": "text", "text": "and more " * 60}], f"{r}-a3", f"msg-{r}")
        add("user", [{"type": "text", "text": "also this"}, result(f"{r}-c2", "late")],
            f"{r}-mixed")
        add("user", [result(f"nowhere-{round_}")], f"{r}-orphan")
        add("assistant", [], f"{r}-empty", f"msg-{r}-e")
        add("user", "a summary of the conversation so far", f"{r}-sum", isCompactSummary=True)
        add("user", "<command-name>/clear</command-name>", f"{r}-meta", isMeta=True)
        add("user", f"now fix step {round_} please", f"{r}-ask")
        if round_ % 2:
            add("user", "[Request interrupted by user]", f"{r}-stop")
    path.write_bytes(b"\n".join(orjson.dumps(record) for record in records) + b"\n")


def _files(tmp_path: Path) -> list[Path]:
    files = sorted((REPO / "sample_sessions").glob("*claude-code*.jsonl"))
    files += sorted((REALDATA / "claude-code").glob("*.jsonl"))
    long = tmp_path / "long.jsonl"
    _long_session(long, 1_500, seed=5)
    tools = tmp_path / "tools.jsonl"
    _tool_session(tools)
    return [*files, long, tools]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _files(tmp_path_factory.mktemp("index"))


@pytest.mark.parametrize("tail", [1, 64])
def test_the_index_answers_as_the_whole_list(files: list[Path], tail: int) -> None:
    suggester = default_suggester()
    for path in files:
        whole = read(path, indexed=False)
        indexed = read(path, indexed=True, tail=tail, cache=3)
        index = indexed.turns
        assert isinstance(index, TurnIndex)
        assert len(index) == len(whole.turns), path
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
                assert index.stop_at(at, rules, live=True) == \
                    is_stop(whole, at, rules, live=True), (path, at, rules)
                assert index.empty_at(at, rules) == is_empty(turn, rules)
            assert whole_form(index[at]) == whole_form(turn), (path, at)
            assert indexed.full_parts(index[at]) == whole.full_parts(turn)
            assert gap_before(indexed, at) == gap_before(whole, at)
        for rules in RULE_SETS:
            for live in (False, True):
                ours, theirs = Navigator(indexed, rules, live), Navigator(whole, rules, live)
                assert (ours.empty_indices, ours.placeholders) == (
                    theirs.empty_indices, theirs.placeholders)
        assert [whole_form(turn) for turn in index] == [whole_form(t) for t in whole.turns]
        assert [t.id for t in index[2:9:2]] == [t.id for t in whole.turns[2:9:2]]
        assert [t.id for t in reversed(index[-5:])] == [t.id for t in reversed(whole.turns[-5:])]
        assert index.text_sizes(0, len(index)).tolist() == [
            index.text_size_at(at) for at in range(len(index))]
        assert indexed.started == whole.started
        assert first_prompt(index) == first_prompt(whole.turns)  # type: ignore[arg-type]
        assert _compute_stats(indexed) == _compute_stats(whole)
        for at in Navigator(whole, DEFAULT_RULES).empty_indices[:20]:
            assert describe_empty(indexed, index[at], DEFAULT_RULES, suggester) == \
                describe_empty(whole, whole.turns[at], DEFAULT_RULES, suggester)
        for turn in whole.turns[:40]:
            for text in (turn.id, turn.id[:5], f"#{turn.index + 1}"):
                assert _resolved(index, text) == _resolved(whole.turns, text), (path, text)


def describe_words(turn: Turn) -> str:
    from replay.core.detection.empty import request_words

    return request_words(turn)


def _resolved(turns: Any, text: str) -> int | str:
    try:
        return resolve_turn(turns, text, bare_numbers=True, prefixes=True)
    except TurnReferenceError as error:
        return str(error)


def test_search_finds_the_same_turns(files: list[Path]) -> None:
    for path in files:
        whole = read(path, indexed=False)
        indexed = read(path, indexed=True, tail=1, cache=3)
        ours, theirs = Navigator(indexed), Navigator(whole)
        needles = ["the", "TEST", "step 3", "ok", "é", 'say "hi"', "zzz-not-there", "Bash",
                   "SYSTEM", "line-", "[image]", "assist"]
        needles += [turn.id[:8] for turn in whole.turns[:3]]
        for needle in needles:
            assert ours.matches(needle) == theirs.matches(needle), (path, needle)
            for start in (0, len(whole.turns) // 2, len(whole.turns) - 1):
                for forward in (True, False):
                    assert ours.search(needle, start, forward) == \
                        theirs.search(needle, start, forward), (path, needle, start, forward)


def test_late_results_and_mixed_lines(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    _tool_session(path)
    indexed = read(path, indexed=True, tail=1, cache=1)
    index = indexed.turns
    assert isinstance(index, TurnIndex)
    whole = read(path, indexed=False)
    # Each round's reply got lines after later turns were indexed: the columns followed.
    reply = next(turn for turn in whole.turns if turn.id == "msg-r3")
    assert reply.source is not None and len(reply.source.spans) == 5
    assert index.spans_at(reply.index) == reply.source.spans
    assert whole_form(index[reply.index]) == whole_form(reply)
    # A prompt sharing its line with results for earlier calls stays whole in memory.
    mixed = [turn.index for turn in whole.turns if turn.id.endswith("-mixed")]
    assert mixed and all(index.whole_now(at) is not None for at in mixed)
    assert all(whole_form(index[at]) == whole_form(whole.turns[at]) for at in mixed)
    # Every other turn is columns only.
    assert len(index._kept) == len(mixed)


def test_a_replaced_file_gives_a_turn_saying_so(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    _tool_session(path)
    indexed = read(path, indexed=True, tail=1, cache=1)
    index = indexed.turns
    assert isinstance(index, TurnIndex)
    index.close()
    path.write_bytes(b'{"type": "user"}\n')
    at = 1
    assert index.whole_now(at) is None
    turn = index[at]
    assert turn.id == index.id_at(at) and turn.role == index.role_at(at)
    assert [part.kind for part in turn.parts] == [Kind.ERROR]
    assert "could not be read back" in turn.parts[0].text


def _tiny(path: Path, turns: int) -> None:
    with open(path, "wb") as handle:
        for number in range(turns):
            record: dict[str, Any] = {
                "sessionId": "s", "uuid": f"{number:08x}-0000-4000-8000-{number:012x}",
                "timestamp": f"2026-03-01T09:{number // 60 % 60:02d}:{number % 60:02d}.000Z"}
            if number % 2 == 0:
                record.update(type="user", message={"role": "user",
                                                    "content": f"go on with step {number}"})
            else:
                record.update(type="assistant", message={
                    "id": f"msg_{number:08d}", "role": "assistant",
                    "content": [{"type": "text", "text": f"Done with step {number}."}]})
            handle.write(orjson.dumps(record) + b"\n")


def _held(path: Path) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        session = read(path, indexed=True)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(session.turns) > 0
    return held


def test_memory_per_turn_is_bounded(tmp_path: Path) -> None:
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    _tiny(small, 20_000)
    _tiny(large, 80_000)
    per_turn = (_held(large) - _held(small)) / 60_000
    # Columns are about 75 bytes a turn (ids, spans, times, flags); whole turns were 900.
    assert per_turn < 160, per_turn


def test_whole_turns_kept_stay_few(tmp_path: Path) -> None:
    path = tmp_path / "tiny.jsonl"
    _tiny(path, 5_000)
    session = read(path, indexed=True)
    index = session.turns
    assert isinstance(index, TurnIndex)
    for at in range(0, len(index), 7):
        assert index[at].id == index.id_at(at)
    assert len(index._cache) <= 512 and not index._kept and len(index._tail) <= 64
    assert os.path.getsize(path) > 0


def test_export_reads_back_only_the_turns_it_writes(tmp_path: Path) -> None:
    from replay.core.annotate.annotations import Annotation, session_identity
    from replay.core.publish.export import export_rows
    from replay.core.session.labels import DEFAULT_LABELS

    path = tmp_path / "tools.jsonl"
    _tool_session(path)
    whole = read(path, indexed=False)
    indexed = read(path, indexed=True, tail=1)  # (a cache that holds every turn read)
    index = indexed.turns
    assert isinstance(index, TurnIndex)
    notes = [Annotation(session_identity(whole), turn.id, turn.index, "artifact",
                        reviewer="ada", time="2026-03-01T00:00:00.000Z")
             for turn in (whole.turns[4], whole.turns[30])]
    notes.append(Annotation(session_identity(whole), "gone", 99, "approval", reviewer="ada"))
    for all_empty in (False, True):
        ours = export_rows(indexed, notes, DEFAULT_LABELS, all_empty=all_empty)
        assert ours == export_rows(whole, notes, DEFAULT_LABELS, all_empty=all_empty)
    # On a long session the stops come from the columns: only the annotated turns and their
    # neighbours are read back.
    tiny = tmp_path / "tiny.jsonl"
    _tiny(tiny, 5_000)
    session = read(tiny, indexed=True)
    turns = session.turns
    assert isinstance(turns, TurnIndex)
    notes = [Annotation(session_identity(session), turns.id_at(at), at, "artifact",
                        reviewer="ada") for at in (10, 4_000)]
    rows = export_rows(session, notes, DEFAULT_LABELS, all_empty=True)
    assert [row["turn_index"] for row in rows] == [10, 4_000]
    assert turns.materialised <= 6


def test_a_listed_session_counted_through_an_index(files: list[Path]) -> None:
    from replay.core.corpus.scan import summarize
    from replay.core.readers import get_reader, read_entry
    from replay.core.readers.base import SessionEntry

    reader = get_reader("claude-code")
    for path in files:
        entry = SessionEntry(key=path.name, path=path, own_file=True)
        indexed = read_entry(reader, entry, indexed=True)
        assert isinstance(indexed.turns, TurnIndex)
        for rules in RULE_SETS:
            assert summarize(indexed, rules) == summarize(read_entry(reader, entry), rules)
        assert indexed.turns.materialised <= 500
