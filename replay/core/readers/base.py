"""What every reader provides, the errors they raise, and helpers for line-based formats."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import orjson

from replay.core.readers import huge_strings
from replay.core.readers.json_stream import NotStreamable, stream_document
from replay.core.session import lifted
from replay.core.session.model import Part, Session
from replay.core.session.text import shorten

Progress = Callable[[int, int], None]
"""Called with (bytes or items done, total) while reading."""

Mapper = Callable[[Callable[[Path], Any], Iterable[Path]], Iterable[Any]]
"""A `map` over files: the builtin, or a process pool's (the same results, in order)."""

HEAD_BYTES = 64 * 1024
"""How much of a file `sniff` functions see."""

CHUNK_BYTES = 4 * 1024 * 1024
"""Read size for line-based formats."""
FIRST_CHUNK_BYTES = 64 * 1024
"""The first read of a line-based file; each next read doubles, up to CHUNK_BYTES."""
FIRST_LINE_BYTES = 16 * 1024 * 1024
"""How far detection reads to see a whole first line (a chat file's first message can be
megabytes); past this, sniffers judge the cut line."""
BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte-order mark some editors write first: accepted and ignored everywhere."""
EMPTY_FILE = "the file is empty: 0 turns read"
"""The warning every format gives for an empty file (an empty file is a session with no
turns yet, never an error: a session file is often created before its first record)."""
CUT_OFF = "the JSON document is cut off"
"""How the warning for a truncated document starts (a follower waits for the rest)."""
MAX_TEXT_LINES = 5
"""Lines of plain text (a status line, a shell prompt) tolerated before or after a JSON
document; each one skipped is named in a warning."""


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


@dataclass(slots=True)
class RecordFeed:
    """One session's records, to be fed in order to a fresh builder (a windowed scan)."""

    builder: LineBuilder
    """The builder the records go to (it only appends turns, as `Reader.windowed` says)."""
    records: Iterable[tuple[bytes, int, int]]
    """(record, byte offset, 1-based number) of each record: a line of a JSON-lines file,
    an element of a JSON document's array. A record may be a view valid until the next."""
    total: int
    """The file's size in bytes (for progress)."""
    empty: str | None = None
    """The warning to give when no record at all was fed (None: none)."""


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
    problem: str | None = None
    """Why this file of the folder cannot be read as a session, found while listing (one line
    naming it); listed anyway so that no file is dropped without a word."""


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
    complete_alone: Callable[[Path, LineBuilder], Session] | None = None
    """`complete` without the sidechains, for a scan, which reports none of them (reading a
    session's subagent files for nothing); None when `complete` reads no other file."""
    read_session: Callable[[Path, str | None], Session | None] | None = None
    """For sources holding many sessions: read only the one with this id, or the newest one
    for None (None when there is no such session), so following one session never reads
    every other one."""
    session_sources: Callable[[Path, str | None], tuple[str, list[Path]] | None] | None = None
    """For sources that keep one session across many files: the session (the newest one
    for None) and the files and folders whose change is a change of it, None when there is
    no session yet. A follower stamps these instead of walking the whole source."""
    list_sessions: Callable[..., list[SessionEntry] | None] | None = None
    """For sources holding many sessions: list them without reading them (None from the
    call: this source cannot be listed, read it whole). Called with the path, and with
    `mapper=` too when `maps_listing`."""
    maps_listing: bool = False
    """True when `list_sessions` looks at each file of a folder through its `mapper`
    argument (a `map`; a process pool's runs those looks in the workers)."""
    single_session: bool = False
    """True when a file of this format holds exactly one session (subagents aside)."""
    windowed: bool = False
    """True when `builder` only ever appends turns (`Session.add`) and never reads them back
    through `session.turns`: a scan may then keep only a window of them."""
    record_feed: Callable[[Path], RecordFeed | None] | None = None
    """For formats whose one-session files can be read record by record though not every
    file of the format is a line session (a JSON document's message array, a JSON-lines
    format whose other files hold many sessions): a fresh builder and the file's records,
    or None when this file is not one such session (read it whole). The builder only
    appends turns, as for `windowed` (a scan keeps a window of them), and gives the session
    `read` would; `index_turns` takes it as it takes a `builder`'s (the app)."""
    scan_feed: Callable[[Path], RecordFeed | None] | None = None
    """For a line format whose builder may change a turn it added long before (an opencode
    run's late event of an old message), so that neither `windowed` nor `record_feed` holds:
    a fresh builder and the file's records for a windowed scan, the builder told beforehand
    which records are the last of their turn, so that its `settled()` gives how many turns
    from the first can no longer change (a scan judges and lets go of only those); None
    when this file is to be read whole. The session is the one `read` gives. For the scan
    only: the app reads the file as before."""
    iter_sessions: Callable[[Path], Iterator[Session]] | None = None
    """For files holding many sessions one after another: each session as soon as it is
    read, the file never held whole (a scan keeps one session at a time); `read` gives the
    same sessions as a list. Raises ReaderError as `read` does."""
    stream: Callable[[Path], Iterator[Session | None]] | None = None
    """For files not read line by line (a JSON document, a markdown history): `read` as a
    generator a scan keeps a window of turns of. It yields each session as soon as it
    exists, before its first turn is added (a scan then swaps its `turns` for a window), and
    None now and then between turns (the turns so far may be judged); a session is done when
    the next one is yielded or the generator ends. Its turns are only appended
    (`Session.add`) and only the latest ones are read back. The sessions are those `read`
    gives, warnings included; raises ReaderError as `read` does."""
    read_indexed: Callable[[Path, Progress | None], list[Session]] | None = None
    """`read` with each session's turns held in a compact `TurnIndex` (rebuilt from their
    records on demand), for the app on a big file; None keeps every turn whole."""
    scan_indexed: bool = False
    """True when a scan reads a one-session file of this format through `read_indexed` (its
    turns as compact columns): a line format whose builder changes turns it added long
    before (a Gemini message written again), so that neither `windowed` nor a `scan_feed`
    applies, and whose small records would cost several times the file as whole turns."""
    index_turns: Callable[[Any], object] | None = None
    """For line-based formats whose turns can be read back from their own records: hold a
    fresh builder's turns in a compact `TurnIndex` (the app on a big file); None keeps every
    turn whole."""
    priority: int = 50
    """Lower sniffs first; specific formats before generic ones."""
    directories: bool = False
    """True when the reader accepts a directory."""


_LINE_END = re.compile(rb"\r\n|\r|\n")
_BLANK = b" \t\n\r\x0b\x0c"
"""The bytes `bytes.strip` removes."""


def iter_lines(
    handle: BinaryIO, start: int = 0, lineno: int = 0, *, final: bool = True,
    views: bool = False, lift: bool = False,
) -> Iterator[tuple[bytes, int, int]]:
    """Yield (record, offset, lineno) for each line from byte `start`, line end removed.

    A line ends with LF, CRLF or a lone CR (old Mac files; JSON escapes CR inside strings,
    so a raw CR is a line end). A byte-order mark at the start of the file is skipped. With
    `final=False` a trailing line without a line end is held back (a writer may be
    mid-record); with `final=True` it is yielded too. `lineno` is the number of lines before
    `start`; yielded line numbers are 1-based. Blank lines are skipped but counted.

    `views=True` yields lines as memoryviews into one reused read buffer, not as copies
    (for a consumer that only decodes each line before asking for the next, as a scan does:
    allocating every chunk, joining it to the last one's tail and splitting it into bytes
    objects cost more than finding the line ends). A view is valid only until the next line
    is asked for. A file with a byte-order mark or a carriage return is read the copying way
    from there on.

    With `lift`, a line still being read past `huge_strings.HUGE_LINE_BYTES` (or read whole
    and longer than `huge_strings.WHOLE_BYTES`) is yielded as its skeleton, its huge strings
    left in the file (`huge_strings.lift_line`).
    """
    if views:
        yield from _iter_views(handle, start, lineno, final, lift)
        return
    handle.seek(start)
    offset = start
    pending = b""
    # Small reads first, doubling up to CHUNK_BYTES: the first lines come out at once (the
    # app shows the first turns while the rest is read) and big files are still read in
    # big chunks.
    size = FIRST_CHUNK_BYTES
    while True:
        if lift and len(pending) > huge_strings.HUGE_LINE_BYTES and \
                (done := _lifted_pending(handle, offset, final)) is not None:
            if not done[0]:
                return  # held back, as an unfinished line is
            lineno += 1
            yield done[0], offset, lineno
            offset, pending = done[1], b""
        chunk = handle.read(size)
        size = min(size * 2, CHUNK_BYTES)
        if not chunk:
            break
        if offset == 0 and not pending:
            if BOM.startswith(chunk):
                pending = chunk  # too short to tell yet
                continue
            if chunk.startswith(BOM):
                chunk, offset = chunk[len(BOM):], len(BOM)
        data = pending + chunk if pending else chunk
        if offset == 0 and data.startswith(BOM):
            data, offset = data[len(BOM):], len(BOM)
        crlf_only = b"\r" in data and data.count(b"\r") == data.count(b"\r\n")
        if crlf_only or b"\r" not in data:
            # LF or CRLF line ends (the common cases), at the speed of `split`.
            lines = data.split(b"\n")
            pending = lines.pop()
            for line in lines:
                lineno += 1
                if lift and len(line) > huge_strings.WHOLE_BYTES:
                    line = _lifted(handle, offset, line)
                if line.strip():
                    yield line[:-1] if crlf_only and line.endswith(b"\r") else line, \
                        offset, lineno
                offset += len(line) + 1
            continue
        done = 0
        for match in _LINE_END.finditer(data):
            if match.end() == len(data) and match.group() == b"\r":
                break  # perhaps the first half of a CRLF still to be read
            lineno += 1
            line = data[done:match.start()]
            if line.strip():
                yield line, offset + done, lineno
            done = match.end()
        offset += done
        pending = data[done:]
    if offset == 0 and pending.startswith(BOM):
        pending, offset = pending[len(BOM):], len(BOM)
    if final and pending.strip(b" \t\r\n\x0b\x0c"):
        yield pending.rstrip(b"\r"), offset, lineno + 1


def _iter_views(handle: BinaryIO, start: int, lineno: int,
                final: bool, lift: bool = False) -> Iterator[tuple[bytes, int, int]]:
    """`iter_lines(views=True)`: LF-ended lines as views into one buffer, read into."""
    handle.seek(start)
    if start == 0 and BOM.startswith(handle.read(len(BOM)) or b"-"):
        yield from iter_lines(handle, 0, lineno, final=final, lift=lift)  # a BOM, or short
        return
    handle.seek(start)
    offset = start
    """File offset of the buffer's first byte."""
    buffer = bytearray(FIRST_CHUNK_BYTES)
    filled = 0
    """Bytes at the buffer's start carried over: the beginning of a line not ended yet."""
    while True:
        if lift and filled > huge_strings.HUGE_LINE_BYTES and \
                (done := _lifted_pending(handle, offset, final)) is not None:
            if not done[0]:
                return  # held back (unfinished)
            yield done[0], offset, lineno + 1
            lineno, offset, filled = lineno + 1, done[1], 0
            buffer = bytearray(FIRST_CHUNK_BYTES)  # the long line's room let go
        if filled == len(buffer) or len(buffer) < CHUNK_BYTES:
            # Bigger reads as the file goes on, and room for a line longer than the buffer
            # (a new buffer: views into the old one may still be held, so it is not resized).
            bigger = bytearray(max(min(len(buffer) * 2, CHUNK_BYTES), 2 * filled))
            bigger[:filled] = buffer[:filled]
            buffer = bigger
        view = memoryview(buffer)
        count = handle.readinto(view[filled:])
        if not count:
            break
        end = filled + count
        find = buffer.find
        if find(b"\r", 0, end) >= 0:
            # Carriage returns: line ends of another kind, read the copying way from here.
            yield from iter_lines(handle, offset, lineno, final=final, lift=lift)
            return
        done = 0
        while (stop := find(b"\n", done, end)) >= 0:
            lineno += 1
            # Not blank: a record starts with `{`; a line starting with white space is
            # looked at whole.
            if stop > done and (buffer[done] not in _BLANK or buffer[done:stop].strip()):
                if lift and stop - done > huge_strings.WHOLE_BYTES:
                    yield _lifted(handle, offset + done, view[done:stop]), offset + done, lineno
                else:
                    yield view[done:stop], offset + done, lineno  # type: ignore[misc]
            done = stop + 1
        # The unfinished line moves to the front (same size: allowed with views held).
        filled = end - done
        buffer[:filled] = buffer[done:end]
        offset += done
    rest = bytes(buffer[:filled])
    if final and rest.strip(b" \t\r\n\x0b\x0c"):
        yield rest, offset, lineno + 1


def _lifted_pending(handle: BinaryIO, offset: int, final: bool) -> tuple[bytes, int] | None:
    """The huge line at `offset`, still being read, as (its skeleton, where the next line
    starts), the file read on from there; (b"", -1) to hold it back (it has no line end yet
    and `final` is False); None when it cannot be lifted (read it as it is)."""
    done = huge_strings.lift_at(handle, offset)
    if done is None:
        return None
    skeleton, end, ended = done
    if not ended and not final:
        return b"", -1
    handle.seek(end + 1)
    return skeleton, end + 1


def _lifted(handle: BinaryIO, offset: int, line: Any) -> Any:
    """A whole huge line at `offset` as its skeleton (`huge_strings.lift_line`), or as it is
    when it cannot be lifted."""
    done = huge_strings.lift_at(handle, offset)
    return done[0] if done is not None and done[2] else line


def lines_for(builder: object, handle: BinaryIO) -> Iterator[tuple[bytes, int, int]]:
    """`iter_lines(handle)` for a builder's `feed` (the app reading a file): views into one
    read buffer when the builder says it keeps nothing of a line it is fed, not even a view
    (`keeps_no_line`), else a copy of each line. The copies of a 4 MiB chunk (its lines as
    bytes objects, the chunk joined to the last one's tail) were 10-14 MB of the app's peak
    on a file of small records."""
    return iter_lines(handle, views=getattr(builder, "keeps_no_line", False),
                      lift=huge_strings.enabled())


def feed_lines(handle: BinaryIO, take: Callable[[bytes, int, int], None],
               tick: Callable[[int, int], None], mask: int = 63) -> bool:
    """Hand every line of `handle` to `take` as `iter_lines(handle, views=True)` yields it,
    and call `tick(lineno, offset)` after each line whose number has no bit of `mask` set:

        for line, offset, lineno in iter_lines(handle, views=True):
            take(line, offset, lineno)
            if not lineno & mask:
                tick(lineno, offset)

    in one loop, without a generator between the read and `take` (a scan's lines are
    hundreds of thousands; the generator's resumption, its tuples and their unpacking were
    a sixth of what the scan added to decoding them). The same lines, offsets and numbers
    (`tests/core/test_feed_lines.py` holds the two against each other); a line is a view
    valid only during its `take`. Returns whether any line was taken.
    """
    handle.seek(0)
    if BOM.startswith(handle.read(len(BOM)) or b"-"):
        return feed_records(iter_lines(handle, 0, 0, lift=huge_strings.enabled()), take,
                            tick, mask)
    handle.seek(0)
    offset = 0
    """File offset of the buffer's first byte."""
    lineno = 0
    taken = False
    buffer = bytearray(FIRST_CHUNK_BYTES)
    filled = 0
    """Bytes at the buffer's start carried over: the beginning of a line not ended yet."""
    while True:
        if filled > huge_strings.HUGE_LINE_BYTES and huge_strings.enabled():
            # A line of megabytes (one huge message): read the rest the lifting way, its
            # huge strings left in the file (`iter_lines(lift=True)`), not held whole.
            return feed_records(iter_lines(handle, offset, lineno, lift=True), take, tick,
                                mask) or taken
        if filled == len(buffer) or len(buffer) < CHUNK_BYTES:
            bigger = bytearray(max(min(len(buffer) * 2, CHUNK_BYTES), 2 * filled))
            bigger[:filled] = buffer[:filled]
            buffer = bigger
        view = memoryview(buffer)
        count = handle.readinto(view[filled:])
        if not count:
            break
        end = filled + count
        find = buffer.find
        if find(b"\r", 0, end) >= 0:
            # Carriage returns: line ends of another kind, read the copying way from here.
            return feed_records(iter_lines(handle, offset, lineno, lift=huge_strings.enabled()),
                                take, tick, mask) or taken
        done = 0
        while (stop := find(b"\n", done, end)) >= 0:
            lineno += 1
            if stop > done and (buffer[done] not in _BLANK or buffer[done:stop].strip()):
                take(view[done:stop], offset + done, lineno)  # type: ignore[arg-type]
                taken = True
                if not lineno & mask:
                    tick(lineno, offset + done)
            done = stop + 1
        filled = end - done
        buffer[:filled] = buffer[done:end]
        offset += done
    rest = bytes(buffer[:filled])
    if rest.strip(b" \t\r\n\x0b\x0c"):
        lineno += 1
        take(rest, offset, lineno)
        if not lineno & mask:
            tick(lineno, offset)
        return True
    return taken


def feed_records(records: Iterable[tuple[bytes, int, int]], take: Callable[[bytes, int, int], None],
               tick: Callable[[int, int], None], mask: int) -> bool:
    """`feed_lines`'s loop over any records: `take` each, `tick` after each whose number has no
    bit of `mask` set. Returns whether any record was taken."""
    taken = False
    for record, offset, number in records:
        taken = True
        take(record, offset, number)
        if not number & mask:
            tick(number, offset)
    return taken


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
        fed = False
        for line, offset, lineno in lines_for(builder, handle):
            fed = True
            builder.feed(line, offset, lineno)
            if getattr(builder, "reads_itself", False):
                break  # the builder reads the file its own way in `finish` (a document)
            if progress is not None and offset >= next_report:
                progress(offset, total)
                next_report = offset + CHUNK_BYTES
    builder.finish()
    if not fed:
        builder.session.warn(EMPTY_FILE, skipped=False)
    if progress is not None:
        progress(total, total)
    return builder.session


def read_spans(path: str, spans: tuple[tuple[int, int], ...]) -> list[bytes]:
    """Read the byte spans of a file back (for full parts of shortened turns)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return [lifted.read_back(path, offset, length) or os.pread(fd, length, offset)
                for offset, length in spans]
    finally:
        os.close(fd)


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """What `sniff` sees of a file (b"" for a directory): see `normal_head`.

    The first `size` bytes after a byte-order mark, and more while the first line is not
    complete (up to FIRST_LINE_BYTES), so a first message over HEAD_BYTES is seen whole.
    """
    if path.is_dir():
        return b""
    with open(path, "rb") as handle:
        head = handle.read(size + len(BOM))
        start = 0
        if head.startswith(BOM):
            head, start = head[len(BOM):], len(BOM)
        else:
            head = head[:size]
        if len(head) >= HEAD_BYTES and len(head) < FIRST_LINE_BYTES and not _has_line(head):
            # A first line longer than the head: where the head must end is found first, a
            # piece at a time (none kept), and the head is read once, to there: growing it
            # by `+=` held the old head and the new one (16 MiB each at the most) at once.
            length = _first_line_length(handle, start + len(head), len(head), _filled(head))
            if length > len(head):
                handle.seek(start)
                head = handle.read(length)
    return normal_head(head)


_LINE_ENDS = re.compile(rb"[\n\r]")
_NOT_BLANK = re.compile(rb"[^ \t\n\r\x0b\x0c]")
"""A byte `bytes.strip` does not strip."""


def _has_line(head: bytes) -> bool:
    """True when a complete line with something in it starts the head."""
    found = _NOT_BLANK.search(head)
    return found is not None and _LINE_ENDS.search(head, found.start()) is not None


def _filled(data: bytes) -> bool:
    """True when something not blank is in `data`."""
    return _NOT_BLANK.search(data) is not None


def _first_line_length(handle: BinaryIO, at: int, length: int, filled: bool) -> int:
    """How long a head of `length` bytes (read up to file offset `at`) grows as `read_head`
    grows it: by reads of HEAD_BYTES, then twice as much each time, until it holds a line
    end after something not blank (`_has_line`), reaches FIRST_LINE_BYTES or the file ends."""
    size = HEAD_BYTES
    while length < FIRST_LINE_BYTES:
        more = os.pread(handle.fileno(), size, at)
        if not more:
            break
        at, length = at + len(more), length + len(more)
        size *= 2
        if not filled:
            found = _NOT_BLANK.search(more)
            if found is None:
                continue
            filled = True
            more = more[found.start():]
        if _LINE_ENDS.search(more) is not None:
            break
    return length


def normal_head(head: bytes) -> bytes:
    """A head with CR and CRLF line ends turned into LF, byte for byte the same length (CRLF
    becomes a space and LF), so sniffers split lines one way and `len(head)` keeps meaning."""
    if b"\r" not in head:
        return head
    return head.replace(b"\r\n", b" \n").replace(b"\r", b"\n")


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
    """A string as it is; anything else as compact JSON, never raising.

    orjson refuses what it cannot write (nesting deeper than 255, integers past 64 bits, a
    lone surrogate); the standard library writes those unless nested past the recursion
    limit, and then the value is named by its type only (a hostile record must not end
    the read).
    """
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError is one
        pass
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return f"<{type(value).__name__} nested too deeply to show>"


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
    format is not line-based or they tell no time): for a session list, before any read.
    Asked of the listing's `known.facts` first, and kept there."""
    if reader.builder is None:
        return None
    from replay.core.readers import known

    kept = known.facts()
    what = f"started/{reader.name}"
    if kept is not None:
        value = kept.recall(path, what)
        if isinstance(value, list) and len(value) == 1 and (
                value[0] is None or isinstance(value[0], float)):
            return value[0]
    started = _glance(reader, path)
    if kept is not None:
        kept.keep(path, what, [started])
    return started


def _glance(reader: Reader, path: Path) -> float | None:
    assert reader.builder is not None
    try:
        head = read_head(path)
        builder = reader.builder(str(path))
        if b"\n" not in head:
            return builder.session.started  # (one piece, maybe cut off: a document on one line)
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


@dataclass(frozen=True, slots=True)
class Document:
    """A whole-file JSON document as read: the value, where it sits, and what was skipped."""

    value: Any
    """The parsed document; None when `truncated`."""
    start: int
    """Byte offset of the document in the file (after a BOM and skipped text lines)."""
    end: int
    """Byte offset just past the document."""
    notes: tuple[str, ...] = ()
    """One warning per run of text skipped before or after the document."""
    truncated: bool = False
    """The file ends before the document closes (cut off while copied or written)."""
    empty: bool = False
    """The file holds nothing but white space."""

    def warn(self, session: Session) -> None:
        """Put the notes (and an empty or truncated document's warning) on a session."""
        for note in self.notes:
            session.warn(note, skipped=False)
        if self.empty:
            session.warn(EMPTY_FILE, skipped=False)
        if self.truncated:
            session.warn(f"{CUT_OFF} at byte {self.end:,} (truncated while copied or "
                         "written?): 0 turns read")


TEXT_AROUND_ENDS = ("before the JSON document", "after the JSON document")
"""How a document's note about the text skipped around it ends (`skipped 1 line of text
('Exporting session: ses_...') before the JSON document`): a note about a file that was
read, never a file of a folder that was not."""


def _text_lines(lines: list[bytes]) -> str:
    """`2 lines of text ('a', 'b')`: what was skipped, as a warning names it."""
    shown = ", ".join(repr(shorten_text(line.decode("utf-8", "replace").strip(), 60))
                      for line in lines if line.strip())
    count = sum(1 for line in lines if line.strip())
    return f"{count} line{'s' if count != 1 else ''} of text ({shown})"


def shorten_text(text: str, limit: int) -> str:
    """Text cut to `limit` characters with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _leading_text(data: bytes) -> int:
    """Where a JSON document starts after at most MAX_TEXT_LINES lines of text, else 0."""
    offset = 0
    skipped = 0
    for line in data.split(b"\n", MAX_TEXT_LINES + 1)[: MAX_TEXT_LINES + 1]:
        if line.lstrip()[:1] in (b"{", b"["):
            return offset if skipped else 0
        if line.strip():
            skipped += 1
        offset += len(line) + 1
    return 0


def _trailing_text(data: bytes, start: int) -> int | None:
    """Where a JSON document from `start` ends when at most MAX_TEXT_LINES lines of text
    follow it (None when no such end parses)."""
    end = len(data)
    for _ in range(MAX_TEXT_LINES):
        cut = data.rfind(b"\n", start, len(data[:end].rstrip()))
        if cut < 0:
            return None
        if data[cut + 1:end].lstrip()[:1] in (b"{", b"["):
            return None  # JSON after the document: JSON lines, not a document with text
        end = cut
        if data[start:end].rstrip()[-1:] not in (b"}", b"]"):
            continue
        try:
            orjson.loads(data[start:end])
        except orjson.JSONDecodeError:
            continue
        return end
    return None


def parse_document(data: bytes) -> Document:
    """A JSON document from a file's bytes, tolerating a BOM and up to MAX_TEXT_LINES lines
    of text before and after it (each skip is a note). A document the file ends inside is
    `truncated`; anything else that is not JSON raises ValueError naming where it breaks."""
    base = len(BOM) if data.startswith(BOM) else 0
    body = normal_head(data[base:]) if b"\r" in data else data[base:]
    try:
        return Document(orjson.loads(body), base, len(data))
    except orjson.JSONDecodeError as error:
        first_error = error
    notes: list[str] = []
    start = _leading_text(body)
    if start:
        skipped = _text_lines(body[:start].split(b"\n"))
        notes.append(f"skipped {skipped} {TEXT_AROUND_ENDS[0]}")
        try:
            return Document(orjson.loads(body[start:]), base + start, len(data), tuple(notes))
        except orjson.JSONDecodeError as error:
            first_error = error
    end = _trailing_text(body, start)
    if end is not None:
        skipped = _text_lines(body[end:].split(b"\n"))
        notes.append(f"skipped {skipped} {TEXT_AROUND_ENDS[1]}")
        return Document(orjson.loads(body[start:end]), base + start, base + end, tuple(notes))
    if _runs_off_the_end(first_error, body, start):
        return Document(None, base + start, len(data), tuple(notes), truncated=True)
    raise ValueError(f"not valid JSON ({first_error})")


def _runs_off_the_end(error: orjson.JSONDecodeError, body: bytes, start: int) -> bool:
    """True when a parse failed because the input ended, not because of a bad byte."""
    if not body[start:].strip():
        return False
    return "unexpected end of data" in str(error)


def load_document(path: Path, expected: str,
                  stream: frozenset[str] | None = None) -> Document:
    """The JSON document of a file (see `parse_document`); a one-line ReaderError naming
    `expected` when it is not one, UnreadablePath when the file cannot be read.

    `stream` names top-level arrays the reader takes as `json_stream.Elements` (parsed one
    element at a time, each with its byte span; a top-level array is streamed too): memory
    then holds one record at a time, not the whole document. A document that is not one
    clean JSON value is read whole, as without `stream`.
    """
    if stream is not None:
        try:
            value, start, end = stream_document(path, stream)
        except NotStreamable:
            pass
        except OSError as error:
            raise UnreadablePath.of(path, error) from None
        else:
            return Document(value, start, end)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UnreadablePath.of(path, error) from None
    if not data.removeprefix(BOM).strip():
        return Document(None, 0, len(data), empty=True)
    try:
        return parse_document(data)
    except ValueError as error:
        raise ReaderError(f"{path}: {error}; expected {expected}") from None


def tolerant_head(head: bytes, whole: bool) -> bytes | None:
    """A head whose text lines around a JSON document are blanked (same length, same line
    numbers), for a second round of sniffing; None when there is nothing to blank.

    A whole file whose document the head cannot parse (truncated) is padded with spaces to
    HEAD_BYTES, so sniffers judge it as the cut head of a larger file.
    """
    start = _leading_text(head)
    body = _blank(head, 0, start)
    if not whole:
        return body if start else None
    end = _trailing_text(head, start)
    if end is not None:
        return _blank(body, end, len(head))
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError as error:
        if _runs_off_the_end(error, body, start) and len(body) < HEAD_BYTES:
            return body.ljust(HEAD_BYTES)
        return body if start else None
    return body if start else None


def _blank(data: bytes, start: int, end: int) -> bytes:
    """`data` with every byte but line ends between `start` and `end` made a space."""
    if start >= end:
        return data
    middle = bytes(b if b == 0x0A else 0x20 for b in data[start:end])
    return data[:start] + middle + data[end:]


def cut_off(session: Session) -> str | None:
    """The warning saying the session's document was cut off, if it was (being written)."""
    return next((text for text in session.warnings if text.startswith(CUT_OFF)), None)
