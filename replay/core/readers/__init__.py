"""Every transcript reader, found by module, and the one entry point that picks among them.

Each module in this package that defines `READER` (a `Reader`) is a format. Formats are tried
in `priority` order against the content of the path, never by file name alone. Also here:
`raw` (the source record behind a turn, read back from disk) and `spool` (input that can be
read only once, copied to a file first).
May import: `session`, `detection`, `index` and the core utilities.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pkgutil
import stat
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from replay.core.files import kind_of, why_missing
from replay.core.readers import known, top_members
from replay.core.readers.base import (
    FIRST_LINE_BYTES,
    Progress,
    Reader,
    ReaderError,
    SessionEntry,
    UnknownFormat,
    UnreadablePath,
    read_head,
    read_line_session,
    tolerant_head,
)
from replay.core.readers.file_window import FileChanged
from replay.core.session.model import Session

__all__ = [
    "Reader",
    "ReaderError",
    "SessionEntry",
    "UnknownFormat",
    "UnreadablePath",
    "all_readers",
    "read_entry",
    "detect_reader",
    "each_session",
    "get_reader",
    "load_sessions",
]


SNIFF_ORDER: tuple[str, ...] = (
    "opencode_sqlite", "claude_code", "opencode_export", "opencode_storage", "codex",
    "gemini", "opencode_run", "specstory", "aider", "mini_swe_agent", "swe_agent", "sharegpt",
    "chat_json", "chat_jsonl", "folder",
)
"""Reader modules in `priority` order, so detection imports only the modules it tries.

Opening one file must not pay for importing every reader (it is startup time the reviewer
waits through); a test checks this order against the discovered priorities.
"""


@cache
def _reader_of(module_name: str) -> Reader | None:
    """The module's reader (imported once: detection runs per file of a folder)."""
    module = importlib.import_module(f"{__name__}.{module_name}")
    reader = getattr(module, "READER", None)
    if not isinstance(reader, Reader):
        return None
    _IMPORTED[reader.name] = reader
    return reader


_IMPORTED: dict[str, Reader] = {}
"""Readers imported so far, by name: `get_reader` of one of them imports no other module."""


HEAD_MAGIC: dict[str, bytes] = {"opencode_sqlite": b"SQLite format 3\x00"}
"""Reader modules that take a file only when it starts with these bytes (their `sniff` says
no to any other file): sniffing another file skips them unimported (the SQLite reader brings
sqlite3, a few ms of opening a JSONL file). Directories are still asked."""


def _ordered_readers(head: bytes | None = None) -> Iterator[Reader]:
    """Readers in sniffing order, each module imported only when reached; given a file's
    `head`, those whose `HEAD_MAGIC` it lacks are passed over."""
    for module_name in SNIFF_ORDER:
        magic = HEAD_MAGIC.get(module_name)
        if magic is not None and head is not None and not head.startswith(magic):
            continue
        reader = _reader_of(module_name)
        if reader is not None:
            yield reader


@cache
def all_readers() -> tuple[Reader, ...]:
    """Every reader in this package (found by listing it), in sniffing order."""
    found: list[Reader] = []
    for module_info in pkgutil.iter_modules(__path__):
        if module_info.name.startswith("_") or module_info.name == "base":
            continue
        reader = _reader_of(module_info.name)
        if reader is not None:
            found.append(reader)
    return tuple(sorted(found, key=lambda reader: (reader.priority, reader.name)))


def format_names() -> list[str]:
    """Names accepted by `--format`."""
    return [reader.name for reader in all_readers()]


def get_reader(name: str) -> Reader:
    """The reader called `name`; UnknownFormat names the valid ones otherwise."""
    if name in _IMPORTED:
        return _IMPORTED[name]
    for reader in _ordered_readers():
        if reader.name == name:
            return reader
    raise UnknownFormat(f"unknown format {name!r}; known formats: {', '.join(format_names())}")


def _check_path(path: Path) -> None:
    missing = why_missing(path)
    if missing:
        raise UnreadablePath(f"{path}: {missing}")
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        return
    if not stat.S_ISREG(mode):
        # A FIFO in a folder would block the first read, a device never end; a pipe named on
        # the command line was copied to a file before it got here (`spooled`).
        raise UnreadablePath(f"{path}: a {kind_of(mode)}, not a transcript file")
    try:
        with open(path, "rb"):
            pass
    except OSError as error:
        raise UnreadablePath.of(path, error) from None


def detect_reader(path: Path, *, empty_by_name: bool = True) -> Reader:
    """The first reader whose `sniff` accepts the content at `path`; an empty file goes by its
    name unless `empty_by_name` is False (then it is not recognised).

    A file's verdict is asked of the listing's `known.facts` first and kept there after (a
    caller that keeps them between runs tells an unchanged file's format without reading
    it); a directory's is always judged afresh (what it holds may have changed)."""
    _check_path(path)
    kept = known.facts()
    if kept is None or path.is_dir():
        return _detect(path, empty_by_name)
    what = f"format/{int(empty_by_name)}"
    verdict = kept.recall(path, what)
    name = str(path)
    if isinstance(verdict, str):
        with contextlib.suppress(UnknownFormat):  # (a reader since removed: judged again)
            return get_reader(verdict)
    elif isinstance(verdict, list) and len(verdict) == 1 and isinstance(verdict[0], str):
        raise UnknownFormat(name + verdict[0])  # (kept without the path, named as given)
    try:
        reader = _detect(path, empty_by_name)
    except UnknownFormat as error:
        if str(error).startswith(name):
            kept.keep(path, what, [str(error)[len(name):]])
        raise
    kept.keep(path, what, reader.name)
    return reader


def _detect(path: Path, empty_by_name: bool) -> Reader:
    try:
        head = read_head(path)
    except OSError as error:
        raise UnreadablePath.of(path, error) from None
    is_dir = path.is_dir()
    try:
        found = _sniff_all(path, head, is_dir)
        if found is None and not is_dir:
            found = _sniff_tolerant(path, head, empty_by_name)
    finally:
        # The head is judged: nothing keeps it (a one-line document's is 16 MiB, and the
        # file is read next).
        top_members.forget()
    if found is not None:
        return found
    tried = ", ".join(r.name for r in all_readers()
                      if (r.directories if is_dir else r.name != "folder"))
    what = "directory" if is_dir else "file"
    raise UnknownFormat(f"{path}: {what} not recognised as a transcript (formats tried: {tried})")


def _sniff_all(path: Path, head: bytes, is_dir: bool) -> Reader | None:
    for reader in _ordered_readers(None if is_dir else head):
        if is_dir and not reader.directories:
            continue
        try:
            if reader.sniff(path, head):
                return reader
        except Exception:  # noqa: BLE001 - a sniffer is a guess; one that trips is a "no"
            continue
    return None


def _sniff_tolerant(path: Path, head: bytes, empty_by_name: bool = True) -> Reader | None:
    """Second round, for what no reader took as it is: a JSON document with lines of text
    around it (a captured status line, a shell prompt) or cut off before its end, and an
    empty file (by its name: nothing else tells)."""
    if not head.strip():
        return _empty_file_reader(path) if empty_by_name else None
    try:
        whole = len(head) >= os.path.getsize(path)
    except OSError:
        return None
    tolerant = tolerant_head(head, whole)
    found = None if tolerant is None else _sniff_all(path, tolerant, False)
    if found is None and not whole and head.lstrip()[:1] in (b"{", b"["):
        # A JSON document whose first message is larger than the head: judge a longer one.
        try:
            longer = read_head(path, FIRST_LINE_BYTES)
        except OSError:
            return None
        found = _sniff_all(path, longer, False)
    return found


EMPTY_BY_SUFFIX: dict[str, str] = {".json": "chat-json", ".md": "aider"}
"""The reader of an empty file by its name's suffix (`.jsonl` files are claimed by the
Claude Code reader, which leaves empty session files; anything else reads as chat lines)."""


def _empty_file_reader(path: Path) -> Reader | None:
    if path.suffix.lower() == ".md" and ".specstory" in path.parts:
        return get_reader("specstory")  # SpecStory creates a history before its first message
    return get_reader(EMPTY_BY_SUFFIX.get(path.suffix.lower(), "chat-jsonl"))


def load_sessions(
    path: Path | str, format: str | None = None, progress: Progress | None = None,
    *, indexed: bool = False,
) -> list[Session]:
    """Read every session at `path`, detecting the format unless `format` names one.

    `indexed`: a format with `Reader.read_indexed` holds each session's turns in a compact
    index (the app on a big file); the turns read are the same.

    Raises:
        UnreadablePath: the path cannot be read.
        UnknownFormat: no reader recognises the content (or `format` is not a known name).
    """
    path = Path(path)
    _check_path(path)
    reader = get_reader(format) if format else detect_reader(path)
    read = reader.read_indexed if indexed and reader.read_indexed is not None else reader.read
    try:
        if indexed and reader.read_indexed is None:
            fed = read_fed(reader, path, progress)
            if fed is not None:
                return fed
        return read(path, progress)
    except ReaderError:
        raise
    except FileChanged as error:
        raise UnreadablePath.of(path, error) from None
    except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError,
            RecursionError) as error:
        raise ReaderError(f"{path}: could not be read as {reader.title}: {error}") from None


def read_fed(reader: Reader, path: Path, progress: Progress | None = None) -> list[Session] | None:
    """The one session of a file of a format with a record feed and a turn index
    (`Reader.record_feed`, `Reader.index_turns`: a JSON document of one conversation), its
    turns held in the index as they are fed (the app on a big file); None when the format
    has neither or the file is not one such session (read it whole)."""
    if reader.record_feed is None or reader.index_turns is None or not path.is_file():
        return None
    feed = reader.record_feed(path)
    if feed is None:
        return None
    builder = feed.builder
    reader.index_turns(builder)
    fed = False
    for record, offset, number in feed.records:
        fed = True
        builder.feed(record, offset, number)
        if progress is not None and not number & 1023:
            progress(offset, feed.total)
    builder.finish()
    session = builder.session
    if not fed and feed.empty is not None:
        session.warn(feed.empty, skipped=False)
    if progress is not None:
        progress(feed.total, feed.total)
    return [session]


def each_session(path: Path | str, format: str | None = None) -> Iterator[Session]:
    """The sessions at `path` one at a time: as `load_sessions` reads them, but a reader that
    reads a file session by session (`Reader.iter_sessions`) never holds them all."""
    path = Path(path)
    _check_path(path)
    reader = get_reader(format) if format else detect_reader(path)
    if reader.iter_sessions is None or path.is_dir():
        yield from load_sessions(path, reader.name)
        return
    try:
        yield from reader.iter_sessions(path)
    except ReaderError:
        raise
    except FileChanged as error:
        raise UnreadablePath.of(path, error) from None
    except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError,
            RecursionError) as error:
        raise ReaderError(f"{path}: could not be read as {reader.title}: {error}") from None


def read_entry(reader: Reader, entry: SessionEntry, *, indexed: bool = False) -> Session:
    """Read one listed session; ReaderError when it cannot be read or is gone (or its file
    changed while it was read).

    `indexed`: a session file of a format with a turn index is read into one (the turns as
    compact columns, see `Reader.index_turns`), for a caller that only counts.
    """
    try:
        return _read_entry(reader, entry, indexed)
    except FileChanged as error:
        raise UnreadablePath.of(entry.path, error) from None


def _read_entry(reader: Reader, entry: SessionEntry, indexed: bool) -> Session:
    if entry.problem is not None:
        raise UnreadablePath(entry.problem)
    if entry.format is not None:
        reader = get_reader(entry.format)
    if entry.own_file and indexed and reader.index_turns is not None \
            and reader.builder is not None and entry.path.is_file():
        builder = reader.builder(str(entry.path))
        reader.index_turns(builder)
        read_line_session(entry.path, builder)
        if reader.complete is not None:
            return reader.complete(entry.path, builder)
        return builder.session
    if entry.own_file and indexed and reader.read_indexed is None:
        fed = read_fed(reader, entry.path)
        if fed is not None:
            return fed[0]
    if entry.own_file:
        read = reader.read_indexed if indexed and reader.read_indexed is not None \
            else reader.read
        sessions = read(entry.path, None)
        if sessions:
            return sessions[0]
    elif reader.read_session is not None:
        session = reader.read_session(entry.path, entry.key)
        if session is not None:
            return session
    raise ReaderError(f"{entry.path}: session {entry.key} is no longer there")
