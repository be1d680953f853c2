"""What every reader provides, the errors they raise, and helpers for line-based formats."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import orjson

from replay.core.model import Part, Session
from replay.core.text import shorten

Progress = Callable[[int, int], None]
"""Called with (bytes or items done, total) while reading."""

HEAD_BYTES = 64 * 1024
"""How much of a file `sniff` functions see."""

CHUNK_BYTES = 4 * 1024 * 1024
"""Read size for line-based formats."""
FIRST_CHUNK_BYTES = 64 * 1024
"""The first read of a line-based file; each next read doubles, up to CHUNK_BYTES."""


class ReaderError(Exception):
    """A clean, one-line failure to read a path; never a traceback for the user."""


class UnreadablePath(ReaderError):
    """The path does not exist or cannot be opened."""

    @classmethod
    def of(cls, path: object, error: OSError) -> UnreadablePath:
        """The one-line error for a path the system refused: `path: reason`."""
        return cls(f"{path}: {error.strerror or error}")


class UnknownFormat(ReaderError):
    """No reader recognised the content."""


class LineBuilder(Protocol):
    """Turns the records of a line-based transcript, fed in order, into one growing session."""

    session: Session
    """The session being built; its `turns` grow (and the last ones may change) as lines arrive."""

    def feed(self, line: bytes, offset: int, lineno: int) -> None:
        """Take one complete record (without its newline) found at byte `offset`, line `lineno`."""

    def finish(self) -> None:
        """Called once the input is exhausted (for now), to settle pending state."""


@dataclass(frozen=True, slots=True)
class SessionEntry:
    """One session of a multi-session source, known before it is read (for a session list
    that shows at once and fills in its counts while the sessions are read one by one)."""

    key: str
    """What the session is read by: its id in a database or storage folder, its file name."""
    path: Path
    """The session's own file when `own_file`, else the whole source."""
    own_file: bool = False
    """True when `path` holds this session alone: read it as a file of its own."""
    title: str | None = None
    """The title, when the source keeps one outside the session's records."""
    started: float | None = None
    """When it started (epoch seconds), as far as a glance at the source tells."""
    format: str | None = None
    """The reader that reads it, when not the one that listed it (a folder of many kinds)."""


@dataclass(frozen=True, slots=True)
class Reader:
    """A transcript format: how to recognise it and how to read it."""

    name: str
    """Stable format name used by `--format` and in `scan --json`."""
    title: str
    """Human name for messages (`Claude Code JSONL`)."""
    sniff: Callable[[Path, bytes], bool]
    """True when the content looks like this format; gets the first HEAD_BYTES (b"" for dirs)."""
    read: Callable[[Path, Progress | None], list[Session]]
    """Read every session at the path; raises ReaderError for a path it cannot read."""
    builder: Callable[[str], LineBuilder] | None = None
    """For line-based formats: a fresh incremental builder for the given path (follow mode)."""
    complete: Callable[[Path, LineBuilder], Session] | None = None
    """For line-based formats: what `read` adds after the builder has seen every line
    (sidechains in other files, facts from the file name); None when nothing."""
    read_session: Callable[[Path, str | None], Session | None] | None = None
    """For sources holding many sessions: read only the one with this id, or the newest one
    for None (None when there is no such session), so following one session never reads
    every other one."""
    session_sources: Callable[[Path, str | None], tuple[str, list[Path]] | None] | None = None
    """For sources that keep one session across many files: the session (the newest one
    for None) and the files and folders whose change is a change of it, None when there is
    no session yet. A follower stamps these instead of walking the whole source."""
    list_sessions: Callable[[Path], list[SessionEntry] | None] | None = None
    """For sources holding many sessions: list them without reading them (None from the
    call: this source cannot be listed, read it whole)."""
    single_session: bool = False
    """True when a file of this format holds exactly one session (subagents aside)."""
    windowed: bool = False
    """True when `builder` only ever appends turns (`Session.add`) and never reads them back
    through `session.turns`: a scan may then keep only a window of them."""
    priority: int = 50
    """Lower sniffs first; specific formats before generic ones."""
    directories: bool = False
    """True when the reader accepts a directory."""


def iter_lines(
    handle: BinaryIO, start: int = 0, lineno: int = 0, *, final: bool = True
) -> Iterator[tuple[bytes, int, int]]:
    """Yield (record, offset, lineno) for each line from byte `start`, newline removed.

    With `final=False` a trailing line without a newline is held back (a writer may be
    mid-record); with `final=True` it is yielded too. `lineno` is the number of lines before
    `start`; yielded line numbers are 1-based. Blank lines are skipped but counted.
    """
    handle.seek(start)
    offset = start
    pending = b""
    # Small reads first, doubling up to CHUNK_BYTES: the first lines come out at once (the
    # app shows the first turns while the rest is read) and big files are still read in
    # big chunks.
    size = FIRST_CHUNK_BYTES
    while True:
        chunk = handle.read(size)
        size = min(size * 2, CHUNK_BYTES)
        if not chunk:
            break
        if pending:
            chunk = pending + chunk
            pending = b""
        lines = chunk.split(b"\n")
        pending = lines.pop()
        for line in lines:
            lineno += 1
            length = len(line) + 1
            if line.strip():
                yield line.rstrip(b"\r"), offset, lineno
            offset += length
    if final and pending.strip():
        yield pending.rstrip(b"\r"), offset, lineno + 1


def read_line_session(
    path: Path, builder: LineBuilder, progress: Progress | None = None
) -> Session:
    """Feed every line of a file to a builder and return its session."""
    try:
        total = os.path.getsize(path)
        handle = open(path, "rb")
    except OSError as error:
        raise UnreadablePath.of(path, error) from None
    with handle:
        next_report = 0
        for line, offset, lineno in iter_lines(handle):
            builder.feed(line, offset, lineno)
            if progress is not None and offset >= next_report:
                progress(offset, total)
                next_report = offset + CHUNK_BYTES
    builder.finish()
    if progress is not None:
        progress(total, total)
    return builder.session


def read_spans(path: str, spans: tuple[tuple[int, int], ...]) -> list[bytes]:
    """Read the byte spans of a file back (for full parts of shortened turns)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return [os.pread(fd, length, offset) for offset, length in spans]
    finally:
        os.close(fd)


def read_head(path: Path) -> bytes:
    """The first HEAD_BYTES of a file, or b"" for a directory."""
    if path.is_dir():
        return b""
    with open(path, "rb") as handle:
        return handle.read(HEAD_BYTES)


def first_json_line(head: bytes) -> bytes | None:
    """The first non-blank line of a head, if it starts like a JSON object."""
    for line in head.split(b"\n", 20)[:20]:
        stripped = line.strip()
        if stripped:
            return stripped if stripped.startswith(b"{") else None
    return None


def shorten_part(part: Part) -> Part:
    """Shorten a part's long text, input and output in place (blankness kept exact).

    `Session.full_parts` reads the whole back through the session's loader.
    """
    text, cut = shorten(part.text)
    if cut and text is not None:
        part.length, part.text, part.shortened = len(part.text), text, True
    value, cut = shorten(part.input)
    if cut:
        part.input, part.shortened = value, True
    value, cut = shorten(part.output)
    if cut:
        part.output, part.shortened = value, True
    return part


def as_list(value: Any) -> list[Any]:
    """The value when it is a list, else an empty one (records of other versions vary)."""
    return value if isinstance(value, list) else []


def json_text(value: Any) -> str:
    """A string as it is; anything else as compact JSON (or its repr when not JSON-able)."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def json_object_line(session: Session, line: bytes, lineno: int) -> dict[str, Any] | None:
    """One JSONL record as a dict; anything else is counted as skipped with a warning."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        session.warn(f"line {lineno}: not valid JSON")
        return None
    if not isinstance(record, dict):
        session.warn(f"line {lineno}: not a JSON object")
        return None
    return record


def glance_started(reader: Reader, path: Path) -> float | None:
    """When a line-based session file started, from its first lines alone (None when the
    format is not line-based or they tell no time): for a session list, before any read."""
    if reader.builder is None:
        return None
    try:
        head = read_head(path)
        builder = reader.builder(str(path))
        lines = head.split(b"\n")[:-1]  # the last piece may be cut off
        offset = 0
        for lineno, line in enumerate(lines, start=1):
            if line.strip():
                builder.feed(line, offset, lineno)
            offset += len(line) + 1
            if builder.session.started is not None:
                return builder.session.started
    except (OSError, ValueError, ReaderError):
        return None
    return builder.session.started
