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

import math
import os
import re
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from replay.core.readers import huge_lines, huge_strings
from replay.core.readers.base import (
    BOM,
    EMPTY_FILE,
    Progress,
    Reader,
    UnreadablePath,
)
from replay.core.readers.file_window import FileChanged, WindowFile
from replay.core.readers.huge_lines import LineRun
from replay.core.session import lifted
from replay.core.session.model import (
    NOT_SENT,
    Kind,
    Part,
    Session,
    Source,
    Turn,
    parse_time,
)

if TYPE_CHECKING:
    from replay.core.readers.aider_turns import ExchangeTurns

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
    joined: list[str] | None = None
    """Earlier lines, JOIN_LINES at a time joined by line ends (a 50 MB reply as 600,000
    strings was 85 MB before the text was made)."""
    run: LineRun | None = None
    """With lifting on (the app): the block's lines counted and marked, its text left in
    the file once past `huge_lines.LIFT_CHARS` (the lines are then no longer kept)."""

    def add(self, text: str, offset: int | None = None) -> None:
        run = self.run
        if run is not None:
            run.line(text, offset)
            if not run.held:
                return
        lines = self.lines
        lines.append(text)
        if len(lines) >= JOIN_LINES:
            if self.joined is None:
                self.joined = []
            self.joined.append("\n".join(lines))
            self.lines = []

    def text(self) -> str:
        """The lines joined by line ends."""
        if self.joined is None:
            return "\n".join(self.lines)
        return "\n".join([*self.joined, *self.lines] if self.lines else self.joined)

    def has_words(self) -> bool:
        """Some line is more than white space."""
        if self.run is not None and not self.run.held:
            return not self.run.blank
        return any(line.strip() for line in (*(self.joined or ()), *self.lines))


JOIN_LINES = 1024
"""Lines of a block joined into one string at a time (see `_Block.joined`)."""


class _Marks:
    """Where each exchange of one chat starts (a prompt, and what follows it up to the next
    prompt), with the builder state a read from there needs: the model then in use and the
    turns before it. The turns before an exchange are final once it starts (a prompt's end
    lets go of the reply it would have added tokens or a ^C to), so an exchange is read
    back alone. About 17 bytes an exchange (arrays of 4-byte numbers widen when one does
    not fit)."""

    __slots__ = ("count", "firsts", "lines", "model_of", "models", "offsets")

    def __init__(self) -> None:
        self.offsets = array("q")
        """Byte offset of the exchange's prompt line."""
        self.lines = array("I")
        """Its line number."""
        self.firsts = array("I")
        """The index of its first turn: the turns before it."""
        self.model_of = array("B")
        self.models: list[str | None] = []
        self.count = 0
        """The chat's turns so far."""

    def add(self, offset: int, lineno: int, first: int, model: str | None) -> None:
        if model not in self.models:
            self.models.append(model)
        self.offsets.append(offset)
        self.lines = _appended(self.lines, lineno)
        self.firsts = _appended(self.firsts, first)
        self.model_of = _appended(self.model_of,
                                  self.models.index(model) if len(self.models) > 1 else 0)

    def __len__(self) -> int:
        return len(self.offsets)

    def model(self, exchange: int) -> str | None:
        return self.models[self.model_of[exchange]]


def _appended(numbers: array[int], value: int) -> array[int]:
    """`numbers` with `value` appended: the same array, or a wider copy when it does not fit
    (a reader in another thread may hold the old one a moment longer: it stays whole)."""
    try:
        numbers.append(value)
        return numbers
    except OverflowError:
        wider = array("q", numbers)
        wider.append(value)
        return wider


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
    lifts: bool = False
    """A huge prompt or reply is left in its file (`huge_lines`: the app reading a file)."""

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
            text = self._text(block)
            if text.strip() == BLANK_PROMPT:
                text = ""
            turn = self._new_turn("user", [Part(Kind.TEXT, text)], block.lineno, block.start,
                                  block.end)
            if not text.strip():
                turn.note = NOT_SENT
            self.expects_reply = prompt_expects_reply(lifted.visible(text))
            self.reply = None
            self.ended = False
            self.aborted = None
            self.cut_at_prompt = None
            return
        text = self._text(block).strip("\n")
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

    def _text(self, block: _Block) -> str:
        """The block's text: its lines joined, or the placeholder of its run left in the
        file."""
        run = block.run
        if run is None or run.held:
            return block.text()
        return run.text(self.session.path, block.end, block.role)

    def _append(self, role: str, text: str, lineno: int, offset: int, end: int) -> None:
        block = self.block
        if block is not None and block.role != role:
            self.flush()
            block = None
        if block is None:
            block = self.block = _Block(role, [text], lineno, offset, end)
            if self.lifts and role in huge_lines.ROLES:
                block.run = LineRun(offset)
                block.run.line(text, offset)
            return
        if role == "assistant" and self.pending_blank:
            for _ in range(self.pending_blank):
                block.add("")
        self.pending_blank = 0
        block.add(text, offset)
        block.end = end
        run = block.run
        if run is not None and run.let_go(self.session.path):
            block.lines, block.joined = [], None  # read back from the file from now on

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
            if again or (block is not None and block.has_words()):
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
"""Bytes of a history read at a time (`file_window.WindowFile`, by `os.pread`). The file is
read, never mapped: a mapped file cut short while it is read kills the process with SIGBUS,
which no handler can turn into a message; read by windows, it is a `FileChanged` error."""


def _file_lines(file: WindowFile, start: int | None = None, stop: int | None = None,
                last: bool = True, window: int | None = None
                ) -> Iterator[tuple[bytes, int, int]]:
    """`_lines` of an open file, read `window` (WINDOW_BYTES) bytes at a time: the same
    lines at the same offsets, up to `stop` (the file's size when it was opened, at most).
    Raises FileChanged when the file was cut shorter than that while it is read."""
    if start is None:
        start = len(BOM) if file.read(0, len(BOM)) == BOM else 0
    pending = b""
    base = start
    """File offset of `pending`'s first byte."""
    end = file.size if stop is None else min(stop, file.size)
    for position, chunk in file.windows(start, end, window or WINDOW_BYTES):
        data = pending + chunk if pending else chunk
        ended = position + len(chunk) >= end
        # A CR last in the window may be the first half of a CRLF: held back with the line.
        cut = len(data) if ended or not data.endswith(b"\r") else len(data) - 1
        line_start = 0
        for match in _LINE_END.finditer(data, 0, cut):
            yield data[line_start:match.start()], base + line_start, base + match.end()
            line_start = match.end()
        pending = data[line_start:]
        base += line_start
    if last:
        yield pending, base, base + len(pending) + 1


def _file_has_header(file: WindowFile) -> bool:
    """`_HEADER_AT_LINE_START` found anywhere in the file (read 64 KiB at a time, stopping
    at the first)."""
    carry = b""
    # Small windows: the first header is nearly always the first line, and a chat read back
    # alone asks this every time.
    for _, chunk in file.windows(0, None, min(WINDOW_BYTES, 1 << 16)):
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
    its last session was read. `data`: the history's bytes, or the file open as a
    `WindowFile` (read WINDOW_BYTES at a time, never mapped; a file opened with `open` is
    opened again by its name as one). `has_header`: whether the file has a header at a
    line start, when known (else looked for). `marks` gets where each session's exchanges
    start (`_Marks`, one per session); with `keep` False their turns are let go as each next
    exchange starts (counted in its marks).
    """
    builder: _SessionBuilder | None = None
    seen_ids: set[str] = set()
    headers = 0 if one is None else max(one.number - 1, 0)
    offset = 0
    lines: Iterator[tuple[bytes, int, int]]
    lifts = False
    """Huge blocks left in the file: only the app's, and only of a file (not of bytes)."""
    if isinstance(data, bytes):
        if has_header is None:
            has_header = _HEADER_AT_LINE_START.search(data) is not None
        bom = data[:len(BOM)] == BOM
        lines = (_lines(data) if one is None or stop is None
                 else _lines(data, one.start, abs(stop), last=stop < 0))
    else:  # an open `WindowFile`
        if not isinstance(data, WindowFile):  # an open binary file: read by windows too
            data = WindowFile(data.name)
        if has_header is None:
            has_header = _file_has_header(data)
        bom = data.read(0, len(BOM)) == BOM
        lifts = huge_strings.enabled()
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
            builder = _SessionBuilder(session, number, started=started or None, keep=keep,
                                      lifts=lifts)
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
            builder = _SessionBuilder(session, 0, keep=keep, lifts=lifts)
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


def _opened(path: Path | str) -> WindowFile:
    """The file open for reading by windows; UnreadablePath when it cannot be opened."""
    try:
        return WindowFile(path)
    except OSError as error:
        raise UnreadablePath.of(path, error) from None


def _stream(path: Path, chats: list[_Chat] | None = None,
            marks: list[_Marks] | None = None) -> Iterator[Session | None]:
    """`Reader.stream`: the sessions of a history, the file read WINDOW_BYTES at a time (as
    big as it was when opened); `chats` as in `history_stream`; with `marks`, each session's
    exchanges are marked and its turns let go as the next starts. A file cut while it is
    read is one UnreadablePath line: `PATH: file changed while it was read: ...`."""
    with _opened(path) as file:
        try:
            last: Session | None = None
            for item in history_stream(file, str(path), chats, marks=marks,
                                       keep=marks is None):
                if item is not None:
                    last = item
                yield item
        except OSError as error:  # FileChanged: cut shorter while it was read
            raise UnreadablePath.of(path, error) from None
    if last is None:  # every line with text starts a session: the file holds only white space
        last = Session(path=str(path), format=NAME)
        last.warn(EMPTY_FILE, skipped=False)
        yield last


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
            with WindowFile(self._path) as file:
                if file.size < abs(self._stop):
                    raise FileChanged.shrank(abs(self._stop), file.size)
                found = [item for item in history_stream(file, self._path, one=self._chat,
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


LONG_CHAT_BYTES = 1 << 20
"""A chat longer than this is held as columns (`aider_turns.ExchangeTurns`), its turns read
back by exchange, never whole: a chat of 50 MB held whole is 4 times that in turns."""


class _ChatSource:
    """Where one chat's exchanges are in its file, to read any of them again alone
    (`ExchangeTurns`' read-back). The file stays open while the chat is shown."""

    __slots__ = ("_file", "_lock", "chat", "has_header", "marks", "path", "stop")

    def __init__(self, path: str, chat: _Chat, stop: int, marks: _Marks,
                 has_header: bool | None) -> None:
        self.path = path
        self.chat = chat
        self.stop = stop
        """Where the chat ends: the next one's start, or (negative) minus the file's size."""
        self.marks = marks
        self.has_header = has_header
        self._file: WindowFile | None = None
        self._lock = threading.Lock()

    def file(self) -> WindowFile:
        """The file, open (once); FileChanged when it is shorter than the chat's end."""
        with self._lock:
            if self._file is None:
                file = WindowFile(self.path)
                if file.size < abs(self.stop):
                    file.close()
                    raise FileChanged.shrank(abs(self.stop), file.size)
                self._file = file
            return self._file

    def read_back(self, exchange: int, wanted: int, *, done: bool = True
                  ) -> tuple[list[Turn], bool]:
        """`aider_turns.ReadBack`: exchange `exchange` (-1: the chat's start, its header and
        what comes before its first mark) read again, to the next mark; with no next mark
        yet while the chat is still read (`done` False), up to `wanted` turns at least."""
        marks = self.marks
        known = exchange + 1 < len(marks)
        stop = marks.offsets[exchange + 1] if known else self.stop
        whole = known or done
        file = self.file()
        if exchange < 0:
            turns = self._from_start(file, stop, None if whole else wanted)
        else:
            turns = self._from_mark(file, exchange, stop, None if whole else wanted)
        return turns, whole

    def _from_start(self, file: WindowFile, stop: int, wanted: int | None) -> list[Turn]:
        session: Session | None = None
        for item in history_stream(file, self.path, one=self.chat, stop=stop,
                                   has_header=self.has_header):
            if item is not None:
                session = item
            elif wanted is not None and session is not None and len(session.turns) >= wanted:
                break
        return list(session.turns) if session is not None else []

    def _from_mark(self, file: WindowFile, mark: int, stop: int,
                   wanted: int | None) -> list[Turn]:
        marks = self.marks
        first = marks.firsts[mark]
        builder = _SessionBuilder(Session(path=self.path, format=NAME), self.chat.number,
                                  model=marks.model(mark), turn_count=first,
                                  lifts=huge_strings.enabled())
        session = builder.session
        # Small windows: an exchange is usually a few hundred bytes.
        lines = _file_lines(file, marks.offsets[mark], abs(stop), last=stop < 0,
                            window=READ_BACK_BYTES)
        for lineno, (raw, offset, end) in enumerate(lines, start=marks.lines[mark]):
            text = raw.decode("utf-8", errors="replace")
            if text.startswith(HEADER):
                break  # the next chat (a file that changed)
            if offset == marks.offsets[mark] and not _PROMPT_AT_MARK.match(text):
                return []  # no prompt where one was: the file changed (said by the caller)
            _classify(builder, text, lineno, offset, end)
            if wanted is not None and builder.turn_count - first >= wanted:
                break
        else:
            builder.flush()
        turns = session.turns
        for number, turn in enumerate(turns, start=first):
            turn.index = number
        return turns


_PROMPT_AT_MARK = re.compile(r"####(?: |\s*$)")
"""The line an exchange starts with: a prompt line, as `_classify` tells one."""
READ_BACK_BYTES = 1 << 14
"""Bytes read at a time when one exchange is read again."""


class ChatReading:
    """One chat read into columns (`ExchangeTurns`), a pause at a time: the app shows its
    first turns while the rest is read (`steps`, in a worker). The turns read are the whole
    reader's, read back by exchange."""

    def __init__(self, index: ChatIndex, number: int) -> None:
        self.index = index
        self.number = number
        self.chat = index[number]
        self.stop = index.stop(number)
        self.total = abs(self.stop) - self.chat.start
        """Bytes of the chat."""
        self.session: Session | None = None
        """Once the chat's header is read: the session, its turns growing."""
        self.turns: ExchangeTurns | None = None

    def steps(self) -> Iterator[int]:
        """Read the chat, yielding the bytes of it read so far every PAUSE_LINES lines
        (the session is there from the first). Raises UnreadablePath when the file no
        longer holds the chat as listed (`PATH: file changed while it was read: ...`)."""
        from replay.core.readers.aider_turns import ExchangeTurns

        index, path = self.index, self.index.path
        marks: list[_Marks] = []
        try:
            with _opened(path) as file:
                if file.size < abs(self.stop):
                    raise UnreadablePath(f"{path}: the file is shorter than when it was "
                                         f"listed: chat {index.session_id(self.number)} is "
                                         "gone")
                for item in history_stream(file, path, one=self.chat, stop=self.stop,
                                           has_header=index.has_header, marks=marks):
                    if item is None:
                        if self.turns is not None:
                            yield self.turns.last_offset() - self.chat.start
                        continue
                    if self.session is not None:
                        break  # a second chat: the file changed (said below)
                    self._started(item, marks[0], ExchangeTurns)
                    yield 0
        except OSError as error:  # FileChanged: cut shorter while it was read
            raise UnreadablePath.of(path, error) from None
        if self.session is None or self.turns is None:
            raise UnreadablePath(f"{path}: chat {index.session_id(self.number)} changed "
                                 "since the file was listed; open the file again")
        self.turns.finish()
        yield self.total

    def _started(self, session: Session, marks: _Marks, kind: type[ExchangeTurns]) -> None:
        index, number = self.index, self.number
        if self.chat.number and session.meta.get("started_at", "") != \
                index.started_text(number):
            raise UnreadablePath(f"{index.path}: chat {index.session_id(number)} changed "
                                 "since the file was listed; open the file again")
        session.session_id = index.session_id(number)
        source = _ChatSource(index.path, self.chat, self.stop, marks, index.has_header)
        turns = kind(index.path, self.chat.number, marks,
                     lambda exchange, wanted: source.read_back(
                         exchange, wanted, done=turns.done))
        session.turns = turns  # type: ignore[assignment]
        self.session, self.turns = session, turns

    def read(self) -> Session:
        """The whole chat read (`steps` to the end): its session."""
        for _ in self.steps():
            pass
        assert self.session is not None
        return self.session


def _read_indexed(path: Path, progress: Progress | None = None) -> list[Session]:
    """`read`, each session's turns read again from its lines when asked for (`_ChatTurns`:
    `Reader.read_indexed`, the app on a history of thousands of chats); a long chat is read
    again into columns (`ChatReading`), never held whole."""
    chats: list[_Chat] = []
    marks: list[_Marks] = []
    sessions: list[Session] = []
    if progress is not None:
        progress(0, 1)
    # Each chat's turns let go as its next exchange starts: a long chat is never whole.
    for item in _stream(path, chats, marks=marks):
        if item is not None:
            sessions.append(item)
    if len(chats) == len(sessions) and sessions:
        listed: ChatIndex | None = None
        for number, session in enumerate(sessions):
            chat = chats[number]
            stop = chats[number + 1].start if number + 1 < len(chats) else \
                -os.path.getsize(path)
            if abs(stop) - chat.start <= LONG_CHAT_BYTES:
                session.turns = _ChatTurns(str(path), chat, stop,  # type: ignore[assignment]
                                           marks[number].count)
                continue
            listed = listed or list_chats(path)
            reading = ChatReading(listed, number).read()
            session.turns = reading.turns
    if progress is not None:
        progress(1, 1)
    return sessions


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

    def reading(self, index: int) -> ChatReading | None:
        """A long chat, to be read into columns a step at a time (`ChatReading.steps`: the
        app shows it while it is read); None for a chat short enough to read at once."""
        if abs(self.stop(index)) - self.starts[index] > LONG_CHAT_BYTES:
            return ChatReading(self, index)
        return None

    def read(self, index: int) -> Session:
        """The chat's `Session`, read from its own bytes (the file is not read whole); a
        long chat into columns (`ChatReading`). ReaderError when the file no longer holds
        it."""
        chat, stop = self[index], self.stop(index)
        if abs(stop) - chat.start > LONG_CHAT_BYTES:
            return ChatReading(self, index).read()
        path = Path(self.path)
        with _opened(path) as file:
            try:
                if file.size < abs(stop):
                    raise UnreadablePath(f"{self.path}: the file is shorter than when it was "
                                         f"listed: chat {self.session_id(index)} is gone")
                found = [item for item in history_stream(file, self.path, one=chat,
                                                         stop=stop, has_header=self.has_header)
                         if item is not None]
            except OSError as error:
                raise UnreadablePath.of(path, error) from None
        if not found or (chat.number and found[0].meta.get("started_at", "")
                         != self.started_text(index)):
            raise UnreadablePath(f"{self.path}: chat {self.session_id(index)} changed since "
                                 "the file was listed; open the file again")
        session = found[0]
        session.session_id = self.session_id(index)
        return session


def list_chats(path: Path | str) -> ChatIndex:
    """Every chat of a history by its header lines alone (a fast pass: no chat is parsed),
    the file read WINDOW_BYTES at a time. The chats are those `history_stream` gives, in
    order, with the same ids; the file's text before its first header is chat `#0` when
    it holds more than white space."""
    with _opened(path) as file:
        try:
            return _list(file, str(path))
        except OSError as error:
            raise UnreadablePath.of(path, error) from None


def _list(file: WindowFile, path: str) -> ChatIndex:
    index = ChatIndex(path, file.size)
    index.has_header = _file_has_header(file)
    seen: set[str] = set()
    origin = len(BOM) if file.read(0, len(BOM)) == BOM else 0
    base = origin
    """File offset of `data`'s first byte."""
    carry = b""
    lines = 0
    """Line ends before `base + position`."""
    headers = 0
    first_seen = False
    """A header, or text before any (chat #0), was read."""
    windows = file.windows(origin, None, WINDOW_BYTES)
    while True:
        chunk = next(windows, (0, b""))[1]
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
        for match in _header_lines(data, cut):
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


_HEADER_BYTES = HEADER.encode()


def _header_lines(data: bytes, cut: int) -> Iterator[re.Match[bytes]]:
    """`_HEADER_LINE.finditer(data, 0, cut)`, found by `bytes.find` first: the pattern's
    look-behind makes the regex try every byte (1.3 s for 50 MB, against 0.1 s)."""
    at = data.find(_HEADER_BYTES, 0, cut)
    while at >= 0:
        if at == 0 or data[at - 1] in b"\r\n":
            match = _HEADER_LINE.match(data, at, cut)
            if match is not None:
                yield match
        at = data.find(_HEADER_BYTES, at + 1, cut)


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
