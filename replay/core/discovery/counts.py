"""Turn and empty-turn counts of listed sessions, through the scan cache.

`replay sessions` counts discovered sessions by the per-session scan of `replay scan`
(`corpus.scan_task`), run over the sessions as tasks (`scan_found`). The app's session list
(every session on this machine, or a folder's) counts each session by reading it alone
(`count_entries`), and keeps each summary under a key of its own (`SummaryMemo`). Both read
unchanged files' counts from the cache instead of reading the files again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from replay.core.corpus.cache import ScanCache, cached_results, file_stamp
from replay.core.corpus.pool import run_tasks
from replay.core.corpus.scan import SessionSummary, summarize
from replay.core.corpus.tasks import SessionTask, TaskResult
from replay.core.detection.empty import DetectionRules
from replay.core.discovery.found import FoundSession
from replay.core.readers import ReaderError, read_entry
from replay.core.readers.base import Reader, SessionEntry


def task_of(session: FoundSession, rules: Mapping[str, Any] | None = None) -> SessionTask:
    """The scan task that reads one discovered session (its failure is a skip, not fatal)."""
    options = tuple(sorted((rules or {}).items()))
    return SessionTask(str(session.path), session.format, session.entry, options,
                       required=False)


def scan_found(sessions: Sequence[FoundSession], rules: Mapping[str, Any] | None = None,
               jobs: int = 1, pool: ProcessPoolExecutor | None = None,
               cache: bool = True, warn: Callable[[str], None] | None = None
               ) -> Iterator[tuple[FoundSession, TaskResult]]:
    """Each session with its scan result (`scan --json` objects, or why it could not be
    read), in the order given, each as soon as it and those before it are done.

    With `cache`, a session whose file is unchanged since any scan kept it is not read
    again (`replay.core.corpus.cache`, shared with `scan`, `report` and `review`).
    """
    tasks = [task_of(session, rules) for session in sessions]

    def run(todo: Sequence[SessionTask]) -> Iterator[TaskResult]:
        return run_tasks(todo, jobs, None, pool)

    if not cache:
        yield from zip(sessions, run(tasks), strict=True)
        return
    with ScanCache(warn=warn) as kept:
        yield from zip(sessions, cached_results(tasks, run, kept), strict=True)


# ---------------------------------------------------------------- the app's session list

SPREAD_FORMATS = frozenset({"opencode-storage"})
"""Formats whose session file is only its header (the messages and their parts are files of
their own elsewhere): no one file's stamp says the session is unchanged, so it is counted
again each time."""


@dataclass(frozen=True, slots=True)
class Counted:
    """One listed session's row of counts: its summary, or why it could not be read."""

    entry: SessionEntry
    summary: SessionSummary | None
    error: str | None = None


class SummaryMemo:
    """The session list's summary of each session file (label, start, turns, empty turns,
    subagents, format), kept in the scan cache: a second `replay` on an unchanged home
    shows its counts without reading a session again.

    Keyed by the session (file, key, format), the reader that listed it and the detection
    rules; valid while the file's stamp holds, and for a session file with a folder of its
    own beside it (Claude Code keeps a session's subagents in `<session>/subagents/`), while
    that folder's stamp holds too. Kept in the same file as `scan`'s results (and dropped
    with them by `scan`'s `forget_missing`), under keys of its own, so `scan --json` is not
    touched. Only summaries are kept, never a failure (the file may be readable next time).
    """

    def __init__(self, cache: ScanCache, reader: Reader, rules: DetectionRules) -> None:
        self.cache = cache
        fields = tuple((name, sorted(value) if isinstance(value, frozenset) else value)
                       for name, value in sorted(dataclasses.asdict(rules).items()))
        self._work = repr((reader.name, fields))

    def _key(self, entry: SessionEntry) -> str:
        identity = repr(("session-summary", str(entry.path), entry.key, entry.own_file,
                         entry.format, self._work))
        return hashlib.blake2b(identity.encode("utf-8", "backslashreplace"),
                               digest_size=20).hexdigest()

    @staticmethod
    def stamp(entry: SessionEntry) -> str | None:
        """What the entry's summary depends on, or None when it cannot be kept (a session
        in a folder of many files, a file changed a moment ago)."""
        if entry.format in SPREAD_FORMATS:
            return None
        stamp = file_stamp(entry.path)
        if stamp is None or not entry.own_file:
            return stamp  # a database: its file's stamp covers every session in it
        beside = entry.path.with_suffix("")
        try:
            folder = os.stat(beside / "subagents")
        except OSError:
            return stamp
        return f"{stamp};{folder.st_ino}:{folder.st_mtime_ns}"

    def known(self, entry: SessionEntry, stamp: str) -> SessionSummary | None:
        """The summary kept for the entry at this stamp, or None."""
        value = self.cache.lookup_key(self._key(entry), stamp)
        if not isinstance(value, dict):
            return None
        try:
            return SessionSummary(**value)
        except TypeError:
            return None

    def keep(self, entry: SessionEntry, stamp: str, summary: SessionSummary) -> None:
        """Keep the summary read from the entry while its stamp was `stamp`."""
        self.cache.store_key(self._key(entry), entry.path, stamp,
                             dataclasses.asdict(summary))


def count_entries(reader: Reader, entries: Sequence[SessionEntry], rules: DetectionRules,
                  *, cache: bool = True, cancelled: Callable[[], bool] = lambda: False,
                  warn: Callable[[str], None] | None = None) -> Iterator[list[Counted]]:
    """The session list's counts, in batches: first every entry the cache knows unchanged
    (one batch, maybe empty), then each other entry as it is read (one a batch), in order.

    Each session is read alone and let go (indexed: counting a 200 MB session does not hold
    its turns whole); what is read is kept for the next time unless `cache` is False
    (`--no-cache`). Stops between sessions once `cancelled()` is true.
    """
    with contextlib.ExitStack() as stack:
        memo: SummaryMemo | None = None
        if cache:
            opened = stack.enter_context(ScanCache(warn=warn))
            memo = SummaryMemo(opened, reader, rules) if opened.usable else None
        stamps: list[str | None] = []
        hits: list[Counted] = []
        for entry in entries:
            stamp = memo.stamp(entry) if memo is not None else None
            known = memo.known(entry, stamp) if memo is not None and stamp is not None \
                else None
            stamps.append(None if known is not None else stamp)
            if known is not None:
                hits.append(Counted(entry, known))
        yield hits
        counted = {id(hit.entry) for hit in hits}
        for entry, stamp in zip(entries, stamps, strict=True):
            if id(entry) in counted:
                continue
            if cancelled():
                return
            try:
                summary = summarize(read_entry(reader, entry, indexed=True), rules)
            except ReaderError as error:
                yield [Counted(entry, None, str(error))]
                continue
            if memo is not None and stamp is not None:
                memo.keep(entry, stamp, summary)
            yield [Counted(entry, summary)]
