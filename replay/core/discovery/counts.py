"""Turn and empty-turn counts of listed sessions, through the scan cache.

The session lists (`replay sessions`, and the app's list of every session on this machine
or of a folder) count a session by scanning it as `replay scan` does (`scan_task`) and read
and fill the same cache row as `scan` and `report` (`corpus.rows`): one row per session,
keyed by its file's absolute path, its key, its format and the detection rules in force,
valid while the file's stamp (path, size, mtime, inode) and replay's code hold. So any of
`replay scan DIR`, `replay DIR`, `replay sessions` and `replay` reads each unchanged session
once for all the others. A list reads only the row's summary, never its reports.
`count_entries` is the app's (in a thread), `count_found` the command's (in a process pool).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay.core.corpus.cache import ScanCache
from replay.core.corpus.rows import (
    RowPlace,
    keep_result,
    place_of,
    rule_options,
    rules_identity,
    summary_of,
)
from replay.core.corpus.scan import SessionSummary
from replay.core.corpus.tasks import SessionTask, TaskResult, scan_task
from replay.core.detection.empty import DetectionRules
from replay.core.discovery.found import FoundSession
from replay.core.readers.base import Reader, SessionEntry

__all__ = ["Counted", "count_entries", "count_found", "count_one", "rules_identity"]

# ---------------------------------------------------------------- the session lists


@dataclass(frozen=True, slots=True)
class Counted:
    """One listed session's row of counts: its summary, or why it could not be read."""

    entry: SessionEntry
    summary: SessionSummary | None
    error: str | None = None


def count_one(task: SessionTask) -> TaskResult:
    """Scan one listed session as `replay scan` does (picklable: `count_found` runs it in a
    process pool); a failure is its one line."""
    return scan_task(task)


def _summary(value: Any) -> SessionSummary | None:
    if not isinstance(value, dict):
        return None
    try:
        return SessionSummary(**value)
    except TypeError:
        return None


class _Listing:
    """The cache side of one count of a list: which entries the cache knows, the rows of the
    others, and the rows of files (and database sessions) gone dropped."""

    def __init__(self, stack: contextlib.ExitStack, rules: DetectionRules, cache: bool,
                 warn: Callable[[str], None] | None) -> None:
        self.cache: ScanCache | None = None
        self.options = rule_options(rules)
        if cache:
            opened = stack.enter_context(ScanCache(warn=warn))
            self.cache = opened if opened.usable else None

    def task(self, entry: SessionEntry, format: str | None) -> SessionTask:
        """The scan task that counts an entry: the one `replay scan` plans for it."""
        return SessionTask(str(entry.path), format, entry, self.options)

    def look_up(self, tasks: Sequence[SessionTask]
                ) -> list[tuple[SessionSummary | None, RowPlace | None]]:
        """For each task: the summary its row holds, else where to keep it."""
        cache, looked = self.cache, []
        for task in tasks:
            place = place_of(task) if cache is not None else None
            known = _summary(cache.lookup_summary(place.key, place.stamp)) \
                if cache is not None and place is not None else None
            looked.append((known, None if known is not None else place))
        return looked

    def forget_missing(self, roots: Sequence[str | Path], every: Sequence[SessionEntry]) -> None:
        """Drop the rows of files under `roots` that are gone, and of sessions gone from a
        database (`every`: the whole list just made of them, unfiltered)."""
        if self.cache is None or not roots:
            return
        listed: dict[str, set[str]] = {}
        for entry in every:
            if not entry.own_file and entry.problem is None:
                listed.setdefault(str(entry.path), set()).add(entry.key)
        self.cache.forget_missing([str(root) for root in roots],
                                  {str(entry.path) for entry in every}, listed)

    def counted(self, task: SessionTask, place: RowPlace | None, result: TaskResult) -> Counted:
        """An entry's row of counts from its scan, kept in the cache (reports and summary)."""
        entry = task.entry
        assert entry is not None
        if result.error is not None:
            return Counted(entry, None, result.error)
        if self.cache is not None and place is not None:
            value = keep_result(self.cache, place, task, result)
        elif result.started is not None and len(result.reports) == 1:
            value = summary_of(result.reports[0], result.started[0], Path(entry.path).absolute(),
                               entry.own_file)
        else:
            value = None
        summary = _summary(value)
        if summary is None:
            return Counted(entry, None, f"{entry.path}: not one session")
        return Counted(entry, summary)


def count_entries(reader: Reader, entries: Sequence[SessionEntry], rules: DetectionRules,
                  *, cache: bool = True, cancelled: Callable[[], bool] = lambda: False,
                  warn: Callable[[str], None] | None = None,
                  roots: Sequence[str | Path] = ()) -> Iterator[list[Counted]]:
    """The session list's counts, in batches: first every entry the cache knows unchanged
    (one batch, maybe empty), then each other entry as it is scanned (one a batch), in order.

    Each session is scanned alone, through a window of its turns (a 200 MB session is not
    held whole); what is read is kept for the next time, by any consumer, unless `cache` is
    False (`--no-cache`). `roots`: the folders listed, whose rows of files now gone are
    dropped. Stops between sessions once `cancelled()` is true.
    """
    with contextlib.ExitStack() as stack:
        listing = _Listing(stack, rules, cache, warn)
        tasks = [listing.task(entry, entry.format or reader.name) for entry in entries]
        looked = listing.look_up(tasks)
        yield [Counted(entry, known) for entry, (known, _) in zip(entries, looked, strict=True)
               if known is not None]
        listing.forget_missing(roots, entries)
        for task, (known, place) in zip(tasks, looked, strict=True):
            if known is not None:
                continue
            if cancelled():
                return
            yield [listing.counted(task, place, count_one(task))]


def count_found(sessions: Sequence[FoundSession], rules: DetectionRules, jobs: int = 1,
                pool: ProcessPoolExecutor | None = None, cache: bool = True,
                warn: Callable[[str], None] | None = None, roots: Sequence[str | Path] = (),
                every: Sequence[FoundSession] | None = None
                ) -> Iterator[tuple[FoundSession, Counted]]:
    """`replay sessions`' counts: each discovered session with its summary (or why it could
    not be read), in the order given, each as soon as it and those before it are done.

    The same rows of the scan cache as the app's session list and `scan`: a session any of
    them read is not read again while unchanged. Sessions the cache lacks are read in `pool`
    (`jobs` at once) when there is one, else here. `every`: all the sessions found in
    `roots` before any filter (the rows of those gone are dropped); default `sessions`."""
    with contextlib.ExitStack() as stack:
        listing = _Listing(stack, rules, cache, warn)
        tasks = [listing.task(session.entry, session.format)
                 for session in sessions]
        looked = listing.look_up(tasks)
        listing.forget_missing(roots, [session.entry for session in
                                       (sessions if every is None else every)])
        todo = [task for task, (known, _) in zip(tasks, looked, strict=True) if known is None]
        futures = [pool.submit(count_one, task) for task in todo] \
            if pool is not None and jobs > 1 and len(todo) > 1 else None
        done = 0
        for session, task, (known, place) in zip(sessions, tasks, looked, strict=True):
            if known is not None:
                yield session, Counted(session.entry, known)
                continue
            result = _result(futures, done, task)
            done += 1
            yield session, listing.counted(task, place, result)


def _result(futures: list[Future[TaskResult]] | None, number: int, task: SessionTask
            ) -> TaskResult:
    """The scan of the `number`th session to read: from the pool, or read here when there
    is no pool or the pool broke (a worker killed): as the app's list counts, one at a
    time."""
    if futures is not None:
        try:
            return futures[number].result()
        except BrokenProcessPool:
            pass
    return count_one(task)
