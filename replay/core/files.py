"""Files a user names (journal, label set, config, `-o`): checked before they are read, read
with a size cap, and written as a normal program writes them.

A FIFO or a device given as a journal, a label set or a config file would block or never end
on the first read; such files are refused with one line before anything is read. An output
that is a FIFO, a device or a symbolic link is written through, not replaced.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from replay.core.safe import show_path

CONFIG_LIMIT = 4 * 1024 * 1024
"""Largest config or label-set file read (bytes): far above any real one, far below a hang."""


class FileRefused(OSError):
    """A named file that is not what it must be (a FIFO as a journal, too large a config)."""


def kind_of(mode: int) -> str:
    """What a file is, in words, from its `st_mode`."""
    if stat.S_ISREG(mode):
        return "regular file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


def why_missing(path: str | Path) -> str | None:
    """Why `path` cannot be found, in words (a symlink loop is not "no such file"); None when it
    exists."""
    try:
        os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "symbolic link loop"
        if error.errno == errno.ENOENT and os.path.lexists(path):
            return f"broken symbolic link (to {show_path(os.readlink(path))})"
        if error.errno == errno.ENOENT:
            return "no such file or directory"
        return error.strerror or str(error)
    except ValueError:
        return "not a valid path (it holds a NUL byte)"
    return None


def regular_file_refusal(path: str | Path, what: str) -> str | None:
    """One line refusing `path` as `what` when it exists and is not a regular file (after
    following symbolic links), or None. Nothing is opened: a FIFO is never waited on."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        if error.errno == errno.ELOOP or (error.errno == errno.ENOENT and os.path.lexists(path)):
            return f"{show_path(path)}: cannot use as {what}: {why_missing(path)}"
        # Not there yet, or a parent is not a folder: whoever writes it says what is wrong.
        return None
    if stat.S_ISREG(mode):
        return None
    return f"{show_path(path)}: cannot use a {kind_of(mode)} as {what}; expected a regular file"


def read_capped(path: str | Path, what: str, limit: int = CONFIG_LIMIT) -> bytes:
    """The bytes of a small regular file, refusing anything else before reading.

    Opened without blocking (a FIFO swapped in after a check does not hang), checked on the
    open descriptor, and read to at most `limit` bytes.

    Raises:
        FileNotFoundError: there is no such file.
        FileRefused: not a regular file, or larger than `limit`; the message is one line.
        OSError: the system refused to open or read it.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    descriptor = os.open(path, flags)
    with os.fdopen(descriptor, "rb") as stream:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise FileRefused(f"{show_path(path)}: cannot use a {kind_of(mode)} as {what}; "
                              "expected a regular file")
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(f"{show_path(path)}: {what} larger than {limit // (1024 * 1024)} MB; "
                          "is it the right file?")
    return data


@contextlib.contextmanager
def output_stream(path: str | Path, encoding: str) -> Iterator[IO[str]]:
    """A text stream writing to `path` as a normal program does.

    A regular file (or a new one) is written beside its destination and renamed over it only
    once complete, so a failure never leaves half a file in place of a good one; through a
    symbolic link it is the link's target that is replaced, and the link stays. A FIFO, a
    device or another special file is opened and written directly, never replaced.

    Raises:
        OSError: the file cannot be written.
    """
    target = Path(os.path.realpath(path))
    try:
        mode: int | None = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        with open(target, "w", encoding=encoding, newline="") as stream:
            yield stream
        return
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with open(fd, "w", encoding=encoding, newline="") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, stat.S_IMODE(mode) if mode is not None else 0o644)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
