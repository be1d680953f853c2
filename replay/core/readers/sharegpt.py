"""ShareGPT: `{"conversations": [{"from": "human" | "gpt" | ..., "value": text}]}`.

A JSON list of such objects (or a JSON-lines file of them) gives one session each, named by
its `id` or `#<n>`. Speakers map to turns as in `chat.py`: `human`/`user` → user,
`gpt`/`assistant`/... → assistant, `system` → system, `function_call` → an assistant turn
holding the call (its value is `{"name", "arguments"}` JSON), and `observation`/`tool`/
`function` output goes to that call. A top-level `system` string opens the session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from replay.core.readers.base import Progress, Reader, ReaderError, RecordFeed
from replay.core.readers.chat import (
    INVALID,
    ChatBuilder,
    RecordBuilder,
    Spans,
    envelope_id,
    envelope_text,
    file_head,
    first_record,
    head_document,
    load_json,
    sessions_by_line,
    sniff_document,
    starts_like_json,
)
from replay.core.readers.json_stream import ARRAYS, Elements
from replay.core.readers.span_feed import element_feed, element_number, streamed
from replay.core.session.model import Session, Source

NAME = "sharegpt"

SPEAKERS: dict[str, str] = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "chatgpt": "assistant",
    "bard": "assistant",
    "bing": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "system": "system",
    "function_call": "function_call",
    "tool_call": "function_call",
    "observation": "tool",
    "tool": "tool",
    "function": "tool",
    "function_response": "tool",
    "tool_response": "tool",
}
"""ShareGPT speaker names mapped to chat roles (`function_call` is a tool call)."""

LIST_KEYS: tuple[str, ...] = ("conversations", "conversation", "messages", "items")
"""Envelope fields that may hold the turn list."""


def is_turn(value: object) -> bool:
    """True for a `{from, value}` object."""
    return isinstance(value, dict) and "from" in value and "value" in value


def turn_list(envelope: object) -> tuple[str, list[Any]] | None:
    """(key, list) of the ShareGPT turns in an envelope, or None."""
    if not isinstance(envelope, dict):
        return None
    for key in LIST_KEYS:
        value = envelope.get(key)
        if isinstance(value, ARRAYS) and any(is_turn(item) for item in value[:10]):
            return key, value
    return None


def conversations(document: object) -> list[tuple[str, dict[str, Any]]] | None:
    """(JSON pointer, envelope) for each ShareGPT conversation of a document, or None."""
    if turn_list(document) is not None:
        return [("", document)]  # type: ignore[list-item]
    if isinstance(document, ARRAYS):
        found = [(f"/{n}", item) for n, item in enumerate(document) if turn_list(item) is not None]
        return found or None
    return None


def _as_message(turn: object, session: Session, where: str) -> dict[str, Any] | None:
    """A ShareGPT turn as an OpenAI-style message (see `chat.py`), or None if unreadable."""
    if not isinstance(turn, dict):
        session.warn(f"{where}: a {type(turn).__name__}, expected {{from, value}}")
        return None
    speaker = turn.get("from")
    role = SPEAKERS.get(speaker.lower()) if isinstance(speaker, str) else None
    if role is None:
        session.warn(f"{where}: unknown speaker {str(speaker)[:40]!r}")
        return None
    value = turn.get("value")
    message: dict[str, Any] = {
        key: turn[key] for key in ("id", "timestamp", "created_at", "model") if key in turn
    }
    if role != "function_call":
        message.update(role=role, content=value)
        return message
    call: object = value
    if isinstance(value, str):
        try:
            call = orjson.loads(value)
        except orjson.JSONDecodeError:
            call = {"name": None, "arguments": value}
    if not isinstance(call, dict):
        call = {"name": None, "arguments": call}
    function = {"name": call.get("name"), "arguments": call.get("arguments", call.get("args"))}
    message.update(role="assistant", content=None, tool_calls=[{"function": function}])
    return message


def read_conversation(path: str, envelope: dict[str, Any], pointer: str, session_id: str | None,
                      line: int | None = None, spans: tuple[tuple[int, int], ...] = ()) -> Session:
    """One ShareGPT conversation as a session."""
    session = Session(path=path, format=NAME, session_id=session_id,
                      title=envelope_text(envelope, "title", "name"))
    builder = ChatBuilder(session, envelope_text(envelope, "model"))
    system = envelope.get("system")
    if isinstance(system, str) and system.strip():
        builder.add({"role": "system", "content": system, "id": "system"}, 0,
                    Source(path, line=line, spans=spans, record=f"{pointer}/system"))
    found = turn_list(envelope)
    key, turns = found if found is not None else ("conversations", [])
    own = turns.span if isinstance(turns, Elements) and not spans else None
    for index, turn in enumerate(turns):
        where = f"{key} {index}"
        source = Source(path, line=line, spans=(own(index),) if own else spans,
                        record=f"{pointer}/{key}/{index}")
        message = _as_message(turn, session, where)
        if message is not None:
            builder.add(message, index, source)
    builder.finish()
    return session


def _read_document(path: Path) -> list[Session]:
    expected = "'conversations': [{from, value}, ...]"
    document = load_json(path, expected)
    if document.value is None:  # empty or cut off: a session with no turns, and why
        session = Session(path=str(path), format=NAME)
        document.warn(session)
        return [session]
    found = conversations(document.value)
    if found is None:
        raise ReaderError(f"{path}: no ShareGPT conversation found (expected {expected})")
    several = isinstance(document.value, ARRAYS)
    sessions = [
        read_conversation(str(path), envelope, pointer,
                          envelope_id(envelope) or (f"#{number}" if several else None))
        for number, (pointer, envelope) in enumerate(found, start=1)
    ]
    document.warn(sessions[0])
    return sessions


def _feed(path: Path) -> RecordFeed | None:
    """The turns of a document holding one conversation in a top-level array, as records
    (`Reader.record_feed`); None for anything else (read whole)."""
    head = file_head(path)
    if turn_list(first_record(head)) is not None and head_document(head) is INVALID:
        return None  # JSON lines: a conversation a line
    envelope = streamed(path)
    found = turn_list(envelope)
    if found is None or not isinstance(found[1], Elements):
        return None
    assert isinstance(envelope, dict)
    key, turns = found
    session = Session(path=str(path), format=NAME, session_id=envelope_id(envelope),
                      title=envelope_text(envelope, "title", "name"))
    system = envelope.get("system")

    def opening(builder: ChatBuilder) -> None:
        if isinstance(system, str) and system.strip():
            builder.add({"role": "system", "content": system, "id": "system"}, 0,
                        Source(str(path), record="/system"))

    def convert(value: object, session: Session, index: int) -> object | None:
        return _as_message(value, session, f"{key} {index}")

    builder = RecordBuilder(session, envelope_text(envelope, "model"), f"/{key}", convert,
                            opening)
    builder.number_at = element_number(turns)
    return element_feed(path, builder, turns)


def _read_lines(path: Path) -> list[Session]:
    def read_record(value: object, number: int, lineno: int, spans: Spans) -> Session | None:
        if turn_list(value) is None:
            return None
        envelope: dict[str, Any] = value  # type: ignore[assignment]
        return read_conversation(str(path), envelope, "", envelope_id(envelope) or f"#{number}",
                                 lineno, spans)

    return sessions_by_line(path, read_record, "not a ShareGPT conversation",
                            "ShareGPT conversation")


def _read(path: Path, progress: Progress | None = None) -> list[Session]:
    head = file_head(path)
    is_lines = turn_list(first_record(head)) is not None and head_document(head) is INVALID
    sessions = _read_lines(path) if is_lines else _read_document(path)
    if progress is not None:
        progress(1, 1)
    return sessions


def _sniff(path: Path, head: bytes) -> bool:
    if not starts_like_json(head):
        return False
    if turn_list(first_record(head)) is not None:
        return True
    return sniff_document(head, conversations, is_turn)


READER = Reader(
    name=NAME,
    title="ShareGPT JSON",
    sniff=_sniff,
    read=_read,
    record_feed=_feed,
    index_turns=RecordBuilder.index_turns,
    priority=88,
)
