"""One session found on this machine: what a list shows before it is read, and how to read it."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from replay.core.readers.base import SessionEntry
from replay.core.safe import json_path

HEAD_BYTES = 64 * 1024
"""How much of a session file a glance reads (the picker of one folder reads as much)."""


@dataclass(slots=True)
class FoundSession:
    """A session in an agent's own folder, glanced at, not read."""

    agent: str
    """The agent that wrote it (`places.AGENTS`)."""
    entry: SessionEntry
    """How to read it: its file, or its key in a shared source (an opencode database)."""
    session_id: str | None = None
    """The agent's own id for it."""
    title: str | None = None
    """A title the source keeps outside the turns, when a glance finds one."""
    project: str | None = None
    """The working directory it ran in."""
    started: float | None = None
    """When it started (epoch seconds)."""
    updated: float | None = None
    """When it was last written (the file's time, or the source's own)."""
    size: int | None = None
    """Bytes of its own file (None for a session inside a shared database)."""
    aliases: tuple[str, ...] = field(default=())
    """Other names it may be asked for by (a file's stem)."""

    @property
    def path(self) -> Path:
        """Its own file, or the shared source that holds it."""
        return self.entry.path

    @property
    def format(self) -> str | None:
        """The reader that reads it."""
        return self.entry.format

    @property
    def problem(self) -> str | None:
        """Why it cannot be read, when a glance already tells."""
        return self.entry.problem

    @property
    def newest(self) -> float:
        """The time a list sorts it by: last written, else started."""
        return self.updated or self.started or 0.0

    def to_json(self) -> dict[str, Any]:
        """The listing part of a `replay sessions --json` line (counts are added to it)."""
        return {
            "agent": self.agent,
            "format": self.format,
            "session_id": self.session_id,
            **json_path(str(self.path)),
            "title": self.title,
            "project": self.project,
            "started": iso(self.started),
            "updated": iso(self.updated),
            "size": self.size,
            "problem": self.problem,
        }


def iso(seconds: float | None) -> str | None:
    """Epoch seconds as an ISO 8601 UTC time, None as None."""
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds") \
        .replace("+00:00", "Z")


def file_facts(path: Path) -> tuple[int | None, float | None, str | None]:
    """Size, modification time and, when it cannot be opened, why (one stat and one open)."""
    try:
        stat = os.stat(path)
    except OSError as error:
        return None, None, error.strerror or str(error)
    return stat.st_size, stat.st_mtime, None


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes | str:
    """The first bytes of a file, or why they cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError as error:
        return error.strerror or str(error)


def head_records(head: bytes, limit: int = 40) -> list[dict[str, Any]]:
    """The JSON objects among the first whole lines of a head (a cut last line is left out)."""
    lines = head.split(b"\n")
    if len(head) >= HEAD_BYTES:
        lines = lines[:-1]  # the last piece may be cut off
    records = []
    for line in lines[:limit]:
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def string_field(head: bytes, name: str) -> str | None:
    """The first `"name": "value"` string in a head that is no whole JSON line (a document
    written over many lines, or a first line longer than the head)."""
    match = re.search(rb'"' + re.escape(name.encode()) + rb'"\s*:\s*"((?:[^"\\]|\\.){0,2000})"',
                      head)
    if match is None:
        return None
    try:
        value = orjson.loads(b'"' + match.group(1) + b'"')
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, str) else None


def text_of(value: Any) -> str | None:
    """A non-blank string, stripped; None for anything else."""
    return value.strip() if isinstance(value, str) and value.strip() else None
