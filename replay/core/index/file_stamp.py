"""Whether a file is still the one its turns were read from: identity, size, times, samples.

An index reads a turn back by its byte offsets long after the file was read. A file cut
shorter is seen by the short read; a file rewritten in place with records of the same shape
at the same offsets is not: the bytes read back are valid, and they are other text. The
stamp taken when the file was read (device, inode, size, modification and change times in
nanoseconds) tells it at the cost of one `fstat` per read-back.

A file that grew is usually appended to (an agent writing on, a followed file): what was read
is still there. It may also have been rewritten and grown in the same write (an editor saving
a longer file, a tool writing the session out again). So the stamp also keeps a digest of a
few blocks of the bytes it covers (the first, the last, and evenly spaced ones between:
`SAMPLE_BLOCKS` of `SAMPLE_BYTES`, the whole file when it is smaller; its last `END_SLACK`
bytes left out), and when the file has
grown, and was written since the last look, reads those blocks again: appended-to files keep
them, a rewrite that changes or shifts any of them is told. A rewrite that leaves every
sampled block as it was (one record changed between two samples) is not seen.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from dataclasses import dataclass

SAMPLE_BYTES = 4096
"""Bytes of each sampled block."""

SAMPLE_BLOCKS = 9
"""Blocks sampled: the first, the last (the end of the last record read), and seven between."""

END_SLACK = 64
"""Bytes at the very end left out of the samples: a whole-document format (a JSON object
holding a list of messages) that is written out again with one more message keeps every
byte before it but its closing brackets, which are not part of any record read."""


def sample_spans(size: int) -> list[tuple[int, int]]:
    """(offset, length) of the blocks a stamp of a file of `size` bytes samples, in order."""
    size = max(size - END_SLACK, 0)
    if size <= SAMPLE_BYTES * SAMPLE_BLOCKS:
        return [(0, size)] if size else []
    last = size - SAMPLE_BYTES
    step = last / (SAMPLE_BLOCKS - 1)
    return [(round(n * step), SAMPLE_BYTES) for n in range(SAMPLE_BLOCKS)]


def sample_digest(fd: int, size: int) -> bytes | None:
    """The digest of the sampled blocks of the file open as `fd`, read as if it were `size`
    bytes long; None when they cannot all be read (the file is shorter, or unreadable)."""
    digest = hashlib.blake2b(digest_size=16)
    try:
        for offset, length in sample_spans(size):
            block = os.pread(fd, length, offset)
            if len(block) != length:
                return None
            digest.update(block)
    except OSError:
        return None
    return digest.digest()


@dataclass(slots=True)
class FileStamp:
    """A file as it was when it was read."""

    identity: tuple[int, int]
    """(device, inode)."""
    size: int
    modified: int
    """`st_mtime_ns`."""
    changed: int
    """`st_ctime_ns` (set by any write, and not settable by `touch`)."""
    samples: bytes | None = None
    """The digest of the sampled blocks of its first `size` bytes (`sample_digest`); None
    when none was taken (a file that grew is then taken as appended to)."""
    _looked: tuple[int, int, int] | None = None
    """(size, mtime, ctime) of the last grown state whose samples matched: not read again
    until the file is written again."""

    @classmethod
    def of(cls, status: os.stat_result, samples: bytes | None = None) -> FileStamp:
        return cls((status.st_dev, status.st_ino), status.st_size, status.st_mtime_ns,
                   status.st_ctime_ns, samples)

    @classmethod
    def take(cls, path: str | os.PathLike[str]) -> FileStamp | None:
        """The stamp of the file at `path` now, its samples read (a regular file only: a
        pipe or device is never opened here); None when it cannot be looked at."""
        try:
            status = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(status.st_mode):
            return cls.of(status)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return cls.of(status)
        try:
            status = os.fstat(fd)
            return cls.of(status, sample_digest(fd, status.st_size))
        except OSError:
            return cls.of(status)
        finally:
            os.close(fd)

    def differs(self, now: os.stat_result, fd: int | None = None) -> str | None:
        """Why the file (as `now` says it is; open as `fd`, whose samples are read when it
        grew) is not the one that was read, in a few words for a one-line message; None
        when it is, or was only appended to."""
        if now.st_size < self.size:
            return (f"the file is shorter than when it was read ({self.size:,} bytes then, "
                    f"{now.st_size:,} now)")
        same_file = (now.st_dev, now.st_ino) == self.identity
        if now.st_size > self.size:
            return self._grown(now, fd) if same_file else self._replaced(now, "another file")
        if (now.st_mtime_ns, now.st_ctime_ns) == (self.modified, self.changed) and same_file:
            return None
        when = time.strftime("%H:%M:%S", time.localtime(now.st_mtime_ns / 1e9))
        how = "rewritten in place" if same_file else "replaced by another file"
        return (f"the file was {how} since it was read (the same size, {self.size:,} bytes, "
                f"written at {when})")

    def _grown(self, now: os.stat_result, fd: int | None) -> str | None:
        if self.samples is None or fd is None:
            return None  # nothing to compare: taken as appended to
        state = (now.st_size, now.st_mtime_ns, now.st_ctime_ns)
        if state == self._looked:
            return None
        if sample_digest(fd, self.size) == self.samples:
            self._looked = state
            return None
        return self._replaced(now, "rewritten")

    def _replaced(self, now: os.stat_result, how: str) -> str:
        when = time.strftime("%H:%M:%S", time.localtime(now.st_mtime_ns / 1e9))
        what = "rewritten in place" if how == "rewritten" else "replaced by another file"
        return (f"the file was {what} since it was read, and is longer now ({self.size:,} "
                f"bytes then, {now.st_size:,} now, written at {when})")
