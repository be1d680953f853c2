"""Aider's `.aider.chat.history.md`: markdown; `#### ` lines are the person, `> ` lines aider.

Layout, as aider's `io.py` writes it:

- `# aider chat started at 2024-05-01 10:20:30` (local time) opens a session; one file holds
  every session run in that directory, so one file gives several `Session`s.
- `#### text` lines are the person's prompt, one per line of a multi-line prompt; a blank
  line of the prompt is a bare `####`, and an empty prompt is written `#### <blank>`.
  Consecutive `####` lines are one user turn; a blank line between them starts another.
- `> text` lines are aider's own output (banner, `Added x to the chat`, `Tokens: ...`,
  confirmations, errors). They become **system turns**, one per run of `>` lines, so they
  never make a user or assistant turn look full or empty; runs holding only bare `>` lines
  are dropped.
- Any other line is the model's reply, up to the next `####`, `>` or session header.
- An empty prompt (`#### <blank>`, or `####` lines with nothing on them) never reaches the
  model: aider's `Coder.preproc_user_input` returns at once on empty input, so nothing is
  sent and no reply comes. Such a user turn carries the note `not sent to the model`.
- Interrupts. Aider's `Coder.send` catches `^C` while a reply streams, writes `> ^C again to
  exit` (`keyboard_interrupt`) and only then writes whatever part of the reply had come, so
  a cut reply reads `^C` line first, partial text after; a second `^C` within two seconds
  writes `> ^C KeyboardInterrupt` and quits. Older versions wrote the cut reply first and
  `^C KeyboardInterrupt` (with or without `> `) after it. So: a `^C` while a request is out
  (after the prompt, before any reply, the request not ended by an error or a token report,
  or during `Retrying in ...`) is an aborted reply: an assistant turn holding an `error` part
  named `KeyboardInterrupt`, with the partial reply text that follows, if any (an empty turn,
  reason `aborted`, when none). `^C KeyboardInterrupt` right after reply text is that reply
  cut off. Anywhere else (after a finished reply, a command, an error, a question answered)
  the person pressed it at the prompt: plain aider output, no reply turn.

A history pasted into a file without its `# aider chat started at` line is read as one
session (`#0`) when its lines are aider's: prompts and aider's own output lines (`> Tokens:
... sent`, `> Applied edit to`, `> Aider v...`). Known limits of the format: a reply line that
itself starts with `> ` or `#### ` cannot be told from aider's output or a prompt. Turns
carry no times of their own: the header's time (naive local time, read by `parse_time` as
given) goes to the opening banner turn only.
"""

from __future__ import annotations

import bisect
import math
import os
import re
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, overload

from replay.core.readers.base import (
    BOM,
    EMPTY_FILE,
    Progress,
    Reader,
    UnreadablePath,
)
from replay.core.session.model import (
    NOT_SENT,
    Kind,
    Part,
    Session,
    Source,
    Turn,
    parse_time,
)

NAME = "aider"
HEADER = "# aider chat started at"
"""The line that opens every aider session."""

BLANK_PROMPT = "<blank>"
"""What aider writes for a prompt submitted with nothing in it."""

REPLY_COMMANDS: frozenset[str] = frozenset(
    {"ask", "code", "architect", "context", "help", "ok", "lint", "test"}
)
"""Slash commands whose prompt the model answers; other commands get only aider output."""

_HEADER_AT_LINE_START = re.compile(rb"(?m)^# aider chat started at")
_LINE_END = re.compile(rb"\r\n|\r|\n")
_INTERRUPT = re.compile(r"^\^C (?:KeyboardInterrupt|again to exit)\s*$")
_AGAIN = "^C again to exit"
_ENDED = re.compile(r"(?:Error|Exception)\b|\berror:|has hit a token limit|^Tokens: ")
"""Aider output after a prompt that says the request is over (failed, or answered)."""
_RETRYING = re.compile(r"^Retrying in [\d.]+ seconds")
_AIDER_LINE = re.compile(
    rb"(?m)^(?:> (?:Tokens: [\d.,]+[kKmM]? sent|Applied edit to |Aider v\d|Main model: |"
    rb"Model: \S+ with |Repo-map: |Git repo: |Commit [0-9a-f]{7,} |Added \S.* to the chat|"
    rb"You can use /undo)|#### <blank>)")
_PROMPT_LINE = re.compile(rb"(?m)^#### \S")
_MODEL = re.compile(r"^(?:Main model|Model|Models): (\S+)")
_VERSION = re.compile(r"^Aider v(\S+)")
_TOKENS = re.compile(r"([\d.,]+)([kKmM]?) (sent|received|cache write|cache hit)")
_TOKEN_KEYS = {"sent": "input", "received": "output", "cache write": "cache_write",
               "cache hit": "cache_read"}
_SCALE = {"": 1, "k": 1_000, "m": 1_000_000}


def _token_count(number: str, suffix: str) -> int | None:
    try:
        return int(float(number.replace(",", "")) * _SCALE[suffix.lower()])
    except (ValueError, OverflowError):
        return None


def parse_tokens(text: str) -> dict[str, int]:
    """Token counts from aider's `Tokens: 2.4k sent, 1.1k cache hit, 393 received.` line."""
    counts: dict[str, int] = {}
    for number, suffix, what in _TOKENS.findall(text):
        value = _token_count(number, suffix)
        if value is not None:
            counts[_TOKEN_KEYS[what]] = value
    return counts


def prompt_expects_reply(text: str) -> bool:
    """True when aider sends this prompt to the model (not a blank line, shell or plain command)."""
    stripped = text.strip()
    if not stripped or stripped.startswith("!"):
        return False
    if stripped.startswith("/"):
        command = stripped[1:].split(maxsplit=1)[0].lower() if len(stripped) > 1 else ""
        return command in REPLY_COMMANDS
    return True


@dataclass(slots=True)
class _Block:
    """Consecutive lines of one kind waiting to become a turn."""

    role: str
    lines: list[str]
    lineno: int
    start: int
    end: int


class _Marks:
    """Where each exchange of one chat starts (a prompt, and what follows it up to the next
    prompt), with the builder state a read from there needs: the model then in use and the
    turns before it. The turns before an exchange are final once it starts (a prompt's end
    lets go of the reply it would have added tokens or a ^C to), so an exchange is read
    back alone. About 30 bytes an exchange."""

    __slots__ = ("count", "firsts", "lines", "model_of", "models", "offsets")

    def __init__(self) -> None:
        self.offsets = array("q")
        """Byte offset of the exchange's prompt line."""
        self.lines = array("q")
        """Its line number."""
        self.firsts = array("q")
        """The index of its first turn: the turns before it."""
        self.model_of = array("l")
        self.models: list[str | None] = []
        self.count = 0
        """The chat's turns so far."""

    def add(self, offset: int, lineno: int, first: int, model: str | None) -> None:
        if model not in self.models:
            self.models.append(model)
        self.offsets.append(offset)
        self.lines.append(lineno)
        self.firsts.append(first)
        self.model_of.append(self.models.index(model) if len(self.models) > 1 else 0)

    def __len__(self) -> int:
        return len(self.offsets)

    def model(self, exchange: int) -> str | None:
        return self.models[self.model_of[exchange]]


@dataclass(slots=True)
class _SessionBuilder:
    """Turns the classified lines of one aider session into turns."""

    session: Session
    number: int
    block: _Block | None = None
    model: str | None = None
    expects_reply: bool = False
    """The last user turn was sent to the model."""
    reply: Turn | None = None
    """The last assistant turn since the last user turn."""
    turn_count: int = 0
    pending_blank: int = 0
    """Blank lines seen inside an assistant block, kept only if more text follows."""
    started: str | None = None
    """The header's start time; given to the session's opening banner turn, written then."""
    ended: bool = False
    """Aider's output since the last prompt says its request is over (an error, a token
    report): a `^C` now comes at the prompt."""
    aborted: Turn | None = None
    """The reply a `^C` cut off before any of it was written: partial text that follows
    belongs to it."""
    cut_at_prompt: str | None = None
    """A `^C` taken as pressed at the prompt, while reply text may still follow it (aider
    writes a cut reply after its `^C` line)."""
    marks: _Marks | None = None
    """Where each exchange starts, when asked for (a chat read back by exchanges)."""
    keep: bool = True
    """False: the turns before an exchange are let go when it starts (only counted)."""

    def _new_turn(self, role: str, parts: list[Part], lineno: int, start: int, end: int) -> Turn:
        self.turn_count += 1
        turn = Turn(
            id=f"{self.number}-{self.turn_count}",
            role=role,
            parts=parts,
            model=self.model if role == "assistant" else None,
            source=Source(self.session.path, line=lineno, spans=((start, end - start),)),
        )
        if self.started and role == "system" and not self.session.turns:
            turn.timestamp, turn.time = parse_time(self.started)
        self.started = None  # the first turn only (turns let go must not make it look first)
        if self.marks is not None:
            self.marks.count = self.turn_count
        return self.session.add(turn)

    def flush(self) -> None:
        """Close the open block into a turn (system blocks with no words are dropped)."""
        block, self.block = self.block, None
        self.pending_blank = 0
        if block is None:
            return
        if block.role == "user":
            text = "\n".join(block.lines)
            if text.strip() == BLANK_PROMPT:
                text = ""
            turn = self._new_turn("user", [Part(Kind.TEXT, text)], block.lineno, block.start,
                                  block.end)
            if not text.strip():
                turn.note = NOT_SENT
            self.expects_reply = prompt_expects_reply(text)
            self.reply = None
            self.ended = False
            self.aborted = None
            self.cut_at_prompt = None
            return
        text = "\n".join(block.lines).strip("\n")
        if block.role == "system":
            if not text.strip():
                return
            self._new_turn("system", [Part(Kind.TEXT, text)], block.lineno, block.start, block.end)
            return
        aborted = self.aborted
        if aborted is not None and self.session.turns and self.session.turns[-1] is aborted \
                and not any(part.kind == Kind.TEXT for part in aborted.parts):
            # The part of the reply that had come when the person pressed ^C, written after
            # aider's ^C line.
            aborted.parts.insert(0, Part(Kind.TEXT, text))
            if aborted.source is not None:
                aborted.source.spans += ((block.start, block.end - block.start),)
            self.reply = aborted
            self.aborted = None
            return
        self.reply = self._new_turn(
            "assistant", [Part(Kind.TEXT, text)], block.lineno, block.start, block.end
        )
        if self.cut_at_prompt is not None:
            # A ^C line, then reply text before any prompt: the reply aider was writing (a
            # retry, a reflection after an edit error) was cut off there.
            self.reply.parts.append(Part(Kind.ERROR, self.cut_at_prompt, name="KeyboardInterrupt"))
            self.cut_at_prompt = None

    def _append(self, role: str, text: str, lineno: int, offset: int, end: int) -> None:
        block = self.block
        if block is not None and block.role != role:
            self.flush()
            block = None
        if block is None:
            self.block = _Block(role, [text], lineno, offset, end)
            return
        if role == "assistant" and self.pending_blank:
            block.lines.extend([""] * self.pending_blank)
        self.pending_blank = 0
        block.lines.append(text)
        block.end = end

    def user_line(self, text: str, lineno: int, offset: int, end: int) -> None:
        """A `####` line: part of the prompt being read."""
        marks = self.marks
        if marks is not None and (self.block is None or self.block.role != "user") \
                and self.turn_count:
            self.flush()  # as `_append` would: the turns before this prompt are final
            marks.add(offset, lineno, self.turn_count, self.model)
            if not self.keep:
                self.session.turns.clear()
        self._append("user", text, lineno, offset, end)

    def assistant_line(self, text: str, lineno: int, offset: int, end: int) -> None:
        """An unprefixed line: part of the model's reply."""
        if _INTERRUPT.match(text.strip()) and self._interrupt(text.strip(), lineno, offset, end):
            return
        self._append("assistant", text, lineno, offset, end)

    def tool_line(self, text: str, lineno: int, offset: int, end: int) -> None:
        """A `>` line: aider's own output."""
        stripped = text.strip()
        if _INTERRUPT.match(stripped) and self._interrupt(stripped, lineno, offset, end):
            return
        if self.block is not None and self.block.role != "system":
            self.flush()
        if (found := _MODEL.match(stripped)) is not None:
            self.model = found.group(1)
            self.session.meta.setdefault("model", self.model)
        elif (found := _VERSION.match(stripped)) is not None:
            self.session.meta.setdefault("version", found.group(1))
        elif stripped.startswith("Tokens:") and self.reply is not None:
            counts = parse_tokens(stripped)
            if counts:
                self.reply.tokens = counts
        if _RETRYING.match(stripped):
            self.ended = False
        elif _ENDED.search(stripped):
            self.ended = True
        self._append("system", text, lineno, offset, end)

    def blank_line(self) -> None:
        """An empty line: ends a prompt; inside a reply it is kept if more text follows."""
        if self.block is None:
            return
        if self.block.role == "user":
            self.flush()
        elif self.block.role == "assistant":
            self.pending_blank += 1

    def _interrupt(self, text: str, lineno: int, offset: int, end: int) -> bool:
        """Attach a ^C to the reply it cut off; False when it came at the input prompt (the
        line is then aider output)."""
        if self.block is not None and self.block.role == "user":
            self.flush()
        block = self.block
        again = text.startswith(_AGAIN)
        if block is not None and block.role == "assistant":
            if again:
                # Aider writes this line before a cut reply's text, so after reply text the
                # reply had finished: the person pressed ^C at the prompt.
                return self._at_prompt(text)
            self.flush()
            target = self.reply
        elif self.aborted is not None and self.session.turns \
                and self.session.turns[-1] is self.aborted:
            target = self.aborted  # the second ^C of the pair that quits
        elif self.reply is not None:
            # Aider output after a finished reply, or its ^C line: the ^C came at the prompt.
            if again or (block is not None and any(line.strip() for line in block.lines)):
                return self._at_prompt(text)
            if not self.session.turns or self.session.turns[-1] is not self.reply:
                return self._at_prompt(text)
            target = self.reply
        elif self.expects_reply and not self.ended:
            self.flush()
            target = self._new_turn("assistant", [], lineno, offset, end)
            self.aborted = target
        else:
            return self._at_prompt(text)
        if target is None:
            return self._at_prompt(text)
        if not any(p.kind == Kind.ERROR and p.name == "KeyboardInterrupt" for p in target.parts):
            target.parts.append(Part(Kind.ERROR, text, name="KeyboardInterrupt"))
        return True

    def _at_prompt(self, text: str) -> bool:
        if text.startswith(_AGAIN):
            self.cut_at_prompt = text
        return False


def _classify(builder: _SessionBuilder, raw: str, lineno: int, offset: int, end: int) -> None:
    line = raw.rstrip()
    if line == "####" or line.startswith("#### "):
        builder.user_line(line[5:], lineno, offset, end)
    elif line == ">" or line.startswith("> "):
        builder.tool_line(line[2:], lineno, offset, end)
    elif not line.strip():
        builder.blank_line()
    else:
        builder.assistant_line(raw.rstrip("\r"), lineno, offset, end)


def _lines(data: bytes, start: int | None = None, stop: int | None = None,
           last: bool = True) -> Iterator[tuple[bytes, int, int]]:
    """(line, offset, offset of the next line) for each line: LF, CRLF or CR ends one, and a
    byte-order mark before the first is skipped. From `start` up to `stop` when given, else
    the whole of `data`; `last`: `stop` is where the file ended (its last line may have no
    line end), else it is the start of a line."""
    if start is None:
        start = len(BOM) if data[:len(BOM)] == BOM else 0
    end = len(data) if stop is None else stop
    for match in _LINE_END.finditer(data, start, end):
        yield data[start:match.start()], start, match.end()
        start = match.end()
    if last:
        yield data[start:end], start, end + 1


WINDOW_BYTES = 1 << 20
"""Bytes of a history read at a time. The file is read, never mapped: a mapped file cut
short while it is read kills the process with SIGBUS, which no handler can turn into a
message."""


def _file_lines(handle: BinaryIO, start: int | None = None, stop: int | None = None,
                last: bool = True) -> Iterator[tuple[bytes, int, int]]:
    """`_lines` of an open file, read WINDOW_BYTES at a time: the same lines at the same
    offsets (a file cut while it is read ends where it was cut)."""
    if start is None:
        handle.seek(0)
        start = len(BOM) if handle.read(len(BOM)) == BOM else 0
    handle.seek(start)
    pending = b""
    base = start
    """File offset of `pending`'s first byte."""
    position = start
    while True:
        want = WINDOW_BYTES if stop is None else min(WINDOW_BYTES, stop - position)
        chunk = handle.read(want) if want > 0 else b""
        position += len(chunk)
        ended = not chunk or (stop is not None and position >= stop)
        data = pending + chunk if pending else chunk
        # A CR last in the window may be the first half of a CRLF: held back with the line.
        cut = len(data) if ended or not data.endswith(b"\r") else len(data) - 1
        line_start = 0
        for match in _LINE_END.finditer(data, 0, cut):
            yield data[line_start:match.start()], base + line_start, base + match.end()
            line_start = match.end()
        pending = data[line_start:]
        base += line_start
        if ended:
            break
    if last:
        yield pending, base, base + len(pending) + 1


def _file_has_header(handle: BinaryIO) -> bool:
    """`_HEADER_AT_LINE_START` found anywhere in the file (read WINDOW_BYTES at a time,
    stopping at the first)."""
    handle.seek(0)
    carry = b""
    # Small windows: the first header is nearly always the first line, and a chat read back
    # alone asks this every time.
    while chunk := handle.read(min(WINDOW_BYTES, 1 << 16)):
        data = carry + chunk
        if _HEADER_AT_LINE_START.search(data) is not None:
            return True
        rest = data[data.rfind(b"\n") + 1:]
        # The start of the last line goes on to the next window while it is too short to
        # tell; else a byte that is not a line end, so the next window's first byte (mid
        # line) is not taken as the start of one.
        carry = rest if len(rest) < len(HEADER) else b"\x00"
    return False


def parse_history(data: bytes, path: str) -> list[Session]:
    """Every session of an aider chat history, in file order."""
    return list(iter_history(data, path))


def iter_history(data: Any, path: str) -> Iterator[Session]:
    """Every session of an aider chat history (bytes or an open file), in file order, each
    given as soon as its last line is read (the next header, or the end)."""
    done: Session | None = None
    for item in history_stream(data, path):
        if item is None:
            continue
        if done is not None:
            yield done
        done = item
    if done is not None:
        yield done


PAUSE_LINES = 256
"""`history_stream` pauses (yields None) every this many lines."""


@dataclass(frozen=True, slots=True)
class _Chat:
    """Where one session of a history is: enough to read its turns again alone."""

    start: int
    """Byte offset of its first line (its header; 0 for text before any header)."""
    lines: int
    """Lines of the file before it."""
    number: int
    """Its header's number in the file (0 for text before any header): turn ids hold it."""


def history_stream(data: Any, path: str, chats: list[_Chat] | None = None,
                   one: _Chat | None = None, stop: int | None = None,
                   has_header: bool | None = None, marks: list[_Marks] | None = None,
                   keep: bool = True) -> Iterator[Session | None]:
    """The sessions of an aider chat history as `Reader.stream` gives them: each yielded
    when its header is read (before its first turn), None every PAUSE_LINES lines; a session
    is done when the next one is yielded or the generator ends.

    `chats` gets where each session starts. With `one`, only that session is read, up to
    byte `stop`: where the next one starts, or (negative) minus the size the file had when
    its last session was read. `data`: the history's bytes, or the file open (read
    WINDOW_BYTES at a time, never mapped). `has_header`: whether the file has a header at a
    line start, when known (else looked for). `marks` gets where each session's exchanges
    start (`_Marks`, one per session); with `keep` False their turns are let go as each next
    exchange starts (counted in its marks).
    """
    builder: _SessionBuilder | None = None
    seen_ids: set[str] = set()
    headers = 0 if one is None else max(one.number - 1, 0)
    offset = 0
    lines: Iterator[tuple[bytes, int, int]]
    if isinstance(data, bytes):
        if has_header is None:
            has_header = _HEADER_AT_LINE_START.search(data) is not None
        bom = data[:len(BOM)] == BOM
        lines = (_lines(data) if one is None or stop is None
                 else _lines(data, one.start, abs(stop), last=stop < 0))
    else:  # an open file
        if has_header is None:
            has_header = _file_has_header(data)
        data.seek(0)
        bom = data.read(len(BOM)) == BOM
        lines = (_file_lines(data) if one is None or stop is None
                 else _file_lines(data, one.start, abs(stop), last=stop < 0))
    for lineno, (raw_bytes, offset, end) in enumerate(
            lines, start=1 if one is None else one.lines + 1):
        if not lineno % PAUSE_LINES:
            yield None
        raw = raw_bytes.decode("utf-8", errors="replace")
        if raw.startswith(HEADER):
            if builder is not None:
                builder.flush()
            started = raw[len(HEADER):].strip()
            session = Session(path=path, format=NAME)
            headers += 1
            number = headers
            session_id = started or f"#{number}"
            if session_id in seen_ids:
                session_id = f"{session_id} #{number}"
            seen_ids.add(session_id)
            session.session_id = session_id
            session.title = f"aider chat {started}" if started else None
            if started:
                session.meta["started_at"] = started
            builder = _SessionBuilder(session, number, started=started or None, keep=keep)
            if marks is not None:
                builder.marks = _Marks()
                marks.append(builder.marks)
            if chats is not None:
                chats.append(_Chat(offset, lineno - 1, number))
            yield session
        elif builder is None:
            if not raw.strip():
                offset = end
                continue
            # Text before any header: a history whose start was cut off, or pasted without
            # its header; keep it as session 0 (said only when a header comes later).
            session = Session(path=path, format=NAME, session_id="#0")
            if has_header:
                session.warn(f"{path}: line {lineno}: text before the first {HEADER!r} line",
                             skipped=False)
            else:
                session.meta["header"] = "none: a pasted history"
            seen_ids.add("#0")
            builder = _SessionBuilder(session, 0, keep=keep)
            if marks is not None:
                builder.marks = _Marks()
                marks.append(builder.marks)
            if chats is not None:
                chats.append(_Chat(len(BOM) if bom else 0, 0, 0))
            yield session
            _classify(builder, raw, lineno, offset, end)
        else:
            _classify(builder, raw, lineno, offset, end)
        offset = end
    if builder is not None:
        builder.flush()


def _read(path: Path, progress: Progress | None = None) -> list[Session]:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UnreadablePath.of(path, error) from None
    if progress is not None:
        progress(0, len(data))
    sessions = parse_history(data, str(path))
    if not sessions and not data.removeprefix(BOM).strip():
        empty = Session(path=str(path), format=NAME)
        empty.warn(EMPTY_FILE, skipped=False)
        sessions = [empty]
    if progress is not None:
        progress(len(data), len(data))
    return sessions


def _opened(path: Path) -> BinaryIO:
    """The file open for reading; UnreadablePath when it cannot be opened."""
    try:
        return open(path, "rb")  # noqa: SIM115 - closed by the caller's `with`
    except OSError as error:
        raise UnreadablePath.of(path, error) from None


def shrunk_line(path: str, size: int, now: int) -> str:
    """What a history cut short while it was read says (one line: what, where, what was
    expected)."""
    return (f"{path}: the file was cut while it was read ({size:,} bytes when it was opened, "
            f"{now:,} now): what was past byte {now:,} is missing")


def _stream(path: Path, chats: list[_Chat] | None = None,
            marks: list[_Marks] | None = None) -> Iterator[Session | None]:
    """`Reader.stream`: the sessions of a history, the file read WINDOW_BYTES at a time;
    `chats` as in `history_stream`; with `marks`, each session's exchanges are marked and
    its turns let go as the next starts. A file cut while it is read says so in its last
    session's warnings."""
    with _opened(path) as handle:
        try:
            size = os.fstat(handle.fileno()).st_size
            last: Session | None = None
            for item in history_stream(handle, str(path), chats, marks=marks,
                                       keep=marks is None):
                if item is not None:
                    last = item
                yield item
            now = os.fstat(handle.fileno()).st_size
        except OSError as error:
            raise UnreadablePath.of(path, error) from None
    if last is None:  # every line with text starts a session: the file holds only white space
        last = Session(path=str(path), format=NAME)
        last.warn(EMPTY_FILE, skipped=False)
        yield last
    if now < size:
        last.warn(shrunk_line(str(path), size, now), skipped=False)


def _iter(path: Path) -> Iterator[Session]:
    """The sessions of a history one at a time, the file mapped (not read into memory)."""
    done: Session | None = None
    for item in _stream(path):
        if item is None:
            continue
        if done is not None:
            yield done
        done = item
    if done is not None:
        yield done


RECENT_CHATS = 16
"""Sessions of an indexed history whose turns are kept whole once read (the one open, the
ones just looked at); the others are read again from their lines when asked for."""

_recent: OrderedDict[int, _ChatTurns] = OrderedDict()
_recent_lock = threading.Lock()


class _ChatTurns(Sequence[Turn]):
    """The turns of one session of a history, read again from its lines when asked for and
    kept while among the RECENT_CHATS last read (a history of thousands of chats is then
    held as their counts, not their turns)."""

    __slots__ = ("_chat", "_count", "_path", "_stop", "_turns")

    def __init__(self, path: str, chat: _Chat, stop: int, count: int) -> None:
        self._path = path
        self._chat = chat
        self._stop = stop
        self._count = count
        self._turns: list[Turn] | None = None

    def __len__(self) -> int:
        return self._count

    def _whole(self) -> list[Turn]:
        with _recent_lock:
            turns = self._turns
            if turns is not None:
                _recent.move_to_end(id(self))
                return turns
        turns = self._read()
        with _recent_lock:
            self._turns = turns
            _recent[id(self)] = self
            while len(_recent) > RECENT_CHATS:
                _, oldest = _recent.popitem(last=False)
                oldest._turns = None
        return turns

    def _read(self) -> list[Turn]:
        try:
            with open(self._path, "rb") as handle:
                if os.fstat(handle.fileno()).st_size < abs(self._stop):
                    raise ValueError("the file is shorter than when it was read")
                found = [item for item in history_stream(handle, self._path, one=self._chat,
                                                         stop=self._stop)
                         if item is not None]
        except (OSError, ValueError) as error:
            return [Turn(id=f"{self._chat.number}-{number}", role="system", parts=[Part(
                Kind.ERROR, f"this turn could not be read back from {self._path}: {error}",
                name="unreadable")]) for number in range(1, self._count + 1)]
        turns = list(found[0].turns) if found else []
        if len(turns) != self._count:
            changed = f"{self._path}: this chat's turns changed since the file was read"
            return [Turn(id=f"{self._chat.number}-{number}", role="system",
                         parts=[Part(Kind.ERROR, changed, name="unreadable")])
                    for number in range(1, self._count + 1)]
        return turns

    @overload
    def __getitem__(self, index: int) -> Turn: ...

    @overload
    def __getitem__(self, index: slice) -> list[Turn]: ...

    def __getitem__(self, index: int | slice) -> Turn | list[Turn]:
        return self._whole()[index]

    def __iter__(self) -> Iterator[Turn]:
        return iter(self._whole())


LONG_CHAT_BYTES = 4 << 20
"""A chat longer than this is read back by blocks of exchanges (`_LongChatTurns`), never
whole: a chat of 50 MB held whole is 4 times that in turns."""
BLOCK_EXCHANGES = 64
"""Exchanges of a long chat read back at a time."""
RECENT_BLOCKS = 16
"""Blocks of long chats kept once read (the one on screen, the ones around it)."""

_recent_blocks: OrderedDict[tuple[_LongChatTurns, int], list[Turn]] = OrderedDict()
"""By the turns object itself (not its id: an id is given again once its object is gone)."""


class _LongChatTurns(Sequence[Turn]):
    """The turns of one long chat, read back a block of exchanges at a time from where its
    marks say each starts, the RECENT_BLOCKS last read kept: memory bounded by the block,
    not the chat. Reading them in order reads each block once."""

    __slots__ = ("_chat", "_marks", "_path", "_stop")

    def __init__(self, path: str, chat: _Chat, stop: int, marks: _Marks) -> None:
        self._path = path
        self._chat = chat
        self._stop = stop
        self._marks = marks

    def __len__(self) -> int:
        return self._marks.count

    def _blocks(self) -> int:
        return (len(self._marks) + 1 + BLOCK_EXCHANGES - 1) // BLOCK_EXCHANGES

    def _first(self, block: int) -> int:
        """The index of the block's first turn."""
        exchange = block * BLOCK_EXCHANGES
        return 0 if exchange == 0 else self._marks.firsts[exchange - 1]

    def _block(self, block: int) -> list[Turn]:
        key = (self, block)
        with _recent_lock:
            turns = _recent_blocks.get(key)
            if turns is not None:
                _recent_blocks.move_to_end(key)
                return turns
        turns = self._read(block)
        with _recent_lock:
            _recent_blocks[key] = turns
            while len(_recent_blocks) > RECENT_BLOCKS:
                _recent_blocks.popitem(last=False)
        return turns

    def _read(self, block: int) -> list[Turn]:
        """Read one block: exchange 0 is the chat's start (its header, the banner, what
        came before its first prompt); exchange k is the k-th mark's prompt onwards."""
        marks, first = self._marks, self._first(block)
        after = (block + 1) * BLOCK_EXCHANGES
        wanted = (marks.firsts[after - 1] if after - 1 < len(marks) else marks.count) - first
        stop = marks.offsets[after - 1] if after - 1 < len(marks) else self._stop
        try:
            with open(self._path, "rb") as handle:
                if os.fstat(handle.fileno()).st_size < abs(self._stop):
                    raise ValueError("the file is shorter than when it was read")
                if block == 0:
                    found = [item for item in history_stream(handle, self._path,
                                                             one=self._chat, stop=stop)
                             if item is not None]
                    turns = list(found[0].turns) if found else []
                else:
                    turns = self._from_mark(handle, block * BLOCK_EXCHANGES - 1, stop)
        except (OSError, ValueError) as error:
            return self._unreadable(first, wanted,
                                    f"this turn could not be read back from {self._path}: "
                                    f"{error}")
        if len(turns) != wanted:
            return self._unreadable(first, wanted, f"{self._path}: this chat's turns changed "
                                                   "since the file was read")
        return turns

    def _from_mark(self, handle: BinaryIO, mark: int, stop: int) -> list[Turn]:
        marks = self._marks
        first = marks.firsts[mark]
        builder = _SessionBuilder(Session(path=self._path, format=NAME), self._chat.number,
                                  model=marks.model(mark), turn_count=first)
        lines = _file_lines(handle, marks.offsets[mark], abs(stop), last=stop < 0)
        for lineno, (raw, offset, end) in enumerate(lines, start=marks.lines[mark]):
            text = raw.decode("utf-8", errors="replace")
            if text.startswith(HEADER):
                break  # the next chat (a file that changed)
            _classify(builder, text, lineno, offset, end)
        builder.flush()
        turns = builder.session.turns
        for number, turn in enumerate(turns, start=first):
            turn.index = number
        return turns

    def _unreadable(self, first: int, count: int, why: str) -> list[Turn]:
        return [Turn(id=f"{self._chat.number}-{number}", role="system", index=number - 1,
                     parts=[Part(Kind.ERROR, why, name="unreadable")])
                for number in range(first + 1, first + count + 1)]

    def _where(self, index: int) -> tuple[int, int]:
        """(block, place in it) of the turn at `index`."""
        exchange = bisect.bisect_right(self._marks.firsts, index)  # 0: before any mark
        block = exchange // BLOCK_EXCHANGES
        return block, index - self._first(block)

    @overload
    def __getitem__(self, index: int) -> Turn: ...

    @overload
    def __getitem__(self, index: slice) -> list[Turn]: ...

    def __getitem__(self, index: int | slice) -> Turn | list[Turn]:
        if isinstance(index, slice):
            # A view, read as it is walked: `turns[n:]` must not make every turn at once.
            return _TurnsView(self, range(*index.indices(len(self))))  # type: ignore[return-value]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        block, place = self._where(index)
        return self._block(block)[place]

    def __iter__(self) -> Iterator[Turn]:
        for block in range(self._blocks()):
            yield from self._block(block)


class _TurnsView(Sequence[Turn]):
    """Some turns of a long chat, each read when reached."""

    __slots__ = ("_numbers", "_turns")

    def __init__(self, turns: _LongChatTurns, numbers: range) -> None:
        self._turns = turns
        self._numbers = numbers

    def __len__(self) -> int:
        return len(self._numbers)

    @overload
    def __getitem__(self, index: int) -> Turn: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Turn]: ...

    def __getitem__(self, index: int | slice) -> Turn | Sequence[Turn]:
        if isinstance(index, slice):
            return _TurnsView(self._turns, self._numbers[index])
        return self._turns[self._numbers[index]]

    def __iter__(self) -> Iterator[Turn]:
        for number in self._numbers:
            yield self._turns[number]


def _read_indexed(path: Path, progress: Progress | None = None) -> list[Session]:
    """`read`, each session's turns read again from its lines when asked for (`_ChatTurns`:
    `Reader.read_indexed`, the app on a history of thousands of chats)."""
    chats: list[_Chat] = []
    marks: list[_Marks] = []
    sessions: list[Session] = []
    if progress is not None:
        progress(0, 1)
    # Each chat's turns let go as its next exchange starts: a long chat is never whole.
    for item in _stream(path, chats, marks=marks):
        if item is not None:
            sessions.append(item)
            if len(sessions) > 1 and len(chats) >= len(sessions):
                number = len(sessions) - 2
                _let_go(sessions[number], str(path), chats[number],
                        chats[number + 1].start, marks[number])
    if sessions and len(chats) == len(sessions):
        _let_go(sessions[-1], str(path), chats[-1], -os.path.getsize(path), marks[-1])
    if progress is not None:
        progress(1, 1)
    return sessions


def _let_go(session: Session, path: str, chat: _Chat, stop: int, marks: _Marks) -> None:
    """Keep the session's count of turns, not its turns (read again when asked for)."""
    if abs(stop) - chat.start > LONG_CHAT_BYTES:
        session.turns = _LongChatTurns(path, chat, stop, marks)  # type: ignore[assignment]
    else:
        session.turns = _ChatTurns(path, chat, stop, marks.count)  # type: ignore[assignment]


# ---------------------------------------------------------------- a list of the chats

_HEADER_LINE = re.compile(rb"(?:(?<=[\r\n])|\A)# aider chat started at([^\r\n]*)")
"""A header line: at the start of a line (LF, CR or CRLF ends one), its time after it."""
_LINE_ENDS = re.compile(rb"[\r\n]")


class _Packed:
    """Many short strings held as one UTF-8 buffer and where each ends (not an object each)."""

    __slots__ = ("_data", "_ends")

    def __init__(self) -> None:
        self._data = bytearray()
        self._ends = array("q")

    def append(self, text: str) -> None:
        self._data += text.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._data))

    def __getitem__(self, index: int) -> str:
        start = self._ends[index - 1] if index else 0
        return self._data[start:self._ends[index]].decode("utf-8", "surrogatepass")

    def __len__(self) -> int:
        return len(self._ends)

    def nbytes(self) -> int:
        return len(self._data) + self._ends.itemsize * len(self._ends)


class ChatIndex(Sequence[_Chat]):
    """Where each chat of a history is, and what its header says, in a few arrays (about 40
    bytes a chat): a history of 144,510 chats is listed without a `Session` for each. A
    chat's `Session` is read from its own bytes when it is opened (`read`)."""

    __slots__ = ("_dup", "_numbers", "_started", "has_header", "lines", "path", "size",
                 "starts", "times")

    def __init__(self, path: str, size: int) -> None:
        self.path = path
        self.size = size
        """The file's size when it was listed: where the last chat ends."""
        self.starts = array("q")
        """Byte offset of each chat's first line."""
        self.lines = array("q")
        """Lines of the file before each chat."""
        self._numbers = array("l")
        self.times = array("d")
        """Each chat's header time (epoch seconds, NaN when it has none)."""
        self._started = _Packed()
        self._dup = bytearray()
        self.has_header = False
        """Some line of the file starts with the header at the start of a line (as
        `_HEADER_AT_LINE_START` finds it): text before the first one is then warned of."""

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, index: int) -> _Chat: ...

    @overload
    def __getitem__(self, index: slice) -> list[_Chat]: ...

    def __getitem__(self, index: int | slice) -> _Chat | list[_Chat]:
        if isinstance(index, slice):
            return [self[number] for number in range(*index.indices(len(self)))]
        return _Chat(self.starts[index], self.lines[index], self._numbers[index])

    def _add(self, start: int, lines: int, number: int, started: str, seen: set[str]) -> None:
        self.starts.append(start)
        self.lines.append(lines)
        self._numbers.append(number)
        self._started.append(started)
        self.times.append(parse_time(started)[1] or math.nan if started else math.nan)
        session_id = started or f"#{number}"
        self._dup.append(session_id in seen)
        seen.add(session_id if session_id not in seen else f"{session_id} #{number}")

    def started_text(self, index: int) -> str:
        """What the chat's header says after `started at` ("" for none)."""
        return self._started[index]

    def session_id(self, index: int) -> str:
        """The chat's id, as `history_stream` gives it."""
        number = self._numbers[index]
        session_id = self._started[index] or f"#{number}"
        return f"{session_id} #{number}" if self._dup[index] else session_id

    def title(self, index: int) -> str | None:
        """The chat's title, as `history_stream` gives it (None without a header time)."""
        started = self._started[index]
        return f"aider chat {started}" if started else None

    def started(self, index: int) -> float | None:
        """When the chat's header says it started (None when it says nothing)."""
        value = self.times[index]
        return None if math.isnan(value) else value

    def stop(self, index: int) -> int:
        """Where the chat ends: the next one's start, or (negative) minus the file's size."""
        return self.starts[index + 1] if index + 1 < len(self.starts) else -self.size

    def nbytes(self) -> int:
        """The memory the index holds (its arrays and strings)."""
        arrays = (self.starts, self.lines, self._numbers, self.times)
        return sum(a.itemsize * len(a) for a in arrays) + self._started.nbytes() + \
            len(self._dup)

    def read(self, index: int) -> Session:
        """The chat's `Session`, read from its own bytes (the file is not read whole).
        ReaderError when the file no longer holds it."""
        chat, stop = self[index], self.stop(index)
        path = Path(self.path)
        with _opened(path) as handle:
            try:
                if os.fstat(handle.fileno()).st_size < abs(stop):
                    raise UnreadablePath(f"{self.path}: the file is shorter than when it was "
                                         f"listed: chat {self.session_id(index)} is gone")
                # A long chat is read once here, its turns let go exchange by exchange,
                # then read back by blocks when shown (never whole).
                long = abs(stop) - chat.start > LONG_CHAT_BYTES
                marks: list[_Marks] | None = [] if long else None
                found = [item for item in history_stream(handle, self.path, one=chat,
                                                         stop=stop, has_header=self.has_header,
                                                         marks=marks, keep=not long)
                         if item is not None]
            except OSError as error:
                raise UnreadablePath.of(path, error) from None
        if found and marks:
            found[0].turns = _LongChatTurns(self.path, chat, stop,  # type: ignore[assignment]
                                            marks[0])
        if not found or (chat.number and found[0].meta.get("started_at", "")
                         != self.started_text(index)):
            raise UnreadablePath(f"{self.path}: chat {self.session_id(index)} changed since "
                                 "the file was listed; open the file again")
        session = found[0]
        session.session_id = self.session_id(index)
        return session


def list_chats(path: Path) -> ChatIndex:
    """Every chat of a history by its header lines alone (a fast pass: no chat is parsed),
    the file read WINDOW_BYTES at a time. The chats are those `history_stream` gives, in
    order, with the same ids; the file's text before its first header is chat `#0` when
    it holds more than white space."""
    with _opened(path) as handle:
        try:
            return _list(handle, str(path))
        except OSError as error:
            raise UnreadablePath.of(path, error) from None


def _list(handle: BinaryIO, path: str) -> ChatIndex:
    index = ChatIndex(path, os.fstat(handle.fileno()).st_size)
    index.has_header = _file_has_header(handle)
    handle.seek(0)
    seen: set[str] = set()
    origin = len(BOM) if handle.read(len(BOM)) == BOM else 0
    handle.seek(origin)
    base = origin
    """File offset of `data`'s first byte."""
    carry = b""
    lines = 0
    """Line ends before `base + position`."""
    headers = 0
    first_seen = False
    """A header, or text before any (chat #0), was read."""
    while True:
        chunk = handle.read(WINDOW_BYTES)
        ended = not chunk
        data = carry + chunk if carry else chunk
        if ended:
            cut = len(data)
        else:
            last = max(data.rfind(b"\n"), data.rfind(b"\r"))
            # The last line goes on with the next window; a CR last may be half a CRLF.
            cut = 0 if last < 0 else last if last == len(data) - 1 and data[last] == 13 \
                else last + 1
        position = 0
        for match in _HEADER_LINE.finditer(data, 0, cut):
            lines += _line_ends(data, position, match.start())
            position = match.start()
            if not first_seen:
                first_seen = True
                if _has_text(data[:position]):
                    index._add(origin, 0, 0, "", seen)  # text before the first header
            headers += 1
            started = match.group(1).decode("utf-8", "replace").strip()
            index._add(base + position, lines, headers, started, seen)
        lines += _line_ends(data, position, cut)
        if not first_seen and _has_text(data[:cut]):
            first_seen = True
            index._add(origin, 0, 0, "", seen)  # text before any header: chat #0
        base += cut
        carry = data[cut:]
        if ended:
            return index


def _has_text(data: bytes) -> bool:
    """More than white space, as a line of text is told from a blank one."""
    return bool(data.decode("utf-8", "replace").strip())


def _line_ends(data: bytes, start: int, stop: int) -> int:
    """Lines ended in `data[start:stop]` (LF, CR or CRLF each end one)."""
    return data.count(b"\n", start, stop) + data.count(b"\r", start, stop) \
        - data.count(b"\r\n", start, stop)


def looks_like_pasted_history(head: bytes) -> bool:
    """An aider history without its header: prompts and at least two of aider's own lines."""
    if head.lstrip()[:1] in (b"{", b"["):
        return False
    return _PROMPT_LINE.search(head) is not None and len(_AIDER_LINE.findall(head)) >= 2


def _sniff(path: Path, head: bytes) -> bool:
    return _HEADER_AT_LINE_START.search(head) is not None or looks_like_pasted_history(head)


READER = Reader(
    name=NAME,
    title="Aider chat history",
    sniff=_sniff,
    read=_read,
    iter_sessions=_iter,
    stream=_stream,
    read_indexed=_read_indexed,
    priority=40,
)
