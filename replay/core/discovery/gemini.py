"""Gemini CLI: `<home>/.gemini/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.json[l]`.

`<project>` is a short slug of the project folder's name in newer versions (which write the
folder's path into `<project>/.project_root` and `~/.gemini/projects.json`), the SHA-256 of
the path in older ones. Older versions rewrite one JSON document per session, newer ones
append JSONL records; resuming an old `.json` session migrates it to `<same name>.jsonl`,
so when both exist the `.jsonl` is the session. Subagent chats are written to
`chats/<parent session id>/<id>.jsonl`: they belong to their parent, not to this list.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import orjson

from replay.core.discovery.found import (
    FoundSession,
    file_facts,
    head_records,
    read_head,
    string_field,
    text_of,
)
from replay.core.discovery.places import GEMINI, Place
from replay.core.readers.base import SessionEntry
from replay.core.readers.gemini import sniff
from replay.core.session.model import parse_time

PROJECT_ROOT_FILE = ".project_root"
REGISTRY = "projects.json"


def find(place: Place, known_projects: Iterable[str] = ()) -> list[FoundSession]:
    """Every main chat of every project under `tmp/`. `known_projects` (working folders of
    other agents' sessions) name the older hash-named project folders when they hash to it."""
    slugs = _registry(place.path.parent / REGISTRY)
    hashes = {hashlib.sha256(path.encode()).hexdigest(): path
              for path in {*slugs.values(), *known_projects}}
    found: list[FoundSession] = []
    try:
        with os.scandir(place.path) as entries:
            projects = sorted(entry.path for entry in entries if _is_dir(entry))
    except OSError:
        return found
    for folder in map(Path, projects):
        project = _project_root(folder) or slugs.get(folder.name) or hashes.get(folder.name)
        found.extend(_chats(folder / "chats", project))
    return found


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir() and entry.name != "bin"
    except OSError:
        return False


def _registry(path: Path) -> dict[str, str]:
    """Slug -> project path, from `projects.json` ({} when absent or unreadable)."""
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        return {}
    return {slug: folder for folder, slug in projects.items()
            if isinstance(slug, str) and isinstance(folder, str)}


def _project_root(folder: Path) -> str | None:
    try:
        return text_of((folder / PROJECT_ROOT_FILE).read_text("utf-8", "replace"))
    except OSError:
        return None


def _chats(chats: Path, project: str | None) -> list[FoundSession]:
    try:
        with os.scandir(chats) as entries:
            names = sorted(entry.name for entry in entries
                           if entry.name.startswith("session-")
                           and entry.name.endswith((".json", ".jsonl")))
    except OSError:
        return []
    present = set(names)
    return [glance(chats / name, project) for name in names
            if not (name.endswith(".json") and f"{name}l" in present)]


def glance(file: Path, project: str | None) -> FoundSession:
    """What the start of one chat file says (its metadata comes first in both shapes)."""
    size, mtime, problem = file_facts(file)
    entry = SessionEntry(key=file.name, path=file, own_file=True, format="gemini")
    found = FoundSession(GEMINI, entry, project=project, size=size, updated=mtime)
    head = read_head(file) if problem is None else problem
    if isinstance(head, bytes) and head.strip() and not sniff(file, head):
        head = "not a Gemini CLI chat recording"
    if isinstance(head, str):
        found.entry = SessionEntry(key=file.name, path=file, own_file=True, format="gemini",
                                   problem=f"skipped {file}: {head}")
        return found
    records = head_records(head, limit=3) if file.suffix == ".jsonl" else []
    meta = records[0] if records else {}
    # The document's own fields come before its messages, whose text could hold anything.
    before = head.split(b'"messages"', 1)[0]
    for name in ("sessionId", "startTime", "summary"):
        if name not in meta:
            value = string_field(before, name)
            if value is not None:
                meta[name] = value
    found.session_id = text_of(meta.get("sessionId"))
    found.started = parse_time(meta.get("startTime"))[1]
    found.title = text_of(meta.get("summary"))
    return found
