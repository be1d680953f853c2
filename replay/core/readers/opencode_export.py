"""opencode export JSON, as `opencode export <sessionID>` writes it.

Shape: `{info, messages: [{info, parts}]}`; newer versions add `todos`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from replay.core.readers._opencode_parts import turn_from_message
from replay.core.readers.base import (
    BOM,
    HEAD_BYTES,
    Document,
    Progress,
    Reader,
    ReaderError,
    load_document,
)
from replay.core.session.model import Part, PartsLoader, Session, Source, Turn

EXPECTED = "an opencode export: a JSON object with `info` and `messages`"


def _looks_like_export(document: object) -> bool:
    """True for `{info: {...}, messages: [{info, parts}, ...]}`."""
    if not isinstance(document, dict):
        return False
    info, messages = document.get("info"), document.get("messages")
    if not isinstance(info, dict) or not isinstance(messages, list):
        return False
    return all(isinstance(m, dict) and isinstance(m.get("info"), dict) for m in messages[:5])


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object naming `info` and `messages` near the top, with opencode ids or shape."""
    body = head.removeprefix(BOM).lstrip()
    if not body.startswith(b"{") or b'"messages"' not in body or b'"info"' not in body:
        return False
    if b'"ses_' in body or b'"msg_' in body:
        return True
    if len(head) >= HEAD_BYTES:
        return False
    # The whole file fits in the head: decide by its shape rather than its id style.
    try:
        return _looks_like_export(orjson.loads(body))
    except orjson.JSONDecodeError:
        return False


def _load(path: Path) -> Document:
    """The export as read (text lines around it skipped with a note; empty or cut off: no
    value); ReaderError when it is JSON of another shape or not JSON at all."""
    document = load_document(path, EXPECTED)
    value = document.value
    if value is not None and (not isinstance(value, dict)
                              or not isinstance(value.get("messages"), list)):
        raise ReaderError(f"{path}: no `messages` list; expected {EXPECTED}")
    return document


def _message_turn(
    message: object, index: int, path: str, session: Session | None, *, shorten_long: bool
) -> Turn | None:
    record = f"messages[{index}]"
    if not isinstance(message, dict) or not isinstance(message.get("info"), dict):
        if session is not None:
            session.warn(f"{record}: not an opencode message (no `info` object)")
        return None
    return turn_from_message(message["info"], message.get("parts"), Source(path, record=record),
                             session, fallback_id=record, shorten_long=shorten_long)


def _loader(path: str) -> PartsLoader:
    """Reads the full parts of one turn back by parsing the export again."""

    def load(turn: Turn) -> list[Part]:
        record = turn.source.record if turn.source else None
        if not record or not record.startswith("messages["):
            raise ValueError(f"turn {turn.id} has no export record")
        try:
            index = int(record[len("messages["):-1])
            message = _load(Path(path)).value["messages"][index]
        except (ReaderError, IndexError, TypeError) as error:
            raise ValueError(str(error)) from None
        full = _message_turn(message, index, path, None, shorten_long=False)
        if full is None or full.id != turn.id:
            raise ValueError(f"{path}: {record} is no longer message {turn.id}")
        return full.parts

    return load


def read(path: Path, progress: Progress | None = None) -> list[Session]:
    """The one session of an export file."""
    loaded = _load(path)
    text = str(path)
    session = Session(path=text, format=READER.name)
    loaded.warn(session)
    if loaded.value is None:  # empty or cut off: a session with no turns, and why
        return [session]
    document: dict[str, Any] = loaded.value
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    session_id, title = info.get("id"), info.get("title")
    session.session_id = session_id if isinstance(session_id, str) else None
    session.title = title if isinstance(title, str) and title else None
    for key in ("version", "directory", "slug", "projectID", "parentID"):
        if isinstance(info.get(key), str):
            session.meta[key] = info[key]
    if not isinstance(document.get("info"), dict):
        session.warn("export has no `info` object", skipped=False)
    messages = document["messages"]
    total = len(messages)
    for index, message in enumerate(messages):
        turn = _message_turn(message, index, text, session, shorten_long=True)
        if turn is not None:
            session.add(turn)
        if progress is not None and index % 1000 == 0:
            progress(index, total)
    if progress is not None:
        progress(total, total)
    session.loader = _loader(text)
    return [session]


READER = Reader(
    name="opencode",
    title="opencode export JSON",
    sniff=sniff,
    read=read,
    single_session=True,
    priority=20,
)
