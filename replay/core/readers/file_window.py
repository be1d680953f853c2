"""A file read a window at a time (`os.pread`), never mapped: a file that shrinks while it
is read is one clear error, not the end of the process.

A mapped file that another process truncates kills the reader with SIGBUS as soon as it
touches a page past the new end ("Bus error", exit 135, no message: Python cannot catch
it). Reading with `pread` into a buffer of bounded size finds the same thing as a short
read, which `WindowFile` raises as `FileChanged`, naming the size it expected and the size
it found. The buffer is the only memory it takes (no page of the file counts in the
process's resident memory, as a mapping's pages do while they stay mapped).

The file's size when it was opened is what is read: bytes an agent appends while it is read
are left for the next read, as with a mapping. A file replaced by rename while it is open is
still read from the file that was opened; `WindowFile.same_file` tells a later reader that
opens the path again whether it is still that file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

WINDOW_BYTES = 1 << 18
"""Bytes read at a time (256 KiB): large enough that a read costs nothing beside what is
done with it, small enough to hold beside anything."""


class FileChanged(OSError):
    """A file that shrank, or was replaced, while it was read: the bytes it was being read
    for are no longer there. `str()` is one line without the path (the caller names it)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"file changed while it was read: {message}")

    @classmethod
    def shrank(cls, expected: int, found: int) -> FileChanged:
        """The file is shorter than when it was opened."""
        return cls(f"{expected:,} bytes expected, {found:,} found")


class WindowFile:
    """An open file read by byte ranges (`read`) or by windows (`windows`), at most its size
    when it was opened.

    Usable as a context manager; the descriptor is also closed when the object is let go.

    Raises (from the constructor): OSError when the file cannot be opened.
    """

    __slots__ = ("_fd", "identity", "path", "size")

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._fd: int | None = None
        fd = os.open(self.path, os.O_RDONLY)
        self._fd = fd
        try:
            status = os.fstat(fd)
        except OSError:
            self.close()
            raise
        self.size = status.st_size
        """The file's size when it was opened: what is read of it."""
        self.identity = (status.st_dev, status.st_ino)
        """The file itself (device, inode), to tell it from one put in its place."""

    def read(self, offset: int, length: int) -> bytes:
        """Bytes [offset, offset + length) of the file, clipped to its size when opened.

        Raises:
            FileChanged: the file no longer holds them (it was cut shorter).
            OSError: it cannot be read.
        """
        length = max(0, min(length, self.size - offset))
        data = os.pread(self._descriptor(), length, offset)
        if len(data) != length:
            raise FileChanged.shrank(self.size, self.current_size())
        return data

    def windows(self, start: int = 0, end: int | None = None,
                size: int = WINDOW_BYTES) -> Iterator[tuple[int, bytes]]:
        """(offset, bytes) of consecutive windows of at most `size` bytes from `start` to
        `end` (the size when opened, by default). Raises as `read`."""
        stop = self.size if end is None else min(end, self.size)
        offset = start
        while offset < stop:
            data = self.read(offset, min(size, stop - offset))
            yield offset, data
            offset += len(data)

    def current_size(self) -> int:
        """The file's size now (not when it was opened)."""
        return os.fstat(self._descriptor()).st_size

    def same_file(self, path: str | Path | None = None) -> bool:
        """True when `path` (this file's own, by default) is still the file that was opened
        (not replaced by another) and is no shorter than when it was opened."""
        try:
            status = os.stat(self.path if path is None else path)
        except OSError:
            return False
        return ((status.st_dev, status.st_ino) == self.identity
                and status.st_size >= self.size)

    def _descriptor(self) -> int:
        fd = self._fd
        if fd is None:
            raise ValueError(f"{self.path}: read after it was closed")
        return fd

    def close(self) -> None:
        """Close the file (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> WindowFile:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
