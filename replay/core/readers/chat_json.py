"""Generic chat JSON: `{"messages": [...]}` in OpenAI style, a list of such, or a harness variant.

The conversation is found by shape, not by exact keys: the `messages` list, else the first
list of `{role, content}` objects a few levels down (`{"conversation": {"messages": ...}}`).
A top-level list of conversations gives one session each (id from `id`-like fields, else
`#<n>`); a top-level list of messages is one conversation. See `chat.py` for the mapping.
"""

from __future__ import annotations

from pathlib import Path

from replay.core.readers.base import HEAD_BYTES, Progress, Reader, ReaderError, RecordFeed
from replay.core.readers.chat import (
    RecordBuilder,
    envelope_id,
    envelope_text,
    fill_session,
    find_conversations,
    first_record,
    has_inner_line_end,
    is_message,
    load_json,
    sniff_document,
    starts_like_json,
)
from replay.core.readers.json_stream import ARRAYS, Elements
from replay.core.readers.span_feed import element_feed, element_number, streamed
from replay.core.session.model import Session

NAME = "chat-json"


def read_document(path: Path, document: object, format_name: str) -> list[Session]:
    """Sessions of an already-parsed chat document; ReaderError if it holds no conversation."""
    conversations = find_conversations(document)
    if conversations is None:
        raise ReaderError(
            f"{path}: no chat conversation found (expected a 'messages' list of "
            "{role, content} objects)"
        )
    several = isinstance(document, ARRAYS) and conversations[0][0] is not None
    sessions: list[Session] = []
    for number, (envelope, pointer, messages) in enumerate(conversations, start=1):
        session_id = envelope_id(envelope)
        if session_id is None and several:
            session_id = f"#{number}"
        session = Session(
            path=str(path),
            format=format_name,
            session_id=session_id,
            title=envelope_text(envelope, "title", "name"),
        )
        sessions.append(fill_session(session, envelope, messages, pointer))
    return sessions


EXPECTED = "a chat JSON document (a 'messages' list of {role, content} objects)"


def _read(path: Path, progress: Progress | None = None) -> list[Session]:
    document = load_json(path, EXPECTED)
    if document.value is None:  # empty or cut off: a session with no turns, and why
        session = Session(path=str(path), format=NAME)
        document.warn(session)
        return [session]
    sessions = read_document(path, document.value, NAME)
    document.warn(sessions[0])
    if progress is not None:
        progress(1, 1)
    return sessions


def _feed(path: Path) -> RecordFeed | None:
    """The messages of a document holding one conversation in a top-level array, as records
    (`Reader.record_feed`); None for anything else (read whole)."""
    document = streamed(path)
    if document is None:
        return None
    conversations = find_conversations(document)
    if conversations is None or len(conversations) != 1:
        return None
    envelope, pointer, messages = conversations[0]
    if not isinstance(messages, Elements) or (isinstance(document, ARRAYS)
                                              and envelope is not None):
        return None  # a list nested in the document, or a list of conversations
    session = Session(path=str(path), format=NAME, session_id=envelope_id(envelope),
                      title=envelope_text(envelope, "title", "name"))
    builder = RecordBuilder(session, envelope_text(envelope, "model"), pointer)
    builder.number_at = element_number(messages)
    return element_feed(path, builder, messages)


def _sniff(path: Path, head: bytes) -> bool:
    if not starts_like_json(head):
        return False
    if len(head) >= HEAD_BYTES and has_inner_line_end(head) \
            and isinstance(first_record(head), (dict, list)):
        return False  # a cut file whose first line is a whole record: JSON lines, not one document
    return sniff_document(head, find_conversations, is_message)


READER = Reader(
    name=NAME,
    title="generic chat JSON",
    sniff=_sniff,
    read=_read,
    record_feed=_feed,
    index_turns=RecordBuilder.index_turns,
    priority=90,
)
