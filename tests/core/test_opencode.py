"""opencode readers: the export, the older storage directory and the SQLite database.

The storage and database fixtures are built inside each test from the real exports, so all
three readers can be held to the same turns and the same empty turns.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.core.detection.empty import find_empty_turns
from replay.core.readers import ReaderError, detect_reader, load_sessions, opencode_sqlite
from replay.core.readers._opencode_parts import KEEP_WHOLE, turn_from_message
from replay.core.session.model import Kind, Session, Source
from tests.conftest import realdata

EXPORTS = {
    "nimble-pixel": "ses_39b4c1891ffezxPVc5OPmcqF33",
    "silent-panda": "ses_39b3d0892ffeaCoiaHPszzRI8d",
    "crisp-garden": "ses_39bc72f63ffeQb8egYBpyTrCNr",
    "curious-sailor": "ses_39b7f9e89ffe7J0WzLzYrUt4eW",
    "silent-nebula": "ses_39b2e52e8ffeokU5mBDCeUvc8t",
    "jolly-eagle": "ses_39b5d713cffeRgAoxPIwS3Plus",
}
TURNS = {"nimble-pixel": 8, "silent-panda": 64, "crisp-garden": 47, "curious-sailor": 40,
         "silent-nebula": 17, "jolly-eagle": 4}

# (slug, index, message id, role, reason, evidence that must be shown)
EMPTY = [
    ("nimble-pixel", 7, "msg_c64b45d32001EaXJNlvHSXf4Mg", "assistant", "aborted",
     ["error: MessageAbortedError", "reasoning: empty", "step markers: 1"]),
    ("silent-panda", 26, "msg_c64ca5e74002sLjIDnCWVfuenE", "assistant", "aborted",
     ["error: MessageAbortedError"]),
    ("silent-panda", 28, "msg_c64cb3be8002cyo61wcj5kX0nM", "assistant", "aborted",
     ["error: MessageAbortedError", "reasoning: empty", "step markers: 1"]),
    ("silent-panda", 63, "msg_c64d43342002HKMp2ZB5uq2gFj", "assistant", "markers-only",
     ["step markers: 1", "no completion time"]),
    ("crisp-garden", 22, "msg_c64400354001g5cqjN4BL8Maf1", "assistant", "aborted",
     ["error: MessageAbortedError"]),
    ("curious-sailor", 38, "msg_c648e17e6001YM54MG29gGQBfQ", "user", "compaction-request",
     ["compaction"]),
]


def export_path(slug: str) -> Path:
    """The real export of one session."""
    name = f"dark-factory__docs__chats__opencode__session__{slug}__{EXPORTS[slug]}.json"
    return realdata(f"opencode/{name}")


def export_document(slug: str) -> dict[str, Any]:
    """The parsed real export."""
    document: dict[str, Any] = orjson.loads(export_path(slug).read_bytes())
    return document


def read_export(slug: str) -> Session:
    """The one session of a real export."""
    (session,) = load_sessions(export_path(slug))
    return session


def signature(session: Session) -> list[tuple[Any, ...]]:
    """Everything a reader derives from a message, for comparing readers."""
    return [
        (turn.id, turn.role, turn.timestamp, turn.completed, turn.model, turn.tokens, turn.agent,
         turn.is_summary,
         [(p.kind, p.name, p.text, p.input, p.output, p.status, p.call_id, p.synthetic,
           p.duration, p.mime, p.shortened) for p in turn.parts])
        for turn in session.turns
    ]


def empties(session: Session) -> list[tuple[int, str, str, str]]:
    """(index, id, role, reason) of every empty turn under the default rules."""
    return [(e.index, e.id, e.role, e.reason) for e in find_empty_turns(session)]


def write_json(path: Path, value: object) -> None:
    """Write one JSON file, making its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(value))


def split_into_storage(root: Path, slugs: list[str]) -> Path:
    """Lay real exports out as opencode's older storage directory under `root/storage`."""
    storage = root / "storage"
    for slug in slugs:
        document = export_document(slug)
        info = document["info"]
        write_json(storage / "session" / info["projectID"] / f"{info['id']}.json", info)
        # Reverse file creation order, so the reader must sort by id and time itself.
        for message in reversed(document["messages"]):
            message_id = message["info"]["id"]
            write_json(storage / "message" / info["id"] / f"{message_id}.json", message["info"])
            for part in reversed(message["parts"]):
                write_json(storage / "part" / message_id / f"{part['id']}.json", part)
    return storage


SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT,
  slug TEXT NOT NULL, directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES session(id),
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL REFERENCES message(id),
  session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
  data TEXT NOT NULL);
CREATE INDEX part_message_id_id_idx ON part(message_id, id);
"""


def without(mapping: dict[str, Any], *keys: str) -> bytes:
    """The JSON of a mapping without some keys, as opencode stores `data`."""
    return orjson.dumps({k: v for k, v in mapping.items() if k not in keys})


def build_database(path: Path, slugs: list[str], *, wal: bool = False) -> Path:
    """An opencode.db holding real exports, rows inserted newest first."""
    connection = sqlite3.connect(path)
    if wal:
        connection.execute("PRAGMA journal_mode = WAL")
    connection.executescript(SCHEMA)
    for slug in slugs:
        document = export_document(slug)
        info = document["info"]
        connection.execute(
            "INSERT INTO session VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?)",
            (info["id"], info["projectID"], info["slug"], info["directory"], info["title"],
             info["version"], info["time"]["created"], info["time"]["updated"]))
        for message in reversed(document["messages"]):
            mi = message["info"]
            created = mi["time"]["created"]
            connection.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                               (mi["id"], info["id"], created, created,
                                without(mi, "id", "sessionID").decode()))
            for part in reversed(message["parts"]):
                connection.execute(
                    "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                    (part["id"], mi["id"], info["id"], created, created,
                     without(part, "id", "sessionID", "messageID").decode()))
    connection.commit()
    connection.close()
    return path


# --- the export reader on the real files -----------------------------------------------------


def test_every_real_export_is_detected_and_read_with_exact_turn_counts() -> None:
    for slug, count in TURNS.items():
        assert detect_reader(export_path(slug)).name == "opencode"
        session = read_export(slug)
        assert (session.session_id, len(session.turns), session.skipped, session.warnings) == (
            EXPORTS[slug], count, 0, [])
        assert session.format == "opencode"
    assert read_export("nimble-pixel").title == "Re-enable protobuf transport, logging.ts review"


def test_the_real_exports_hold_exactly_six_empty_turns() -> None:
    found = []
    for slug in TURNS:
        session = read_export(slug)
        for empty in find_empty_turns(session):
            found.append((slug, empty.index, empty.id, empty.role, empty.reason, empty.evidence))
    assert [row[:5] for row in found] == sorted(
        [row[:5] for row in EMPTY], key=lambda row: (list(TURNS).index(row[0]), row[1]))
    assert sum(1 for row in found if row[3] == "assistant") == 5
    wanted = {row[2]: row[5] for row in EMPTY}
    for _, _, message_id, _, _, evidence in found:
        for phrase in wanted[message_id]:
            assert phrase in evidence, (message_id, evidence)
    # The aborted replies ended with a completion time; only the in-flight one lacks it.
    no_completion = [row[2] for row in found if "no completion time" in row[5]]
    assert no_completion == ["msg_c64d43342002HKMp2ZB5uq2gFj"]


def test_empty_turns_keep_what_the_source_said() -> None:
    panda = read_export("silent-panda")
    assert [p.kind for p in panda.turns[26].parts] == [Kind.ERROR]
    error = panda.turns[26].parts[0]
    assert (error.name, error.text) == ("MessageAbortedError", "The operation was aborted.")
    assert [p.kind for p in panda.turns[28].parts] == [Kind.STEP, Kind.REASONING, Kind.ERROR]
    assert [(p.kind, p.name) for p in panda.turns[63].parts] == [(Kind.STEP, "start")]
    assert panda.turns[63].completed is None and panda.turns[62].completed == 1771218154.301
    sailor = read_export("curious-sailor")
    (compaction,) = sailor.turns[38].parts
    assert (compaction.kind, compaction.name) == (Kind.COMPACTION, "manual")


def test_a_running_tool_call_is_not_an_empty_turn() -> None:
    nebula = read_export("silent-nebula")
    last = nebula.turns[-1]
    assert last.id == "msg_c64d428dc0017c7jMYYeYRcmue" and last.completed is None
    tool = [p for p in last.parts if p.kind == Kind.TOOL_CALL]
    assert [(p.name, p.status, p.call_id, p.output, p.duration) for p in tool] == [
        ("bash", "running", "call_LQM56JJNICrES472Psl97hIY", None, None)]
    assert orjson.loads(tool[0].input or "") == {
        "command": "bun scripts/export_opencode_sessions.sh.ts",
        "description": "Exports project OpenCode sessions into docs"}
    assert find_empty_turns(nebula) == []


def test_summary_agent_model_tokens_and_timestamps() -> None:
    sailor = read_export("curious-sailor")
    summary = sailor.turns[39]
    assert (summary.role, summary.is_summary, summary.agent) == ("assistant", True, "compaction")
    assert summary.model == "openai/gpt-5.3-codex"
    assert summary.tokens == {"total": 54382, "input": 53375, "output": 1007, "reasoning": 74,
                              "cache_read": 0, "cache_write": 0}
    # User infos carry `summary: {title, diffs}`: that is not a compaction summary.
    assert [t.index for t in sailor.turns if t.is_summary] == [39]
    first = read_export("nimble-pixel").turns[0]
    assert (first.role, first.is_summary, first.agent, first.model) == (
        "user", False, "build", None)
    assert first.timestamp == "2026-02-16T04:27:17.749Z" and first.time == 1771216037.749
    panda = read_export("silent-panda")
    assert panda.turns[26].agent == "plan" and panda.turns[62].agent == "build"


def test_parts_of_every_kind_seen_in_the_real_exports() -> None:
    kinds: dict[str, int] = {}
    synthetic = 0
    for slug in TURNS:
        for turn in read_export(slug).turns:
            for part in turn.parts:
                kinds[part.kind] = kinds.get(part.kind, 0) + 1
                synthetic += part.synthetic
    assert kinds == {Kind.TEXT: 75, Kind.FILE: 19, Kind.STEP: 310, Kind.REASONING: 148,
                     Kind.TOOL_CALL: 219, Kind.PATCH: 52, Kind.AGENT: 2, Kind.COMPACTION: 1,
                     Kind.ERROR: 4}
    assert synthetic == 40
    nimble = read_export("nimble-pixel")
    file_part = nimble.turns[0].parts[1]
    assert (file_part.kind, file_part.name, file_part.mime, file_part.input) == (
        Kind.FILE, "core/src/logging.ts", "text/plain",
        "file:///Users/alex/repos/vfp/dark-factory/core/src/logging.ts")
    patch = nimble.turns[2].parts[-1]
    assert (patch.kind, patch.text) == (Kind.PATCH, "/Users/alex/repos/vfp/dark-factory/TODO.md")
    finish = nimble.turns[1].parts[-1]
    assert (finish.kind, finish.name, finish.text) == (Kind.STEP, "finish", "tool-calls")
    agent = [p for t in read_export("crisp-garden").turns for p in t.parts if p.kind == Kind.AGENT]
    assert [(p.name, p.text) for p in agent] == [("gitter", "@gitter")] * 2


def test_tool_errors_and_durations() -> None:
    sailor = read_export("curious-sailor")
    (failed,) = [p for p in sailor.turns[13].parts if p.status == "error"]
    assert (failed.status, failed.output, failed.duration) == (
        "error", "Error: Request failed with status code: 403", 0.31)
    panda = read_export("silent-panda")
    (bash,) = [p for p in panda.turns[62].parts if p.kind == Kind.TOOL_CALL]
    assert (bash.name, bash.status, bash.duration) == ("bash", "completed", 0.827)


def test_long_texts_are_shortened_and_read_back_whole() -> None:
    slug = "curious-sailor"
    session = read_export(slug)
    document = export_document(slug)
    shortened = [(t, i) for t in session.turns for i, p in enumerate(t.parts) if p.shortened]
    assert len(shortened) > 0
    turn, position = shortened[0]
    raw = document["messages"][turn.index]["parts"][position]
    full = session.full_parts(turn)[position]
    assert not full.shortened
    whole = raw.get("text") if raw["type"] in ("text", "reasoning") else raw["state"]["output"]
    assert whole in (full.text, full.output) and len(whole) > KEEP_WHOLE
    part = turn.parts[position]
    assert len(part.text) <= 400 and (part.output is None or len(part.output) <= 400)


# --- the mapping on its own: every part type, odd values, never an exception ----------------


def make_turn(info: dict[str, Any], parts: object) -> tuple[Session, Any]:
    session = Session(path="x", format="opencode")
    return session, turn_from_message(info, parts, Source("x", record="m"), session)


def test_every_documented_part_type_maps_to_its_kind() -> None:
    parts = [
        {"type": "text", "text": "hi", "synthetic": True},
        {"type": "reasoning", "text": "hmm", "time": {"start": 1000, "end": 3500}},
        {"type": "tool", "tool": "read", "callID": "c1",
         "state": {"status": "completed", "input": {"a": 1}, "output": "ok",
                   "time": {"start": 1000, "end": 1250}}},
        {"type": "file", "mime": "image/png", "url": "data:image/png;base64,AAAA"},
        {"type": "patch", "hash": "abc", "files": ["a.py", "b.py"]},
        {"type": "step-start"},
        {"type": "step-finish", "reason": "stop"},
        {"type": "snapshot", "snapshot": "deadbeef"},
        {"type": "compaction", "auto": True, "overflow": True},
        {"type": "agent", "name": "build"},
        {"type": "subtask", "agent": "explore", "prompt": "look", "description": "find things"},
        {"type": "retry", "attempt": 2,
         "error": {"name": "APIError", "data": {"message": "overloaded"}}},
        {"type": "hologram", "beam": 1},
    ]
    session, turn = make_turn({"id": "msg_1", "role": "assistant"}, parts)
    assert [(p.kind, p.name) for p in turn.parts] == [
        (Kind.TEXT, None), (Kind.REASONING, None), (Kind.TOOL_CALL, "read"),
        (Kind.FILE, "(inline image/png)"), (Kind.PATCH, "abc"), (Kind.STEP, "start"),
        (Kind.STEP, "finish"), (Kind.SNAPSHOT, None), (Kind.COMPACTION, "auto"),
        (Kind.AGENT, "build"), (Kind.SUBTASK, "explore"), (Kind.RETRY, "APIError"),
        (Kind.OTHER, "hologram")]
    text, reasoning, tool, file_part, patch = turn.parts[:5]
    assert text.synthetic and reasoning.duration == 2.5
    assert (tool.input, tool.output, tool.status, tool.call_id, tool.duration) == (
        '{"a":1}', "ok", "completed", "c1", 0.25)
    assert (file_part.mime, file_part.input) == ("image/png", None)
    assert patch.text == "a.py\nb.py"
    assert turn.parts[7].text == "deadbeef" and turn.parts[8].text == "overflow"
    assert (turn.parts[10].text, turn.parts[10].input) == ("look", "find things")
    assert turn.parts[11].text == "attempt 2: overloaded"
    assert session.skipped == 0 and session.warnings == []


def test_message_errors_become_an_error_part_at_the_end() -> None:
    _, turn = make_turn({"id": "m", "role": "assistant",
                         "error": {"name": "ProviderAuthError", "data": {"providerID": "x"}}}, [])
    assert [(p.kind, p.name, p.text) for p in turn.parts] == [(Kind.ERROR, "ProviderAuthError", "")]
    _, turn = make_turn({"id": "m", "role": "assistant", "error": "boom"}, [])
    assert [(p.kind, p.name) for p in turn.parts] == [(Kind.ERROR, "boom")]


def test_odd_values_are_tolerated_and_counted() -> None:
    session, turn = make_turn(
        {"id": 7, "role": 3, "modelID": "m", "time": "yesterday", "tokens": [1], "summary": "yes",
         "mode": None, "agent": "plan"},
        [None, {"type": 5}, {"type": "text", "text": None},
         {"type": "tool", "state": "broken"}, {"type": "file"}])
    assert (turn.id, turn.role, turn.timestamp, turn.tokens, turn.is_summary, turn.agent) == (
        "m", "assistant", None, None, False, "plan")
    assert [(p.kind, p.text, p.name) for p in turn.parts] == [
        (Kind.TEXT, "", None), (Kind.TOOL_CALL, "", "tool"), (Kind.FILE, "", None)]
    assert session.skipped == 2 and len(session.warnings) == 3
    session, turn = make_turn({"id": "m", "role": "user"}, {"not": "a list"})
    assert turn.parts == [] and session.skipped == 1


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["id", "role", "type", "time", "created", "completed", "state", "input",
                         "output", "error", "data", "message", "name", "tokens", "cache", "text",
                         "files", "start", "end", "url", "summary", "mode", "auto"]),
        children, max_size=6),
    max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(info=st.dictionaries(st.sampled_from(["id", "role", "time", "error", "tokens", "summary",
                                             "modelID", "providerID", "mode", "agent"]),
                            JSON, max_size=8),
       parts=st.lists(st.dictionaries(st.sampled_from(
           ["type", "text", "state", "time", "files", "error", "url", "auto", "source"]),
           JSON | st.sampled_from(["text", "tool", "file", "retry", "patch", "compaction"]),
           max_size=5), max_size=5) | JSON)
def test_turn_from_message_never_raises(info: dict[str, Any], parts: object) -> None:
    session, turn = make_turn(info, parts)
    assert turn.role in ("user", "assistant", "system")
    assert isinstance(turn.id, str)


# --- export: detection and bad input ----------------------------------------------------------


def test_sniff_needs_the_export_shape(tmp_path: Path) -> None:
    small = tmp_path / "small.json"
    small.write_bytes(orjson.dumps({"info": {"id": "x"}, "messages": [
        {"info": {"id": "a", "role": "user"}, "parts": [{"type": "text", "text": "hi"}]}]}))
    assert detect_reader(small).name == "opencode"
    (session,) = load_sessions(small)
    assert [(t.id, t.role) for t in session.turns] == [("a", "user")]
    chat = tmp_path / "chat.json"
    chat.write_bytes(orjson.dumps({"info": {}, "messages": [{"role": "user", "content": "hi"}]}))
    from replay.core.readers.opencode_export import sniff
    assert not sniff(chat, chat.read_bytes())


def test_bad_exports_fail_with_one_line_or_count_bad_messages(tmp_path: Path) -> None:
    cut = tmp_path / "cut.json"
    cut.write_bytes(export_path("jolly-eagle").read_bytes()[:5000])
    # Cut off: as in every format, a session with no turns and a warning saying so.
    for found in (load_sessions(cut, format="opencode"), load_sessions(cut)):
        (session,) = found
        assert (session.format, session.turns, session.skipped) == ("opencode", [], 1)
        assert session.warnings == ["the JSON document is cut off at byte 5,000 (truncated "
                                    "while copied or written?): 0 turns read"]
    broken = tmp_path / "broken.json"
    whole = export_path("jolly-eagle").read_bytes()
    broken.write_bytes(whole.replace(b'"messages"', b'"messages" @', 1))
    with pytest.raises(ReaderError) as caught:
        load_sessions(broken, format="opencode")
    assert "\n" not in str(caught.value) and str(broken) in str(caught.value)
    odd = tmp_path / "odd.json"
    odd.write_bytes(orjson.dumps({"info": {"id": "ses_1"}, "messages": [
        42, {"info": "x"}, {"info": {"id": "msg_1", "role": "user"}, "parts": []}]}))
    (session,) = load_sessions(odd)
    assert [t.id for t in session.turns] == ["msg_1"] and session.skipped == 2
    missing = tmp_path / "list.json"
    missing.write_bytes(b'{"info": {"id": "ses_1"}, "messages": {}}')
    with pytest.raises(ReaderError):
        load_sessions(missing, format="opencode")


# --- storage directory -----------------------------------------------------------------------


def test_storage_directory_gives_the_same_turns_as_the_exports(tmp_path: Path) -> None:
    storage = split_into_storage(tmp_path, list(TURNS))
    for path in (tmp_path, storage):
        assert detect_reader(path).name == "opencode-storage"
        sessions = load_sessions(path)
        # Oldest first: crisp-garden was started first, silent-nebula last.
        assert [s.session_id for s in sessions] == [
            EXPORTS[slug] for slug in ("crisp-garden", "curious-sailor", "jolly-eagle",
                                       "nimble-pixel", "silent-panda", "silent-nebula")]
        for session in sessions:
            slug = session.meta["slug"]
            export = read_export(slug)
            assert signature(session) == signature(export), slug
            assert empties(session) == empties(export)
            assert (session.format, session.title, session.skipped) == (
                "opencode-storage", export.title, 0)
    assert sum(len(find_empty_turns(s)) for s in load_sessions(tmp_path)) == 6


def test_storage_single_session_file_ids_from_file_names_and_full_parts(tmp_path: Path) -> None:
    storage = split_into_storage(tmp_path, ["curious-sailor", "nimble-pixel"])
    info = export_document("curious-sailor")["info"]
    session_file = storage / "session" / info["projectID"] / f"{info['id']}.json"
    # Older files may lack their own ids: the file names carry them.
    message_file = storage / "message" / info["id"] / "msg_c648e17e6001YM54MG29gGQBfQ.json"
    stored = orjson.loads(message_file.read_bytes())
    del stored["id"]
    message_file.write_bytes(orjson.dumps(stored))
    assert detect_reader(session_file).name == "opencode-storage"
    (session,) = load_sessions(session_file)
    assert session.session_id == info["id"] and len(session.turns) == 40
    assert empties(session) == [(38, "msg_c648e17e6001YM54MG29gGQBfQ", "user",
                                 "compaction-request")]
    turn = next(t for t in session.turns if any(p.shortened for p in t.parts))
    full = session.full_parts(turn)
    export = read_export("curious-sailor")
    assert [p.text for p in full] == [p.text for p in export.full_parts(export.turns[turn.index])]


def test_storage_problems_are_counted_not_fatal(tmp_path: Path) -> None:
    storage = split_into_storage(tmp_path, ["jolly-eagle"])
    session_id = EXPORTS["jolly-eagle"]
    messages = sorted((storage / "message" / session_id).iterdir())
    messages[1].write_bytes(b"{not json")
    part_dir = storage / "part" / messages[0].stem
    (part_dir / "prt_zzz.json").write_bytes(b"[1, 2]")
    (part_dir / ".oc-prt_x.json.123.tmp").write_bytes(b"half")
    orphan = storage / "message" / "ses_orphan"
    write_json(orphan / "msg_000.json", {"role": "user", "time": {"created": 1}})
    write_json(storage / "part" / "msg_000" / "prt_1.json", {"type": "text", "text": "lost?"})
    sessions = load_sessions(tmp_path)
    assert [s.session_id for s in sessions] == ["ses_orphan", session_id]
    orphan_session, eagle = sessions
    assert [(t.id, t.parts[0].text) for t in orphan_session.turns] == [("msg_000", "lost?")]
    assert orphan_session.skipped == 0 and len(orphan_session.warnings) == 1
    assert len(eagle.turns) == 3 and eagle.skipped == 2


def test_a_folder_that_is_not_storage_is_not_sniffed(tmp_path: Path) -> None:
    (tmp_path / "session").mkdir()
    from replay.core.readers.opencode_storage import sniff
    assert not sniff(tmp_path, b"")


# --- SQLite database -------------------------------------------------------------------------


def test_database_gives_the_same_turns_as_the_exports(tmp_path: Path) -> None:
    database = build_database(tmp_path / "opencode.db", list(TURNS))
    for path in (database, tmp_path):
        assert detect_reader(path).name == "opencode-db"
        sessions = load_sessions(path)
        assert [s.session_id for s in sessions] == [
            EXPORTS[slug] for slug in ("crisp-garden", "curious-sailor", "jolly-eagle",
                                       "nimble-pixel", "silent-panda", "silent-nebula")]
        for session in sessions:
            slug = session.meta["slug"]
            export = read_export(slug)
            assert signature(session) == signature(export), slug
            assert empties(session) == empties(export)
            assert (session.title, session.skipped, session.warnings) == (export.title, 0, [])
            assert session.turns[0].source.record == f"message:{export.turns[0].id}"
    assert sum(len(find_empty_turns(s)) for s in load_sessions(database)) == 6


def test_database_full_parts_and_reading_leaves_the_file_alone(tmp_path: Path) -> None:
    database = build_database(tmp_path / "opencode.db", ["curious-sailor"])
    before = (database.read_bytes(), os.stat(database).st_mtime_ns, sorted(os.listdir(tmp_path)))
    (session,) = load_sessions(database)
    turn = next(t for t in session.turns if any(p.shortened for p in t.parts))
    export = read_export("curious-sailor")
    full = session.full_parts(turn)
    assert [(p.text, p.output) for p in full] == [
        (p.text, p.output) for p in export.full_parts(export.turns[turn.index])]
    after = (database.read_bytes(), os.stat(database).st_mtime_ns, sorted(os.listdir(tmp_path)))
    assert after == before


def test_a_wal_database_nobody_has_open_gets_no_new_files(tmp_path: Path) -> None:
    database = build_database(tmp_path / "opencode.db", ["jolly-eagle"], wal=True)
    assert sorted(os.listdir(tmp_path)) == ["opencode.db"]
    before = (database.read_bytes(), os.stat(database).st_mtime_ns)
    (session,) = load_sessions(database)
    assert len(session.turns) == 4 and session.warnings == []
    assert session.full_parts(session.turns[1]) == session.turns[1].parts
    assert sorted(os.listdir(tmp_path)) == ["opencode.db"]
    assert (database.read_bytes(), os.stat(database).st_mtime_ns) == before


def test_database_reads_while_a_writer_holds_a_transaction_in_wal_mode(tmp_path: Path) -> None:
    database = build_database(tmp_path / "opencode.db", ["jolly-eagle"], wal=True)
    writer = sqlite3.connect(database, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO message VALUES ('msg_zzz', ?, 1771214999999, 0, ?)",
                       (EXPORTS["jolly-eagle"], '{"role": "user", "time": {}}'))
        (session,) = load_sessions(database)
        # The uncommitted message is not seen; the committed ones are.
        assert len(session.turns) == 4 and session.warnings == []
        writer.execute("COMMIT")
        (session,) = load_sessions(database)
        assert len(session.turns) == 5 and session.turns[-1].id == "msg_zzz"
    finally:
        writer.close()


def test_a_locked_or_corrupt_database_is_one_clean_line(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    database = build_database(tmp_path / "opencode.db", ["jolly-eagle"])
    monkeypatch.setattr(opencode_sqlite, "BUSY_SECONDS", 0.05)
    locker = sqlite3.connect(database, isolation_level=None)
    try:
        locker.execute("BEGIN EXCLUSIVE")
        for format in ("opencode-db", None):
            with pytest.raises(ReaderError) as caught:
                load_sessions(database, format=format)
            assert "locked" in str(caught.value) and "\n" not in str(caught.value)
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    corrupt = tmp_path / "bad" / "opencode.db"
    corrupt.parent.mkdir()
    corrupt.write_bytes(database.read_bytes()[:100] + b"\x00garbage" * 500)
    with pytest.raises(ReaderError) as caught:
        load_sessions(corrupt, format="opencode-db")
    assert str(corrupt) in str(caught.value) and "\n" not in str(caught.value)


def test_database_without_optional_columns_or_session_table(tmp_path: Path) -> None:
    database = tmp_path / "old.db"
    connection = sqlite3.connect(database)
    connection.executescript(
        "CREATE TABLE message (id TEXT, session_id TEXT, data TEXT);"
        "CREATE TABLE part (id TEXT, message_id TEXT, data TEXT);")
    connection.executemany("INSERT INTO message VALUES (?, 'ses_a', ?)", [
        ("msg_2", '{"role": "assistant", "time": {"created": 2000000000000}}'),
        ("msg_1", '{"role": "user", "time": {"created": 1000000000000}}'),
        ("msg_3", "not json")])
    connection.executemany("INSERT INTO part VALUES (?, ?, ?)", [
        ("prt_2", "msg_1", '{"type": "text", "text": "two"}'),
        ("prt_1", "msg_1", '{"type": "text", "text": "one"}'),
        ("prt_3", "msg_2", "[]")])
    connection.commit()
    connection.close()
    assert detect_reader(database).name == "opencode-db"
    (session,) = load_sessions(database)
    assert [(t.id, [p.text for p in t.parts]) for t in session.turns] == [
        ("msg_1", ["one", "two"]), ("msg_2", [])]
    assert session.skipped == 2 and session.session_id == "ses_a"
    assert empties(session) == [(1, "msg_2", "assistant", "no-content")]


# --- one session of many ------------------------------------------------------------------------


def test_read_session_gives_the_same_session_as_reading_them_all(tmp_path: Path) -> None:
    from replay.core.readers import opencode_storage

    database = build_database(tmp_path / "opencode.db", list(TURNS))
    storage = split_into_storage(tmp_path / "split", list(TURNS))
    orphan = storage / "message" / "ses_orphan"
    write_json(orphan / "msg_000.json", {"role": "user", "time": {"created": 1}})
    for module, path in ((opencode_sqlite, database), (opencode_storage, storage)):
        everything = module.READER.read(path, None)
        assert module.READER.read_session is not None
        for session in everything:
            one = module.READER.read_session(path, session.session_id)
            assert one is not None
            assert (one.session_id, one.title, signature(one), one.warnings) == (
                session.session_id, session.title, signature(session), session.warnings)
        assert module.READER.read_session(path, "ses_not_there") is None
        newest = module.READER.read_session(path, None)
        assert newest is not None and newest.session_id == everything[-1].session_id
    assert opencode_storage.read_session(storage, "ses_orphan") is not None
    info = export_document("nimble-pixel")["info"]
    session_file = storage / "session" / info["projectID"] / f"{info['id']}.json"
    assert opencode_storage.read_session(session_file, info["id"]) is not None
    assert opencode_storage.read_session(session_file, EXPORTS["jolly-eagle"]) is None


def test_following_one_session_of_a_database_reads_only_that_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.live.follow import SessionFollower

    database = build_database(tmp_path / "opencode.db", list(TURNS))
    asked: list[str | None] = []
    read = opencode_sqlite._read

    def recording(path: Path, progress: object, only: str | None = None,
                  newest: bool = False) -> list[Session]:
        asked.append("newest" if newest else only)
        found = read(path, progress, only, newest)  # type: ignore[arg-type]
        assert len(found) == 1
        return found

    monkeypatch.setattr(opencode_sqlite, "_read", recording)
    follower = SessionFollower(database)
    newest = EXPORTS["silent-nebula"]
    assert follower.poll().session.session_id == newest  # type: ignore[union-attr]
    assert asked == ["newest"]  # never every session, not even to find the newest
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE message SET time_updated = time_updated + 1 "
                           "WHERE session_id = ?", (newest,))
    follower.poll()
    assert asked == ["newest", newest]
