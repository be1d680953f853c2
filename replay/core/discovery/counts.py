"""Turn and empty-turn counts of listed sessions, through the scan cache.

The session lists (`replay sessions`, and the app's list of every session on this machine
or of a folder) count a session by reading it alone, indexed, and keep its summary in the
scan cache under one key (`SummaryMemo`): the file's absolute path, the session, its format
and the detection rules, valid while the file's stamp (path, size, mtime, inode) and
replay's code hold. So `replay sessions` then `replay` (or the other way round) reads each
unchanged session once. `count_entries` is the app's (in a thread), `count_found` the
command's (in a process pool).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from replay.core.corpus.cache import RACY_SECONDS, ScanCache, file_stamp
from replay.core.corpus.scan import SessionSummary, summarize
from replay.core.detection.empty import DetectionRules
from replay.core.discovery.found import FoundSession
from replay.core.readers import ReaderError, read_entry
from replay.core.readers.base import Reader, SessionEntry

# ---------------------------------------------------------------- the session lists

SUMMARY_KIND = "session-summary/2"
"""The summary rows' kind in the cache (2: with title, id and skipped count)."""

SPREAD_FORMATS = frozenset({"opencode-storage"})
"""Formats whose session is many files (opencode's storage folder: a session file, a folder
of message files and a folder of part files per message): stamped by all of them
(`spread_stamp`)."""


@dataclass(frozen=True, slots=True)
class Counted:
    """One listed session's row of counts: its summary, or why it could not be read."""

    entry: SessionEntry
    summary: SessionSummary | None
    error: str | None = None


def rules_identity(rules: DetectionRules) -> str:
    """The detection rules as part of a cache key (the same rules, the same text)."""
    fields = tuple((name, sorted(value) if isinstance(value, frozenset) else value)
                   for name, value in sorted(dataclasses.asdict(rules).items()))
    return repr(fields)


class SummaryMemo:
    """Each listed session's summary (label, start, turns, empty turns, subagents, format,
    title, id, skipped), kept in the scan cache: a second list of an unchanged home, by the
    app or by `replay sessions`, shows its counts without reading a session again.

    Keyed by the session (absolute path, key, whether it is a file of its own, the format
    that reads it) and the detection rules, so every list shares one row per session; valid
    while the stamp holds (`stamp`). Kept in the same file as `scan`'s results, under keys
    of their own (`scan --json` is not touched). Only summaries are kept, never a failure
    (the file may be readable next time).
    """

    def __init__(self, cache: ScanCache, rules: DetectionRules) -> None:
        self.cache = cache
        self._rules = rules_identity(rules)

    def _key(self, entry: SessionEntry, format: str) -> str:
        identity = repr((SUMMARY_KIND, os.path.abspath(entry.path), entry.key, entry.own_file,
                         format, self._rules))
        return hashlib.blake2b(identity.encode("utf-8", "backslashreplace"),
                               digest_size=20).hexdigest()

    @staticmethod
    def stamp(entry: SessionEntry, format: str) -> tuple[Path, str] | None:
        """The file a row is kept under (for `forget_missing`) and what the entry's summary
        depends on; None when it cannot be kept (a file changed a moment ago, one gone).

        A file's stamp (a database's with its write-ahead log), plus, for a session file
        with a folder of its own beside it (Claude Code keeps a session's subagents in
        `<session>/subagents/`), that folder's; a session of many files, all of theirs."""
        if format in SPREAD_FORMATS:
            return spread_stamp(entry)
        path = Path(os.path.abspath(entry.path))
        stamp = file_stamp(path)
        if stamp is None or not entry.own_file:
            return (path, stamp) if stamp is not None else None
        try:
            folder = os.stat(path.with_suffix("") / "subagents")
        except OSError:
            return path, stamp
        return path, f"{stamp};{folder.st_ino}:{folder.st_mtime_ns}"

    def known(self, entry: SessionEntry, format: str, stamp: str) -> SessionSummary | None:
        """The summary kept for the entry at this stamp, or None."""
        value = self.cache.lookup_key(self._key(entry, format), stamp)
        if not isinstance(value, dict):
            return None
        try:
            return SessionSummary(**value)
        except TypeError:
            return None

    def keep(self, entry: SessionEntry, format: str, stamped: tuple[Path, str],
             summary: SessionSummary) -> None:
        """Keep the summary read from the entry while its stamp was `stamped`."""
        self.cache.store_key(self._key(entry, format), stamped[0], stamped[1],
                             dataclasses.asdict(summary))


def spread_stamp(entry: SessionEntry, now: float | None = None) -> tuple[Path, str] | None:
    """The stamp of an opencode storage session: its session file and every message and
    part file of it (name, size, mtime), and the folders holding them; None when one of them
    changed a moment ago (`RACY_SECONDS`) or the session is not found.

    A stat per file, where counting reads and parses each of them."""
    from replay.core.readers.opencode_storage import session_sources

    try:
        found = session_sources(entry.path, entry.key)
    except (OSError, ReaderError):
        return None
    if found is None:
        return None
    now = now if now is not None else time.time()
    digest = hashlib.blake2b(digest_size=20)
    for source in found[1]:
        try:
            status = os.stat(source)
        except OSError:
            digest.update(f"{source.name}:-;".encode("utf-8", "backslashreplace"))
            continue
        digest.update(f"{source.name}:{status.st_ino}:{status.st_size}:"
                      f"{status.st_mtime_ns};".encode("utf-8", "backslashreplace"))
        if not stat.S_ISDIR(status.st_mode):
            if now - status.st_mtime < RACY_SECONDS:
                return None
            continue
        # (A folder's own time may be recent: what it holds is in the digest, file by file.)
        try:
            with os.scandir(source) as files:
                listed = sorted((item.name, item.stat()) for item in files
                                if not item.name.startswith("."))
        except OSError:
            return None
        for name, each in listed:
            if now - each.st_mtime < RACY_SECONDS:
                return None
            digest.update(f"{name}:{each.st_ino}:{each.st_size}:{each.st_mtime_ns};".encode(
                "utf-8", "backslashreplace"))
    # Kept under its session file (else its message folder), so a session removed is
    # dropped from the cache as a removed file is.
    return Path(os.path.abspath(found[1][0])), f"spread:{digest.hexdigest()}"


def count_one(reader_name: str, entry: SessionEntry, rules: DetectionRules
              ) -> SessionSummary | str:
    """Read one session alone, indexed, and summarise it; a failure is its one line.
    (Picklable: `count_found` runs it in a process pool.)"""
    from replay.core.corpus.tasks import unexpected
    from replay.core.readers import get_reader

    try:
        return summarize(read_entry(get_reader(reader_name), entry, indexed=True), rules)
    except ReaderError as error:
        return str(error)
    except Exception as error:  # noqa: BLE001 - a reader's bug, MemoryError, RecursionError
        # One session that cannot be counted must not end the list: its row says why.
        where = entry.path if entry.own_file else f"{entry.path}: session {entry.key}"
        return f"{where}: could not be read ({unexpected(error)})"


class _Listing:
    """The cache side of one count of a list: which entries the cache knows, the stamps of
    the others, and the rows of files gone dropped."""

    def __init__(self, stack: contextlib.ExitStack, rules: DetectionRules, cache: bool,
                 warn: Callable[[str], None] | None) -> None:
        self.memo: SummaryMemo | None = None
        if cache:
            opened = stack.enter_context(ScanCache(warn=warn))
            self.memo = SummaryMemo(opened, rules) if opened.usable else None

    def look_up(self, entries: Sequence[tuple[SessionEntry, str]]
                ) -> list[tuple[SessionSummary | None, tuple[Path, str] | None]]:
        """For each (entry, format): its kept summary, else the stamp to keep it under."""
        memo, looked = self.memo, []
        for entry, format in entries:
            stamped = memo.stamp(entry, format) if memo is not None else None
            known = memo.known(entry, format, stamped[1]) if memo is not None and \
                stamped is not None else None
            looked.append((known, None if known is not None else stamped))
        return looked

    def forget_missing(self, roots: Sequence[str | Path], seen: Sequence[SessionEntry]) -> None:
        """Drop the rows of files under `roots` that are gone (the list just made of them
        is `seen`: those are there)."""
        if self.memo is not None and roots:
            self.memo.cache.forget_missing([str(root) for root in roots],
                                           {str(entry.path) for entry in seen})

    def keep(self, entry: SessionEntry, format: str, stamped: tuple[Path, str] | None,
             summary: SessionSummary) -> None:
        if self.memo is not None and stamped is not None:
            self.memo.keep(entry, format, stamped, summary)


def count_entries(reader: Reader, entries: Sequence[SessionEntry], rules: DetectionRules,
                  *, cache: bool = True, cancelled: Callable[[], bool] = lambda: False,
                  warn: Callable[[str], None] | None = None,
                  roots: Sequence[str | Path] = ()) -> Iterator[list[Counted]]:
    """The session list's counts, in batches: first every entry the cache knows unchanged
    (one batch, maybe empty), then each other entry as it is read (one a batch), in order.

    Each session is read alone and let go (indexed: counting a 200 MB session does not hold
    its turns whole); what is read is kept for the next time unless `cache` is False
    (`--no-cache`). `roots`: the folders listed, whose rows of files now gone are dropped.
    Stops between sessions once `cancelled()` is true.
    """
    with contextlib.ExitStack() as stack:
        listing = _Listing(stack, rules, cache, warn)
        formats = [entry.format or reader.name for entry in entries]
        looked = listing.look_up(list(zip(entries, formats, strict=True)))
        yield [Counted(entry, known) for entry, (known, _) in zip(entries, looked, strict=True)
               if known is not None]
        listing.forget_missing(roots, entries)
        for entry, format, (known, stamped) in zip(entries, formats, looked, strict=True):
            if known is not None:
                continue
            if cancelled():
                return
            counted = count_one(format, entry, rules)
            if isinstance(counted, str):
                yield [Counted(entry, None, counted)]
                continue
            listing.keep(entry, format, stamped, counted)
            yield [Counted(entry, counted)]


def count_found(sessions: Sequence[FoundSession], rules: DetectionRules, jobs: int = 1,
                pool: ProcessPoolExecutor | None = None, cache: bool = True,
                warn: Callable[[str], None] | None = None, roots: Sequence[str | Path] = ()
                ) -> Iterator[tuple[FoundSession, Counted]]:
    """`replay sessions`' counts: each discovered session with its summary (or why it could
    not be read), in the order given, each as soon as it and those before it are done.

    The same rows of the scan cache as the app's session list (`SummaryMemo`): a session
    either counted is not read again while unchanged. Sessions the cache lacks are read in
    `pool` (`jobs` at once) when there is one, else here."""
    with contextlib.ExitStack() as stack:
        listing = _Listing(stack, rules, cache, warn)
        looked = listing.look_up([(session.entry, session.format) for session in sessions])
        listing.forget_missing(roots, [session.entry for session in sessions])
        todo = [session for session, (known, _) in zip(sessions, looked, strict=True)
                if known is None]
        futures = [pool.submit(count_one, session.format, session.entry, rules)
                   for session in todo] if pool is not None and jobs > 1 and len(todo) > 1 \
            else None
        done = 0
        for session, (known, stamped) in zip(sessions, looked, strict=True):
            if known is not None:
                yield session, Counted(session.entry, known)
                continue
            counted = _result(futures, done, session, rules)
            done += 1
            if isinstance(counted, str):
                yield session, Counted(session.entry, None, counted)
                continue
            listing.keep(session.entry, session.format, stamped, counted)
            yield session, Counted(session.entry, counted)


def _result(futures: list[Future[SessionSummary | str]] | None, number: int,
            session: FoundSession, rules: DetectionRules) -> SessionSummary | str:
    """The count of the `number`th session to read: from the pool, or read here when there
    is no pool or the pool broke (a worker killed): as the app's list counts, one at a
    time."""
    if futures is not None:
        try:
            return futures[number].result()
        except BrokenProcessPool:
            pass
    return count_one(session.format, session.entry, rules)
