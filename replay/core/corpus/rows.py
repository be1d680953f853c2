"""One scan-cache row per session, shared by every consumer: `scan`, `report`, `replay
sessions` and the app's session lists.

A row is keyed by the session (the absolute path of its file, its key in a shared source,
the format that reads it) and by the detection rules in force, and is valid while the
stamp of what it was read from holds (`ScanCache` adds replay's code). It carries the
session's `scan --json` objects and, beside them, the summary a list shows (label, start,
turns, empty turns, subagents, ...): whichever consumer reads the session first fills both,
so `replay scan DIR` makes the app's list of DIR instant, and the other way round. A list
reads only the summary column (`ScanCache.lookup_summary`), never the reports.

The reports name the session's path as the consumer gave it (`scan x` says `x/a.jsonl`,
`scan ./x` says `./x/a.jsonl`); a row keeps that form and gives it back rewritten for
another form of the same file (`reports_for`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay.core import paths
from replay.core.corpus import history_rows
from replay.core.corpus.cache import RACY_SECONDS, ScanCache, file_stamp
from replay.core.corpus.file_facts import CachedFacts
from replay.core.corpus.kept_reports import ChunkedReports, chunk_keys, text_of
from replay.core.corpus.tasks import SessionTask, TaskResult, is_url
from replay.core.detection.empty import DEFAULT_RULES, DetectionRules
from replay.core.readers.base import Mapper, ReaderError, SessionEntry
from replay.core.readers.known import remembering

ROW_KIND = "session-row/1"
"""The rows' kind in the cache key (a new number when what a row holds changes)."""

SPREAD_FORMATS = frozenset({"opencode-storage"})
"""Formats whose session is many files (opencode's storage folder: a session file, a folder
of message files and a folder of part files per message): stamped by all of them
(`spread_stamp`)."""


def rules_identity(rules: DetectionRules) -> str:
    """The detection rules as part of a cache key (the same rules, the same text, however
    they were given: a config file, flags, `--missing-replies` or the app's toggle)."""
    fields = tuple((name, sorted(value) if isinstance(value, frozenset) else value)
                   for name, value in sorted(dataclasses.asdict(rules).items()))
    return repr(fields)


def rule_options(rules: DetectionRules) -> tuple[tuple[str, Any], ...]:
    """The rules as a task's changes to the defaults (`SessionTask.rules`)."""
    return tuple(sorted((field.name, getattr(rules, field.name))
                        for field in dataclasses.fields(rules)
                        if getattr(rules, field.name) != getattr(DEFAULT_RULES, field.name)))


@dataclass(frozen=True, slots=True)
class RowPlace:
    """Where a session's row is in the cache, and what it is valid for."""

    key: str
    """The row's key (`ROW_KIND`, session, format, rules)."""
    path: Path
    """The file the row is kept under (absolute): rows of files gone are dropped by it."""
    stamp: str
    """What the session was read from, as it is now (`file_stamp`, `spread_stamp`)."""
    given: str
    """The session's path as this consumer names it (the reports' `path`)."""
    entry: str | None
    """The session's key in a shared source (a database), None for a file of its own."""


def place_of(task: SessionTask, now: float | None = None) -> RowPlace | None:
    """The row of a task (a listed session or a whole file), or None when it cannot be kept:
    a URL, a pipe's copy, a file changed a moment ago or gone, an undetected format."""
    if is_url(task.source):
        return None
    entry = task.entry
    format = (entry.format if entry is not None and entry.format else None) or task.format
    if format is None:
        return None
    given = str(entry.path) if entry is not None else task.source
    if entry is not None and not entry.own_file and format not in SPREAD_FORMATS:
        file = _shared_file(entry.path, format)  # a session of a database: its file
        if file is None:
            return None
        given = str(file)  # (as its reports name it: a data folder's database)
        path = Path(os.path.abspath(file))
        stamp = file_stamp(path, now)
        stamped = (path, stamp) if stamp is not None else None
    else:
        stamped = session_stamp(entry or SessionEntry(key=given, path=Path(given),
                                                      own_file=True), format, now)
    if stamped is None or stamped[0].parent == paths.spool_dir():
        return None  # (a pipe's copy is named after its content and written anew each time)
    shared = entry is not None and not entry.own_file
    where = os.path.abspath(given)
    identity = repr((ROW_KIND, where, entry.key if entry is not None else None,
                     entry is not None and entry.own_file, format, _rules_of(task)))
    key = hashlib.blake2b(identity.encode("utf-8", "backslashreplace"),
                          digest_size=20).hexdigest()
    return RowPlace(key, stamped[0], stamped[1], given, entry.key if shared else None)


def _shared_file(path: Path, format: str) -> Path | None:
    """The file holding a session of a shared source: opencode's database for its data
    folder, else the path itself."""
    if format == "opencode-db" and os.path.isdir(path):
        from replay.core.readers.opencode_sqlite import database_file

        return database_file(path)
    return path


_RULES: dict[tuple[tuple[str, Any], ...], str] = {}


def _rules_of(task: SessionTask) -> str:
    identity = _RULES.get(task.rules)
    if identity is None:
        identity = _RULES[task.rules] = rules_identity(
            DEFAULT_RULES.with_options(**dict(task.rules)))
    return identity


def session_stamp(entry: SessionEntry, format: str, now: float | None = None
                  ) -> tuple[Path, str] | None:
    """The file a session's row is kept under and what its row depends on; None when it
    cannot be kept (a file changed a moment ago, one gone).

    A file's stamp (a database's with its write-ahead log), plus, for a session file with a
    folder of its own beside it (Claude Code keeps a session's subagents in
    `<session>/subagents/`), that folder's; a session of many files, all of theirs."""
    if format in SPREAD_FORMATS:
        return spread_stamp(entry, now)
    path = Path(os.path.abspath(entry.path))
    stamp = file_stamp(path, now)
    if stamp is None or not entry.own_file:
        return (path, stamp) if stamp is not None else None
    try:
        folder = os.stat(path.with_suffix("") / "subagents")
    except OSError:
        return path, stamp
    return path, f"{stamp};{folder.st_ino}:{folder.st_mtime_ns}"


def spread_stamp(entry: SessionEntry, now: float | None = None) -> tuple[Path, str] | None:
    """The stamp of an opencode storage session: its session file and every message and
    part file of it (name, size, mtime), and the folders holding them; None when one of them
    changed a moment ago (`RACY_SECONDS`) or the session is not found.

    A stat per file, where counting reads and parses each of them."""
    import stat

    from replay.core.readers.opencode_storage import session_sources

    try:
        found = session_sources(entry.path, entry.key)
    except (OSError, ReaderError):
        return None
    if found is None:
        return None
    now = now if now is not None else time.time()
    digest = hashlib.blake2b(digest_size=20)
    for source in found[1]:
        try:
            status = os.stat(source)
        except OSError:
            digest.update(f"{source.name}:-;".encode("utf-8", "backslashreplace"))
            continue
        digest.update(f"{source.name}:{status.st_ino}:{status.st_size}:"
                      f"{status.st_mtime_ns};".encode("utf-8", "backslashreplace"))
        if not stat.S_ISDIR(status.st_mode):
            if now - status.st_mtime < RACY_SECONDS:
                return None
            continue
        # (A folder's own time may be recent: what it holds is in the digest, file by file.)
        try:
            with os.scandir(source) as files:
                listed = sorted((item.name, item.stat()) for item in files
                                if not item.name.startswith("."))
        except OSError:
            return None
        for name, each in listed:
            if now - each.st_mtime < RACY_SECONDS:
                return None
            digest.update(f"{name}:{each.st_ino}:{each.st_size}:{each.st_mtime_ns};".encode(
                "utf-8", "backslashreplace"))
    # Kept under its session file (else its message folder), so a session removed is
    # dropped from the cache as a removed file is.
    return Path(os.path.abspath(found[1][0])), f"spread:{digest.hexdigest()}"


# ---------------------------------------------------------------- what a row holds


def summary_of(report: dict[str, Any], started: float | None, path: Path,
               own_file: bool) -> dict[str, Any]:
    """A session list's summary (`SessionSummary`'s fields) of a session's `scan --json`
    object: the scan's own figures (empty turns are its stops under the same rules), the
    start it took on the way, and its subagents counted from their files."""
    from replay.core.corpus.scan import report_label

    session_id = report.get("session_id")
    return {"label": report_label(report), "started": started, "turns": report["turns"],
            "empty": len(report["empty_turns"]),
            "subagents": subagent_count(report["format"], path, session_id) if own_file else 0,
            "format": report["format"], "title": report.get("title"),
            "session_id": session_id, "skipped": report.get("skipped", 0)}


def subagent_count(format: str, path: Path, session_id: str | None) -> int:
    """The subagent sessions of a session file, from their files (none is read): Claude
    Code's `subagents/` (and older loose `agent-*.jsonl` naming it), Codex rollouts of the
    same folder naming it as their parent thread."""
    try:
        if format == "claude-code":
            from replay.core.readers.claude_code import subagent_files

            return len(subagent_files(path, session_id))
        if format == "codex" and session_id:
            return _codex_children(path.parent).get(session_id, 0)
    except OSError:
        return 0
    return 0


_CODEX_FOLDERS: dict[Path, tuple[int, dict[str, int]]] = {}


def _codex_children(folder: Path) -> dict[str, int]:
    """How many rollouts of a folder name each parent thread (a listing reused while the
    folder is unchanged: every session of a day's folder asks)."""
    from replay.core.readers.codex import MAX_SIBLINGS, _thread_parent

    stamp = os.stat(folder).st_mtime_ns
    kept = _CODEX_FOLDERS.get(folder)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    children: dict[str, int] = {}
    for sibling in sorted(folder.glob("rollout-*.jsonl"))[:MAX_SIBLINGS]:
        parent = _thread_parent(sibling)
        if parent is not None:
            children[parent] = children.get(parent, 0) + 1
    if len(_CODEX_FOLDERS) >= 64:
        _CODEX_FOLDERS.clear()
    _CODEX_FOLDERS[folder] = (stamp, children)
    return children


CHUNK_REPORTS = 1000
"""Reports of a task of more than this many sessions (an Aider history of thousands of chats)
are kept this many to a row, and given back a row at a time (`ChunkedReports`): never all
in memory, as the scan that made them keeps them on disk (`spill`)."""


def keep_result(cache: ScanCache, place: RowPlace, task: SessionTask,
                result: TaskResult) -> dict[str, Any] | None:
    """Keep what a task's scan gave in its row (both the reports and, for one session, the
    summary); returns the summary (None when the task held several sessions or failed).
    Many reports are kept `CHUNK_REPORTS` to a row, under keys beside the task's."""
    if result.error is not None:
        return None
    history = task.format == history_rows.FORMAT and task.entry is None
    if (len(result.reports) > CHUNK_REPORTS or history) and result.started is None:
        chunks = 0
        for chunk in _chunks(result.reports):
            cache.store_key(f"{place.key}#{chunks}", place.path, place.stamp, chunk,
                            entry=place.entry)
            chunks += 1
        value: dict[str, Any] = {"given": text_of(place.given), "chunks": chunks,
                                 "count": len(result.reports)}
        if history:
            # (what a scan of the history grown since needs to go on from these reports)
            value["grown"] = history_rows.grown_facts(place.path, place.stamp)
        cache.store_key(place.key, place.path, place.stamp, value, entry=place.entry)
        return None
    summary = None
    if result.started is not None and len(result.reports) == 1:
        entry = task.entry
        summary = summary_of(result.reports[0], result.started[0], place.path,
                             entry is None or entry.own_file)
    cache.store_key(place.key, place.path, place.stamp,
                    {"given": text_of(place.given), "reports": result.reports,
                     "started": list(result.started) if result.started is not None else None},
                    summary=summary, entry=place.entry)
    return summary


def result_for(cache: ScanCache, place: RowPlace) -> TaskResult | None:
    """A row's task result (`scan --json` objects, naming the session's path as
    `place.given` does); None when the row lacks them, or they cannot be named so (a path
    not kept as text, one in a warning)."""
    value = cache.lookup_key(place.key, place.stamp)
    if not isinstance(value, dict):
        return None
    chunks, count = value.get("chunks"), value.get("count")
    if isinstance(chunks, int) and isinstance(count, int):
        keys = chunk_keys(place.key, chunks)
        if value.get("given") != text_of(place.given) or not cache.holds(keys, place.stamp):
            return None  # (named otherwise, or a row of it gone: read again)
        return TaskResult(reports=ChunkedReports(cache, keys, place.stamp, count))  # type: ignore[arg-type]
    reports, given, started = value.get("reports"), value.get("given"), value.get("started")
    if not isinstance(reports, list) or not isinstance(given, str):
        return None
    if given != text_of(place.given):
        reports = _renamed(reports, given, place.given)
        if reports is None:
            return None
    return TaskResult(reports=reports,
                      started=tuple(started) if isinstance(started, list) else None)


def _chunks(reports: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for report in reports:
        chunk.append(report)
        if len(chunk) == CHUNK_REPORTS:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _renamed(reports: Sequence[dict[str, Any]], old: str, new: str
             ) -> list[dict[str, Any]] | None:
    renamed = []
    for report in reports:
        if not isinstance(report, dict) or "path_base64" in report or report.get("path") != old:
            return None
        if any(old in str(warning) for warning in report.get("warnings", ())):
            return None
        renamed.append({**report, "path": new})
    return renamed


# ---------------------------------------------------------------- scan and report

PLAN_KIND = "plan/1"
"""The kind of the rows keeping a folder's plan (its listed tasks)."""


def planned(cache: ScanCache | None, source: str | Path, format: str | None,
            rules: Mapping[str, Any] | None, mapper: Mapper) -> list[SessionTask]:
    """`tasks.plan` of a path, kept in the cache for a folder: the listing of an unchanged
    folder (every file and folder under it with the same size, times and inode) is not
    made again (a cached scan's largest cost was telling each file's format again). A
    listing made again (a folder that changed, one holding a file changed a moment ago or a
    symbolic link) reads only the files that changed: each unchanged file's format and start
    are kept under its own stamp (`file_facts`).

    Raises ReaderError, as `plan` does."""
    from replay.core.corpus.tasks import plan

    text = str(source)
    if cache is None or not cache.usable or is_url(text):
        return plan(source, format, rules, mapper)
    if not os.path.isdir(text):
        with remembering(CachedFacts(cache)):  # (its format, told once while unchanged)
            return plan(source, format, rules, mapper)
    stamp = tree_stamp(text)
    identity = repr((PLAN_KIND, os.path.abspath(text), text, format,
                     sorted((rules or {}).items())))
    key = hashlib.blake2b(identity.encode("utf-8", "backslashreplace"),
                          digest_size=20).hexdigest()
    if stamp is not None:
        kept = cache.lookup_key(key, stamp)
        if isinstance(kept, list):
            try:
                return [_task_of(item) for item in kept]
            except (TypeError, ValueError, IndexError):
                pass  # (not written by this code: listed again)
    with remembering(CachedFacts(cache)):  # each unchanged file's format and start, kept
        tasks = plan(source, format, rules, mapper)
    if stamp is not None:
        cache.store_key(key, Path(os.path.abspath(text)), stamp,
                        [_task_json(task) for task in tasks])
    return tasks


def _task_json(task: SessionTask) -> list[Any]:
    entry = task.entry
    return [task.source, task.format, None if entry is None else [
        entry.key, str(entry.path), entry.own_file, entry.title, entry.started, entry.format,
        entry.problem], [list(pair) for pair in task.rules], task.required]


def _task_of(item: list[Any]) -> SessionTask:
    source, format, entry, rules, required = item
    return SessionTask(source, format, None if entry is None else SessionEntry(
        entry[0], Path(entry[1]), entry[2], entry[3], entry[4], entry[5], entry[6]),
        tuple(tuple(pair) for pair in rules), required)


def tree_stamp(root: str, now: float | None = None) -> str | None:
    """What a folder's listing depends on: the name, inode, size, times and mode of every
    file and folder under it, a symbolic link's target and what it points to (a folder it
    points to walked as the listing walks it, once); None when a file changed a moment ago
    (`RACY_SECONDS`: its content may change unseen within its time's tick; the listing is
    then made again, from each other file's kept facts: `file_facts`)."""
    import stat

    now = now if now is not None else time.time()
    digest = hashlib.blake2b(digest_size=20)
    try:
        top = os.stat(root)
    except OSError:
        return None
    digest.update(f"{top.st_ino}:{top.st_mtime_ns}:{top.st_ctime_ns};".encode())
    seen = {(top.st_dev, top.st_ino)}
    folders = [root]
    while folders:
        folder = folders.pop()
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return None
        digest.update(os.fsencode(folder) + b"\0")
        below: list[str] = []
        for name in names:
            path = os.path.join(folder, name)
            try:
                status = os.lstat(path)
                if stat.S_ISLNK(status.st_mode):
                    digest.update(b"\0link\0" + os.fsencode(os.readlink(path)) + b"\0")
                    status = os.stat(path)  # (what it points to)
            except OSError:
                digest.update(os.fsencode(name) + b"\0-;")  # (gone, or a link to nothing)
                continue
            if stat.S_ISDIR(status.st_mode):
                if (status.st_dev, status.st_ino) not in seen:
                    seen.add((status.st_dev, status.st_ino))
                    below.append(path)
            elif now - status.st_mtime < RACY_SECONDS:
                return None  # (a folder's names are in the stamp: its own time may be new)
            digest.update(os.fsencode(name) + f"\0{status.st_dev}:{status.st_ino}:"
                          f"{status.st_size}:{status.st_mtime_ns}:{status.st_ctime_ns}:"
                          f"{status.st_mode};".encode())
        folders.extend(reversed(below))
    return f"tree:{digest.hexdigest()}"


def cached_results(tasks: Sequence[SessionTask], run: Callable[[Sequence[SessionTask]],
                   Iterator[TaskResult]], cache: ScanCache | None) -> Iterator[TaskResult]:
    """Each task's result in task order: from its row when its session is unchanged, else
    from `run` (given only the tasks the cache lacks, in order), whose results fill the rows
    (with the summary the session lists read, so a scan makes their counts instant too).

    With `cache` None (`--no-cache`) this is `run(tasks)`.
    """
    if cache is None or not cache.usable:
        yield from run(tasks)
        return
    now = time.time()
    places = [place_of(task, now) for task in tasks]
    found = [result_for(cache, place) if place is not None else None for place in places]
    for number, (task, place) in enumerate(zip(tasks, places, strict=True)):
        if found[number] is None and place is not None and task.format == history_rows.FORMAT:
            # An Aider history that only grew: its kept chats given again, the rest scanned.
            found[number] = grown = history_rows.appended(cache, task, place.key, place.given,
                                                          place.path)
            if grown is not None:
                keep_result(cache, place, task, grown)
    missing = [task for task, known in zip(tasks, found, strict=True) if known is None]
    computed = run(missing) if missing else iter(())
    try:
        for task, known, place in zip(tasks, found, places, strict=True):
            if known is not None:
                yield known
                continue
            result = next(computed)
            if place is not None:
                keep_result(cache, place, task, result)
            yield result
    finally:
        cache.flush()


def forget_gone(cache: ScanCache, roots: Sequence[str], tasks: Sequence[SessionTask]) -> int:
    """After a corpus was listed from `roots`: drop the rows of files gone from them, and of
    sessions gone from a database listed whole (its tasks are every session it holds)."""
    seen = {str(task.entry.path if task.entry is not None else task.source) for task in tasks}
    listed: dict[str, set[str]] = {}
    for task in tasks:
        entry = task.entry
        if entry is not None and not entry.own_file:
            listed.setdefault(str(entry.path), set()).add(entry.key)
    return cache.forget_missing(roots, seen, listed)


def scan_cached(path: str | Path, format: str | None = None,
                rules: dict[str, Any] | None = None, jobs: int = 1,
                use_cache: bool = True) -> Iterator[TaskResult]:
    """Every session under `path` (a file or folder) as `scan --json` objects, one
    `TaskResult` per session task in `plan` order, through the cache unless `use_cache` is
    False.

    Raises:
        ReaderError: the path cannot be read or its format is not recognised.
    """
    from replay.core.corpus.pool import local_pool, pool_mapper, run_tasks
    from replay.core.corpus.tasks import plan

    with local_pool(jobs) as pool:
        tasks = plan(path, format, rules, pool_mapper(pool, jobs))
        if not use_cache:
            yield from run_tasks(tasks, jobs, None, pool)
            return
        with ScanCache() as cache:
            yield from cached_results(tasks, lambda todo: run_tasks(todo, jobs, None, pool),
                                      cache)
            forget_gone(cache, [str(path)], tasks)
