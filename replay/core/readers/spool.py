"""Input that can be read only once (a pipe, `<(zcat session.jsonl.gz)`, `-` for standard
input) is copied to a file first: detection reads its head, the reader reads it again, and
the raw view reads records back by offset."""

from __future__ import annotations

import atexit
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO

from replay.core.readers.base import UnreadablePath

STDIN = "-"
"""The path that means standard input, for the headless commands."""

CHUNK = 1 << 20


def is_pipe(path: str | Path) -> bool:
    """True for `-` and for a pipe or FIFO (what process substitution gives)."""
    if str(path) == STDIN:
        return True
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def spooled(path: str | Path) -> Path:
    """The path itself, or for a pipe a file holding everything read from it.

    The file is named after a hash of the content, so the same transcript piped in again
    lands at the same path (annotations of a session without an id are keyed by its path);
    the run that wrote it removes it when it exits.
    """
    if not is_pipe(path):
        return Path(path)
    from replay.core.paths import spool_dir  # here: platformdirs, only for a pipe

    directory = spool_dir()
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if str(path) == STDIN:
            return _copy(sys.stdin.buffer, directory)
        with open(path, "rb") as source:
            return _copy(source, directory)
    except OSError as error:
        raise UnreadablePath.of(path, error) from None


def _copy(source: BinaryIO, directory: Path) -> Path:
    import hashlib  # here: OpenSSL's library costs every start of replay a few ms

    digest = hashlib.sha256()
    handle, partial = tempfile.mkstemp(dir=directory, suffix=".partial")
    with os.fdopen(handle, "wb") as target:
        while chunk := source.read(CHUNK):
            digest.update(chunk)
            target.write(chunk)
    final = directory / f"pipe-{digest.hexdigest()[:20]}"
    if final.exists():
        # Another run holds the same content: share its file and leave it to that run.
        os.unlink(partial)
        return final
    os.replace(partial, final)
    atexit.register(_remove, final)
    return final


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def named(message: str, spool: Path, original: str | Path) -> str:
    """An error message about the spooled file, naming what the user gave instead."""
    return message.replace(str(spool), "standard input" if str(original) == STDIN
                           else str(original))


def follow_refusal(path: str | Path) -> str | None:
    """The one-line refusal for following a pipe, or None when the path is not one."""
    if not is_pipe(path):
        return None
    return (f"{'standard input' if str(path) == STDIN else path}: a pipe cannot be followed "
            "(it is no file that grows); follow the session file itself")
