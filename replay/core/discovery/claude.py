"""Claude Code: `<config>/projects/<encoded cwd>/<session id>.jsonl`.

A project folder is named after the working directory with every `/` and `.` made `-`, which
cannot be undone; the `cwd` of the session's records is the real one. Subagent files (the
older `agent-<id>.jsonl` beside the sessions, the newer `<session>/subagents/agent-*.jsonl`)
belong to their session and are read with it, so they are no sessions of their own here
(a loose agent file whose session is gone still is one: nothing else would show it).
"""

from __future__ import annotations

import os
from pathlib import Path

from replay.core.discovery.found import FoundSession, file_facts, head_records, read_head, text_of
from replay.core.discovery.places import CLAUDE, Place
from replay.core.readers.base import SessionEntry
from replay.core.readers.claude_code import NAME, sniff_content
from replay.core.session.model import parse_time

_TITLE_RANK = {"summary": 0, "ai-title": 1, "custom-title": 2}
_TITLE_KEYS = ("customTitle", "aiTitle", "title", "summary")


def find(place: Place) -> list[FoundSession]:
    """Every session file of every project folder under the place."""
    found: list[FoundSession] = []
    try:
        with os.scandir(place.path) as folders:
            projects = sorted(entry.path for entry in folders if _is_dir(entry))
    except OSError:
        return found
    for project in projects:
        found.extend(_project(Path(project)))
    return found


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir() and not entry.name.startswith(".")
    except OSError:
        return False


def _project(folder: Path) -> list[FoundSession]:
    try:
        with os.scandir(folder) as entries:
            names = sorted(entry.name for entry in entries if entry.name.endswith(".jsonl"))
    except OSError:
        return []
    sessions: list[FoundSession] = []
    agents: list[FoundSession] = []
    for name in names:
        found = glance(folder / name, folder.name)
        (agents if name.startswith("agent-") else sessions).append(found)
    owned = {found.session_id for found in sessions}
    # A loose agent file whose session is here is read with that session; one whose session
    # is gone is listed by its own name (its records name the missing parent).
    orphans = [agent for agent in agents if agent.session_id not in owned]
    for agent in orphans:
        agent.session_id = agent.path.stem
    return sessions + orphans


def glance(file: Path, folder_name: str) -> FoundSession:
    """What the first records of one session file say."""
    size, mtime, problem = file_facts(file)
    entry = SessionEntry(key=file.name, path=file, own_file=True, format=NAME)
    found = FoundSession(CLAUDE, entry, size=size, updated=mtime,
                         session_id=None if file.name.startswith("agent-") else file.stem)
    if problem is None and not os.path.isfile(file):
        problem = "not a regular file"
    head = read_head(file) if problem is None else problem
    if isinstance(head, str):
        found.entry = SessionEntry(key=file.name, path=file, own_file=True, format=NAME,
                                   problem=f"skipped {file}: {head}")
        return found
    if head.strip() and not sniff_content(head):
        found.entry = SessionEntry(key=file.name, path=file, own_file=True, format=NAME,
                                   problem=f"skipped {file}: not a Claude Code session file")
        return found
    rank = -1
    for record in head_records(head):
        if found.session_id is None or file.name.startswith("agent-"):
            session_id = text_of(record.get("sessionId"))
            if session_id:
                found.session_id = session_id
        if found.project is None:
            found.project = text_of(record.get("cwd"))
        if found.started is None:
            found.started = parse_time(record.get("timestamp"))[1]
        kind = record.get("type")
        if isinstance(kind, str) and _TITLE_RANK.get(kind, -1) > rank:
            title = next((text_of(record.get(key)) for key in _TITLE_KEYS
                          if text_of(record.get(key))), None)
            if title:
                found.title, rank = title, _TITLE_RANK[kind]
    if found.project is None:
        found.project = folder_name  # the encoded folder name is all there is
    return found
