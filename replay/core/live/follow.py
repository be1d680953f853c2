"""Following a session while its tool is still writing it: what is new since the last look.

`SessionFollower.poll` is cheap to call often and safe to call spuriously: a file-system
event is only a reason to look. Line-based formats (those whose reader has a `builder`) feed
only the new complete lines to one long-lived builder; whole-document formats (JSON exports,
opencode storage and SQLite, Aider history) are read again when their stamp changes and
compared with what was reported by turn id.

Guarantees, for every format: the turn ids reported (each update's `new_turns`, after
starting over whenever `reset` is true and forgetting the last `dropped` ones) are the ids a
fresh `load_sessions` of the same content gives, in order; and no empty turn id is reported
twice.

When is an empty turn reported? As soon as its source says it is complete
(`replay.core.live.completion`): a Claude Code user line at once, an assistant message once it
carries a fitting stop reason or another record follows it, opencode on `time.completed` or
an error, Codex by its own closing records, a multi-record user message after `settle`
seconds of quiet. A message still being written is never reported, however long the pause:
if nothing follows it for `stall` seconds, that is a stall (`FollowUpdate.stalled`), not an
empty turn. A turn reported empty that later shows content is taken back (`retracted`).
`tick()` judges what only the clock can change (quiet time, stalls) without reading.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from replay.core.detection.empty import (
    DEFAULT_RULES,
    REPLY_WINDOW,
    DetectionRules,
    EmptyTurn,
    Suggester,
    describe_empty,
    is_empty,
    missing_reply,
    request_words,
)
from replay.core.live.completion import (
    COMPLETION_FORMATS,
    DEFAULT_SETTLE,
    DEFAULT_STALL,
    TurnCompletion,
    file_reader,
    last_conversation_index,
    waiting_for_reply,
)
from replay.core.live.tail import FileTail
from replay.core.readers import detect_reader, get_reader
from replay.core.readers.base import (
    CHUNK_BYTES,
    HEAD_BYTES,
    LineBuilder,
    Reader,
    ReaderError,
    UnknownFormat,
    cut_off,
)
from replay.core.readers.claude_code import link_subagents, subagent_files
from replay.core.session.model import Session, Turn, parse_time
from replay.core.session.turn_ref import placeholder_id

CHANGE_WINDOW = 256
"""How many of the last reported turns are re-checked for changed content on each poll.

Builders only change recent turns (a reply growing line by line, a tool result joining its
call); re-checking a whole 100,000-turn session on every wake-up would cost far more.
"""

READ_ERRORS = (ReaderError, OSError, ValueError, TypeError, KeyError, AttributeError,
               IndexError, RecursionError)
"""What reading a half-written document may raise; all mean "try again on the next change"."""


def turn_brief(turn: Turn) -> dict[str, Any]:
    """What a live event says about a turn: where it is and what it is."""
    return {"index": turn.index, "number": turn.index + 1, "id": turn.id, "role": turn.role,
            "timestamp": turn.timestamp}


def iso_time(seconds: float) -> str:
    """Epoch seconds as the ISO 8601 UTC form the readers use."""
    return parse_time(seconds)[0] or ""


@dataclass(frozen=True, slots=True)
class Retraction:
    """A turn reported empty that now shows content: the report is taken back."""

    index: int
    id: str
    role: str


@dataclass(frozen=True, slots=True)
class Stall:
    """Nothing was written for `stall` seconds while a reply was due."""

    since: float
    """Epoch seconds of the last write."""
    turn: Turn
    """The turn waiting for its reply (a user turn or an unfinished assistant turn)."""


@dataclass(frozen=True, slots=True)
class Resumption:
    """Something was written again after a stall."""

    since: float
    """Epoch seconds of the last write before the silence."""
    duration: float
    """Seconds the silence lasted."""
    turn: Turn
    """The turn that was waiting."""


@dataclass(slots=True)
class FollowUpdate:
    """What one `SessionFollower.poll` found."""

    session: Session | None
    """The session as it now stands (None until the file exists and its format is known)."""
    new_turns: list[Turn] = field(default_factory=list)
    """Turns added since the last poll, in order (all turns after a reset)."""
    changed: list[int] = field(default_factory=list)
    """Indices of turns reported before whose content changed (never a new turn's index)."""
    reset: bool = False
    """The source was truncated, rewritten or replaced: forget earlier turns, keep `new_turns`."""
    dropped: int = 0
    """Forget this many of the last turns reported before, then append `new_turns`.

    Happens when a source takes a turn back: a chat builder's provisional reasoning-only
    turn renamed once its step arrives, a document that lost or reordered messages.
    """
    new_empty: list[EmptyTurn] = field(default_factory=list)
    """Empty turns that just became complete; each id appears once over the whole follow."""
    sidechains_changed: bool = False
    """A subagent session was attached or grew."""
    retracted: list[Retraction] = field(default_factory=list)
    """Turns reported empty before that now show content."""
    resumed: Resumption | None = None
    """A stall ended with this poll's write (reported before anything else of the poll)."""
    stalled: Stall | None = None
    """The session just went silent while a reply was due."""
    pending: int | None = None
    """Index of the last turn while it is still being written (never to be stopped at)."""
    completed: bool = False
    """The last turn just became complete without any new write (its quiet time passed)."""

    @property
    def has_news(self) -> bool:
        """True when anything at all changed."""
        return bool(self.new_turns or self.changed or self.reset or self.dropped
                    or self.new_empty or self.sidechains_changed or self.retracted
                    or self.resumed or self.stalled or self.completed)


Signature = tuple[object, ...]


def content_signature(turn: Turn) -> Signature:
    """A cheap fingerprint of what a turn shows, to notice that it changed."""
    return (
        turn.role,
        turn.completed,
        turn.is_summary,
        tuple(
            (part.kind, part.text_length, len(part.input or ""), len(part.output or ""),
             part.status, part.name)
            for part in turn.parts
        ),
    )


class _Diff:
    """What was reported so far, by id and content signature, and how the session differs."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.signatures: list[Signature] = []

    def clear(self) -> None:
        self.ids = []
        self.signatures = []

    def compare(self, turns: list[Turn], window: int | None) -> tuple[int, list[Turn], list[int]]:
        """(turns dropped from the end, new turns, changed indices) since the last compare.

        `window` limits how many of the last known turns are re-checked (None: all).
        """
        known = len(self.ids)
        start = 0 if window is None else max(0, known - window)
        keep = min(known, len(turns))
        for index in range(start, keep):
            if turns[index].id != self.ids[index]:
                keep = index
                break
        dropped = known - keep
        if dropped:
            del self.ids[keep:], self.signatures[keep:]
        changed: list[int] = []
        for index in range(start, keep):
            signature = content_signature(turns[index])
            if signature != self.signatures[index]:
                self.signatures[index] = signature
                changed.append(index)
        new_turns = turns[keep:]
        self.extend(new_turns)
        return dropped, list(new_turns), changed

    def extend(self, turns: Iterable[Turn]) -> None:
        for turn in turns:
            self.ids.append(turn.id)
            self.signatures.append(content_signature(turn))


class _LineSource:
    """A line-based session: new complete lines go to one long-lived builder."""

    def __init__(self, reader: Reader, path: Path) -> None:
        assert reader.builder is not None
        self.reader = reader
        self.path = path
        self.tail = FileTail(path)
        self.builder: LineBuilder = reader.builder(str(path))
        self.fed = False
        """The last `read` fed lines (or rebuilt the session)."""
        self.wrote = False
        """The last `read` found bytes written, even a line still without its newline."""

    @property
    def consumed(self) -> int:
        """Bytes of complete records read so far."""
        return self.tail.offset

    @property
    def session(self) -> Session:
        return self.builder.session

    def read(self, final: bool = False, upto: int | None = None) -> bool:
        """Feed what was added; True when the file was reset and the session rebuilt.

        With `final`, a last line without its newline is fed too (the writer is done).
        With `upto`, only the lines ending before that byte are read (the rest next time).
        """
        was_reset = False
        fed = False
        self.fed = False
        before = (self.tail.position, self.tail.resets)
        while True:
            budget = CHUNK_BYTES if upto is None else min(CHUNK_BYTES, upto - self.tail.position)
            if budget <= 0:
                break
            batch = self.tail.read_new(max_bytes=budget)
            if batch.reset:
                assert self.reader.builder is not None
                self.builder = self.reader.builder(str(self.path))
                was_reset = True
            for line, offset, lineno in batch.lines:
                self.builder.feed(line, offset, lineno)
                fed = True
            if not batch.more:
                break
        if final and upto is None:
            for line, offset, lineno in self.tail.flush_pending():
                self.builder.feed(line, offset, lineno)
                fed = True
        if fed or was_reset:
            self.builder.finish()
        self.fed = fed or was_reset
        self.wrote = self.fed or (self.tail.position, self.tail.resets) != before
        return was_reset


def _stamp(path: Path) -> tuple[object, ...]:
    """What changes when a document, a database (with its journal) or a directory tree does."""
    try:
        if path.is_dir():
            count = newest = total = 0
            for directory, _dirs, files in os.walk(path):
                for name in files:
                    try:
                        status = os.stat(os.path.join(directory, name))
                    except OSError:
                        continue
                    count += 1
                    total += status.st_size
                    newest = max(newest, status.st_mtime_ns)
            return ("dir", count, total, newest)
        stamps: list[object] = []
        for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-journal")):
            try:
                status = os.stat(candidate)
            except FileNotFoundError:
                stamps.append(None)
                continue
            stamps.append((status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns))
        return tuple(stamps)
    except OSError:
        return ("unreadable",)


class _DocumentSource:
    """A whole-document session: read again when its stamp changes."""

    def __init__(self, reader: Reader, path: Path, session_id: str | None) -> None:
        self.reader = reader
        self.path = path
        self.session_id = session_id
        self.session: Session | None = None
        self.last_error: str | None = None
        self.wrote = False
        """The last `read` found the source changed (even if it did not parse yet)."""
        self._stamp: tuple[object, ...] | None = None

    @property
    def consumed(self) -> int | None:
        """Whole documents have no byte position."""
        return None

    def _stamp_now(self) -> tuple[object, ...]:
        if self.reader.session_sources is not None:
            # The session's own files. The newest session is chosen here, before the read,
            # so that even the first stamp covers the session that is then read.
            found = self.reader.session_sources(self.path, self.session_id)
            if found is not None:
                self.session_id, sources = found
                return tuple(_stamp(source) for source in sources)
        return _stamp(self.path)

    def read(self, final: bool = False, upto: int | None = None) -> bool:
        """Read again if anything changed; True when a new session object was read.

        A whole document has no byte position: `upto` is not heeded.
        """
        stamp = self._stamp_now()
        self.wrote = stamp != self._stamp and self._stamp is not None
        if stamp == self._stamp:
            return False
        # Stamp before reading: a write during the read changes the stamp, so it is read again.
        self._stamp = stamp
        try:
            if self.reader.read_session is not None:
                # One session of a database or storage folder (the newest until one is
                # chosen), never every other one too.
                found = self.reader.read_session(self.path, self.session_id)
                sessions = [found] if found is not None else []
            else:
                sessions = self.reader.read(self.path, None)
        except READ_ERRORS as error:
            self.last_error = str(error)
            return False
        # A document cut off mid-write reads as no turns: wait for the rest instead.
        self.last_error = next(filter(None, map(cut_off, sessions)), None)
        chosen = self._choose(sessions)
        if chosen is None or self.last_error is not None:
            return False
        self.session = chosen
        self.session_id = chosen.session_id
        return True

    def _choose(self, sessions: list[Session]) -> Session | None:
        """The followed session: the one asked for or followed so far, else the newest.

        A session asked for by id that is not there yet is waited for, never swapped for
        another; the readers list sessions oldest first.
        """
        if self.session_id is None:
            return sessions[-1] if sessions else None
        for session in sessions:
            if session.session_id == self.session_id:
                return session
        return None


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(HEAD_BYTES)
    except OSError:
        return b""


def _judgeable(path: Path) -> bool:
    """True when there is enough content to recognise a format (not a half-written first line)."""
    if path.is_dir():
        return True
    head = _head(path)
    # A newline ends a first record; a NUL byte means a binary file (a database), never text
    # still being written.
    if b"\n" in head or b"\0" in head or len(head) >= HEAD_BYTES:
        return True
    try:
        orjson.loads(head)
    except orjson.JSONDecodeError:
        return False
    return True


def _unfinished_document(path: Path) -> bool:
    """True for a JSON document still being written: it opens like one but does not parse yet.

    A JSON-lines file whose first line parses is complete enough to judge, so it is not this.
    """
    head = _head(path).removeprefix(b"\xef\xbb\xbf").lstrip()
    if head[:1] not in (b"{", b"["):
        return False
    first_line = head.split(b"\n", 1)[0]
    try:
        orjson.loads(first_line)
        return False
    except orjson.JSONDecodeError:
        pass
    try:
        orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return True
    return False


def _line_based(reader: Reader, path: Path) -> bool:
    """True when the reader's line builder can follow the path record by record.

    Chat JSON lines may hold one whole conversation per line (fine-tuning data sets); those
    are read as a document, like the reader itself does.
    """
    if reader.builder is None or path.is_dir():
        return False
    if reader.name == "chat-jsonl":
        from replay.core.readers.chat import first_record
        from replay.core.readers.chat_jsonl import is_conversation_record

        return not is_conversation_record(first_record(_head(path)))
    return True


class SessionFollower:
    """Follows one session as it grows; `poll()` says what is new since the last call.

    Args:
        path: a session file, directory or database; it may not exist yet.
        format: a reader name, to skip detection.
        rules: what counts as an empty turn.
        suggester: fills `EmptyTurn.suggestion` for reported empty turns.
        session_id: for sources holding several sessions, the one to follow (default: newest).
        settle: seconds of quiet after which a multi-record user message is complete.
        stall: seconds without a write, while a reply is due, before a stall is reported.
        clock: epoch seconds now (tests pass their own).
        quiet_start: no stall until something is written after following began (a session
            of a followed folder that was silent already is an old one, not a stalled one).
    """

    def __init__(
        self,
        path: str | Path,
        format: str | None = None,  # noqa: A002 - the name `--format` and load_sessions use
        *,
        rules: DetectionRules = DEFAULT_RULES,
        suggester: Suggester | None = None,
        session_id: str | None = None,
        settle: float = DEFAULT_SETTLE,
        stall: float = DEFAULT_STALL,
        clock: Any = time.time,
        quiet_start: bool = False,
    ) -> None:
        self.path = Path(path)
        """The followed path."""
        self.rules = rules
        """What counts as an empty turn."""
        self.suggester = suggester
        """Suggests labels for reported empty turns."""
        self.reader: Reader | None = get_reader(format) if format else None
        """The format, once known."""
        self._session_id = session_id
        self._source: _LineSource | _DocumentSource | None = None
        self._diff = _Diff()
        self._judged = 0
        self._reported_empty: set[str] = set()
        self._sidechains: _ClaudeSidechains | None = None
        self._detected = False
        self._switched = False
        self.settle_seconds = settle
        """Quiet time that completes a multi-record user message."""
        self.stall_seconds = stall
        """Silence, while a reply is due, that counts as a stall."""
        self._clock = clock
        self._completion: TurnCompletion | None = None
        self._reported_at: dict[str, int] = {}
        self._open_requests: set[int] = set()
        self._missing_reported: dict[str, int] = {}
        """Missing replies reported, by placeholder id: request index (taken back if a reply
        comes after all)."""
        """Requests still waiting for a reply (`missing_replies`): neither answered nor, yet,
        clearly left without one."""
        self._last_write = clock()
        self._stalled: Stall | None = None
        self._pending: int | None = None
        self._first_read = True
        self._may_stall = not quiet_start
        """False until a write is seen, with `quiet_start`."""

    @property
    def last_write(self) -> float:
        """Epoch seconds of the last write seen (the file's time when following began)."""
        return self._last_write

    @property
    def stalled(self) -> Stall | None:
        """The stall going on now, if any."""
        return self._stalled

    @property
    def pending(self) -> int | None:
        """Index of the last turn while it is still being written."""
        return self._pending

    @property
    def session(self) -> Session | None:
        """The followed session as last read."""
        return None if self._source is None else self._source.session

    @property
    def last_error(self) -> str | None:
        """Why the last re-read of a whole document failed (it is retried on the next change)."""
        return self._source.last_error if isinstance(self._source, _DocumentSource) else None

    def _start(self) -> bool:
        """Pick the reader and source once there is content to judge; False while waiting."""
        if self._source is not None:
            return True
        if self.reader is None:
            if not self.path.exists() or not _judgeable(self.path):
                return False
            try:
                self.reader = detect_reader(self.path)
            except UnknownFormat:
                if _unfinished_document(self.path):
                    return False
                raise
            self._detected = True
        self._open_source(self.reader)
        return True

    def _open_source(self, reader: Reader) -> None:
        if _line_based(reader, self.path):
            self._source = _LineSource(reader, self.path)
        else:
            self._source = _DocumentSource(reader, self.path, self._session_id)
        self._sidechains = _sidechain_hook(reader, self._source)
        read_at = file_reader(self.path) if isinstance(self._source, _LineSource) else None
        self._completion = TurnCompletion(reader.name, read_at, self.settle_seconds)
        try:
            self._last_write = min(self._clock(), os.stat(self.path).st_mtime)
        except OSError:
            pass

    def _redetect(self) -> bool:
        """After a failed re-read, check whether the content now reads as another format.

        A one-line JSON-lines file is also a JSON document, so the first guess can be wrong
        until a second line arrives. True when the follower switched to another reader.
        """
        try:
            reader = detect_reader(self.path)
        except ReaderError:
            return False
        if self.reader is not None and reader.name == self.reader.name:
            return False
        self.reader = reader
        self._open_source(reader)
        assert self._source is not None
        self._source.read()
        self._switched = True
        return True

    def poll(self, *, final: bool = False, upto: int | None = None) -> FollowUpdate:
        """Read what changed and report it.

        Args:
            final: the writer is known to be done: a last line without its newline is read,
                and the last turn counts as complete (see `settle`).
            upto: read only the records ending before this byte of a line-based file (what
                it held when a folder's watch began; the rest is read by the next poll).

        Raises:
            UnknownFormat: the content is there but no reader recognises it.
        """
        if not self._start():
            return FollowUpdate(None)
        source = self._source
        assert source is not None
        rebuilt = source.read(final, upto)
        if isinstance(source, _DocumentSource) and source.last_error and self._detected:
            rebuilt = self._redetect() or rebuilt
            source = self._source
            assert source is not None
        now = self._clock()
        resumed: Resumption | None = None
        first_read, self._first_read = self._first_read, False
        # What the first read finds was written before following began: the file's time.
        if (source.wrote or rebuilt) and not first_read:
            if self._stalled is not None:
                stall = self._stalled
                resumed = Resumption(stall.since, max(0.0, now - stall.since), stall.turn)
                self._stalled = None
            self._last_write = now
            self._may_stall = True
        session = source.session
        if session is None:
            return FollowUpdate(None, resumed=resumed)
        update = FollowUpdate(session, resumed=resumed)
        window = CHANGE_WINDOW if isinstance(source, _LineSource) else None
        if rebuilt and (isinstance(source, _LineSource) or self._switched):
            self._switched = False
            self._diff.clear()
            update.reset = True
        known = len(self._diff.ids)
        update.dropped, update.new_turns, update.changed = self._diff.compare(session.turns, window)
        if any(index < len(session.turns) - 1 for index in update.changed):
            session.revise()  # what was worked out about the turns before may not hold
        if update.dropped and update.dropped == known:
            update.reset, update.dropped = True, 0  # nothing reported before still stands
        if update.reset:
            self._judged = 0
        elif update.dropped:
            self._judged = min(self._judged, known - update.dropped)
        self._open_requests = {i for i in self._open_requests if i < self._judged}
        if self._sidechains is not None:
            update.sidechains_changed = self._sidechains.poll()
        update.retracted = self._retractions(session, update.changed)
        self._judge(update, session, now, settle=final)
        return update

    def tick(self) -> FollowUpdate:
        """Judge what only time changes (quiet time, stalls) without reading the source."""
        session = self.session
        if session is None:
            return FollowUpdate(None)
        update = FollowUpdate(session)
        pending = self._pending
        self._judge(update, session, self._clock(), settle=False)
        update.completed = pending is not None and self._pending is None
        return update

    def settle(self) -> FollowUpdate:
        """Poll once more as if the writer had stopped: the last turn is judged too.

        For callers that know the session is finished (the agent exited, or the user asked);
        a file whose last record has no newline gets that record read as well.
        """
        return self.poll(final=True)

    def _judge(self, update: FollowUpdate, session: Session, now: float, *,
               settle: bool) -> None:
        """Report empty turns that became complete, and a stall that just began."""
        last_complete = self._complete_empty(update, session, now, settle=settle)
        update.pending = self._pending
        if self._stalled is not None or not self._may_stall:
            return
        waiting = waiting_for_reply(session, last_complete)
        if waiting is not None and now - self._last_write >= self.stall_seconds:
            self._stalled = update.stalled = Stall(self._last_write, waiting)

    def _retractions(self, session: Session, changed: list[int]) -> list[Retraction]:
        """Turns reported empty that now show content."""
        found: list[Retraction] = []
        turns = session.turns
        for index in changed:
            turn = turns[index]
            if self._reported_at.get(turn.id) is not None and not is_empty(turn, self.rules):
                del self._reported_at[turn.id]
                found.append(Retraction(index, turn.id, turn.role))
        return found

    def _complete_empty(self, update: FollowUpdate, session: Session, now: float, *,
                        settle: bool) -> bool:
        """Report empty turns that became complete, never the same id twice.

        Returns whether the last user or assistant turn is complete.
        """
        turns = session.turns
        last = last_conversation_index(session)
        last_complete = True
        if last is not None:
            completion = self._completion
            assert completion is not None
            source = self._source
            consumed = source.consumed if source is not None else None
            last_complete = settle or completion.complete(
                session, last, consumed=consumed, quiet=now - self._last_write)
        self._pending = None if last_complete or last is None else last
        end = len(turns) if self._pending is None else self._pending
        found = update.new_empty
        for index in range(self._judged, max(end, self._judged)):
            turn = turns[index]
            if self.rules.missing_replies and request_words(turn):
                self._open_requests.add(index)
            if turn.id in self._reported_empty or not is_empty(turn, self.rules):
                continue
            self._reported_empty.add(turn.id)
            self._reported_at[turn.id] = index
            found.append(describe_empty(session, turn, self.rules, self.suggester))
        self._judged = max(self._judged, end)
        if self._open_requests:
            self._judge_requests(found, session, end)
        if self._missing_reported:
            update.retracted.extend(self._answered_after_all(session))
        return last_complete

    def _answered_after_all(self, session: Session) -> list[Retraction]:
        """Missing replies reported before whose request got a reply after all."""
        taken: list[Retraction] = []
        turns = session.turns
        for placeholder, index in list(self._missing_reported.items()):
            if index >= len(turns) or placeholder_id(turns[index].id) != placeholder:
                del self._missing_reported[placeholder]  # the turns were rewritten
            elif missing_reply(session, index) is None:
                del self._missing_reported[placeholder]
                taken.append(Retraction(index, placeholder, "assistant"))
            elif index + 1 + REPLY_WINDOW < len(turns):
                del self._missing_reported[placeholder]  # too far back to be answered now
        return taken

    def _judge_requests(self, found: list[EmptyTurn], session: Session, end: int) -> None:
        """Report a request's missing reply once it is clear none is coming (a cancel, an
        error, an interrupt or the next request); forget requests that got their reply."""
        for index in sorted(self._open_requests):
            if index >= end:
                continue
            if missing_reply(session, index) is None:
                # Answered (or so far back that a reply would not be its own): settled.
                self._open_requests.discard(index)
                continue
            if missing_reply(session, index, live=True) is None:
                continue  # nothing after it yet, or only what is still being written
            self._open_requests.discard(index)
            empty = describe_empty(session, session.turns[index], self.rules, self.suggester)
            if empty.id not in self._reported_empty:
                self._reported_empty.add(empty.id)
                self._missing_reported[empty.id] = index
                found.append(empty)
        found.sort(key=lambda empty: empty.index)

    def close(self) -> None:
        """Release open files."""
        if isinstance(self._source, _LineSource):
            self._source.tail.close()
        if self._sidechains is not None:
            for agent in self._sidechains.agents.values():
                agent.tail.close()


def _sidechain_hook(reader: Reader, source: _LineSource | _DocumentSource) -> (
    _ClaudeSidechains | None
):
    """The subagent follower for formats that write subagents to their own files."""
    if reader.name == "claude-code" and isinstance(source, _LineSource):
        return _ClaudeSidechains(source)
    return None


class _ClaudeSidechains:
    """Claude Code subagent files of a followed session, each tailed by its own builder.

    Which files belong to the session, and under which call each hangs, is decided by the
    reader (`claude_code.subagent_files` and `link_subagents`), so a follow and a fresh read
    agree; this only keeps the files' builders alive between polls and links them again when
    one of them grew.
    """

    def __init__(self, main: _LineSource) -> None:
        self.main = main
        self.agents: dict[Path, _LineSource] = {}
        self._linked: Session | None = None

    def poll(self) -> bool:
        """Read the subagent files; True when a sidechain was added or grew."""
        main = self.main
        session = main.session
        grew = False
        files = subagent_files(main.path, session.session_id, known=self.agents)
        for file in files:
            agent = self.agents.get(file)
            if agent is None:
                agent = self.agents[file] = _LineSource(main.reader, file)
            agent.read()
            grew = agent.fed or grew
        if not grew and self._linked is session:
            return False
        # The reader's order, which decides ties between possible owners.
        link_subagents(main.path, main.builder,
                       [(file, self.agents[file].builder) for file in files])
        self._linked = session
        return bool(files)


__all__ = ["COMPLETION_FORMATS", "DEFAULT_SETTLE", "DEFAULT_STALL", "FollowUpdate",
           "Resumption", "Retraction", "SessionFollower", "Stall", "UnknownFormat",
           "content_signature", "iso_time", "turn_brief"]
