"""Reading a turn's source record back, for every kind of source locator."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from replay.core.readers import load_sessions
from replay.core.readers.raw import raw_record_text
from tests.conftest import SAMPLES, realdata


def test_opencode_export_turn_shows_its_message() -> None:
    session = load_sessions(SAMPLES / "torch-revert.opencode.json")[0]
    turn = session.turns[33]
    text = raw_record_text(turn)
    assert text.splitlines()[0].endswith("messages[33]")
    record = json.loads(text.split("\n\n", 1)[1])
    assert record["info"]["id"] == turn.id


def test_chat_json_pointer() -> None:
    session = load_sessions(SAMPLES / "support-bot.chat.json")[0]
    turn = session.turns[10]
    record = json.loads(raw_record_text(turn).split("\n\n", 1)[1])
    assert record["role"] == "assistant" and record["content"] == ""


def test_line_based_turn_shows_each_line() -> None:
    session = load_sessions(SAMPLES / "refactor.claude-code.jsonl")[0]
    turn = next(t for t in session.turns if t.role == "assistant" and len(t.source.spans) > 1)
    pieces = raw_record_text(turn).split("\n\n")
    assert len(pieces) >= 1 + len(turn.source.spans)
    assert json.loads(pieces[1])["message"]["id"] == turn.id


def test_gemini_document_resolves_to_one_message() -> None:
    path = realdata("gemini-cli/codemie-code__tests__integration__metrics__fixtures__gemini__"
                    "session-2025-12-01T21-45-5b959dae.json")
    turn = load_sessions(path)[0].turns[3]
    body = raw_record_text(turn).split("\n\n", 1)[1]
    assert "messages" not in json.loads(body)
    assert json.loads(body)["id"] == turn.id


def test_opencode_database_row_and_parts(tmp_path: Path) -> None:
    database = tmp_path / "opencode.db"
    with sqlite3.connect(database) as connection:
        connection.executescript(
            "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, title TEXT,"
            " time_created INTEGER, time_updated INTEGER, data TEXT);"
            "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,"
            " time_updated INTEGER, data TEXT);"
            "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,"
            " time_created INTEGER, time_updated INTEGER, data TEXT);")
        connection.execute("INSERT INTO session VALUES ('ses_1', 'p', 't', 1, 1, '{}')")
        connection.execute(
            "INSERT INTO message VALUES ('msg_1', 'ses_1', 1700000000000, 1, ?)",
            (json.dumps({"role": "user", "time": {"created": 1700000000000}}),))
        connection.execute("INSERT INTO part VALUES ('prt_1', 'msg_1', 'ses_1', 1, 1, ?)",
                           (json.dumps({"type": "text", "text": "hello there"}),))
    turn = load_sessions(database)[0].turns[0]
    text = raw_record_text(turn)
    assert "message:msg_1" in text and "hello there" in text and "part prt_1" in text


def test_missing_file_is_said_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    turn = load_sessions(path)[0].turns[0]
    path.unlink()
    assert "could not read the record again" in raw_record_text(turn)


@pytest.mark.parametrize("depth", [254, 300, 600])
def test_a_record_nested_deeper_than_orjson_writes_shows_in_the_raw_view(
        tmp_path: Path, depth: int) -> None:
    # orjson reads 1,024 levels but writes only 255: the raw view (`v`) of such a record
    # raised TypeError in the app (found by the r5 fuzz, nest_value on a real Claude Code file).
    path = tmp_path / "deep.jsonl"
    path.write_text('{"type":"user","sessionId":"s","uuid":"u1","message":{"role":"user",'
                    '"content":"hi"},"x":' + "[" * depth + "]" * depth + "}\n")
    [session] = load_sessions(path)
    text = raw_record_text(session.turns[0])
    assert '"hi"' in text and text.count("[") >= min(depth, 255)
