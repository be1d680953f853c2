"""Whether a file is still the one its turns were read from: identity, size and times.

An index reads a turn back by its byte offsets long after the file was read. A file cut
shorter is seen by the short read; a file rewritten in place with records of the same shape
at the same offsets is not: the bytes read back are valid, and they are other text. The
stamp taken when the file was read (device, inode, size, modification and change times in
nanoseconds) tells it at the cost of one `fstat` per read-back.

A file that grew is taken as appended to (an agent writing on, a followed file): what was
read is still there. That it was rewritten and grew in the same moment is not seen.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FileStamp:
    """A file as it was when it was read."""

    identity: tuple[int, int]
    """(device, inode)."""
    size: int
    modified: int
    """`st_mtime_ns`."""
    changed: int
    """`st_ctime_ns` (set by any write, and not settable by `touch`)."""

    @classmethod
    def of(cls, status: os.stat_result) -> FileStamp:
        return cls((status.st_dev, status.st_ino), status.st_size, status.st_mtime_ns,
                   status.st_ctime_ns)

    @classmethod
    def take(cls, path: str | os.PathLike[str]) -> FileStamp | None:
        """The stamp of the file at `path` now; None when it cannot be looked at."""
        try:
            return cls.of(os.stat(path))
        except OSError:
            return None

    def differs(self, now: os.stat_result) -> str | None:
        """Why the file (as `now` says it is) is not the one that was read, in a few words
        for a one-line message; None when it is, or only grew."""
        if now.st_size < self.size:
            return (f"the file is shorter than when it was read ({self.size:,} bytes then, "
                    f"{now.st_size:,} now)")
        if now.st_size > self.size:
            return None  # appended to: what was read is still there
        if (now.st_mtime_ns, now.st_ctime_ns) == (self.modified, self.changed) \
                and (now.st_dev, now.st_ino) == self.identity:
            return None
        when = time.strftime("%H:%M:%S", time.localtime(now.st_mtime_ns / 1e9))
        how = ("rewritten in place" if (now.st_dev, now.st_ino) == self.identity
               else "replaced by another file")
        return (f"the file was {how} since it was read (the same size, {self.size:,} bytes, "
                f"written at {when})")
