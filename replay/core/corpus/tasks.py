"""A corpus as a list of tasks, one per session, and the one pure function that scans a task.

`replay scan` and `replay report` share this: the parent lists the sessions under the
paths (cheap: listing reads no session), then a local process pool or a Dask cluster runs
`scan_task` on each task, and the parent concatenates the results in task order. With one
job the same function runs in the parent, so one job and many give the same output.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from replay.core.corpus.scan import (
    ScanReport,
    scan_file,
    scan_records,
    scan_session,
    scan_stream,
)
from replay.core.corpus.spill import SpilledReports, spill
from replay.core.detection.empty import DEFAULT_RULES
from replay.core.readers import (
    ReaderError,
    SessionEntry,
    detect_reader,
    each_session,
    folder,
    get_reader,
    load_sessions,
    read_entry,
)
from replay.core.readers.base import Mapper, Reader
from replay.core.suggest import default_suggester


@dataclass(frozen=True, slots=True)
class SessionTask:
    """One unit of work: a session of a listed source, or a whole file (picklable)."""

    source: str
    """A local path or an fsspec URL (`s3://bucket/a.jsonl`) that the worker reads."""
    format: str | None = None
    """The reader to use; None to detect it from the content."""
    entry: SessionEntry | None = None
    """The listed session to read, when the source holds many; None to read the whole file."""
    rules: tuple[tuple[str, Any], ...] = ()
    """Changes to the default detection rules (`DetectionRules.with_options`), as pairs."""
    required: bool = True
    """False for one file of a folder: its failure is said, but the folder was read."""

    def __dask_tokenize__(self) -> str:
        """A cheap, stable token for `dask.bag.from_sequence`, which otherwise walks every
        field of every task to name the graph (3 s of the parent's time for 10,000 tasks)."""
        return repr(self)


@dataclass(frozen=True, slots=True)
class TaskResult:
    """What scanning one task gave: `scan --json` objects, or the one-line reason it failed."""

    reports: list[dict[str, Any]] = field(default_factory=list)
    """One `scan --json` object per session read, in the reader's order; its `empty_turns`
    an `EncodedList` (write it with `encoded.write_json_line`)."""
    error: str | None = None
    """Why the task could not be read, as one line for stderr."""
    started: tuple[float | None, ...] | None = None
    """When each report's session started (`Session.started`), when the task read one
    session (the session lists keep it beside the report: `corpus.rows`); None otherwise."""


def is_url(source: str) -> bool:
    """True for an fsspec URL other than a plain local path (`s3://`, `gs://`, `memory://`)."""
    scheme, separator, _ = source.partition("://")
    return bool(separator) and scheme.isidentifier() and scheme != "file"


def scan_task(task: SessionTask) -> TaskResult:
    """Read one task's session(s) and return their `scan --json` objects (no side effects).

    This is the whole per-session work of `scan` and `report`, whichever runs it: the
    parent (one job), a worker process (`--jobs N`) or a Dask worker (`--dask`).
    """
    rules = DEFAULT_RULES.with_options(**dict(task.rules))
    suggester = default_suggester()
    local: Path | None = None
    one: ScanReport | None = None
    started: tuple[float | None, ...] | None = None
    try:
        with _local_copy(task.source) as local:
            # Detected once, whichever way it is then read.
            reader, path = _own_file(local, task) or (None, local)
            if reader is not None and reader.windowed and reader.builder is not None:
                # One session in a file of its own (alone or in a folder): scanned through
                # a window of turns, so memory stays bounded whatever the file's size or the
                # size of its records.
                one = scan_file(reader, path, rules)
            elif (reader is not None and reader.record_feed is not None
                  and (fed := reader.record_feed(path)) is not None):
                # The same for a format whose records are not lines (`Reader.record_feed`).
                one = scan_records(fed, rules)
            elif (reader is not None and reader.scan_feed is not None
                  and (fed := reader.scan_feed(path)) is not None):
                # ... and for one whose builder may change an old turn: each turn waits
                # until no later record can change it (`Reader.scan_feed`).
                one = scan_records(fed, rules)
            elif reader is not None and reader.scan_indexed:
                # ... and for one whose builder rewrites old turns: held as columns.
                [session] = load_sessions(path, reader.name, indexed=True)
                one = scan_session(session, rules, suggester)
            elif task.entry is not None:
                reader = get_reader(task.format) if task.format else detect_reader(local)
                one = scan_session(read_entry(reader, task.entry), rules, suggester)
            if one is not None:
                started = (one.started,)
                reports = [one.to_json(consume=True)]
                one = None  # (let go of the session now)
            elif reader is not None and reader.stream is not None:
                # A document or history read through a window of each session's turns, its
                # reports kept on disk when there are many (`spill`).
                reports = spill(_named(report.to_json(consume=True), task)
                                for report in scan_stream(reader, local, rules))
            else:
                # One session at a time: a file of many is never held whole.
                reports = [scan_session(session, rules, suggester).to_json(consume=True)
                           for session in each_session(local, task.format)]
    except ReaderError as error:
        message = str(error)
    except Exception as error:  # noqa: BLE001 - RecursionError, MemoryError, a reader's bug
        # A reader's bug or a record too big for this machine must not end a corpus scan:
        # this session is unreadable, said in one line, and the others are still read.
        message = f"{where(task)}: could not be read ({unexpected(error)})"
    else:
        if is_url(task.source) and not isinstance(reports, SpilledReports):
            for report in reports:
                report["path"] = task.source
        return TaskResult(reports=reports, started=started)
    if local is not None and is_url(task.source):
        message = message.replace(str(local), task.source)
    return TaskResult(error=message)


def unexpected(error: BaseException) -> str:
    """An error no reader expected, as a short phrase for a one-line message."""
    if isinstance(error, MemoryError):
        return "out of memory"
    if isinstance(error, RecursionError):
        return "nested too deeply"
    text = str(error).splitlines()[0][:200] if str(error) else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def where(task: SessionTask) -> str:
    """The task's source, and its session when it is one of many."""
    entry = task.entry
    if entry is None:
        return task.source
    if entry.own_file:
        return str(entry.path)
    return f"{entry.path}: session {entry.key}"


def _named(report: dict[str, Any], task: SessionTask) -> dict[str, Any]:
    """A report of a URL's local copy names the URL."""
    if is_url(task.source):
        report["path"] = task.source
    return report


def _own_file(local: Path, task: SessionTask) -> tuple[Reader, Path] | None:
    """The reader and file of a task that is a file of its own, given alone or listed in a
    folder; None for a session inside a shared source or a path that is no file."""
    path, name = local, task.format
    if task.entry is not None:
        entry = task.entry
        if not entry.own_file or entry.problem is not None:
            return None  # a session inside a shared source: `read_entry` reads it
        # A session file of a listed folder: streamed like the same file given alone, so
        # memory stays bounded by the window, not by the folder's largest session.
        path, name = entry.path, entry.format or name
    try:
        if not path.is_file():
            return None
        reader = get_reader(name) if name else detect_reader(path)
    except (OSError, ReaderError):
        return None  # the whole read says why, as before
    return reader, path


@contextlib.contextmanager
def _local_copy(source: str) -> Iterator[Path]:
    """The source as a local path: itself, or a temporary copy of a URL's file."""
    if not is_url(source):
        yield Path(source)
        return
    import fsspec  # the `replay[dask]` extra; only URLs need it

    directory = tempfile.mkdtemp(prefix="replay-url-")
    # Readers take facts from the file name (a Codex rollout's date), so keep it.
    local = Path(directory) / (PurePosixPath(source.split("://", 1)[1]).name or "session")
    try:
        try:
            with fsspec.open(source, "rb") as remote, open(local, "wb") as copy:
                shutil.copyfileobj(remote, copy, 1 << 20)
        except OSError as error:
            raise ReaderError(f"{source}: {error.strerror or error}") from None
        yield local
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def plan(source: str | Path, format: str | None = None,
         rules: Mapping[str, Any] | None = None, mapper: Mapper = map) -> list[SessionTask]:
    """The tasks for one path or URL, in the order one job has always printed them.

    A source that lists its sessions (a Claude Code project folder, an opencode database)
    gives one task per session, oldest first; a URL folder gives one task per file; any
    other path is one task. `mapper` runs a listing's look at each file (`maps_listing`):
    a process pool's `map` keeps that out of this process.

    Raises:
        ReaderError: the path cannot be read or its format is not recognised.
    """
    text = str(source)
    options = tuple(sorted((rules or {}).items()))
    if is_url(text):
        return [SessionTask(url, format, None, options) for url in _url_files(text)]
    path = Path(source)
    reader = get_reader(format) if format else detect_reader(path)
    listable = reader.list_sessions is not None and (path.is_dir() or reader.builder is None)
    entries = None
    if listable and reader.list_sessions is not None:
        entries = (reader.list_sessions(path, mapper=mapper) if reader.maps_listing
                   else reader.list_sessions(path))
    if entries is not None:
        ordered = sorted(entries, key=lambda e: (e.started is None, e.started or 0.0, e.key))
        return [SessionTask(text, reader.name, entry, options) for entry in ordered]
    if reader.name == folder.READER.name:
        # A folder holding files of many sessions each (chat data sets) cannot be listed
        # session by session, but each file is still a task of its own.
        skipped: list[tuple[Path, str]] = []
        tasks = [dataclasses.replace(task, required=False)
                 for claimed, claimed_reader in folder.claims(path, skipped)
                 for task in plan(claimed, claimed_reader.name, rules, mapper)]
        # A file no reader takes is a task that fails: said on stderr, counted as skipped.
        return tasks + [SessionTask(str(file), None, None, options, required=False)
                        for file, _ in skipped]
    return [SessionTask(text, reader.name, None, options)]


def _url_files(url: str) -> list[str]:
    """Every file under a URL (itself when it is a file), sorted, as full URLs."""
    try:
        import fsspec
    except ImportError:
        raise ReaderError(f"{url}: reading URLs needs the optional extra: "
                          'pip install "replay[dask]"') from None
    try:
        filesystem, root = fsspec.core.url_to_fs(url)
        if not filesystem.isdir(root):
            if not filesystem.exists(root):
                raise ReaderError(f"{url}: no such file or directory")
            return [url]
        found = sorted(filesystem.find(root))
    except (OSError, ValueError, ImportError) as error:
        raise ReaderError(f"{url}: {error}") from None
    return [filesystem.unstrip_protocol(name) for name in found
            if not os.path.basename(name).startswith(".")]
