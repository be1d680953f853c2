"""opencode's SQLite database (`<data dir>/opencode.db`), read strictly read-only.

Tables (`session/session.sql.ts`): `session(id, title, time_created, ...)`,
`message(id, session_id, time_created, time_updated, data)` and
`part(id, message_id, session_id, time_created, time_updated, data)`, where `data` is the JSON
of the message info or part without its ids. opencode may be writing while we read (WAL mode):
a read-only connection sees the last committed state and never changes the file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

from replay.core.readers._opencode_parts import turn_from_message
from replay.core.readers.base import (
    Progress,
    Reader,
    ReaderError,
    SessionEntry,
    UnreadablePath,
)
from replay.core.session.model import Part, PartsLoader, Session, Source, Turn, parse_time

SQLITE_MAGIC = b"SQLite format 3\x00"

BUSY_SECONDS = 2.0
"""How long to wait for a lock held by a writer before giving up with a clean error."""

SESSION_FIELDS = ("title", "slug", "directory", "version", "parent_id", "project_id")
"""Optional `session` columns copied when present (columns vary between opencode versions)."""


def database_file(path: Path) -> Path | None:
    """The database at `path`: the file itself, or `opencode.db` (or `opencode*.db`) in a dir."""
    if not path.is_dir():
        return path
    preferred = path / "opencode.db"
    if preferred.is_file():
        return preferred
    others = sorted(p for p in path.glob("opencode*.db") if p.is_file())
    return others[0] if others else None


def _quiet_wal(database: Path) -> bool:
    """True for a WAL-mode database with no WAL file: nobody is writing it right now.

    A read-only connection to such a file would leave new `-wal` and `-shm` files beside it
    (only a writer can remove them); reading it as immutable leaves the folder as it was.
    """
    try:
        with open(database, "rb") as handle:
            header = handle.read(20)
    except OSError:
        return False
    # Bytes 18 and 19 of the header are the write and read format versions; 2 means WAL.
    wal_mode = len(header) == 20 and header[18] == 2
    return wal_mode and not Path(f"{database}-wal").exists()


def _uri(path: Path, *, immutable: bool = False) -> str:
    suffix = "&immutable=1" if immutable else ""
    return f"file:{quote(str(path.resolve()))}?mode=ro{suffix}"


def _connect(path: Path, *, immutable: bool | None = None) -> sqlite3.Connection:
    """A read-only connection; immutable by default only when nobody is writing (`_quiet_wal`)."""
    if immutable is None:
        immutable = _quiet_wal(path)
    connection = sqlite3.connect(_uri(path, immutable=immutable), uri=True, timeout=BUSY_SECONDS,
                                 check_same_thread=False)
    # Belt and braces: even a bug here cannot write to the user's database.
    connection.execute("PRAGMA query_only = ON")
    return connection


def _tables(connection: sqlite3.Connection) -> set[str]:
    rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {str(row[0]) for row in rows}


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in connection.execute(f"PRAGMA table_info({table})")}


def sniff(path: Path, head: bytes) -> bool:
    """A SQLite file (or opencode's data directory, holding `opencode.db`) with message and
    part tables. A directory that holds other transcripts beside the database is a folder of
    transcripts, not opencode's own: the folder reader reads the database among them."""
    database = database_file(path)
    if database is None or (database != path and _holds_other_transcripts(path)):
        return False
    if database != path:
        with open(database, "rb") as handle:
            head = handle.read(len(SQLITE_MAGIC))
    if not head.startswith(SQLITE_MAGIC):
        return False
    try:
        with closing(_connect(database)) as connection:
            return {"message", "part"} <= _tables(connection)
    except sqlite3.OperationalError as error:
        # A locked opencode.db is still ours: reading it then says it is locked.
        return _is_lock(error) and database.name.startswith("opencode")
    except sqlite3.Error:
        return False


OWN_FILES = frozenset({"auth.json", "mcp-auth.json"})
"""Files opencode keeps beside its database (not transcripts)."""


def _holds_other_transcripts(directory: Path) -> bool:
    """True when a file of the directory other than opencode's own is named as a transcript."""
    from replay.core.readers.folder import is_candidate

    try:
        names = [entry for entry in directory.iterdir() if entry.is_file()]
    except OSError:
        return False
    return any(is_candidate(entry) and not entry.name.startswith("opencode")
               and entry.name not in OWN_FILES for entry in names)


def _is_lock(error: sqlite3.Error) -> bool:
    text = str(error)
    return "locked" in text or "busy" in text


def _problem(database: Path, error: sqlite3.Error) -> ReaderError:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    if _is_lock(error):
        return ReaderError(f"{database}: database is locked by another program ({text}); "
                           "try again in a moment")
    return ReaderError(f"{database}: cannot be read as an opencode database ({text})")


def _checked(connection: sqlite3.Connection) -> sqlite3.Connection:
    """The connection, once a first query worked; closed if it did not."""
    try:
        _tables(connection)
    except sqlite3.Error:
        connection.close()
        raise
    return connection


@contextmanager
def _opened(database: Path) -> Iterator[tuple[sqlite3.Connection, bool]]:
    """A read-only connection, and whether it had to fall back to immutable mode."""
    immutable = False
    try:
        connection = _checked(_connect(database))
    except sqlite3.OperationalError as error:
        if _is_lock(error):
            raise _problem(database, error) from None
        # A read-only directory cannot hold the WAL index file; read the main file as it is.
        try:
            connection = _checked(_connect(database, immutable=True))
        except sqlite3.Error:
            raise _problem(database, error) from None
        immutable = True
    except sqlite3.Error as error:
        raise _problem(database, error) from None
    try:
        yield connection, immutable
    finally:
        connection.close()


def _load_json(value: object) -> dict[str, Any] | None:
    if not isinstance(value, (str, bytes)):
        return None
    try:
        loaded = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    return loaded if isinstance(loaded, dict) else None


def _message_parts(connection: sqlite3.Connection, message_ids: list[str], session: Session | None
                   ) -> dict[str, list[dict[str, Any]]]:
    """Parts of the given messages, grouped by message, in id order."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    # Chunks stay under SQLite's bound-variable limit.
    for start in range(0, len(message_ids), ORDER_CHUNK):
        chunk = message_ids[start:start + ORDER_CHUNK]
        marks = ", ".join("?" * len(chunk))
        rows = connection.execute(
            f"SELECT id, message_id, data FROM part WHERE message_id IN ({marks}) "
            "ORDER BY message_id, id", chunk)
        for part_id, message_id, data in rows:
            raw = _load_json(data)
            if raw is None:
                said = f"part {part_id}: data is not a JSON object"
                if isinstance(session, _Said):
                    session.warn_part(str(message_id), str(part_id), said)
                elif session is not None:
                    session.warn(said)
                continue
            grouped.setdefault(str(message_id), []).append(
                {**raw, "id": part_id, "messageID": message_id})
    return grouped


CHUNK = 64
"""Messages whose parts are read and made into turns at a time: a session's parts are never
all parsed at once (a chunk's are, then its turns hold them shortened)."""

ORDER_CHUNK = 500
"""The chunk the warnings about parts are ordered by, message id then part id within each
(as the reader has always said them)."""


class _Said:
    """Warnings held back, to be given to the session later in the order a whole read gave
    them (every part's before any turn's; parts' by ORDER_CHUNK, message id and part id)."""

    def __init__(self) -> None:
        self.said: list[tuple[tuple[Any, ...], str, bool]] = []
        self.places: dict[str, int] = {}
        """Position in the session of each message of the chunk being read."""

    def warn(self, message: str, *, skipped: bool = True) -> None:
        """Keep one warning, in the order given."""
        self.said.append(((len(self.said),), message, skipped))

    def warn_part(self, message_id: str, part_id: str, message: str) -> None:
        """Keep one warning about a part, ordered as a whole read ordered it."""
        place = self.places.get(message_id, 0) // ORDER_CHUNK
        self.said.append(((place, message_id, part_id), message, True))

    def give(self, session: Session) -> None:
        """Give the warnings kept to the session, in order."""
        for _, message, skipped in sorted(self.said, key=lambda said: said[0]):
            session.warn(message, skipped=skipped)


def _turns(connection: sqlite3.Connection, database: Path, rows: list[tuple[Any, ...]],
           session: Session | None, *, shorten_long: bool) -> list[Turn]:
    """Turns for `(id, data)` message rows, with their parts, CHUNK messages at a time (a
    turn's long parts shortened as they are made, so a session of 50 MB of parts holds a
    chunk's parts parsed, not all of them)."""
    # The messages' warnings first, as a whole read gave them; each message's data is
    # parsed again with its chunk (parsed all at once they were 4 times their JSON).
    kept: list[tuple[str, Any]] = []
    for message_id, data in rows:
        if _load_json(data) is None:
            if session is not None:
                session.warn(f"message {message_id}: data is not a JSON object")
            continue
        kept.append((str(message_id), data))
    parts_said, turns_said = (_Said(), _Said()) if session is not None else (None, None)
    turns: list[Turn] = []
    for start in range(0, len(kept), CHUNK):
        chunk = [(message_id, {**(_load_json(data) or {}), "id": message_id})
                 for message_id, data in kept[start:start + CHUNK]]
        if parts_said is not None:
            parts_said.places = {message_id: start + number
                                 for number, (message_id, _) in enumerate(chunk)}
        parts = _message_parts(connection, [message_id for message_id, _ in chunk],
                               parts_said)  # type: ignore[arg-type]
        turns.extend(
            turn_from_message(info, parts.pop(message_id, []),
                              Source(str(database), record=f"message:{message_id}"),
                              turns_said,  # type: ignore[arg-type]
                              fallback_id=message_id, shorten_long=shorten_long)
            for message_id, info in chunk)
    if session is not None and parts_said is not None and turns_said is not None:
        parts_said.give(session)
        turns_said.give(session)
    return turns


def _loader(database: Path) -> PartsLoader:
    """Reads the full parts of one turn back from its rows."""

    def load(turn: Turn) -> list[Part]:
        try:
            with _opened(database) as (connection, _):
                rows = connection.execute("SELECT id, data FROM message WHERE id = ?",
                                          (turn.id,)).fetchall()
                turns = _turns(connection, database, rows, None, shorten_long=False)
        except (ReaderError, sqlite3.Error) as error:
            raise ValueError(str(error)) from None
        if not turns:
            raise ValueError(f"{database}: message {turn.id} is gone")
        return turns[0].parts

    return load


def _session_rows(connection: sqlite3.Connection, only: str | None = None
                  ) -> list[dict[str, Any]]:
    """Every session (from the session table, plus ids only messages mention), oldest first;
    just the one with id `only` when it is given."""
    arguments = (only,) if only is not None else ()
    sessions: dict[str, dict[str, Any]] = {}
    if "session" in _tables(connection):
        columns = _columns(connection, "session")
        if "id" in columns:
            wanted = ["id"] + [c for c in (*SESSION_FIELDS, "time_created") if c in columns]
            where = "WHERE id = ?" if only is not None else ""
            for row in connection.execute(f"SELECT {', '.join(wanted)} FROM session {where}",
                                          arguments):
                record = dict(zip(wanted, row, strict=True))
                sessions[str(record["id"])] = record
    message_columns = _columns(connection, "message")
    time_column = "MIN(time_created)" if "time_created" in message_columns else "NULL"
    where = "WHERE session_id = ?" if only is not None else ""
    for session_id, first in connection.execute(
            f"SELECT session_id, {time_column} FROM message {where} GROUP BY session_id",
            arguments):
        record = sessions.setdefault(str(session_id), {"id": str(session_id), "orphan": True})
        record.setdefault("first_message", first)
    return sorted(sessions.values(), key=_session_order)


def _session_order(record: dict[str, Any]) -> tuple[float, str]:
    seconds = parse_time(record.get("time_created"))[1]
    if seconds is None:
        seconds = parse_time(record.get("first_message"))[1]
    return (seconds if seconds is not None else float("inf"), str(record["id"]))


def _read_session(connection: sqlite3.Connection, database: Path, record: dict[str, Any],
                  order: str) -> Session:
    session_id = str(record["id"])
    session = Session(path=str(database), format=READER.name, session_id=session_id)
    if isinstance(record.get("title"), str) and record["title"]:
        session.title = record["title"]
    for field in SESSION_FIELDS[1:]:
        if isinstance(record.get(field), str) and record[field]:
            session.meta[field] = record[field]
    if record.get("orphan"):
        session.warn(f"session {session_id}: not in the session table, read from its messages",
                     skipped=False)
    rows = connection.execute(
        f"SELECT id, data FROM message WHERE session_id = ? ORDER BY {order}", (session_id,)
    ).fetchall()
    for turn in _turns(connection, database, rows, session, shorten_long=True):
        session.add(turn)
    session.loader = _loader(database)
    return session


def read(path: Path, progress: Progress | None = None) -> list[Session]:
    """Every session in the database, oldest first."""
    return _read(path, progress)


def read_session(path: Path, session_id: str | None) -> Session | None:
    """The session with this id (the newest one for None), or None when there is none."""
    sessions = _read(path, None, only=session_id, newest=session_id is None)
    return sessions[0] if sessions else None


def list_sessions(path: Path) -> list[SessionEntry]:
    """Every session with its title and start, oldest first, none of them read."""
    database = database_file(path)
    if database is None:
        raise UnreadablePath(f"{path}: no opencode.db in this directory")
    try:
        with _opened(database) as (connection, _immutable):
            records = _session_rows(connection)
    except sqlite3.Error as error:
        raise _problem(database, error) from None
    entries = []
    for record in records:
        started = _session_order(record)[0]
        title = record.get("title")
        entries.append(SessionEntry(
            key=str(record["id"]), path=path, title=title if isinstance(title, str) else None,
            started=started if started != float("inf") else None))
    return entries


def session_rows(path: Path) -> list[dict[str, Any]]:
    """Every session's own row (`id`, and of `title, slug, directory, version, parent_id,
    project_id, time_created, time_updated` those the table has), oldest first, none read:
    for a list of the sessions on this machine. Raises ReaderError."""
    database = database_file(path)
    if database is None:
        raise UnreadablePath(f"{path}: no opencode.db in this directory")
    try:
        with _opened(database) as (connection, _immutable):
            records = _session_rows(connection)
            if "session" in _tables(connection) and \
                    "time_updated" in _columns(connection, "session"):
                updated = dict(connection.execute("SELECT id, time_updated FROM session"))
                for record in records:
                    record["time_updated"] = updated.get(record["id"])
    except sqlite3.Error as error:
        raise _problem(database, error) from None
    return records


def _read(path: Path, progress: Progress | None, only: str | None = None,
          newest: bool = False) -> list[Session]:
    database = database_file(path)
    if database is None:
        raise UnreadablePath(f"{path}: no opencode.db in this directory")
    sessions: list[Session] = []
    try:
        with _opened(database) as (connection, immutable):
            tables = _tables(connection)
            if not {"message", "part"} <= tables:
                raise ReaderError(f"{database}: no `message` and `part` tables; expected an "
                                  "opencode database")
            order = "time_created, id" if "time_created" in _columns(connection, "message") \
                else "id"
            records = _session_rows(connection, only)
            if newest:
                records = records[-1:]
            for done, record in enumerate(records, start=1):
                session = _read_session(connection, database, record, order)
                if immutable:
                    session.warn("read as immutable (read-only folder): writes still in the WAL "
                                 "file are not shown", skipped=False)
                sessions.append(session)
                if progress is not None:
                    progress(done, len(records))
    except sqlite3.Error as error:
        raise _problem(database, error) from None
    return sessions


READER = Reader(
    name="opencode-db",
    title="opencode SQLite database",
    sniff=sniff,
    read=read,
    read_session=read_session,
    list_sessions=list_sessions,
    priority=19,
    directories=True,
)


def message_stamps(path: Path) -> dict[str, tuple[int, int, int]]:
    """Per session id, `(messages, latest creation, latest update)` of its messages: what
    changes when a session gets a message (for following a database, where an older session
    may be continued). Raises ReaderError."""
    database = database_file(path)
    if database is None:
        raise UnreadablePath(f"{path}: no opencode.db in this directory")
    try:
        with _opened(database) as (connection, _immutable):
            if "message" not in _tables(connection):
                return {}
            rows = connection.execute(
                "SELECT session_id, COUNT(*), MAX(time_created), MAX(time_updated) "
                "FROM message GROUP BY session_id").fetchall()
    except sqlite3.Error as error:
        raise _problem(database, error) from None
    return {str(sid): (int(count), int(created or 0), int(updated or 0))
            for sid, count, created, updated in rows}


def message_ids_created_by(path: Path, session_id: str, created: int) -> frozenset[str]:
    """The ids of a session's messages created at or before `created` (the time of its
    latest one when watching began). Raises ReaderError."""
    database = database_file(path)
    if database is None:
        raise UnreadablePath(f"{path}: no opencode.db in this directory")
    try:
        with _opened(database) as (connection, _immutable):
            rows = connection.execute(
                "SELECT id FROM message WHERE session_id = ? AND time_created <= ?",
                (session_id, created)).fetchall()
    except sqlite3.Error as error:
        raise _problem(database, error) from None
    return frozenset(str(row[0]) for row in rows)
