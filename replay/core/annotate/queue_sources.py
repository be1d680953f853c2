"""The sessions under a review queue's paths, one at a time, each with a way to read it again."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from replay.core.readers import (
    ReaderError,
    SessionEntry,
    detect_reader,
    get_reader,
    load_sessions,
    read_entry,
)
from replay.core.session.model import Session

__all__ = ["SessionRef", "SourceProblem", "iter_refs", "iter_sessions", "read_ref"]

WHOLE_PREFIX = "#"
"""Key prefix of a session known only by its position in a file read whole (chat datasets)."""


@dataclass(frozen=True, slots=True)
class SessionRef:
    """Enough to read one session of a corpus again, later and alone."""

    path: str
    """The session's own file, or the source (database, folder, dataset) that holds it."""
    format: str
    """The reader that reads it."""
    key: str
    """Its key in a listed source, its file name for a file of its own, or `#N` for the
    N-th session of a file that is read whole."""
    own_file: bool = False
    """True when `path` holds this session alone."""

    @property
    def name(self) -> str:
        """A stable string naming the session (its path plus key)."""
        return f"{self.path}::{self.key}"

    def to_json(self) -> dict[str, object]:
        """The reference as JSON."""
        return {"path": self.path, "format": self.format, "key": self.key,
                "own_file": self.own_file}


@dataclass(frozen=True, slots=True)
class SourceProblem:
    """A path or a session that could not be read (the others are still read)."""

    message: str
    """One line: what, where, why."""
    fatal: bool
    """True when a whole path given by the user could not be read."""


def read_ref(ref: SessionRef) -> Session:
    """Read one referenced session.

    Raises:
        ReaderError: it cannot be read any more (gone, changed, unreadable).
    """
    if ref.key.startswith(WHOLE_PREFIX):
        position = int(ref.key[len(WHOLE_PREFIX):])
        sessions = load_sessions(ref.path, ref.format)
        if position < len(sessions):
            return sessions[position]
        raise ReaderError(f"{ref.path}: session {ref.key} is no longer there")
    reader = get_reader(ref.format)
    return read_entry(reader, SessionEntry(key=ref.key, path=Path(ref.path),
                                           own_file=ref.own_file))


def _real(path: Path) -> str:
    return os.path.realpath(path)


def iter_sessions(
    paths: list[Path], format: str | None = None,
    problem: Callable[[SourceProblem], None] | None = None,
) -> Iterator[tuple[SessionRef, Session]]:
    """Every session under the paths, read one at a time and let go by the caller.

    Paths come in the order given; the sessions of one path oldest first (as `scan` lists
    them). A session found twice (a folder and a file inside it) comes once. `format` keeps
    only sessions of that format (and reads a path nothing recognises as that format).

    Args:
        paths: files, directories or databases.
        format: only this format, or None for every one.
        problem: told about each path or session that cannot be read.
    """
    for ref, read in iter_refs(paths, format, problem):
        session = read()
        if session is not None:
            yield ref, session


Read = Callable[[], "Session | None"]
"""Reads a session found by `iter_refs` (None when it cannot be read: told as a problem)."""


def iter_refs(
    paths: list[Path], format: str | None = None,
    problem: Callable[[SourceProblem], None] | None = None,
) -> Iterator[tuple[SessionRef, Read]]:
    """`iter_sessions`, each session with a function that reads it instead of the session: a
    caller that already knows a session (a cache of its queue entries) need not read it. A
    session listed in a source is read only when asked; one of a file read whole was read
    already."""
    seen: set[str] = set()
    for path in paths:
        for ref, read in _sessions_of(path, format, problem):
            if ref.name in seen:
                continue
            seen.add(ref.name)
            yield ref, read


def _ready(session: Session) -> Read:
    return lambda: session


def _sessions_of(
    path: Path, format: str | None, problem: Callable[[SourceProblem], None] | None
) -> Iterator[tuple[SessionRef, Read]]:
    def report(message: str, fatal: bool = False) -> None:
        if problem is not None:
            problem(SourceProblem(message, fatal))

    try:
        try:
            reader = detect_reader(path)
        except ReaderError:
            if format is None or not path.exists():
                raise
            reader = get_reader(format)
        entries = reader.list_sessions(path) \
            if reader.list_sessions is not None and (path.is_dir() or reader.builder is None) \
            else None
    except ReaderError as error:
        report(str(error), fatal=True)
        return
    if entries is None:
        if format is not None and reader.name not in (format, "folder"):
            return
        try:
            sessions = load_sessions(path, reader.name)
        except ReaderError as error:
            report(str(error), fatal=True)
            return
        if len(sessions) == 1 and reader.builder is not None:
            # A line file of one session: read again as its own file (progressively).
            yield SessionRef(_real(path), reader.name, path.name, own_file=True), \
                _ready(sessions[0])
            return
        # A folder read whole holds sessions of several files: each is referred to by its
        # own file and its position there, so it is read again without the others.
        positions: dict[str, int] = {}
        for session in sessions:
            own = _real(Path(session.path)) if session.path else _real(path)
            position = positions.get(own, 0)
            positions[own] = position + 1
            if format is not None and session.format != format:
                continue
            yield SessionRef(own, session.format or reader.name,
                             f"{WHOLE_PREFIX}{position}"), _ready(session)
        return
    ordered = sorted(entries, key=lambda e: (e.started is None, e.started or 0.0, e.key))
    for entry in ordered:
        entry_format = entry.format or reader.name
        if format is not None and entry_format != format:
            continue

        def read(entry: SessionEntry = entry) -> Session | None:
            try:
                return read_entry(reader, entry)
            except ReaderError as error:
                report(str(error))
                return None

        yield SessionRef(_real(entry.path), entry_format, entry.key, entry.own_file), read
