"""Codex CLI: `<home>/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, and the same
files moved flat into `<home>/archived_sessions/`.

The first record (`session_meta`) names the thread id, its working directory and start;
`<home>/session_index.jsonl` appends `{id, thread_name, updated_at}` each time a thread is
named (the last line of an id wins). Newer versions compress old rollouts to
`.jsonl.zst`, which replay cannot read yet: they are listed with that reason. A subagent
thread (`source.subagent.thread_spawn.parent_thread_id`) whose parent is in the same
folder is read with its parent (`s` opens it), so it is no session of its own here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import orjson

from replay.core.discovery.found import (
    FoundSession,
    file_facts,
    read_head,
    string_field,
    text_of,
)
from replay.core.discovery.places import CODEX, Place
from replay.core.readers.base import SessionEntry
from replay.core.readers.codex import sniff
from replay.core.session.model import parse_time

_THREAD_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_DIGITS = re.compile(r"\d+$")
INDEX_FILE = "session_index.jsonl"


def find(place: Place) -> list[FoundSession]:
    """Every rollout of the place (`sessions` by date, `archived` flat)."""
    names = thread_names(place.path.parent / INDEX_FILE)
    folders = _date_folders(place.path) if place.kind == "sessions" else [place.path]
    found: list[FoundSession] = []
    for folder in folders:
        found.extend(_folder(folder, names))
    return found


def _date_folders(root: Path) -> list[Path]:
    """`YYYY/MM/DD` folders under the root (other names are not Codex's)."""
    folders = [root]
    for _level in range(3):
        deeper: list[Path] = []
        for folder in folders:
            try:
                with os.scandir(folder) as entries:
                    deeper.extend(Path(entry.path) for entry in entries
                                  if _DIGITS.match(entry.name) and _is_dir(entry))
            except OSError:
                continue
        folders = sorted(deeper)
    return folders


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _folder(folder: Path, names: dict[str, str]) -> list[FoundSession]:
    try:
        with os.scandir(folder) as entries:
            files = sorted(entry.name for entry in entries if entry.name.startswith("rollout-"))
    except OSError:
        return []
    plain = {name for name in files if name.endswith(".jsonl")}
    found: list[tuple[FoundSession, str | None]] = []
    for name in files:
        if name.endswith(".jsonl.zst"):
            if name.removesuffix(".zst") in plain:
                continue  # the plain file is the one Codex reads
            found.append((_compressed(folder / name), None))
        elif name.endswith(".jsonl"):
            found.append(glance(folder / name, names))
    here = {session.session_id for session, _ in found}
    return [session for session, parent in found if parent is None or parent not in here]


def _compressed(file: Path) -> FoundSession:
    size, mtime, _ = file_facts(file)
    stem = file.name.removesuffix(".jsonl.zst")
    match = _THREAD_ID.search(stem)
    entry = SessionEntry(key=file.name, path=file, own_file=True, format="codex",
                         problem=f"skipped {file}: a compressed rollout (.jsonl.zst); "
                                 "decompress it with `zstd -d` to read it")
    return FoundSession(CODEX, entry, session_id=match.group(0) if match else None,
                        size=size, updated=mtime)


def glance(file: Path, names: dict[str, str]) -> tuple[FoundSession, str | None]:
    """What a rollout's first record says, and the thread that spawned it (if a subagent)."""
    size, mtime, problem = file_facts(file)
    match = _THREAD_ID.search(file.stem)
    entry = SessionEntry(key=file.name, path=file, own_file=True, format="codex")
    found = FoundSession(CODEX, entry, session_id=match.group(0) if match else None,
                         size=size, updated=mtime)
    head = read_head(file) if problem is None else problem
    if isinstance(head, bytes) and head.strip() and not sniff(file, head):
        head = "not a Codex rollout"
    if isinstance(head, str):
        found.entry = SessionEntry(key=file.name, path=file, own_file=True, format="codex",
                                   problem=f"skipped {file}: {head}")
        return found, None
    first = head.split(b"\n", 1)[0]
    parent = None
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError:
        record = None  # a first line longer than the head: its fields by pattern
    if isinstance(record, dict):
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else record
        found.session_id = text_of(payload.get("id")) or found.session_id
        found.project = text_of(payload.get("cwd"))
        found.started = parse_time(payload.get("timestamp") or record.get("timestamp"))[1]
        source = payload.get("source")
        subagent = source.get("subagent") if isinstance(source, dict) else None
        spawn = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
        parent = text_of(spawn.get("parent_thread_id")) if isinstance(spawn, dict) else None
    else:
        found.session_id = string_field(first, "id") or found.session_id
        found.project = string_field(first, "cwd")
        found.started = parse_time(string_field(first, "timestamp"))[1]
        parent = string_field(first, "parent_thread_id")
    if found.session_id is not None:
        found.title = names.get(found.session_id)
    return found, parent


def thread_names(index: Path) -> dict[str, str]:
    """Thread id -> its latest name, from `session_index.jsonl` ({} when there is none)."""
    try:
        data = index.read_bytes()
    except OSError:
        return {}
    names: dict[str, str] = {}
    for line in data.splitlines():
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict):
            thread, name = text_of(record.get("id")), text_of(record.get("thread_name"))
            if thread and name:
                names[thread] = name
    return names
