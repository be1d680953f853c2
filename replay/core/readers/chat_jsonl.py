"""Generic chat JSON lines: one `{role, content, ...}` message (or conversation) per line.

Message-per-line files are read by `ChatLineBuilder`, which follow mode feeds line by line.
A file whose first record is a whole conversation (`{"messages": [...]}` per line, as in
fine-tuning data sets) gives one session per line, named by its `id`-like field or `#<n>`.
See `chat.py` for how messages become turns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replay.core.model import Session, Source
from replay.core.readers.base import (
    Progress,
    Reader,
    ReaderError,
    UnreadablePath,
    read_head,
    read_line_session,
)
from replay.core.readers.chat import (
    INVALID,
    ChatBuilder,
    envelope_id,
    envelope_text,
    fill_session,
    find_conversations,
    first_record,
    is_message,
    json_lines,
    looks_like_messages,
    parse_line,
    scalar_id,
)

NAME = "chat-jsonl"

SESSION_KEYS: tuple[str, ...] = ("session_id", "sessionId", "conversation_id", "conversationId")
"""Message fields that name the conversation a line belongs to."""


class ChatLineBuilder:
    """Builds one session from a chat JSON-lines file fed line by line."""

    def __init__(self, path: str) -> None:
        """Start an empty session for `path`."""
        self.session = Session(path=path, format=NAME)
        self._chat = ChatBuilder(self.session)
        self._count = 0

    def feed(self, line: bytes, offset: int, lineno: int) -> None:
        """Read one line; lines that are not JSON objects are counted and skipped."""
        index = self._count
        self._count += 1
        value = parse_line(line)
        if value is INVALID:
            self.session.warn(f"line {lineno}: not JSON")
            return
        if isinstance(value, dict) and self.session.session_id is None:
            for key in SESSION_KEYS:
                if (found := scalar_id(value.get(key))) is not None:
                    self.session.session_id = found
                    break
        source = Source(self.session.path, line=lineno, spans=((offset, len(line)),))
        self._chat.add(value, index, source)

    def finish(self) -> None:
        """Settle reasoning that no step followed (yet)."""
        self._chat.finish()


def is_conversation_record(value: object) -> bool:
    """True for a line holding a whole conversation (`{"messages": [...]}`)."""
    return isinstance(value, dict) and looks_like_messages(value.get("messages"))


def _read_conversations(path: Path) -> list[Session]:
    sessions: list[Session] = []
    problems: list[str] = []
    for number, (value, offset, length, lineno) in enumerate(json_lines(path), start=1):
        found = find_conversations(value) if isinstance(value, dict) else None
        if value is INVALID or found is None:
            problems.append(f"line {lineno}: not a conversation record")
            continue
        envelope, pointer, messages = found[0]
        session = Session(
            path=str(path),
            format=NAME,
            session_id=envelope_id(envelope) or f"#{number}",
            title=envelope_text(envelope, "title", "name"),
        )
        fill_session(session, envelope, messages, pointer, line=lineno,
                     spans=((offset, length),))
        sessions.append(session)
    if not sessions:
        raise ReaderError(f"{path}: no line holds a chat conversation")
    for problem in problems:
        sessions[0].warn(problem)
    return sessions


def _read(path: Path, progress: Progress | None = None) -> list[Session]:
    try:
        head = read_head(path)
    except OSError as error:
        raise UnreadablePath(f"{path}: {error.strerror or error}") from None
    if is_conversation_record(first_record(head)):
        return _read_conversations(path)
    return [read_line_session(path, ChatLineBuilder(str(path)), progress)]


def _builder(path: str) -> ChatLineBuilder:
    return ChatLineBuilder(path)


def _sniff(path: Path, head: bytes) -> bool:
    record: Any = first_record(head)
    return is_message(record) or is_conversation_record(record)


READER = Reader(
    name=NAME,
    title="generic chat JSON lines",
    sniff=_sniff,
    read=_read,
    builder=_builder,
    priority=92,
)
