"""Whether a file is still the one its turns were read from: identity, size, times, samples.

An index reads a turn back by its byte offsets long after the file was read. A file cut
shorter is seen by the short read; a file rewritten in place with records of the same shape
at the same offsets is not: the bytes read back are valid, and they are other text. The
stamp taken when the file was read (device, inode, size, modification and change times in
nanoseconds) tells it at the cost of one `fstat` per read-back.

A file that grew is usually appended to (an agent writing on, a followed file): what was read
is still there. It may also have been rewritten and grown in the same write (an editor saving
a longer file, a tool writing the session out again). So the stamp also keeps a digest of the
bytes it covers, its last `END_SLACK` bytes left out: all of them in a file of up to
`FULL_BYTES` (a few milliseconds), else a few blocks (the first, the last, and evenly spaced
ones between: `SAMPLE_BLOCKS` of `SAMPLE_BYTES`); when the file has grown, and was written
since the last look, it reads them again: appended-to files keep them, a rewrite that changes
or shifts any of them is told.

In a larger file, a rewrite may change one record between two samples. The regions turns are
read back from (`REGION_BYTES` each) are digested as they are first read while the file is
as it was, and checked again once it has grown and been written: a turn is never read back
as other text from a region read before. A region first read after such a write has only
the samples to go by.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

SAMPLE_BYTES = 4096
"""Bytes of each sampled block."""

SAMPLE_BLOCKS = 9
"""Blocks sampled: the first, the last (the end of the last record read), and seven between."""

FULL_BYTES = 8 << 20
"""Files of up to this many bytes are digested whole."""

REGION_BYTES = 1 << 20
"""Bytes of each region of a larger file digested once a turn is read back from it."""

END_SLACK = 64
"""Bytes at the very end left out of the samples: a whole-document format (a JSON object
holding a list of messages) that is written out again with one more message keeps every
byte before it but its closing brackets, which are not part of any record read."""


def sample_spans(size: int) -> list[tuple[int, int]]:
    """(offset, length) of the blocks a stamp of a file of `size` bytes samples, in order."""
    size = max(size - END_SLACK, 0)
    if size <= FULL_BYTES:
        return [(0, size)] if size else []
    last = size - SAMPLE_BYTES
    step = last / (SAMPLE_BLOCKS - 1)
    return [(round(n * step), SAMPLE_BYTES) for n in range(SAMPLE_BLOCKS)]


def sample_digest(fd: int, size: int) -> bytes | None:
    """The digest of the sampled blocks of the file open as `fd`, read as if it were `size`
    bytes long; None when they cannot all be read (the file is shorter, or unreadable)."""
    return _digest(fd, sample_spans(size))


def _digest(fd: int, spans: Iterable[tuple[int, int]]) -> bytes | None:
    """The digest of those bytes of `fd`, read `REGION_BYTES` at a time; None when they cannot
    all be read."""
    digest = hashlib.blake2b(digest_size=16)
    try:
        for offset, length in spans:
            for start in range(offset, offset + length, REGION_BYTES):
                want = min(REGION_BYTES, offset + length - start)
                block = os.pread(fd, want, start)
                if len(block) != want:
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
    regions: dict[int, bytes | None] = field(default_factory=dict)
    """The digest of each region (number: offset // `REGION_BYTES`) a turn was read back from
    while the file was as it was read; only for a file larger than `FULL_BYTES`."""
    _checked: set[int] = field(default_factory=set)
    """Regions found as they were in the grown state `_looked`."""

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

    def differs(self, now: os.stat_result, fd: int | None = None,
                spans: Iterable[tuple[int, int]] = ()) -> str | None:
        """Why the file (as `now` says it is; open as `fd`, whose samples are read when it
        grew) is not the one that was read, in a few words for a one-line message; None
        when it is, or was only appended to. `spans`: the (offset, length) of the bytes about
        to be read back (their regions digested, or checked: `regions`)."""
        if now.st_size < self.size:
            return (f"the file is shorter than when it was read ({self.size:,} bytes then, "
                    f"{now.st_size:,} now)")
        same_file = (now.st_dev, now.st_ino) == self.identity
        if now.st_size > self.size:
            return self._grown(now, fd, spans) if same_file else self._replaced(
                now, "another file")
        if (now.st_mtime_ns, now.st_ctime_ns) == (self.modified, self.changed) and same_file:
            if fd is not None:
                # Not written since it was read: the bytes are those read, kept for later.
                for region in self._regions(spans):
                    if region not in self.regions:
                        self.regions[region] = self._region_digest(fd, region)
            return None
        when = time.strftime("%H:%M:%S", time.localtime(now.st_mtime_ns / 1e9))
        how = "rewritten in place" if same_file else "replaced by another file"
        return (f"the file was {how} since it was read (the same size, {self.size:,} bytes, "
                f"written at {when})")

    def _grown(self, now: os.stat_result, fd: int | None,
               spans: Iterable[tuple[int, int]]) -> str | None:
        if self.samples is None or fd is None:
            return None  # nothing to compare: taken as appended to
        state = (now.st_size, now.st_mtime_ns, now.st_ctime_ns)
        if state != self._looked:
            if sample_digest(fd, self.size) != self.samples:
                return self._replaced(now, "rewritten")
            self._looked = state
            self._checked = set()
        for region in self._regions(spans):
            known = self.regions.get(region)
            if known is None or region in self._checked:
                continue  # (never read while the file was as it was: the samples say)
            if self._region_digest(fd, region) != known:
                return self._replaced(now, "rewritten")
            self._checked.add(region)
        return None

    def _regions(self, spans: Iterable[tuple[int, int]]) -> Iterator[int]:
        """The regions holding any of `spans`' bytes that were read (none in a file digested
        whole, or past its last `END_SLACK` bytes)."""
        end = self.size - END_SLACK
        if end <= FULL_BYTES:
            return
        for offset, length in spans:
            last = min(offset + length, end) - 1
            yield from range(offset // REGION_BYTES, last // REGION_BYTES + 1)

    def _region_digest(self, fd: int, region: int) -> bytes | None:
        start = region * REGION_BYTES
        return _digest(fd, [(start, min(REGION_BYTES, self.size - END_SLACK - start))])

    def _replaced(self, now: os.stat_result, how: str) -> str:
        when = time.strftime("%H:%M:%S", time.localtime(now.st_mtime_ns / 1e9))
        what = "rewritten in place" if how == "rewritten" else "replaced by another file"
        return (f"the file was {what} since it was read, and is longer now ({self.size:,} "
                f"bytes then, {now.st_size:,} now, written at {when})")
