"""Files a user names (journal, label set, config, `-o`): checked before they are read, read
with a size cap, and written as a normal program writes them.

A FIFO or a device given as a journal, a label set or a config file would block or never end
on the first read; such files are refused with one line before anything is read. An output
that is a FIFO, a device or a symbolic link is written through, not replaced.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
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
    descriptor = descriptor_of(path)
    if descriptor is not None:
        with _descriptor_stream(descriptor, encoding) as stream:
            yield stream
        return
    target = Path(os.path.realpath(path))
    try:
        mode: int | None = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISREG(mode) and not _writable(target, mode):
        # Replacing it would succeed (the folder is writable) and silently undo the
        # owner's `chmod 444`: refuse as any program writing into it would.
        raise PermissionError(errno.EACCES, "permission denied (the file is read-only)",
                              str(path))
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


_DESCRIPTOR = re.compile(r"/(?:dev/fd|proc/self/fd|proc/thread-self/fd)/(\d+)")
_STANDARD = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def descriptor_of(path: str | Path) -> int | None:
    """The open file descriptor a path names (`/dev/stdout`, `/dev/fd/3`,
    `/proc/self/fd/3`), else None. Opening such a path anew would replace or truncate what
    the shell set up (`>> f.csv` appends); writing through the descriptor does as it says."""
    text = os.path.normpath(os.fspath(path))
    if text in _STANDARD:
        return _STANDARD[text]
    match = _DESCRIPTOR.fullmatch(text)
    return int(match.group(1)) if match else None


@contextlib.contextmanager
def _descriptor_stream(descriptor: int, encoding: str) -> Iterator[IO[str]]:
    """A text stream on a copy of an open descriptor (closed after; the original stays).

    A byte-order mark (`utf-8-sig`) is written only at the start of a regular file: not into
    a pipe or a terminal, nor in the middle of a file appended to."""
    copy = os.dup(descriptor)
    try:
        if encoding == "utf-8-sig" and not _at_file_start(copy):
            encoding = "utf-8"
        stream = open(copy, "w", encoding=encoding, newline="", closefd=True)
    except BaseException:
        os.close(copy)
        raise
    with stream:
        yield stream


def _at_file_start(descriptor: int) -> bool:
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            return False
        if fcntl.fcntl(descriptor, fcntl.F_GETFL) & os.O_APPEND:  # `>>`: writes go at the end
            return status.st_size == 0
        return os.lseek(descriptor, 0, os.SEEK_CUR) == 0
    except OSError:
        return False


def _writable(target: Path, mode: int) -> bool:
    """The file may be written by this user, judged by its permission bits too (root may
    write anything, but a file nobody may write is one not to replace)."""
    return bool(mode & 0o222) and os.access(target, os.W_OK)
