"""The chats of one Aider history, listed from their headers and counted afterwards, in
arrays: the session list of a history of 144,510 chats holds no `Session` per chat.

`HistoryCounts.of(path)` lists the chats at once (`aider.list_chats`, a pass over the header
lines); `count` then scans the file once, windowed (`scan_stream`, as `replay scan` does,
so the counts are the scan's), and fills in each chat's turns and empty turns.

With `count(cache=True)` the counts are kept in the scan cache (one row per history and
rules, `CountsMemo`): the next launch on the unchanged file has them at once, and on a
history that only grew since (Aider appends each chat), only the chats from the last one
kept on are scanned.
"""

from __future__ import annotations

import hashlib
import os
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from replay.core.corpus.cache import ScanCache, Warn, file_stamp
from replay.core.corpus.rows import rules_identity
from replay.core.corpus.scan import SessionSummary, scan_stream
from replay.core.detection.empty import DEFAULT_RULES, DetectionRules
from replay.core.readers import aider
from replay.core.readers.base import ReaderError, UnreadablePath
from replay.core.readers.file_window import WindowFile
from replay.core.session.model import Session

FORMAT = aider.NAME

COUNTS_KIND = "aider-counts/1"
"""The rows' kind in the scan cache's keys."""
TAIL_BYTES = 4096
"""Bytes before the end of the history as it was counted that must be unchanged for a grown
file to be taken as appended to (with the start of every chat counted)."""


class HistoryCounts:
    """A history's chats (`ChatIndex`) and, once counted, each one's turns and empty
    turns (about 70 bytes a chat in all)."""

    __slots__ = ("counted", "empty", "error", "index", "labels", "most_empty",
                 "most_turns", "turns")

    def __init__(self, index: aider.ChatIndex) -> None:
        self.index = index
        """Where each chat is, and what its header says."""
        size = len(index)
        self.turns = array("l", [0]) * size
        self.empty = array("l", self.turns)
        self.counted = 0
        """Chats counted so far: the first `counted`, in file order."""
        self.labels: dict[int, str] = {}
        """The names of chats without a header time (their first prompt), once counted."""
        self.most_turns = 0
        self.most_empty = 0
        self.error: str | None = None
        """Why counting stopped before the end (the file changed), if it did."""

    @classmethod
    def of(cls, path: Path) -> HistoryCounts:
        """The chats of the history at `path`, listed, none counted yet (ReaderError when
        it cannot be read)."""
        return cls(aider.list_chats(path))

    @property
    def path(self) -> str:
        return self.index.path

    def __len__(self) -> int:
        return len(self.index)

    def label(self, number: int) -> str:
        """The chat's name in the list, as `Session.label` gives it."""
        return self.index.title(number) or self.labels.get(number) \
            or self.index.session_id(number)

    def summary(self, number: int) -> SessionSummary | None:
        """The chat's counts, None while not counted."""
        if number >= self.counted:
            return None
        return SessionSummary(label=self.label(number), started=self.index.started(number),
                              turns=self.turns[number], empty=self.empty[number], subagents=0,
                              format=FORMAT)

    def read(self, number: int) -> Session:
        """The chat's Session, read from its own bytes (ReaderError when it is gone)."""
        return self.index.read(number)

    def count(self, rules: DetectionRules = DEFAULT_RULES,
              cancelled: Callable[[], bool] = lambda: False, *, cache: bool = False,
              warn: Warn | None = None) -> Iterator[int]:
        """Count every chat not counted yet (one windowed scan of the file), yielding how
        many are counted after each one; a file whose chats no longer match the list stops
        it, said in `error`.

        With `cache`, the counts kept in the scan cache for the file as it is are taken at
        once (one yield), those of a history that only grew since for every chat but the
        last kept (which may have grown), and the counts made are kept for the next time.
        """
        if self.counted >= len(self.index):
            return
        if not cache:
            yield from self._count_from(self.counted, rules, cancelled)
            return
        with ScanCache(warn=warn) as opened:
            memo = CountsMemo(opened, Path(self.path), rules) if opened.usable else None
            if memo is not None and memo.restore(self):
                yield self.counted
            kept = self.counted
            yield from self._count_from(self.counted, rules, cancelled)
            # (Kept when stopped half way too: the next launch goes on from there.)
            if memo is not None and self.counted > kept and self.error is None:
                memo.keep(self)

    def _count_from(self, first: int, rules: DetectionRules,
                    cancelled: Callable[[], bool]) -> Iterator[int]:
        """Count the chats from `first` on (a scan of the file from that chat's start)."""
        path = Path(self.path)
        if first >= len(self.index):
            return
        if first == 0:
            yield from self._counted(scan_stream(aider.READER, path, rules, suggest=False), 0,
                                     cancelled, by_id=True)
            return
        index = self.index
        try:
            handle = WindowFile(path)
        except OSError as error:
            raise UnreadablePath.of(path, error) from None
        with handle:
            # The chats from `first` to the end as the stream gives them (their turn ids and
            # counts are those of the whole file's scan: each chat is read from its own bytes).
            items = aider.history_stream(handle, self.path, one=index[first],
                                         stop=-index.size, has_header=index.has_header)
            try:
                yield from self._counted(scan_stream(aider.READER, path, rules, suggest=False,
                                                     items=items), first, cancelled,
                                         by_id=False)
            except OSError as error:
                raise UnreadablePath.of(path, error) from None

    def _counted(self, reports: Iterator[Any], number: int, cancelled: Callable[[], bool],
                 by_id: bool) -> Iterator[int]:
        index = self.index
        for report in reports:
            if cancelled():
                return
            session = report.session
            # (A stream from a later chat numbers repeated ids afresh: matched by header.)
            if number >= len(index) or (
                    session.session_id != index.session_id(number) if by_id else
                    session.meta.get("started_at", "") != index.started_text(number)):
                self.error = (f"{self.path}: the file changed since its chats were listed; "
                              "open it again to count them")
                return
            if number >= self.counted:
                turns, empty = len(session.turns), len(report.empty_turns)
                self.turns[number] = turns
                self.empty[number] = empty
                self.most_turns = max(self.most_turns, turns)
                self.most_empty = max(self.most_empty, empty)
                if index.title(number) is None:
                    self.labels[number] = session.title or report.prompt \
                        or index.session_id(number) or self.path.rsplit("/", 1)[-1]
                self.counted = number + 1
                yield self.counted
            number += 1

    def restored(self, turns: list[int], empty: list[int], labels: dict[int, str],
                 upto: int) -> None:
        """Take the counts of the first `upto` chats as kept."""
        self.turns[:upto] = array("l", turns[:upto])
        self.empty[:upto] = array("l", empty[:upto])
        self.labels.update((number, label) for number, label in labels.items()
                           if number < upto)
        self.most_turns = max(self.turns[:upto], default=0)
        self.most_empty = max(self.empty[:upto], default=0)
        self.counted = upto


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class CountsMemo:
    """A history's per-chat counts in the scan cache, keyed by its absolute path and the
    detection rules. Valid whole while the file's stamp holds; for a file that only grew
    (same device and inode, larger, the bytes before its old end and the start of every
    chat then counted unchanged), valid for every chat but the last one counted."""

    def __init__(self, cache: ScanCache, path: Path, rules: DetectionRules) -> None:
        self.cache = cache
        self.path = Path(os.path.abspath(path))
        identity = repr((COUNTS_KIND, str(self.path), rules_identity(rules)))
        self.key = hashlib.blake2b(identity.encode("utf-8", "backslashreplace"),
                                   digest_size=20).hexdigest()
        self.stamp = file_stamp(self.path)
        """The file's stamp when counting started (None: changed a moment ago, not kept)."""

    def restore(self, counts: HistoryCounts) -> bool:
        """Fill in the counts kept of the chats still as they were; True when any was."""
        found = self.cache.lookup_any(self.key)
        if found is None or self.stamp is None:
            return False
        stamp, value = found
        try:
            chats, index = int(value["chats"]), counts.index
            counted = min(int(value["counted"]), chats)
            turns, empty = value["turns"], value["empty"]
            labels = {int(number): str(label) for number, label in value["labels"].items()}
            if not chats or len(turns) != chats or len(empty) != chats:
                return False
            if stamp == self.stamp and chats == len(index):
                upto = counted
            elif self._appended(value, index, chats):
                upto = min(counted, chats - 1)  # (the last chat kept may have grown)
            else:
                return False
            counts.restored(turns, empty, labels, upto)
        except (KeyError, TypeError, ValueError, AttributeError, OSError):
            return False
        return upto > 0

    def _appended(self, value: dict[str, Any], index: aider.ChatIndex, chats: int) -> bool:
        status = os.stat(self.path)
        size = int(value["size"])
        if (status.st_dev, status.st_ino) != (value["dev"], value["ino"]) or \
                index.size <= size or len(index) < chats:
            return False
        if _digest(index.starts[:chats].tobytes()) != value["starts"]:
            return False
        return self._tail(size) == value["tail"]

    def _tail(self, size: int) -> str:
        with open(self.path, "rb") as handle:
            start = max(size - TAIL_BYTES, 0)
            return _digest(os.pread(handle.fileno(), size - start, start))

    def keep(self, counts: HistoryCounts) -> None:
        """Keep the counts of the chats counted (the first `counts.counted`), when the file
        is still as it was when counting started."""
        if self.stamp is None or file_stamp(self.path) != self.stamp:
            return
        try:
            status = os.stat(self.path)
            index = counts.index
            value = {"chats": len(index), "counted": counts.counted,
                     "dev": status.st_dev, "ino": status.st_ino,
                     "size": index.size, "starts": _digest(index.starts.tobytes()),
                     "tail": self._tail(index.size), "turns": counts.turns.tolist(),
                     "empty": counts.empty.tolist(),
                     "labels": {str(number): label for number, label in counts.labels.items()}}
        except (OSError, ReaderError):
            return
        self.cache.store_key(self.key, self.path, self.stamp, value)
