"""opencode's event stream: what `opencode run --format json` prints, one JSON event a line.

Shape (`packages/opencode/src/cli/cmd/run.ts`, `emit`): `{"type", "timestamp" (ms),
"sessionID", ...}` where `type` is `step_start`, `step_finish`, `text` (a text part once it
is complete), `reasoning` (with `--thinking`), `tool_use` (a tool part once completed or
failed), each with the opencode `part` (`id`, `messageID`, `sessionID`, `type`, ...), or
`error` with `error: {name, data: {message}}`. The prompt itself is not in the stream.

A different shape from `opencode export`, detected by content. Every event's part belongs
to an assistant message (`part.messageID`): one message is one turn, its parts mapped as for
the export (`_opencode_parts.py`); a `step_finish` completes the turn at its time. An
`error` event is an error part of the turn it interrupted (a system turn when none).
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from replay.core.readers import huge_strings
from replay.core.readers._opencode_parts import error_words, part_from_opencode
from replay.core.readers.base import (
    EMPTY_FILE,
    Progress,
    Reader,
    RecordFeed,
    UnreadablePath,
    first_json_line,
    iter_lines,
    json_object_line,
    read_line_session,
)
from replay.core.session.model import Kind, Part, Session, Source, Turn, parse_time

if TYPE_CHECKING:
    from replay.core.index.turn_index import TurnIndex

NAME = "opencode-run"
EVENT_TYPES = frozenset({"step_start", "step_finish", "text", "reasoning", "tool_use", "error"})
"""The `type` of every event `opencode run --format json` writes."""


MAX_SPANS = 1_000
"""Records of one turn whose spans are kept (for the raw view, which shows at most 200,000
characters): a message id repeated over a million events must not make reading quadratic."""

RECENT_CALL_MAPS = 64
"""Turns whose call maps are kept between events (an older turn's is made again)."""


class RunBuilder:
    """Builds one session from the events of a run, fed line by line (follow mode too)."""

    def __init__(self, path: str) -> None:
        """Start an empty session for `path`."""
        self.session = Session(path=path, format=NAME)
        self._turns: dict[str, int] = {}
        """The index of each message's turn, by message id (the turns themselves live in
        `session.turns`, which may be a `TurnIndex` holding only columns)."""
        self._calls: OrderedDict[int, dict[str, int]] = OrderedDict()
        """Per recent turn (by index): the index of each tool call's part, by call id."""
        self.turn_index: TurnIndex | None = None
        """Set when the session's turns are a `TurnIndex`: told of every turn changed after
        it was added, and of the turns it cannot read back from their spans."""
        self._late: LateEvents | None = None
        """For a scan (`expect`): the events of each message that come after a newer
        message began, read ahead (by offset) when that newer message begins."""
        self._newest: tuple[str, int] | None = None
        """For a scan: the newest message's id and turn index (the turns before it are
        final once its predecessors' late events are read)."""

    def expect(self, late: LateEvents) -> None:
        """Be told, before any line, which events come late (`late_events`): when a message
        begins, the late events of the one before it are read at once from their offsets
        (and skipped where they stand), so every turn before the newest message is final
        (`settled`) and its message id forgotten, however late its last event is."""
        self._late = late

    def settled(self) -> int:
        """How many turns from the first no later line can change (given `expect`; else
        every turn so far, as a whole read has them): those before the newest message's
        (its own events, and an error's part for the last turn, may still come)."""
        count = len(self.session.turns)
        if self._late is None:
            return count
        if self._newest is None:
            return max(count - 1, 0)
        return min(self._newest[1], max(count - 1, 0))

    def feed(self, line: bytes, offset: int, lineno: int) -> None:
        """Take one event; lines that are not events are counted and skipped."""
        if self._late is not None and _bit(self._late.lines, lineno):
            return  # a late event, read when the next message began
        self._event(line, offset, lineno)

    def _event(self, line: bytes, offset: int, lineno: int) -> None:
        event = json_object_line(self.session, line, lineno)
        if event is None:
            return
        kind = event.get("type")
        if not isinstance(kind, str) or kind not in EVENT_TYPES:
            self.session.events += 1
            return
        if self.session.session_id is None and isinstance(event.get("sessionID"), str):
            self.session.session_id = event["sessionID"]
        span = (offset, len(line))
        timestamp = event.get("timestamp")
        if kind == "error":
            self._error(event.get("error"), timestamp, span, lineno)
            return
        message_id = _message_of(event, lineno)
        if message_id is None:
            self.session.warn(f"line {lineno}: a {kind} event without a part object")
            return
        part = event["part"]
        turn = self._turn(message_id, timestamp, span, lineno)
        if kind == "step_finish":
            turn.completed = parse_time(timestamp)[1] or turn.time
        mapped = part_from_opencode(part)
        if kind == "tool_use" and mapped.kind == Kind.TOOL_CALL and mapped.call_id:
            # A tool event is written when the call completes; keep one part per call
            # (found by its id: a turn of many thousand events stays linear).
            calls = self._calls_of(turn)
            known = calls.get(mapped.call_id)
            if known is not None and known < len(turn.parts) \
                    and turn.parts[known].call_id == mapped.call_id:
                turn.parts[known] = mapped
                self._changed(turn)
                return
            calls[mapped.call_id] = len(turn.parts)
        turn.parts.append(mapped)
        self._changed(turn)

    def _calls_of(self, turn: Turn) -> dict[str, int]:
        """The call map of a turn: kept for the latest turns (a message's events come
        together), made again from its parts for an older one."""
        calls = self._calls.get(turn.index)
        if calls is None:
            calls = {part.call_id: number for number, part in enumerate(turn.parts)
                     if part.kind == Kind.TOOL_CALL and part.call_id}
            self._calls[turn.index] = calls
            if len(self._calls) > RECENT_CALL_MAPS:
                self._calls.popitem(last=False)
        else:
            self._calls.move_to_end(turn.index)
        return calls

    def _changed(self, turn: Turn) -> None:
        """Tell the index (if any) that a turn it may hold as columns changed."""
        if self.turn_index is not None:
            self.turn_index.changed(turn)

    def _turn(self, message_id: str, timestamp: object, span: tuple[int, int],
              lineno: int) -> Turn:
        index = self._turns.get(message_id)
        if index is None:
            if self._late is not None and self._newest is not None:
                self._catch_up(self._newest[0])
            iso, seconds = parse_time(timestamp)
            turn = self.session.add(Turn(
                id=message_id, role="assistant", timestamp=iso, time=seconds,
                source=Source(self.session.path, line=lineno, spans=(span,))))
            self._turns[message_id] = turn.index
            if self._late is not None:
                self._newest = (message_id, turn.index)
            return turn
        if index < len(self.session.turns) - 1:
            self.session.revise()  # an event for an earlier message
        turn = self.session.turns[index]
        if turn.source is not None and turn.source.spans[-1:] != (span,):
            # Lines come in file order: only the last span can be this one again.
            if len(turn.source.spans) < MAX_SPANS:
                turn.source.spans = (*turn.source.spans, span)
            elif self.turn_index is not None:
                self.turn_index.keep(turn)  # its records are no longer all named: kept whole
        return turn

    def _catch_up(self, message_id: str) -> None:
        """A newer message begins: read the late events of `message_id` now, in file order
        (they are skipped where they stand), and forget its id: its turn is final."""
        assert self._late is not None
        late = self._late.by_message.pop(message_id, None)
        if late:
            data = self._late.read(late)
            for (offset, _, lineno), line in zip(late, data, strict=True):
                self._event(line, offset, lineno)
        del self._turns[message_id]

    def _error(self, error: object, timestamp: object, span: tuple[int, int],
               lineno: int) -> None:
        name, message = error_words(error)
        part = Part(Kind.ERROR, name=name or "error", text=message)
        last = self.session.turns[-1] if self.session.turns else None
        if last is not None and last.completed is None:
            last.parts.append(part)
            if last.source is not None:
                last.source.spans = (*last.source.spans, span)
            self._changed(last)
            return
        iso, seconds = parse_time(timestamp)
        self.session.add(Turn(id=f"error-{lineno}", role="system", parts=[part], timestamp=iso,
                              time=seconds, source=Source(self.session.path, line=lineno,
                                                          spans=(span,))))

    def finish(self) -> None:
        """Nothing is pending between lines."""


def _message_of(event: dict[str, Any], lineno: int) -> str | None:
    """The message id of a part event (made up from the line when it has none), None when it
    has no part object (the feed warns). `event` is an event of a type other than `error`."""
    part = event.get("part")
    if not isinstance(part, dict):
        return None
    message_id = part.get("messageID")
    return message_id if isinstance(message_id, str) and message_id else f"line-{lineno}"


def _bit(bits: bytearray, number: int) -> bool:
    byte = number >> 3
    return byte < len(bits) and bool(bits[byte] & (1 << (number & 7)))


class LateEvents:
    """The events of a run that come after a newer message began (`late_events`): which lines
    they are (a bit per line number: bit N of byte N // 8), and each message's, by offset."""

    __slots__ = ("path", "lines", "by_message")

    def __init__(self, path: str, lines: bytearray,
                 by_message: dict[str, list[tuple[int, int, int]]]) -> None:
        self.path = path
        self.lines = lines
        self.by_message = by_message
        """(offset, length, line number) of each late event, by message id, in file order."""

    def read(self, events: list[tuple[int, int, int]]) -> list[bytes]:
        """The lines of these events, read again from the file.

        Raises:
            ValueError: the file no longer holds them (changed since the first pass).
        """
        found: list[bytes] = []
        with open(self.path, "rb") as handle:
            for offset, length, lineno in events:
                data = os.pread(handle.fileno(), length, offset)
                if len(data) != length:
                    raise ValueError(f"{self.path}: file changed while it was read: line "
                                     f"{lineno} is gone")
                found.append(data)
        return found


def late_events(path: str, lines: Iterable[tuple[bytes, int, int]]) -> LateEvents:
    """A scan's first pass: the events of each message that come after a newer message
    began (late: an old message's last word at the very end of the run), so that the second
    pass reads them when that newer message begins and lets go of every older turn. The
    message ids are those `RunBuilder.feed` gives."""
    seen: set[str] = set()
    newest: str | None = None
    late: dict[str, list[tuple[int, int, int]]] = {}
    count = 0
    for line, offset, lineno in lines:
        count = lineno
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if not isinstance(kind, str) or kind not in EVENT_TYPES or kind == "error":
            continue
        message_id = _message_of(event, lineno)
        if message_id is None or message_id == newest:
            continue
        if message_id in seen:
            late.setdefault(message_id, []).append((offset, len(line), lineno))
        else:
            seen.add(message_id)
            newest = message_id
    bits = bytearray((count >> 3) + 1)
    for events in late.values():
        for _, _, lineno in events:
            bits[lineno >> 3] |= 1 << (lineno & 7)
    return LateEvents(path, bits, late)


class _Capped:
    """A binary file read as if it ended at `size` (what the first pass saw of it). It has
    the file's `name` and `fileno()`, and says where it ends (`cap`), so a huge line is
    lifted from it as from the file (`huge_strings.lift_at`), no further than the cap."""

    def __init__(self, handle: BinaryIO, size: int) -> None:
        self._handle = handle
        self._size = size
        self.name = handle.name
        self.cap = size

    def fileno(self) -> int:
        return self._handle.fileno()

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._handle.seek(offset, whence)

    def read(self, size: int = -1) -> bytes:
        left = self._size - self._handle.tell()
        if left <= 0:
            return b""
        return self._handle.read(left if size < 0 else min(size, left))

    def readinto(self, buffer: memoryview) -> int:
        left = self._size - self._handle.tell()
        if left <= 0:
            return 0
        return self._handle.readinto(buffer[:min(len(buffer), left)])


def scan_feed(path: Path) -> RecordFeed:
    """The file's lines for a windowed scan (`Reader.scan_feed`), after a first pass that
    finds the late events (`late_events`): a message's turn may change at any later line (a
    late event of an old message), so a scan that did not know when it is done held every
    turn until then. The second pass reads exactly the bytes the first one saw.

    Raises:
        UnreadablePath: the file cannot be opened.
    """
    try:
        with open(path, "rb") as handle:
            # A line of megabytes (one huge text part) is read as its skeleton, as the
            # second pass reads it: only its event's type and message id are wanted here.
            late = late_events(str(path), iter_lines(handle, views=True,
                                                     lift=huge_strings.enabled()))
            # (past a huge last line without a line end, the handle stands one byte on)
            size = min(handle.tell(), os.fstat(handle.fileno()).st_size)
    except OSError as error:
        raise UnreadablePath.of(path, error) from None
    builder = RunBuilder(str(path))
    builder.expect(late)
    return RecordFeed(builder, _capped_lines(path, size), size, EMPTY_FILE)


def _capped_lines(path: Path, size: int) -> Iterator[tuple[bytes, int, int]]:
    try:
        handle = open(path, "rb")
    except OSError as error:
        raise UnreadablePath.of(path, error) from None
    with handle:
        # Views into one buffer: each event is decoded before the next is read; a huge
        # line is lifted (its huge strings left in the file) as a whole read lifts it.
        yield from iter_lines(_Capped(handle, size), views=True,  # type: ignore[arg-type]
                              lift=huge_strings.enabled())


def read_back_turn(path: str, spans: tuple[tuple[int, int], ...], records: list[bytes],
                   line: int | None, turn_id: str, role: str) -> Turn:
    """A turn read back from its own events (as a `TurnIndex` materialises one).

    Raises:
        ValueError: the events no longer make that turn (the file was replaced).
    """
    builder = RunBuilder(path)
    for (offset, _), data in zip(spans, records, strict=True):
        builder.feed(data, offset, line or 0)
    for turn in builder.session.turns:
        if turn.id == turn_id and turn.role == role:
            return turn
    raise ValueError(f"{path}: turn {turn_id} is no longer at its recorded place")


def index_turns(builder: RunBuilder, **sizes: int) -> TurnIndex:
    """Hold the builder's turns in a `TurnIndex` (before any line is fed); `sizes` are its
    `tail` and `cache`."""
    from replay.core.index.turn_index import TurnIndex

    index = TurnIndex(builder.session.path, read_back_turn, **sizes)
    builder.session.turns = index  # type: ignore[assignment]
    builder.turn_index = index
    return index


def _looks_like_event(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("type"), str)
            and value["type"] in EVENT_TYPES
            and isinstance(value.get("sessionID"), str)
            and (isinstance(value.get("part"), dict) or isinstance(value.get("error"), dict)))


_CUT_EVENT = re.compile(
    rb'\{\s*"type"\s*:\s*"(' + b"|".join(sorted(t.encode() for t in EVENT_TYPES)) + rb')"\s*,'
    rb'\s*"timestamp"\s*:\s*\d+\s*,\s*"sessionID"\s*:\s*"[^"\\]*"\s*,\s*"(?:part|error)"\s*:'
    rb'\s*\{')
"""How `emit` opens every event (its keys in that order): enough to know a first event
too long for the head, whose JSON is cut there."""


def sniff(path: Path, head: bytes) -> bool:
    """True when the first line is an `opencode run --format json` event (or, when it is
    longer than the head holds, opens as one)."""
    line = first_json_line(head)
    if line is None or b'"sessionID"' not in line:
        return False
    try:
        return _looks_like_event(orjson.loads(line))
    except orjson.JSONDecodeError:
        # A first event of megabytes (a text part) is cut where the head ends.
        return b"\n" not in head.lstrip() and _CUT_EVENT.match(line) is not None


def read(path: Path, progress: Progress | None = None) -> list[Session]:
    """The one session of a captured event stream."""
    return [read_line_session(path, RunBuilder(str(path)), progress)]


READER = Reader(
    name=NAME,
    title="opencode run event stream (JSON lines)",
    sniff=sniff,
    read=read,
    builder=RunBuilder,
    index_turns=index_turns,
    scan_feed=scan_feed,
    single_session=True,
    priority=32,
)
