"""`replay scan` and `report` of an Aider history that only grew since it was last scanned:
the reports of its chats kept in the cache are given again, and only the last chat kept (it
may have grown) and the new ones are scanned.

Aider appends each chat to the history, so a history scanned yesterday is today the same
bytes followed by more. A history's row (`rows.keep_result`: reports `CHUNK_REPORTS` to a
row) also keeps the file's device, inode, size and a digest of all its bytes then; the next
scan, finding the file larger with the same device and inode and the same bytes up to that
size, lists the chats (`aider.list_chats`, a pass over the header lines), checks that the
same chats start in the old bytes, and scans from the last old chat's start (the turn ids
and counts of a chat come from its own bytes; its id from the list, as the whole scan gives
it). Anything else (a file rewritten, cut shorter, another inode) is scanned whole.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from replay.core.corpus.cache import ScanCache, file_stamp
from replay.core.corpus.kept_reports import ChunkedReports, chunk_keys, text_of
from replay.core.corpus.tasks import SessionTask, TaskResult

FORMAT = "aider"
"""The format whose whole-file tasks go on from their kept reports (`aider.NAME`)."""

DIGEST_BYTES = 1 << 20
"""Read at a time to digest a history's bytes."""


def prefix_digest(path: Path, size: int) -> str | None:
    """A digest of the first `size` bytes of the file (None when it is shorter or cannot be
    read)."""
    digest = hashlib.blake2b(digest_size=20)
    try:
        with open(path, "rb") as handle:
            left = size
            while left > 0:
                chunk = handle.read(min(DIGEST_BYTES, left))
                if not chunk:
                    return None
                digest.update(chunk)
                left -= len(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def grown_facts(path: Path, stamp: str) -> dict[str, Any] | None:
    """What `appended` needs to know of a history as it was scanned (under `stamp`): None
    when the file is no longer as it was (it changed while it was scanned)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    digest = prefix_digest(path, status.st_size)
    if digest is None or file_stamp(path) != stamp:
        return None
    return {"dev": status.st_dev, "ino": status.st_ino, "size": status.st_size,
            "digest": digest}


def appended(cache: ScanCache, task: SessionTask, key: str, given: str, path: Path
             ) -> TaskResult | None:
    """The task's result from its kept reports and a scan of the history's later chats
    alone, when the history only grew since its row was kept; None otherwise (scan it
    whole)."""
    if task.format != FORMAT or task.entry is not None:
        return None
    found = cache.lookup_any(key)
    if found is None:
        return None
    old_stamp, value = found
    try:
        grown, chunks, count = value["grown"], int(value["chunks"]), int(value["count"])
        size, dev, ino = int(grown["size"]), int(grown["dev"]), int(grown["ino"])
        digest = str(grown["digest"])
    except (KeyError, TypeError, ValueError):
        return None
    if value.get("given") != text_of(given) or count < 1:
        return None
    try:
        status = os.stat(path)
    except OSError:
        return None
    if (status.st_dev, status.st_ino) != (dev, ino) or status.st_size <= size:
        return None
    keys = chunk_keys(key, chunks)
    if not cache.holds(keys, old_stamp) or prefix_digest(path, size) != digest:
        return None
    from replay.core.readers import ReaderError, aider

    try:
        index = aider.list_chats(path)
    except ReaderError:
        return None
    if len(index) < count or index.starts[count - 1] >= size or (
            len(index) > count and index.starts[count] < size):
        return None  # (the old bytes do not start the same chats)
    old = ChunkedReports(cache, keys, old_stamp, count)
    try:
        reports = _spilled(_reports(old, count, index, task))
    except (ReaderError, OSError):
        return None  # (changed meanwhile, or a kept row gone: scanned whole)
    return TaskResult(reports=reports)


def _reports(old: Any, count: int, index: Any, task: SessionTask) -> Iterator[dict[str, Any]]:
    """The kept reports but the last, then the scan's from the last kept chat on."""
    from replay.core.corpus.scan import scan_stream
    from replay.core.detection.empty import DEFAULT_RULES
    from replay.core.readers import aider
    from replay.core.readers.file_window import WindowFile

    for number, report in enumerate(old):
        if number == count - 1:
            break
        yield report
    rules = DEFAULT_RULES.with_options(**dict(task.rules))
    handle = WindowFile(Path(task.source))
    with handle:
        items = aider.history_stream(handle, task.source, one=index[count - 1],
                                     stop=-index.size, has_header=index.has_header)
        for number, scanned in enumerate(scan_stream(aider.READER, Path(task.source), rules,
                                                     items=items), count - 1):
            report = scanned.to_json(consume=True)
            report["session_id"] = index.session_id(number)  # (the whole scan's id)
            yield report


def _spilled(reports: Iterator[dict[str, Any]]) -> Any:
    from replay.core.corpus.spill import spill

    return spill(reports)
