"""When is a turn of a growing session complete? By what its own format writes, not by a clock.

A turn that looks empty now may still be receiving its content: Claude Code writes one API
response as several lines (a `thinking` line first, the text or tool call after it, seconds
later), opencode writes a message's parts as separate files, Codex writes a prompt twice.
`TurnCompletion.complete` answers from the format's own signals:

* **Claude Code**: a user line is complete the moment it is written. An assistant message
  is complete when a record of another message follows it, or when its last line carries a
  stop reason that fits what it holds (`tool_use` only once a tool call is there, and never
  on a line holding only thinking, since the text or call of the same message follows it).
  Bookkeeping between a message's lines (a queue operation when the person types ahead, an
  attachment, progress, a snapshot, a system record) completes nothing: only the records
  `CONVERSATION_RECORDS` lists for a format complete the turn before them.
* **opencode** (export, storage, database, run stream): an assistant message when its
  completion time (`time.completed`, a run's `step_finish`) or an error is set; a user
  message (its parts are separate files) after the quiet time.
* **Codex**: an assistant step when its message closes it, or a `task_complete`,
  `turn_aborted`, `compacted` or user prompt record follows; a prompt (written as an event
  and a response item) when another record follows it, or after the quiet time.
* **Gemini CLI**: a user message at once; a model message once its token counts are
  recorded (written when its response ended).
* Any format: a turn followed by a later user or assistant turn is complete. Elsewhere a
  user turn completes after the quiet time and an assistant turn waits for what follows.

The quiet time (`settle`) is how long nothing was written; it only ever completes user
turns, whose records arrive together, never a reply still being generated.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from replay.core.session.model import VISIBLE_KINDS, Kind, Session, Turn

DEFAULT_SETTLE = 0.3
"""Seconds of quiet after which a user message written as several records is complete."""

DEFAULT_STALL = 300.0
"""Seconds without a write, while a reply is due, before the session counts as stalled."""

COMPLETION_FORMATS = frozenset({"opencode", "opencode-storage", "opencode-db", "opencode-run"})
"""Formats whose `Turn.completed` is only set once the reply has ended (absent in flight)."""

CONVERSATION_ROLES = frozenset({"user", "assistant"})
"""Roles of the turns a person waits on; system turns never end or start a silence."""

SCAN_LIMIT = 1 << 20
"""Bytes of records after a turn looked through for one that closes it (per poll, resumed)."""

LATER_TURNS_LOOKED_AT = 64
"""System turns skipped, from the end, to find the last user or assistant turn."""

CODEX_CLOSING_EVENTS = frozenset({"task_complete", "turn_aborted", "user_message"})
"""Codex `event_msg` types that end the open step."""

CODEX_CONVERSATION_EVENTS = frozenset({
    "user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
    "task_complete", "turn_aborted",
})
"""Codex `event_msg` types that are the conversation (the rest, token counts, task starts,
command and search progress, diffs, are bookkeeping written around it)."""

ALL = None
"""In `CONVERSATION_RECORDS`: every sub-type of the record type counts."""

CONVERSATION_RECORDS: dict[str, dict[str, frozenset[str] | None]] = {
    # A user prompt or tool result, or an assistant line (of another message: lines of the
    # same message join its turn). Queue operations, attachments, progress, snapshots,
    # system records (hooks, turn durations), summaries, titles, permission modes: never.
    "claude-code": {"user": ALL, "assistant": ALL},
    # Every response item (messages, reasoning, calls and their output) and compaction; of
    # the events only the conversation's own. Session meta, turn contexts, token counts: never.
    "codex": {"response_item": ALL, "compacted": ALL, "event_msg": CODEX_CONVERSATION_EVENTS},
    # Every line is a message.
    "chat-jsonl": {},
}
"""Which records of a line-based format are the conversation, per format: only those
complete the turn before them ("a record of another message follows"). Keys are the
record's `type` (sub-types in `payload.type` for Codex); an empty table means every record
is a message. A format missing here completes no turn by a following record: its replies
end on their own signals (opencode runs on `step_finish`, Gemini on its token counts)."""

THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking"})
"""Claude Code blocks that come before the visible block of the same message."""

ReadAt = Callable[[int, int], bytes]
"""Reads `length` bytes at `offset` of the followed file."""


def last_conversation_index(session: Session) -> int | None:
    """Index of the last user or assistant turn (system turns after it are skipped)."""
    turns = session.turns
    for index in range(len(turns) - 1, max(-1, len(turns) - 1 - LATER_TURNS_LOOKED_AT), -1):
        if turns[index].role in CONVERSATION_ROLES:
            return index
    return None


def _span_end(turn: Turn) -> int | None:
    source = turn.source
    if source is None or not source.spans:
        return None
    offset, length = source.spans[-1]
    return offset + length


def _last_record(turn: Turn, read_at: ReadAt) -> dict[str, object] | None:
    source = turn.source
    if source is None or not source.spans:
        return None
    offset, length = source.spans[-1]
    try:
        record = orjson.loads(read_at(offset, length))
    except (orjson.JSONDecodeError, OSError):
        return None
    return record if isinstance(record, dict) else None


def is_conversation_record(format: str, record: object) -> bool:  # noqa: A002
    """True when a record of this format is part of the conversation, not bookkeeping
    (`CONVERSATION_RECORDS`); only such records complete the turn before them."""
    table = CONVERSATION_RECORDS.get(format)
    if table is None:
        return False
    if not table:
        return True
    if not isinstance(record, dict):
        return False
    kind = record.get("type")
    if not isinstance(kind, str) or kind not in table:
        return False
    subtypes = table[kind]
    if subtypes is ALL:
        return True
    payload = record.get("payload")
    return isinstance(payload, dict) and payload.get("type") in subtypes


def claude_stop_fits(record: dict[str, object], turn: Turn) -> bool:
    """True when a Claude Code assistant line's stop reason proves its message has ended."""
    message = record.get("message")
    if not isinstance(message, dict):
        return False
    reason = message.get("stop_reason")
    if not isinstance(reason, str) or not reason:
        return False
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    kinds = {block.get("type") for block in blocks if isinstance(block, dict)}
    if kinds and kinds <= THINKING_BLOCKS:
        return False  # older versions copy the final stop reason onto the thinking line too
    if reason == "tool_use":
        return any(part.kind == Kind.TOOL_CALL for part in turn.parts)
    return True


def codex_closes(record: object) -> bool:
    """True for a Codex rollout record that ends the open assistant step."""
    if not isinstance(record, dict):
        return False
    kind = record.get("type")
    payload = record.get("payload")
    if kind == "compacted":
        return True
    if not isinstance(payload, dict):
        return False
    if kind == "event_msg":
        return payload.get("type") in CODEX_CLOSING_EVENTS
    if kind == "response_item":
        return payload.get("type") == "message" and payload.get("role") == "user"
    return False


@dataclass(slots=True)
class _Scan:
    """How far the records after one turn were looked through, and what was found."""

    turn_id: str
    span_end: int
    scanned: int
    any_record: bool = False
    closed: bool = False


class TurnCompletion:
    """Decides whether the last turns of one followed session are complete (see module doc).

    Args:
        format: the reader's name.
        read_at: reads bytes of the followed file (line-based formats), else None.
        settle: seconds of quiet after which a user turn of a multi-record format is complete.
    """

    def __init__(self, format: str, read_at: ReadAt | None, settle: float) -> None:  # noqa: A002
        self.format = format
        self.read_at = read_at
        self.settle = settle
        self._scan: _Scan | None = None
        self._stop: tuple[str, int, bool] | None = None

    def complete(self, session: Session, index: int, *, consumed: int | None,
                 quiet: float) -> bool:
        """True when the turn at `index` is complete.

        Args:
            consumed: bytes of complete records read so far (line-based formats).
            quiet: seconds since the source last changed.
        """
        turns = session.turns
        turn = turns[index]
        if turn.role not in CONVERSATION_ROLES:
            return True
        last = last_conversation_index(session)
        if last is None or index < last:
            return True
        fmt = self.format
        if fmt == "claude-code":
            return turn.role == "user" or self._claude_assistant(turn, consumed)
        if fmt in COMPLETION_FORMATS:
            if turn.role == "assistant":
                return turn.completed is not None or any(p.kind == Kind.ERROR for p in turn.parts)
            return quiet >= self.settle
        if fmt == "codex":
            follows, closed = self._after(turn, consumed)
            if turn.role == "assistant":
                return (closed or turn.completed is not None
                        or any(p.kind == Kind.ERROR and p.name == "turn_aborted"
                               for p in turn.parts))
            return follows or quiet >= self.settle
        if fmt == "gemini":
            return turn.role == "user" or turn.tokens is not None
        if turn.role == "user":
            follows, _closed = self._after(turn, consumed)
            return follows or quiet >= self.settle
        return False

    def _claude_assistant(self, turn: Turn, consumed: int | None) -> bool:
        follows, _closed = self._after(turn, consumed)
        if follows:
            return True
        if self.read_at is None or turn.source is None or not turn.source.spans:
            return False
        key = (turn.id, len(turn.source.spans))
        if self._stop is not None and self._stop[:2] == key:
            return self._stop[2]
        record = _last_record(turn, self.read_at)
        done = record is not None and (
            record.get("type") != "assistant" or claude_stop_fits(record, turn))
        self._stop = (*key, done)
        return done

    def _after(self, turn: Turn, consumed: int | None) -> tuple[bool, bool]:
        """(a conversation record follows the turn's last one, one of them closes it),
        looked up lazily: records already looked at are not read again on the next poll.

        Bookkeeping records (`CONVERSATION_RECORDS`) are passed over: a queue operation
        between a thinking line and the text of the same message completes nothing.
        """
        end = _span_end(turn)
        if end is None or consumed is None or self.read_at is None:
            return False, False
        scan = self._scan
        if scan is None or scan.turn_id != turn.id or scan.span_end != end:
            scan = self._scan = _Scan(turn.id, end, end)
        codex = self.format == "codex"
        if scan.closed or (scan.any_record and not codex):
            return scan.any_record, scan.closed
        every_record = CONVERSATION_RECORDS.get(self.format) == {}
        while scan.scanned < consumed:
            size = min(consumed - scan.scanned, SCAN_LIMIT)
            try:
                data = self.read_at(scan.scanned, size)
            except OSError:
                break
            if not data:
                break
            cut = data.rfind(b"\n") + 1 if scan.scanned + size < consumed else len(data)
            if cut <= 0:
                cut = len(data)
            for line in data[:cut].split(b"\n"):
                if not line.strip():
                    continue
                if every_record:
                    scan.any_record = True
                    break
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if is_conversation_record(self.format, record):
                    scan.any_record = True
                if codex and codex_closes(record):
                    scan.closed = True
                    break
                if scan.any_record and not codex:
                    break
            scan.scanned += cut
            if scan.closed or (scan.any_record and not codex):
                break
        return scan.any_record, scan.closed


LOCAL_COMMAND = re.compile(
    r"\s*(?:<local-command-(?:stdout|stderr|caveat)>"
    r"|<command-name>\s*/(?:exit|quit)\s*</command-name>)")
"""A Claude Code user line no reply follows: a local command's output (`/exit` answers
`See ya!`, `/cost` its figures), its caveat, or the `/exit` command itself."""


def expects_reply(turn: Turn) -> bool:
    """False for a user turn the agent does not answer (a local command, the session's
    `/exit`): the session waits on the person, or has ended."""
    for part in turn.parts:
        if part.kind == Kind.TEXT and part.text.strip():
            return not LOCAL_COMMAND.match(part.text)
        if part.kind in VISIBLE_KINDS:
            return True
    return True


def waiting_for_reply(session: Session, complete: bool) -> Turn | None:
    """The turn a silence hangs on, or None when the person, not the agent, is due.

    The agent is due after a user turn (not a local command such as `/exit`: the session
    ended), after tool results it has not answered yet, and while its reply shows nothing
    yet (reasoning only, not complete). A complete reply (its stop reason, a Codex
    `task_complete`, opencode's completion time) ends the agent's part, and a reply that
    already shows words leaves the person reading: even unfinished (formats that never
    write a stop reason), a silence after it is no stall. A tool still running is the
    agent at work.
    """
    index = last_conversation_index(session)
    if index is None:
        return None
    turn = session.turns[index]
    if turn.role == "user":
        return turn if expects_reply(turn) else None
    for part in reversed(turn.parts):
        if part.kind == Kind.TOOL_RESULT:
            return turn
        if part.kind == Kind.TOOL_CALL:
            return turn if part.status in ("completed", "error") else None
        if part.kind in VISIBLE_KINDS and (part.kind != Kind.TEXT or part.text.strip()):
            return None
    return None if complete else turn


def file_reader(path: str | os.PathLike[str]) -> ReadAt:
    """A `ReadAt` that opens the file by path for each read (the file may be replaced)."""

    def read_at(offset: int, length: int) -> bytes:
        with open(path, "rb") as handle:
            handle.seek(offset)
            return handle.read(length)

    return read_at


__all__ = ["COMPLETION_FORMATS", "CONVERSATION_RECORDS", "DEFAULT_SETTLE", "DEFAULT_STALL",
           "TurnCompletion", "expects_reply", "file_reader", "is_conversation_record",
           "last_conversation_index", "waiting_for_reply"]
