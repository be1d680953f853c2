"""Any directory of transcripts: every file or sub-directory some other reader recognises.

Specific directory layouts (a Claude Code project, an opencode storage tree or data dir) are
claimed by their own readers first; this one is the fallback that makes `replay scan ~/exports`
or `replay scan ~/.claude/projects` read everything inside.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from replay.core.readers.base import (
    TEXT_AROUND_ENDS,
    Progress,
    Reader,
    ReaderError,
    SessionEntry,
    UnreadablePath,
    glance_started,
)
from replay.core.readers.file_window import FileChanged
from replay.core.session.model import Session

SKIPPED = "skipped "
"""How the line about a file of the folder that is not read starts (a session's warning, a
listed entry's problem, a line on stderr)."""


def is_skipped_file(warning: str) -> bool:
    """True for a session's warning saying a file of its folder was not read (`skipped PATH:
    why`); False for any other, such as a recovered document's note about the text skipped
    around it, which is a success (the file was read)."""
    return warning.startswith(SKIPPED) and not warning.endswith(TEXT_AROUND_ENDS)


MAX_DEPTH = 4
"""How deep sub-directories are searched."""

SESSION_SUFFIXES = frozenset({".json", ".jsonl", ".ndjson", ".traj", ".db", ".sqlite", ".sqlite3"})
"""Name endings under which the agents and exporters write transcripts: a file of a folder
ending so is a session candidate, said as skipped when it cannot be read."""

SESSION_NAME_ENDINGS = (".chat.history.md",)
"""Whole name endings of transcripts whose suffix alone says nothing (Aider's history)."""


def is_candidate(path: Path) -> bool:
    """True when the name says the file should hold a session: a README, notes or a picture
    beside the transcripts is no session that went missing, so nobody is told it was skipped."""
    name = path.name.lower()
    return path.suffix.lower() in SESSION_SUFFIXES or name.endswith(SESSION_NAME_ENDINGS)


TRANSCRIPT_FOLDERS = frozenset({".specstory"})
"""Hidden folders that hold transcripts (SpecStory keeps `.specstory/history/*.md` in the
project), looked into although other hidden folders are not."""


def _entries(directory: Path) -> list[Path]:
    """Entries to look at: hidden folders (.git, .venv) are skipped, except those that hold
    transcripts; hidden files are not (`.aider.chat.history.md` is one)."""
    try:
        return sorted(p for p in directory.iterdir()
                      if not (p.name.startswith(".") and p.name not in TRANSCRIPT_FOLDERS
                              and p.is_dir()))
    except OSError:
        return []


def _identity(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the directory a path resolves to, None when it cannot be
    looked at: what makes `d/sub/up -> d` the same folder as `d`."""
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_dev, status.st_ino


def _claims(path: Path, depth: int,
            skipped: list[tuple[Path, str]] | None = None,
            seen: set[tuple[int, int]] | None = None,
            first: bool = False) -> list[tuple[Path, Reader]]:
    """Every (path, reader) pair under a directory, without descending into claimed ones.

    Content decides what is read, whatever the name; the name decides only what is said about a
    file nothing takes. `skipped`, when given, receives (file, line) for each session candidate
    (`is_candidate`) no reader takes, hidden files aside (tool state such as `.DS_Store`). An
    empty file is read (as a session with no turns) only when it is a candidate: its name is
    all there is to go by.

    Every entry is looked at, however many (a folder of 50,000 sessions is 50,000 sessions);
    a directory reached twice (a symbolic link back up the tree, two links to one folder) is
    read once, at its first place in path order. `first`: stop at the first claim or skipped
    candidate (enough to say the folder holds transcripts).
    """
    from replay.core.readers import all_readers, detect_reader

    if seen is None:
        seen = set()
        identity = _identity(path)
        if identity is not None:
            seen.add(identity)
    found: list[tuple[Path, Reader]] = []
    for entry in _entries(path):
        if first and (found or skipped):
            break
        if entry.is_dir():
            identity = _identity(entry)
            if identity is not None and identity in seen:
                continue
            if identity is not None:
                seen.add(identity)
            specific = _specific_directory_reader(entry, all_readers())
            if specific is not None:
                found.append((entry, specific))
            elif depth < MAX_DEPTH:
                found.extend(_claims(entry, depth + 1, skipped, seen, first))
            continue
        candidate = is_candidate(entry)
        try:
            reader = detect_reader(entry, empty_by_name=candidate)
        except ReaderError as error:
            if skipped is not None and candidate and not entry.name.startswith("."):
                skipped.append((entry, f"{SKIPPED}{error}"))
            continue
        found.append((entry, reader))
    return found


def claims(path: Path,
           skipped: list[tuple[Path, str]] | None = None) -> list[tuple[Path, Reader]]:
    """Every transcript under a directory with its reader, in the order `read` reads them;
    `skipped` receives each file no reader takes, with the line that says why."""
    return _claims(path, 0, skipped)


def _specific_directory_reader(path: Path, readers: tuple[Reader, ...]) -> Reader | None:
    for reader in readers:
        if reader is READER or not reader.directories:
            continue
        try:
            if reader.sniff(path, b""):
                return reader
        except (OSError, ValueError):
            continue
    return None


def sniff(path: Path, head: bytes) -> bool:
    """True for a directory holding at least one recognised transcript or session candidate
    (so candidates that all fail are each said, not folded into "directory not recognised")."""
    if not path.is_dir():
        return False
    skipped: list[tuple[Path, str]] = []
    return bool(_claims(path, 0, skipped, first=True)) or bool(skipped)


def read(path: Path, progress: Progress | None = None) -> list[Session]:
    """Read every recognised transcript under the directory, in path order."""
    skipped: list[tuple[Path, str]] = []
    claims = _claims(path, 0, skipped)
    if not claims:
        why = f" ({skipped[0][1]})" if skipped else ""
        raise ReaderError(f"{path}: no transcript found in this directory{why}")
    sessions: list[Session] = []
    problems: list[str] = []
    for number, (entry, reader) in enumerate(claims):
        try:
            sessions.extend(reader.read(entry, None))
        except ReaderError as error:
            problems.append(str(error))
        except FileChanged as error:  # cut shorter while it was read: that file alone
            problems.append(str(UnreadablePath.of(entry, error)))
        if progress is not None:
            progress(number + 1, len(claims))
    if sessions:
        sessions[0].warnings.extend(f"{SKIPPED}{problem}" for problem in problems)
        sessions[0].warnings.extend(line for _, line in skipped)
    if not sessions:
        # A recognised file may hold no session at all: then there is no problem to quote.
        why = f" ({problems[0]})" if problems else ""
        raise ReaderError(f"{path}: no transcript could be read{why}")
    return sessions


def list_sessions(path: Path) -> list[SessionEntry] | None:
    """Every session under the directory, none read: those of listable sources inside (a
    Claude Code project, an opencode database) and one per file of single-session formats.
    None when a file may hold several sessions (chat datasets): then it is read whole."""
    entries: list[SessionEntry] = []
    skipped: list[tuple[Path, str]] = []
    for entry, reader in _claims(path, 0, skipped):
        if reader.list_sessions is not None and (entry.is_dir() or not reader.single_session):
            try:
                listed = reader.list_sessions(entry)
            except ReaderError:
                listed = [SessionEntry(key=entry.name, path=entry, own_file=True)]
            if listed is None:
                return None
            entries.extend(replace(item, format=reader.name) for item in listed)
        elif reader.single_session:
            entries.append(SessionEntry(key=entry.name, path=entry, own_file=True,
                                        format=reader.name,
                                        started=glance_started(reader, entry)))
        else:
            return None
    # Listed with the reason, so a session list shows them and a scan says each one.
    return entries + [SessionEntry(key=file.name, path=file, own_file=True, problem=line)
                      for file, line in skipped]


READER = Reader(
    name="folder",
    title="directory of transcripts",
    sniff=sniff,
    read=read,
    list_sessions=list_sessions,
    priority=99,
    directories=True,
)
