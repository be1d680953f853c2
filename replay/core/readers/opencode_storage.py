"""The older opencode storage directory: one JSON file per session, message and part.

Layout (under the opencode data dir): `storage/session/<projectID>/<sessionID>.json` (session
info), `storage/message/<sessionID>/<messageID>.json` (message info),
`storage/part/<messageID>/<partID>.json` (parts). As in opencode's own migration to SQLite,
ids come from the file names, which stay right when an info file's own `id` is stale.
Accepts the data dir, the `storage` dir, or one `storage/session/<projectID>/<sessionID>.json`.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from replay.core.readers._opencode_parts import sort_key_created, turn_from_message
from replay.core.readers.base import (
    Progress,
    Reader,
    ReaderError,
    SessionEntry,
    UnreadablePath,
)
from replay.core.session.model import Part, PartsLoader, Session, Source, Turn, parse_time


@dataclass(frozen=True, slots=True)
class _Target:
    """What to read: the storage root, and one session file when a single session was named."""

    root: Path
    session_file: Path | None = None


def _is_root(directory: Path) -> bool:
    return (directory / "message").is_dir() and (
        (directory / "session").is_dir() or (directory / "part").is_dir()
    )


def _target(path: Path) -> _Target | None:
    if path.is_dir():
        for root in (path / "storage", path):
            if _is_root(root):
                return _Target(root)
        return None
    if path.suffix == ".json" and len(path.parents) >= 3 and path.parent.parent.name == "session":
        root = path.parent.parent.parent
        if (root / "message").is_dir():
            return _Target(root, path)
    return None


def sniff(path: Path, head: bytes) -> bool:
    """A storage directory (or a session file inside one) in opencode's layout."""
    target = _target(path)
    if target is None:
        return False
    return target.session_file is None or head.lstrip().startswith(b"{")


def _read_json(path: Path, session: Session | None) -> dict[str, Any] | None:
    """One JSON object file, or None (counted) when it cannot be read or is not an object."""
    try:
        value = orjson.loads(path.read_bytes())
    except OSError as error:
        problem = error.strerror or str(error)
    except orjson.JSONDecodeError:
        problem = "not valid JSON"
    else:
        if isinstance(value, dict):
            return value
        problem = "not a JSON object"
    if session is not None:
        session.warn(f"{path.name}: {problem}")
    return None


def _json_files(directory: Path) -> list[Path]:
    """The `.json` files of a directory sorted by name; opencode ids sort by creation time."""
    try:
        entries = list(directory.iterdir())
    except OSError:
        return []
    # opencode writes through `.oc-*.tmp` files and renames them: skip those and dot files.
    return sorted(p for p in entries if p.suffix == ".json" and not p.name.startswith("."))


def _raw_parts(root: Path, message_id: str, session: Session | None) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for file in _json_files(root / "part" / message_id):
        raw = _read_json(file, session)
        if raw is not None:
            parts.append({**raw, "id": file.stem, "messageID": message_id})
    return parts


def _message_turn(root: Path, file: Path, info: dict[str, Any], session: Session | None,
                  *, shorten_long: bool) -> Turn:
    message_id = file.stem
    info = {**info, "id": message_id}
    source = Source(str(file), record=f"message/{file.parent.name}/{file.name}")
    return turn_from_message(info, _raw_parts(root, message_id, session), source, session,
                             fallback_id=message_id, shorten_long=shorten_long)


def _loader(root: Path) -> PartsLoader:
    """Reads the full parts of one turn back from its message and part files."""

    def load(turn: Turn) -> list[Part]:
        if turn.source is None:
            raise ValueError(f"turn {turn.id} has no source file")
        file = Path(turn.source.path)
        info = _read_json(file, None)
        if info is None:
            raise ValueError(f"{file}: can no longer be read")
        return _message_turn(root, file, info, None, shorten_long=False).parts

    return load


def _created(info: dict[str, Any]) -> float | None:
    time = info.get("time") if isinstance(info.get("time"), dict) else {}
    return parse_time(time.get("created"))[1]


def _session(root: Path, session_id: str, session_file: Path | None) -> tuple[Session, float]:
    """One session, with every message in opencode's order, and when it was created."""
    session = Session(path=str(session_file or root / "message" / session_id),
                      format=READER.name, session_id=session_id)
    info: dict[str, Any] = {}
    if session_file is not None:
        info = _read_json(session_file, session) or {}
    else:
        session.warn(f"session {session_id}: no session file, read from its messages",
                     skipped=False)
    if isinstance(info.get("title"), str) and info["title"]:
        session.title = info["title"]
    for key in ("version", "directory", "slug", "projectID", "parentID"):
        if isinstance(info.get(key), str):
            session.meta[key] = info[key]
    if session_file is not None:
        session.meta.setdefault("projectID", session_file.parent.name)
    messages: list[tuple[tuple[float, str], Path, dict[str, Any]]] = []
    for file in _json_files(root / "message" / session_id):
        message = _read_json(file, session)
        if message is not None:
            key = sort_key_created({**message, "id": file.stem}, file.stem)
            messages.append((key, file, message))
    messages.sort(key=lambda item: item[0])
    for _, file, message in messages:
        session.add(_message_turn(root, file, message, session, shorten_long=True))
    session.loader = _loader(root)
    created = _created(info)
    if created is None:
        created = session.started
    return session, created if created is not None else float("inf")


def _session_files(root: Path) -> dict[str, Path | None]:
    """Session id → its info file, plus message folders whose session file is gone."""
    wanted: dict[str, Path | None] = {}
    try:
        for file in sorted((root / "session").glob("*/*.json")):
            if not file.name.startswith("."):
                wanted[file.stem] = file
        message_dirs = sorted((root / "message").iterdir())
    except OSError as error:
        raise UnreadablePath.of(root, error) from None
    # Messages without a session file are still a conversation someone may want to review.
    for directory in message_dirs:
        if directory.is_dir() and directory.name not in wanted:
            wanted[directory.name] = None
    return wanted


def session_sources(path: Path, session_id: str | None) -> tuple[str, list[Path]] | None:
    """The session (the newest for None) and where a change is a change of it: its session
    files, its message folder and the part folder of each of its messages. A follower
    stamps these instead of walking every file of the storage tree on every wake-up (360 ms
    for 55,000 part files)."""
    target = _target(path)
    if session_id is None:
        session_id = newest_session(path)
    if target is None or session_id is None:
        return None
    root = target.root
    messages = root / "message" / session_id
    sources = sorted((root / "session").glob(f"*/{glob.escape(session_id)}.json"))
    sources.append(messages)
    try:
        names = sorted(os.listdir(messages))
    except OSError:
        names = []
    sources.extend(root / "part" / Path(name).stem for name in names if name.endswith(".json"))
    return session_id, sources


def list_sessions(path: Path) -> list[SessionEntry]:
    """Every session with the title and start its session file gives, none of them read."""
    target = _target(path)
    if target is None:
        raise ReaderError(f"{path}: not an opencode storage directory")
    if target.session_file is not None:
        wanted: dict[str, Path | None] = {target.session_file.stem: target.session_file}
    else:
        wanted = _session_files(target.root)
    entries = []
    for session_id, session_file in wanted.items():
        info = (_read_json(session_file, None) or {}) if session_file is not None else {}
        title = info.get("title")
        entries.append(SessionEntry(key=session_id, path=path,
                                    title=title if isinstance(title, str) and title else None,
                                    started=_created(info)))
    return entries


def newest_session(path: Path) -> str | None:
    """The id of the session created last, read from the session files alone."""
    target = _target(path)
    if target is None:
        return None
    if target.session_file is not None:
        return target.session_file.stem
    root = target.root
    newest: tuple[float, str] | None = None
    for session_id, session_file in _session_files(root).items():
        created = _created(_read_json(session_file, None) or {}) if session_file else None
        if created is None:  # as `_session` does: when its first message was written
            created = _session(root, session_id, session_file)[1]
        if newest is None or (created, session_id) > newest:
            newest = (created, session_id)
    return newest[1] if newest else None


def read(path: Path, progress: Progress | None = None) -> list[Session]:
    """Every session of a storage directory (or the one named), sorted by creation time."""
    target = _target(path)
    if target is None:
        raise ReaderError(f"{path}: not an opencode storage directory (expected `storage/` with "
                          "`session/`, `message/` and `part/` folders)")
    if target.session_file is not None:
        wanted: dict[str, Path | None] = {target.session_file.stem: target.session_file}
    else:
        wanted = _session_files(target.root)
    found: list[tuple[float, str, Session]] = []
    for done, (session_id, session_file) in enumerate(wanted.items(), start=1):
        session, created = _session(target.root, session_id, session_file)
        found.append((created, session_id, session))
        if progress is not None:
            progress(done, len(wanted))
    found.sort(key=lambda item: item[:2])
    return [session for _, _, session in found]


def read_session(path: Path, session_id: str | None) -> Session | None:
    """The session with this id (the newest one for None), or None when there is none."""
    target = _target(path)
    if target is None:
        raise ReaderError(f"{path}: not an opencode storage directory")
    if target.session_file is not None:
        return read(path)[0] if session_id in (None, target.session_file.stem) else None
    if session_id is None:
        session_id = newest_session(path)
        if session_id is None:
            return None
    session_files = sorted((target.root / "session").glob(f"*/{glob.escape(session_id)}.json"))
    if session_files or (target.root / "message" / session_id).is_dir():
        return _session(target.root, session_id, session_files[0] if session_files else None)[0]
    return None


READER = Reader(
    name="opencode-storage",
    title="opencode storage directory",
    sniff=sniff,
    read=read,
    read_session=read_session,
    session_sources=session_sources,
    list_sessions=list_sessions,
    priority=21,
    directories=True,
)
