"""What a followed folder holds: session files and multi-session sources, as `FolderFollower`
keeps them between polls, and the checks that decide what is one (`folder`)."""

from __future__ import annotations

import os
from pathlib import Path

from replay.core.live.follow import SessionFollower
from replay.core.readers import ReaderError, get_reader
from replay.core.readers.base import Reader

SOURCE_READERS = ("opencode-db", "opencode-storage")
"""Readers of folders or databases holding many sessions, each followed on its own."""

Stat = tuple[int, int, int]
"""(inode, size, mtime in ns): what changes when a file is written or replaced."""


def stat_key(status: os.stat_result) -> Stat:
    """The `Stat` of a stat result."""
    return (status.st_ino, status.st_size, status.st_mtime_ns)


def is_sidechain(path: Path, names: set[str]) -> bool:
    """True for a Claude Code subagent file or folder (followed with its session)."""
    name = path.name
    if name.startswith("agent-") and name.endswith(".jsonl"):
        return True
    return f"{name}.jsonl" in names or name == "subagents"


def source_reader(path: Path) -> Reader | None:
    """The reader of a multi-session source at `path`, if it is one."""
    for name in SOURCE_READERS:
        reader = get_reader(name)
        try:
            if reader.sniff(path, b"" if path.is_dir() else sqlite_head(path)):
                return reader
        except (OSError, ValueError, ReaderError):
            continue
    return None


def sqlite_head(path: Path) -> bytes:
    """The first bytes of a file (the SQLite magic is 16), or b"" when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read(16)
    except OSError:
        return b""


class SessionFile:
    """One session file of the folder."""

    def __init__(self, path: Path, stat: Stat | None, old: bool) -> None:
        self.path = path
        self.stat = stat
        """Its stat when last looked at."""
        self.start_stat = stat if old else None
        """Its stat when watching began (None: it appeared later)."""
        self.follower: SessionFollower | None = None
        self.announced = False
        self.skipped = False

    @property
    def baseline(self) -> int | None:
        """Bytes it held when watching began (None: a new file, read from its start)."""
        return None if self.start_stat is None else self.start_stat[1]

    def look(self) -> bool:
        """Stat it again; True when it changed since the last look."""
        now = stat_now(self.path)
        changed = now != self.stat
        self.stat = now
        return changed


class SessionSource:
    """A database or storage tree of many sessions: one follower per followed session."""

    def __init__(self, path: Path, reader: Reader) -> None:
        self.path = path
        self.reader = reader
        self.known: set[str] | None = None
        self.followers: dict[str, SessionFollower] = {}
        self.new: set[str] = set()
        self.failed = False
        self.listed: tuple[object, ...] | None = None
        self.message_times: dict[str, int] | None = None
        """Storage: each session's message folder's time when last looked at."""
        self.start_messages: dict[str, frozenset[str]] = {}
        """Storage: the message ids each session held when watching began."""
        self.resumed: set[str] = set()
        """Sessions there at the start that got a message later (now followed)."""
        self.database_stamps: dict[str, tuple[int, int, int]] | None = None
        """Database: each session's (messages, latest creation, latest update) when last
        looked at."""
        self.database_start: dict[str, int] = {}
        """Database: the creation time of each session's latest message when watching
        began."""

    def storage_messages(self) -> Path | None:
        """The `message/` folder of a storage tree (None for a database)."""
        if self.reader.name != "opencode-storage":
            return None
        root = self.path / "storage" if (self.path / "storage").is_dir() else self.path
        return root / "message"

    def look_at_messages(self) -> list[str]:
        """Storage: the sessions whose message folder changed since the last look (none the
        first time, when the messages each session holds are noted instead)."""
        folder = self.storage_messages()
        if folder is None:
            return []
        times: dict[str, int] = {}
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    try:
                        times[entry.name] = entry.stat().st_mtime_ns
                    except OSError:
                        continue
        except OSError:
            return []
        before, self.message_times = self.message_times, times
        if before is None:
            for session_id in times:
                try:
                    names = os.listdir(folder / session_id)
                except OSError:
                    names = []
                self.start_messages[session_id] = frozenset(
                    name.removesuffix(".json") for name in names)
            return []
        return [sid for sid, mtime in times.items() if before.get(sid) != mtime]

    def look_at_database(self) -> list[str]:
        """Database: the sessions that got or changed a message since the last look (none
        the first time, when each session's latest message is noted instead); for a session
        there at the start, `start_messages` then names the messages it held.

        Raises:
            ReaderError: the database cannot be read now.
        """
        if self.reader.name != "opencode-db":
            return []
        from replay.core.readers.opencode_sqlite import message_ids_created_by, message_stamps

        stamps = message_stamps(self.path)
        before, self.database_stamps = self.database_stamps, stamps
        if before is None:
            self.database_start = {sid: stamp[1] for sid, stamp in stamps.items()}
            return []
        changed = [sid for sid, stamp in stamps.items() if before.get(sid) != stamp]
        for sid in changed:
            if sid in self.database_start and sid not in self.start_messages:
                self.start_messages[sid] = message_ids_created_by(
                    self.path, sid, self.database_start[sid])
        return changed

    def listing_stamp(self) -> tuple[object, ...]:
        """What changes when a session is added: the database (and its WAL), or the
        folders of a storage tree's session files."""
        if self.reader.name == "opencode-db":
            from replay.core.readers.opencode_sqlite import database_file

            database = database_file(self.path) or self.path
            return (stat_now(database), stat_now(Path(f"{database}-wal")))
        root = self.path / "storage" if (self.path / "storage").is_dir() else self.path
        sessions = root / "session"
        stamps: list[object] = [stat_now(sessions)]
        try:
            with os.scandir(sessions) as listing:
                stamps.extend((entry.name, stat_now(Path(entry.path))) for entry in listing)
        except OSError:
            pass
        return tuple(stamps)

    def session_ids(self) -> list[str]:
        assert self.reader.list_sessions is not None
        entries = self.reader.list_sessions(self.path) or []
        return [entry.key for entry in entries]

    def owns(self, path: str) -> bool:
        """True when a changed path is part of this source."""
        own = str(self.path)
        return path == own or path.startswith(own + "/") or path.startswith(own + "-")


def linked_folder(path: Path) -> bool:
    """True for a symbolic link to a folder (never followed: it may loop)."""
    try:
        return path.is_symlink() and path.is_dir()
    except OSError:
        return False


def stat_now(path: Path) -> Stat | None:
    try:
        return stat_key(os.stat(path))
    except OSError:
        return None


__all__ = ["SOURCE_READERS", "SessionFile", "SessionSource", "Stat", "is_sidechain",
           "linked_folder", "source_reader", "sqlite_head", "stat_key", "stat_now"]
