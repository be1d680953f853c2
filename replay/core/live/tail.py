"""Reading only what a growing file gained since last time, through partial lines,
truncation and replacement."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from replay.core.readers.base import CHUNK_BYTES

CHECK_BYTES = 64
"""How many already-read bytes are compared on each change to notice a rewrite in place."""


@dataclass(slots=True)
class TailRead:
    """What one `FileTail.read_new` call found."""

    lines: list[tuple[bytes, int, int]] = field(default_factory=list)
    """Complete new records as (record without newline, byte offset, 1-based line number)."""
    reset: bool = False
    """The file was truncated, rewritten or replaced: `lines` start again from byte 0."""
    more: bool = False
    """`max_bytes` stopped the read early; call again for the rest."""


class FileTail:
    """Follows one file by byte offset, yielding each complete line exactly once.

    A trailing line without its newline is held back until the newline arrives (the writer
    may be mid-record). The file may disappear for a while (delete, then recreate): that
    reads as nothing new, and the new file is read from its start.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        """The file followed, opened by path on every change so replacement is seen."""
        self.offset = 0
        """Bytes consumed: everything before this offset was returned as complete lines."""
        self.lineno = 0
        """Lines (blank ones included) before `offset`."""
        self.resets = 0
        """How many times the file was found truncated, rewritten or replaced."""
        self._fd: int | None = None
        self._identity: tuple[int, int] | None = None
        self._last_stat: tuple[int, int] | None = None
        self._pending = b""
        self._check = b""
        self._flushed = False

    @property
    def position(self) -> int:
        """Bytes read so far, including a held-back partial line."""
        return self.offset + len(self._pending)

    @property
    def pending(self) -> bytes:
        """The partial trailing line held back until its newline arrives."""
        return self._pending

    def close(self) -> None:
        """Release the file descriptor; the next read reopens by path."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _restart(self, *, same_file: bool = False) -> None:
        """Forget what was read; unless it is the same file, forget the file too."""
        if not same_file:
            self.close()
            self._identity = None
        self._last_stat = None
        self.offset = 0
        self.lineno = 0
        self._pending = b""
        self._check = b""
        self._flushed = False
        self.resets += 1

    def _open(self) -> os.stat_result | None:
        """Open the file by path when needed; None when it is missing."""
        try:
            status = os.stat(self.path)
        except FileNotFoundError:
            return None
        identity = (status.st_dev, status.st_ino)
        replaced = self._identity is not None and identity != self._identity
        if replaced:
            self._restart()
        if self._fd is None:
            # Non-blocking: a path swapped for a FIFO must not hang the follower (a regular
            # file ignores the flag).
            try:
                self._fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
            except FileNotFoundError:
                return None
            # Stat the descriptor itself: the path may have been swapped between the calls.
            status = os.fstat(self._fd)
            identity = (status.st_dev, status.st_ino)
            if self._identity is not None and identity != self._identity:
                self._restart()
                self._fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
                status = os.fstat(self._fd)
                identity = (status.st_dev, status.st_ino)
            self._identity = identity
        return status

    def _rewritten(self, size: int) -> bool:
        """True when the bytes already read are no longer what the file holds."""
        if size < self.position:
            return True
        if not self._check or self._fd is None:
            return False
        start = self.position - len(self._check)
        return os.pread(self._fd, len(self._check), start) != self._check

    def read_new(self, max_bytes: int | None = None) -> TailRead:
        """Read the complete lines added since the last call.

        Args:
            max_bytes: read at most about this many new bytes (callers batch huge files).

        Returns:
            The new lines, and whether the file was reset before reading them.
        """
        resets_before = self.resets
        status = self._open()
        if status is None or self._fd is None:
            return TailRead(reset=self.resets != resets_before)
        size = status.st_size
        stamp = (size, status.st_mtime_ns)
        if stamp == self._last_stat:
            return TailRead(reset=self.resets != resets_before)
        if self._rewritten(size):
            self._restart(same_file=True)
        if self._flushed and self.position < size:
            self._flushed = False
            if os.pread(self._fd, 1, self.position) == b"\n":
                self.offset += 1  # the newline of the line `flush_pending` already returned
                self._check = (self._check + b"\n")[-CHECK_BYTES:]
            else:
                # The flushed line was not finished after all: read everything again.
                self._restart(same_file=True)
        result = TailRead(reset=self.resets != resets_before)
        end = size if max_bytes is None else min(size, self.position + max(max_bytes, 1))
        while self.position < end:
            chunk = os.pread(self._fd, min(CHUNK_BYTES, end - self.position), self.position)
            if not chunk:
                break
            self._take(chunk, result.lines)
        result.more = self.position < size
        # Only remember the stamp once everything up to it was read.
        self._last_stat = None if result.more else (size, status.st_mtime_ns)
        return result

    def flush_pending(self) -> list[tuple[bytes, int, int]]:
        """Treat a held-back trailing line as complete (the writer stopped without a newline).

        Some files end without a final newline; a caller that knows the writer is done can
        take that last record. Should the line grow after all, the next read starts over
        with `reset=True`.
        """
        pending = self._pending
        if not pending:
            return []
        self.offset += len(pending)
        self.lineno += 1
        self._pending = b""
        self._flushed = True
        if not pending.strip():
            return []
        return [(pending.rstrip(b"\r"), self.offset - len(pending), self.lineno)]

    def _take(self, chunk: bytes, out: list[tuple[bytes, int, int]]) -> None:
        """Split new bytes into complete lines, keeping a partial last line pending."""
        data = self._pending + chunk if self._pending else chunk
        self._check = (self._check + chunk)[-CHECK_BYTES:]
        last_newline = data.rfind(b"\n")
        if last_newline < 0:
            self._pending = data
            return
        self._pending = data[last_newline + 1 :]
        offset = self.offset
        lineno = self.lineno
        # Same conventions as `iter_lines`: blank lines are counted but not returned.
        for line in data[:last_newline].split(b"\n"):
            lineno += 1
            if line.strip():
                out.append((line.rstrip(b"\r"), offset, lineno))
            offset += len(line) + 1
        self.offset = offset
        self.lineno = lineno
