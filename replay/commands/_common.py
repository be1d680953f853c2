"""Pieces the headless commands share: loading with clean errors, and stderr lines."""

from __future__ import annotations

import sys
from pathlib import Path

from replay.core.model import Session
from replay.core.readers import ReaderError, load_sessions
from replay.core.readers.base import Progress
from replay.core.spool import named, spooled

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2


def say_error(message: str) -> None:
    """Print one clear line on stderr."""
    print(f"replay: {message}", file=sys.stderr, flush=True)


def load_or_none(
    path: str | Path, format: str | None = None, progress: Progress | None = None
) -> list[Session] | None:
    """Load sessions, or print the reader's one-line error and return None.

    A pipe (`<(zcat x.gz)`, or `-` for standard input) is copied to a file first.
    """
    try:
        source = spooled(path)
    except ReaderError as error:
        say_error(str(error))
        return None
    try:
        return load_sessions(source, format, progress)
    except ReaderError as error:
        say_error(named(str(error), source, path))
        return None



def stderr_progress(label: str) -> Progress | None:
    """A progress callback that redraws one stderr line, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None

    def report(done: int, total: int) -> None:
        percent = 100 * done // total if total else 100
        sys.stderr.write(f"\r{label[-60:]}: {percent:3d}%")
        if done >= total:
            sys.stderr.write("\r" + " " * (len(label[-60:]) + 6) + "\r")
        sys.stderr.flush()

    return report
