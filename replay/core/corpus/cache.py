"""The scan cache: each session file's `scan --json` objects, kept until the file changes.

A second `scan`, `report`, `review` or session list of an unchanged corpus reads one SQLite
file instead of every session again. A result is used only while everything it was computed
from is unchanged: the file (path, size, modification time in nanoseconds, inode and device),
the work (the session, its format, the detection rules: one row per session that every
consumer shares, `corpus.rows`) and replay's own code (`code_stamp`: its version and the
size and time of each of its modules, so an edited checkout never reads results of the code
it replaced).

One SQLite file in the user cache directory (`paths.cache_dir`), in WAL mode: readers never
wait for a writer, results are written one transaction per batch, and a process killed
mid-write leaves the last whole transaction behind. A file that is not a database, or one
that breaks while in use, is set aside (renamed `.broken`) with one warning and a new one is
started; a cache that cannot be opened at all is skipped, never fatal. Only the process that
plans a corpus touches the cache (workers only scan), and only results without an error are
kept (an unreadable file may be readable next time).

The cache stays small by itself: a row of a file that is gone is dropped when a consumer
lists that file's folder (`forget_missing`), a row neither read nor written for `MAX_AGE_DAYS`
is dropped, and past `MAX_BYTES` of results the least recently used go first (`prune`, run
by a process that wrote, at most once every `PRUNE_SECONDS`).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import struct
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from replay.core import paths
from replay.core.corpus.encoded import EncodedList
from replay.core.corpus.tasks import SessionTask, is_url

CACHE_NAME = "scan-cache.sqlite3"
"""The cache's file name in `paths.cache_dir()`."""

SCHEMA = 3
"""`PRAGMA user_version` of the tables below; another number starts a new cache (3: a
row carries a summary beside its reports, and the session's key in a shared source)."""

BATCH = 64
"""Results written per transaction (and at the end of a run)."""
BIG_BYTES = 4 << 20
"""A result this big is written at once, not held in memory beside the next ones (the
report of a session of 100,000 empty turns is tens of megabytes)."""

RACY_SECONDS = 2.0
"""A file changed this recently is not cached: a write within the same timestamp tick and
size could otherwise go unseen (file times are coarser than writes on some file systems)."""

BUSY_MS = 5000
"""How long a process waits for another one's write to finish before giving up."""

MAX_AGE_DAYS = 30
"""A row neither read nor written for this long is dropped."""
MAX_BYTES = 512 << 20
"""Results kept at most (the sum of their sizes); past it, the least recently used rows go
until a quarter of it is free again."""
PRUNE_SECONDS = 3600.0
"""At most one prune an hour (a prune reads every row's size)."""
TOUCH_SECONDS = 86400.0
"""A row read is marked used again when its mark is older than this (so a read-only run
writes at most once a day per row)."""

Warn = Callable[[str], None]

_TABLES = """
CREATE TABLE IF NOT EXISTS results (
    task TEXT PRIMARY KEY,   -- hash of the work: session, format, rules (`rows.place_of`)
    path BLOB NOT NULL,      -- the file whose stamp the result is valid for (its bytes)
    entry TEXT,              -- the session's key inside that file (a database), else NULL
    stamp TEXT NOT NULL,     -- device, inode, size and mtime_ns of that file
    code TEXT NOT NULL,      -- code_stamp() of the replay that computed it
    reports BLOB NOT NULL,   -- the scan --json objects, as JSON (or `encoded`'s batches)
    summary BLOB,            -- a session list's summary of the same session (JSON), if any
    used REAL NOT NULL       -- when it was last written or read (epoch seconds)
);
CREATE INDEX IF NOT EXISTS results_path ON results (path);
CREATE INDEX IF NOT EXISTS results_used ON results (used);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value);
"""


def cache_path() -> Path:
    """Where the scan cache lives."""
    return paths.cache_dir() / CACHE_NAME


_CODE: str | None = None


def code_stamp() -> str:
    """replay's version and the size and modification time of each of its modules."""
    global _CODE
    if _CODE is None:
        import replay

        package = Path(replay.__file__).parent
        digest = hashlib.blake2b(replay.__version__.encode(), digest_size=16)
        for folder, folders, files in os.walk(package):
            folders[:] = sorted(name for name in folders if name != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    status = os.stat(os.path.join(folder, name))
                    digest.update(f"{folder[len(str(package)):]}/{name}:{status.st_size}:"
                                  f"{status.st_mtime_ns};".encode())
        _CODE = digest.hexdigest()
    return _CODE


def task_key(task: SessionTask) -> str:
    """A task's identity in the cache (the same for the same work, whatever the process)."""
    entry = task.entry
    # `repr` keeps any file name apart, undecodable bytes (surrogate escapes) too.
    identity = repr((task.source, task.format, entry.key if entry else None,
                     str(entry.path) if entry else None, task.rules, task.required))
    return hashlib.blake2b(identity.encode("utf-8", "backslashreplace"),
                           digest_size=20).hexdigest()


def stamped_file(task: SessionTask) -> Path | None:
    """The one local file a task's result depends on, or None when it cannot be cached (a
    URL, a session kept in a folder of many files)."""
    if is_url(task.source):
        return None
    entry = task.entry
    path = entry.path if entry is not None and entry.own_file else Path(task.source)
    # A pipe's copy is named after its content and written anew each time: not worth a row.
    return None if path.parent == paths.spool_dir() else path


def file_stamp(path: Path, now: float | None = None) -> str | None:
    """The stamp of a regular file, or None when it is not one (or changed too recently to
    trust its stamp: `RACY_SECONDS`).

    A SQLite database's recent writes may sit in its write-ahead log (`NAME-wal`, opencode
    keeps one while it runs) with the database file itself untouched: that file's stamp is
    part of the stamp when there is one."""
    now = now if now is not None else time.time()
    try:
        status = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(status.st_mode) or now - status.st_mtime < RACY_SECONDS:
        return None
    stamp = f"{status.st_dev}:{status.st_ino}:{status.st_size}:{status.st_mtime_ns}"
    try:
        log = os.stat(f"{path}-wal")
    except OSError:
        return stamp
    if now - log.st_mtime < RACY_SECONDS:
        return None
    return f"{stamp};wal:{log.st_ino}:{log.st_size}:{log.st_mtime_ns}"


class CacheBroken(Exception):
    """The cache file is unusable; it has been set aside."""


@dataclass
class ScanCache:
    """An open scan cache. Use as a context manager; every method is safe to call after a
    failure (the cache then just finds nothing)."""

    location: Path = field(default_factory=cache_path)
    warn: Warn | None = None
    """Told once, in one line, when the cache file was set aside."""
    _db: sqlite3.Connection | None = None
    _pending: list[tuple[str, bytes, str | None, str, str, bytes, bytes | None, float]] = \
        field(default_factory=list)
    _touched: list[str] = field(default_factory=list)
    _wrote: bool = False
    _warned: bool = False

    def __enter__(self) -> ScanCache:
        self.open()
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- opening -----------------------------------------------------------------------------

    def open(self) -> None:
        """Open (or create) the cache; a broken file is set aside and a new one started."""
        try:
            self._db = self._connect()
        except sqlite3.Error as error:
            self._db = None  # locked for too long: no cache this run
            if _broken(error):
                self._set_aside(error)
                try:
                    self._db = self._connect()
                except (sqlite3.Error, OSError):
                    self._db = None
        except OSError:
            self._db = None  # no cache directory, read-only file system: no cache

    def _connect(self) -> sqlite3.Connection:
        self.location.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.location, timeout=BUSY_MS / 1000, isolation_level=None,
                             check_same_thread=False)
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
            if db.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() != "wal":
                raise sqlite3.OperationalError("WAL mode refused")
            db.execute("PRAGMA synchronous = NORMAL")
            if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
                with _transaction(db):
                    if db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA:
                        return db  # another process made it meanwhile
                    db.execute("DROP TABLE IF EXISTS results")
                    db.execute("DROP TABLE IF EXISTS meta")
                    # (not `executescript`, which commits first)
                    for statement in filter(str.strip, _TABLES.split(";")):
                        db.execute(statement)
                    db.execute(f"PRAGMA user_version = {SCHEMA}")
        except BaseException:
            db.close()
            raise
        return db

    def _set_aside(self, error: BaseException) -> None:
        """Move a broken cache file out of the way (with its WAL files), saying so once."""
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            self._db = None
        broken = self.location.with_name(self.location.name + ".broken")
        try:
            if self.location.exists():
                os.replace(self.location, broken)
            for suffix in ("-wal", "-shm"):
                Path(f"{self.location}{suffix}").unlink(missing_ok=True)
        except OSError:
            pass
        if self.warn is not None and not self._warned:
            self._warned = True
            self.warn(f"the scan cache {self.location} could not be read ({error}); set it "
                      f"aside as {broken.name} and started a new one")

    def _failed(self, error: sqlite3.Error) -> None:
        """A failure while in use: a corrupt file is set aside, anything else (a lock held
        too long) only disables the cache for this run."""
        self._pending.clear()
        if _broken(error):
            self._set_aside(error)
        elif self._db is not None:
            self._db.close()
            self._db = None

    def close(self) -> None:
        """Write what is pending, prune when this run wrote, and close."""
        self.flush()
        if self._wrote:
            self.prune()
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def usable(self) -> bool:
        """False when there is no cache this run (it could not be opened)."""
        return self._db is not None

    # -- use ---------------------------------------------------------------------------------

    def lookup(self, task: SessionTask, stamp: str) -> list[dict[str, Any]] | None:
        """The task's reports when they were computed from a file with this stamp by this
        code, else None."""
        reports = self.lookup_key(task_key(task), stamp)
        return reports if isinstance(reports, list) else None

    def store(self, task: SessionTask, path: Path, stamp: str,
              reports: list[dict[str, Any]]) -> None:
        """Keep a task's reports (written with the next batch)."""
        self.store_key(task_key(task), path, stamp, reports)

    def lookup_key(self, key: str, stamp: str) -> Any:
        """The JSON value kept under `key` for a file with this stamp, by this code; None
        when there is none."""
        return self._lookup(key, stamp, "reports")

    def lookup_summary(self, key: str, stamp: str) -> Any:
        """The summary kept beside the value under `key` (`store_key(summary=)`), read alone
        (a session list never reads the reports); None when there is none."""
        return self._lookup(key, stamp, "summary")

    def holds(self, keys: Sequence[str], stamp: str) -> bool:
        """True when a value is kept under every one of `keys` for this stamp, by this code
        (asked before reading them one by one: a value kept in many rows)."""
        if self._db is None:
            return False
        if not keys:
            return True
        try:
            found = 0
            for first in range(0, len(keys), 500):
                part = keys[first:first + 500]
                found += self._db.execute(
                    f"SELECT count(*) FROM results WHERE task IN ({','.join('?' * len(part))})"
                    " AND stamp = ? AND code = ?", (*part, stamp, code_stamp())).fetchone()[0]
        except sqlite3.Error as error:
            self._failed(error)
            return False
        return found == len(keys)

    def lookup_any(self, key: str) -> tuple[str, Any] | None:
        """The stamp and value kept under `key` by this code, whatever the stamp: for work
        that can go on from an older result (a file that only grew since); None when there
        is none."""
        found: list[str] = []
        value = self._lookup(key, None, "reports", found)
        return (found[0], value) if value is not None else None

    def _lookup(self, key: str, stamp: str | None, column: str,
                found: list[str] | None = None) -> Any:
        if self._db is None:
            return None
        try:
            row = self._db.execute(f"SELECT stamp, code, {column}, used FROM results "
                                   "WHERE task = ?", (key,)).fetchone()
        except sqlite3.Error as error:
            self._failed(error)
            return None
        if row is None or (stamp is not None and row[0] != stamp) or row[1] != code_stamp() \
                or row[2] is None:
            return None
        if found is not None:
            found.append(row[0])
        try:
            value = decoded(row[2])
        except (ValueError, TypeError, struct.error):
            return None  # (not written by this code: computed again)
        if time.time() - row[3] > TOUCH_SECONDS:
            self._touched.append(key)
            if len(self._touched) >= BATCH * 16:
                self.flush()
        return value

    def store_key(self, key: str, path: Path, stamp: str, value: Any, *,
                  summary: Any = None, entry: str | None = None) -> None:
        """Keep a JSON value computed from the file at `path` with this stamp (written with
        the next batch); `key` names the work, as `task_key` does. `summary`: a small value
        kept beside it, read alone (`lookup_summary`); `entry`: the session's key when
        `path` holds many (`forget_missing(listed=)` drops the rows of keys gone)."""
        if self._db is None:
            return
        try:
            data = encoded(value)
            brief = orjson.dumps(summary) if summary is not None else None
        except TypeError:
            return  # text orjson cannot write (never from a reader's report): not kept
        self._pending.append((key, os.fsencode(path), entry, stamp, code_stamp(), data, brief,
                              time.time()))
        if len(self._pending) >= BATCH or len(data) >= BIG_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write the pending results (and the marks of rows read) in one transaction."""
        if self._db is None or not (self._pending or self._touched):
            self._pending.clear()
            self._touched.clear()
            return
        rows, self._pending = self._pending, []
        touched, self._touched = self._touched, []
        now = time.time()
        try:
            with _transaction(self._db):
                self._db.executemany(
                    "INSERT OR REPLACE INTO results (task, path, entry, stamp, code, reports, "
                    "summary, used) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
                self._db.executemany("UPDATE results SET used = ? WHERE task = ?",
                                     [(now, key) for key in touched])
        except sqlite3.Error as error:
            self._failed(error)
            return
        self._wrote = self._wrote or bool(rows)

    def prune(self, now: float | None = None, *, force: bool = False) -> int:
        """Drop the rows not used for `MAX_AGE_DAYS`, then the least recently used past
        `MAX_BYTES`; at most once every `PRUNE_SECONDS` (by any process) unless `force`.
        Returns the rows dropped."""
        if self._db is None:
            return 0
        now = now if now is not None else time.time()
        db = self._db
        try:
            with _transaction(db):
                last = db.execute("SELECT value FROM meta WHERE name = 'pruned'").fetchone()
                if not force and last is not None and now - float(last[0]) < PRUNE_SECONDS:
                    return 0
                db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('pruned', ?)",
                           (now,))
                dropped = db.execute("DELETE FROM results WHERE used < ?",
                                     (now - MAX_AGE_DAYS * 86400,)).rowcount
                total = db.execute("SELECT coalesce(sum(length(reports) + "
                                   "coalesce(length(summary), 0)), 0) FROM results").fetchone()[0]
                if total > MAX_BYTES:
                    # Oldest first, until a quarter of the bound is free.
                    over, cut = total - MAX_BYTES * 3 // 4, None
                    for used, size in db.execute(
                            "SELECT used, length(reports) + coalesce(length(summary), 0) "
                            "FROM results ORDER BY used"):
                        over -= size
                        if over <= 0:
                            cut = used
                            break
                    if cut is not None:
                        dropped += db.execute("DELETE FROM results WHERE used <= ?",
                                              (cut,)).rowcount
        except (sqlite3.Error, ValueError, TypeError) as error:
            if isinstance(error, sqlite3.Error):
                self._failed(error)
            return 0
        return dropped

    def forget_missing(self, roots: Iterable[str], seen: set[str],
                       listed: Mapping[str, Collection[str]] | None = None) -> int:
        """Drop the results of files under `roots` (folders or files as given) that are gone;
        `seen` are paths found this run (not looked at again). `listed`: for a file holding
        many sessions (a database) just listed whole, the keys of its sessions: the rows of
        its other sessions (deleted inside it) go too. Returns the rows dropped."""
        if self._db is None:
            return 0
        dropped = self._forget_entries(listed) if listed else 0
        gone: set[bytes] = set()
        known = {os.fsencode(form) for path in seen
                 for form in (path, os.path.abspath(path))}
        # Rows are kept under the path as given (`scan`) or absolute (the session lists).
        forms = {os.fsencode(form) for root in roots for form in (root, os.path.abspath(root))}
        try:
            for root in sorted(forms):
                prefix = root.rstrip(os.sep.encode()) + os.sep.encode()
                for (path,) in self._db.execute(
                        "SELECT DISTINCT path FROM results WHERE path = ? OR "
                        "substr(path, 1, ?) = ?", (root, len(prefix), prefix)):
                    if path not in known and not os.path.lexists(path):
                        gone.add(path)
            if gone:
                with _transaction(self._db):
                    self._db.executemany("DELETE FROM results WHERE path = ?",
                                         [(path,) for path in sorted(gone)])
        except sqlite3.Error as error:
            self._failed(error)
            return 0
        return dropped + len(gone)

    def _forget_entries(self, listed: Mapping[str, Collection[str]]) -> int:
        """Drop the rows of sessions no longer in the file that held them."""
        assert self._db is not None
        gone: list[tuple[bytes, str]] = []
        try:
            for source, keys in listed.items():
                path = os.fsencode(os.path.abspath(source))
                known = set(keys)
                gone.extend((path, entry) for (entry,) in self._db.execute(
                    "SELECT DISTINCT entry FROM results WHERE path = ? AND entry IS NOT NULL",
                    (path,)) if entry not in known)
            if gone:
                with _transaction(self._db):
                    self._db.executemany("DELETE FROM results WHERE path = ? AND entry = ?",
                                         gone)
        except sqlite3.Error as error:
            self._failed(error)
            return 0
        return len(gone)


_PACKED = b"\x00replay-batches-1\n"
"""How a stored value holding `EncodedList`s begins (no JSON text begins with NUL); then the
JSON's length, the JSON, and each batch as its length and its bytes (`_LENGTH`)."""

_LENGTH = struct.Struct("<Q")

_BATCHES = "\u0000batches"
"""The key of the object standing in the stored JSON for an `EncodedList`: `[first batch,
batches, elements]` (no JSON a reader gives has a key holding NUL)."""


def encoded(value: Any) -> bytes:
    """A JSON value as the cache stores it: its JSON, except that each `EncodedList` in it (a
    report's empty turns) is kept as its compressed batches, never decoded nor joined into
    one JSON text (a report of 166,000 empty turns: 26 MB as JSON, 2 MB so). Raises
    TypeError for a value orjson cannot write."""
    batches: list[bytes] = []

    def stand_in(item: Any) -> Any:
        if not isinstance(item, EncodedList):
            raise TypeError(type(item).__name__)
        parts = item.batches()
        if not parts:
            return []  # (given back as a plain empty list)
        marker = {_BATCHES: [len(batches), len(parts), len(item)]}
        batches.extend(parts)
        return marker

    text = orjson.dumps(value, default=stand_in)
    if not batches:
        return text
    pieces = [_PACKED, _LENGTH.pack(len(text)), text]
    for batch in batches:
        pieces += (_LENGTH.pack(len(batch)), batch)
    return b"".join(pieces)


def decoded(data: bytes) -> Any:
    """The value `encoded` gave these bytes for (each `EncodedList` given back as its
    batches). Raises ValueError (orjson's JSONDecodeError is one) for bytes it did not
    write."""
    if not data.startswith(_PACKED):
        return orjson.loads(data)
    view = memoryview(data)
    (length,) = _LENGTH.unpack_from(view, len(_PACKED))
    start = len(_PACKED) + _LENGTH.size
    text, at = view[start:start + length], start + length
    batches: list[bytes] = []
    while at < len(view):
        (size,) = _LENGTH.unpack_from(view, at)
        at += _LENGTH.size
        if at + size > len(view):
            raise ValueError("a stored batch is cut")
        batches.append(bytes(view[at:at + size]))
        at += size
    return _revived(orjson.loads(text), batches)


def _revived(value: Any, batches: list[bytes]) -> Any:
    """A stored value with each `_BATCHES` stand-in made the `EncodedList` it stood for."""
    if isinstance(value, dict):
        marker = value.get(_BATCHES) if len(value) == 1 else None
        if marker is not None:
            first, parts, count = marker
            if first + parts > len(batches):
                raise ValueError("a stored list lacks batches")
            return EncodedList.from_batches(batches[first:first + parts], count)
        return {key: _revived(item, batches) for key, item in value.items()}
    if isinstance(value, list):
        return [_revived(item, batches) for item in value]
    return value


def _broken(error: sqlite3.Error) -> bool:
    """True when the error says the file itself is bad (not a database, corrupt), not that
    it is busy."""
    name = getattr(error, "sqlite_errorname", "")
    return name in ("SQLITE_NOTADB", "SQLITE_CORRUPT") or type(error) is sqlite3.DatabaseError


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *_: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
