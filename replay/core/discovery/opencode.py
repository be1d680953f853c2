"""opencode: `<data>/opencode/opencode.db` (a channel build writes `opencode-<channel>.db`)
and, from versions before the database, `<data>/opencode/storage/session/<project>/<id>.json`
beside `storage/message/` and `storage/part/`.

The database's `session` table names each session's title, working directory (`directory`)
and times, so the list needs no message read. opencode moved the storage folder into the
database once (1.2): a session in both is listed once, from the database.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from replay.core.discovery.found import FoundSession, text_of
from replay.core.discovery.places import OPENCODE, Place
from replay.core.readers.base import ReaderError, SessionEntry
from replay.core.readers.opencode_sqlite import session_rows
from replay.core.session.model import parse_time

DATABASE = "opencode-db"
STORAGE = "opencode-storage"


def find(place: Place) -> list[FoundSession]:
    """The sessions of every database in the data folder, then those only in `storage/`."""
    found: list[FoundSession] = []
    for database in databases(place.path):
        found.extend(_database(database))
    known = {session.session_id for session in found}
    found.extend(session for session in _storage(place.path / "storage")
                 if session.session_id not in known)
    return found


def databases(folder: Path) -> list[Path]:
    """`opencode.db` first, then any channel's `opencode-*.db`."""
    try:
        names = sorted(name for name in os.listdir(folder)
                       if name.startswith("opencode") and name.endswith(".db"))
    except OSError:
        return []
    names.sort(key=lambda name: name != "opencode.db")
    return [folder / name for name in names if (folder / name).is_file()]


def _database(database: Path) -> list[FoundSession]:
    try:
        rows = session_rows(database)
    except ReaderError as error:
        entry = SessionEntry(key=database.name, path=database, format=DATABASE,
                             problem=f"skipped {error}")
        return [FoundSession(OPENCODE, entry)]
    found = []
    for row in rows:
        session_id = str(row["id"])
        title = text_of(row.get("title"))
        started = parse_time(row.get("time_created"))[1] or \
            parse_time(row.get("first_message"))[1]
        entry = SessionEntry(key=session_id, path=database, format=DATABASE, title=title,
                             started=started)
        found.append(FoundSession(
            OPENCODE, entry, session_id=session_id, title=title,
            project=text_of(row.get("directory")), started=started,
            updated=parse_time(row.get("time_updated"))[1] or started))
    return found


def _storage(root: Path) -> list[FoundSession]:
    found: list[FoundSession] = []
    try:
        projects = sorted(entry.path for entry in os.scandir(root / "session") if entry.is_dir())
    except OSError:
        return found
    for project in projects:
        try:
            files = sorted(entry.path for entry in os.scandir(project)
                           if entry.name.endswith(".json") and not entry.name.startswith("."))
        except OSError:
            continue
        for file in files:
            found.append(_session_file(Path(file)))
    return found


def _session_file(file: Path) -> FoundSession:
    session_id = file.stem
    try:
        info = orjson.loads(file.read_bytes())
    except (OSError, orjson.JSONDecodeError) as error:
        why = error.strerror if isinstance(error, OSError) else "not valid JSON"
        entry = SessionEntry(key=session_id, path=file, own_file=True, format=STORAGE,
                             problem=f"skipped {file}: {why or error}")
        return FoundSession(OPENCODE, entry, session_id=session_id)
    info = info if isinstance(info, dict) else {}
    times = info.get("time") if isinstance(info.get("time"), dict) else {}
    title = text_of(info.get("title"))
    started = parse_time(times.get("created"))[1]
    entry = SessionEntry(key=session_id, path=file, own_file=True, format=STORAGE, title=title,
                         started=started)
    return FoundSession(OPENCODE, entry, session_id=text_of(info.get("id")) or session_id,
                        title=title, project=text_of(info.get("directory")), started=started,
                        updated=parse_time(times.get("updated"))[1] or started)
