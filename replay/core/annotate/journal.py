"""The annotation journal: an append-only JSONL file that survives crashes and concurrent writers.

Every line is one self-contained record (no header), so a journal can be concatenated,
grepped, or merged with another reviewer's. Each append takes an exclusive `flock`, writes
the whole line with one `os.write` on an `O_APPEND` descriptor and `fsync`s before returning:
once `append` returns, the record is on disk, and a crash at any instant leaves at most one
torn last line, which `load` skips with a warning.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from replay.core.files import kind_of

FORMAT_VERSION = 1
"""Value of the `v` field of records this version writes."""

REQUIRED_TEXT = ("session_id", "turn_id", "label")
"""Fields every annotation record must hold as strings."""

OPTIONAL_TEXT = ("note", "confidence", "reviewer", "time")
"""Fields that, when present, must be strings."""

HAS_CONTENT = "turn_has_content"
"""Field of a record saying the annotated turn was found to show content after it was
labelled (a reply still being written): the label stands, but rates no empty turn."""

RecordKey = tuple[str, str, str]
"""(reviewer, session_id, turn_id): what one annotation is about, and by whom."""


class JournalError(Exception):
    """A journal cannot be read or written; the message is one line naming the file."""


@dataclass(slots=True)
class JournalLoad:
    """What reading a journal gave: valid records in file order, and one warning per bad line."""

    records: list[dict[str, Any]] = field(default_factory=list)
    """Valid records, oldest first."""
    warnings: list[str] = field(default_factory=list)
    """One line per ignored line, naming the file and line number."""
    foreign: str | None = None
    """Why the first line that is JSON but no annotation record is not one (`line 1:
    missing text field 'session_id'`): with no record at all, the file is something else."""


def check_record(record: object) -> str | None:
    """Why a decoded line is not an annotation record, or None when it is one."""
    if not isinstance(record, dict):
        return "not a JSON object"
    for name in REQUIRED_TEXT:
        if not isinstance(record.get(name), str):
            return f"missing text field {name!r}"
    for name in OPTIONAL_TEXT:
        if name in record and not isinstance(record[name], str):
            return f"field {name!r} is not text"
    index = record.get("turn_index", -1)
    if isinstance(index, bool) or not isinstance(index, int):
        return "field 'turn_index' is not an integer"
    return None


def latest(records: Iterable[dict[str, Any]]) -> dict[RecordKey, dict[str, Any]]:
    """The last record per (reviewer, session_id, turn_id), in order of first appearance.

    File order decides, not the `time` field: clocks can step, appends cannot reorder.
    """
    found: dict[RecordKey, dict[str, Any]] = {}
    for record in records:
        found[(record.get("reviewer", ""), record["session_id"], record["turn_id"])] = record
    return found


def _describe(error: OSError) -> str:
    if error.errno == errno.ENOSPC:
        return "the disk is full"
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "permission denied (read-only file or directory)"
    return error.strerror or str(error)


class Journal:
    """One append-only JSONL file of annotation records."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        """Where the journal lives; created with its parent directories on first append."""

    def __repr__(self) -> str:
        return f"Journal({str(self.path)!r})"

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as one line and fsync it; returns only once it is on disk.

        Raises:
            JournalError: the file or its directory cannot be created or written.
        """
        line = orjson.dumps(record) + b"\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise JournalError(
                f"cannot create the folder for annotations {self.path.parent}: {_describe(error)}"
            ) from None
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
                         | os.O_NONBLOCK, 0o644)
        except OSError as error:
            raise self._error("cannot write annotations to", error) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                created = self._write_locked(fd, line)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        except OSError as error:
            raise self._error("cannot write annotations to", error) from None
        finally:
            os.close(fd)
        if created:
            self._sync_directory()

    def _error(self, doing: str, error: OSError) -> JournalError:
        return JournalError(f"{doing} {self.path}: {_describe(error)}")

    def _write_locked(self, fd: int, line: bytes) -> bool:
        """Append under the lock; True when the file was empty before (maybe just created)."""
        size = os.fstat(fd).st_size
        # A writer killed mid-line leaves a tail without a newline: never glue onto it.
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        view = memoryview(line)
        try:
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        except OSError:
            # A full disk (or quota) took part of the line: cut the file back to what it was,
            # so no later command meets a torn record; the caller says it was not saved.
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
                os.fsync(fd)
            raise
        return size == 0

    def _sync_directory(self) -> None:
        """Make the new file's directory entry durable too (a power cut could lose it)."""
        try:
            fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)

    def load(self) -> JournalLoad:
        """Every valid record in file order; bad or torn lines become warnings, never errors.

        A missing journal is an empty one.

        Raises:
            JournalError: the file exists but cannot be read.
        """
        try:
            # Opened without blocking: a FIFO would wait for a writer before any check ran.
            descriptor = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            with open(descriptor, "rb") as handle:
                # A device or pipe could stream forever (/dev/zero): only files are journals.
                mode = os.fstat(handle.fileno()).st_mode
                if stat.S_ISDIR(mode):
                    raise IsADirectoryError
                if not stat.S_ISREG(mode):
                    raise JournalError(
                        f"cannot read annotations from {self.path}: not a regular file "
                        f"(a {kind_of(mode)})")
                data = handle.read()
        except (FileNotFoundError, NotADirectoryError):
            # Not there (or a parent is a file, so it cannot be): an empty journal; `append`
            # will say what is wrong if it is ever written to.
            return JournalLoad()
        except IsADirectoryError:
            raise JournalError(
                f"cannot read annotations from {self.path}: it is a folder") from None
        except OSError as error:
            raise self._error("cannot read annotations from", error) from None
        result = JournalLoad()
        for lineno, line in enumerate(data.split(b"\n"), 1):
            if not line.strip():
                continue
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                result.warnings.append(
                    f"{self.path}:{lineno}: unreadable annotation line ignored (torn or not JSON)"
                )
                continue
            problem = check_record(record)
            if problem is not None:
                result.warnings.append(
                    f"{self.path}:{lineno}: not an annotation record ({problem})")
                if result.foreign is None:
                    result.foreign = f"line {lineno}: {problem}"
                continue
            result.records.append(record)
        return result
