"""Generic chat JSON lines: one `{role, content, ...}` message (or conversation) per line.

Message-per-line files are read by `ChatLineBuilder`, which follow mode feeds line by line.
A file whose first record is a whole conversation (`{"messages": [...]}` per line, as in
fine-tuning data sets) gives one session per line, named by its `id`-like field or `#<n>`.
See `chat.py` for how messages become turns.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from replay.core.readers import huge_strings
from replay.core.readers.base import (
    EMPTY_FILE,
    Progress,
    Reader,
    RecordFeed,
    UnreadablePath,
    iter_lines,
    read_line_session,
)
from replay.core.readers.chat import (
    INVALID,
    ChatBuilder,
    Spans,
    envelope_id,
    envelope_text,
    file_head,
    fill_session,
    find_conversations,
    first_record,
    index_chat_turns,
    is_message,
    looks_like_messages,
    parse_line,
    scalar_id,
    sessions_by_line,
)
from replay.core.session.model import Session, Source

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

    def index_turns(self, **sizes: int) -> Any:
        """Hold the turns in a `TurnIndex` (before any line is fed): whole turns are read
        back from their lines. `sizes`: its tail and cache."""
        from replay.core.readers.span_feed import line_number, read_back

        return index_chat_turns(self.session, self._chat, read_back(ChatLineBuilder, line_number),
                                **sizes)


def is_conversation_record(value: object) -> bool:
    """True for a line holding a whole conversation (`{"messages": [...]}`)."""
    return isinstance(value, dict) and looks_like_messages(value.get("messages"))


def _read_conversations(path: Path) -> list[Session]:
    def read_record(value: object, number: int, lineno: int, spans: Spans) -> Session | None:
        found = find_conversations(value) if isinstance(value, dict) else None
        if found is None:
            return None
        envelope, pointer, messages = found[0]
        session = Session(
            path=str(path),
            format=NAME,
            session_id=envelope_id(envelope) or f"#{number}",
            title=envelope_text(envelope, "title", "name"),
        )
        return fill_session(session, envelope, messages, pointer, line=lineno, spans=spans)

    return sessions_by_line(path, read_record, "not a conversation record", "chat conversation")


def _read(path: Path, progress: Progress | None = None) -> list[Session]:
    if is_conversation_record(first_record(file_head(path))):
        return _read_conversations(path)
    return [read_line_session(path, ChatLineBuilder(str(path)), progress)]


def _feed(path: Path) -> RecordFeed | None:
    """The lines of a message-per-line file for a fresh `ChatLineBuilder`
    (`Reader.record_feed`); None for a file of whole conversations (one session a line)."""
    if is_conversation_record(first_record(file_head(path))):
        return None
    try:
        total = os.path.getsize(path)
        handle = open(path, "rb")
    except OSError as error:
        raise UnreadablePath.of(path, error) from None

    def lines() -> Iterator[tuple[bytes, int, int]]:
        with handle:
            # A line of megabytes (one huge message) is read as its skeleton, its huge
            # strings left in the file, as the Claude Code and Codex scans read one.
            yield from iter_lines(handle, views=True, lift=huge_strings.enabled())
    return RecordFeed(ChatLineBuilder(str(path)), lines(), total, EMPTY_FILE)


def _sniff(path: Path, head: bytes) -> bool:
    record = first_record(head)
    return is_message(record) or is_conversation_record(record)


READER = Reader(
    name=NAME,
    title="generic chat JSON lines",
    sniff=_sniff,
    read=_read,
    builder=ChatLineBuilder,
    record_feed=_feed,
    index_turns=ChatLineBuilder.index_turns,
    priority=92,
)
