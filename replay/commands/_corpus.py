"""What `scan` and `report` share: `--jobs`/`--dask`, and scanning paths with clean errors."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replay.arguments import positive_int
from replay.commands._common import EXIT_BAD_INPUT, EXIT_OK, EXIT_SKIPPED, say_error
from replay.core.corpus.pool import (
    LOCAL,
    DaskMissing,
    default_jobs,
    local_pool,
    pool_mapper,
    run_tasks,
)
from replay.core.corpus.tasks import SessionTask, TaskResult, is_url, plan
from replay.core.readers import ReaderError, huge_strings
from replay.core.readers.base import Mapper
from replay.core.readers.folder import SKIPPED, is_skipped_file
from replay.core.readers.spool import named, spooled


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `--jobs` and `--dask`."""
    parser.add_argument("--jobs", "-j", type=positive_int, metavar="N", default=None,
                        help="sessions read at once, one process each (default: the number "
                             f"of cores, {default_jobs()} here; 1 reads them in this process)")
    parser.add_argument("--dask", metavar="local|ADDRESS",
                        help=f"run each session as a task of a Dask cluster: '{LOCAL}' starts "
                             "one on this machine, or the scheduler's address "
                             "(tcp://host:8786); needs the extra replay[dask], which also lets "
                             "PATH be an fsspec URL (s3://bucket/sessions/)")
    parser.add_argument("--no-cache", dest="cache", action="store_false",
                        help="read every session again, neither using nor updating the scan "
                             "cache (results of unchanged files, kept in the user cache "
                             "directory)")


@dataclass(slots=True)
class CorpusScan:
    """Scans the paths of a command, printing one stderr line per unreadable path or session."""

    status: int = EXIT_OK
    """EXIT_BAD_INPUT once a path, or a file given as a whole, could not be read (or, at the
    end, when files were skipped and no session was read); EXIT_SKIPPED when some session or
    file of a folder was skipped and the rest read."""
    sessions: int = 0
    """Sessions scanned."""
    skipped: int = 0
    """Sessions or files of a folder that were not read, each said on stderr."""
    _renames: dict[str, str] = field(default_factory=dict)

    def reports(self, paths: Sequence[str], format: str | None = None,
                rules: Mapping[str, Any] | None = None, jobs: int | None = None,
                dask: str | None = None, only: Mapping[str, set[str]] | None = None,
                cache: bool = True) -> Iterator[dict[str, Any]]:
        """The `scan --json` object of every session under the paths, in a stable order.

        `rules` changes the default detection rules (`DetectionRules.with_options`); `only`
        keeps, of a path holding many sessions, those with these keys (a session id given
        for one session of a database). With `cache`, sessions whose file is unchanged since
        a scan kept them are not read again (`replay.core.corpus.cache`).
        """
        jobs = jobs or default_jobs()
        # A scan reads no message whole (counts, lengths, the words its suggestions look
        # at are read back from the file): a message of megabytes stays in its file, as
        # in the app (before the pool, whose forked workers inherit it).
        huge_strings.enable()
        # More than one session likely: the workers start before the listing, which hands
        # them its look at each file (one file alone is read in this process).
        many = len(paths) > 1 or any(is_url(path) or os.path.isdir(path) for path in paths)
        try:
            with local_pool(jobs if dask is None and many else 1) as pool, \
                    contextlib.ExitStack() as stack:
                kept = None
                if cache:
                    # Imported only when used: SQLite and hashlib's OpenSSL cost every start.
                    from replay.core.corpus.cache import ScanCache

                    kept = stack.enter_context(ScanCache(warn=say_error))
                mapper = pool_mapper(pool, jobs)
                tasks: list[SessionTask] = []
                listed: list[SessionTask] = []  # (before `only`: every session of a source)
                for path in paths:
                    planned = self._plan(path, format, rules, mapper, kept)
                    listed.extend(planned)
                    wanted = (only or {}).get(path)
                    if wanted is not None:
                        planned = [task for task in planned
                                   if task.entry is not None and task.entry.key in wanted]
                    tasks.extend(planned)

                def run(todo: Sequence[SessionTask]) -> Iterator[TaskResult]:
                    return run_tasks(todo, jobs, dask, pool)

                if kept is None:
                    yield from self._results(tasks, run(tasks))
                    return
                from replay.core.corpus.rows import cached_results, forget_gone

                yield from self._results(tasks, cached_results(tasks, run, kept))
                given = set(self._renames.values())  # read from a pipe: nothing kept
                forget_gone(kept, [path for path in paths
                                   if path not in given and not is_url(path)], listed)
        except DaskMissing as error:
            say_error(str(error))
            self.status = EXIT_BAD_INPUT
        except OSError as error:
            if dask is None:
                raise
            # Cannot reach the scheduler: one line, not a traceback.
            say_error(f"dask scheduler {dask}: {error}")
            self.status = EXIT_BAD_INPUT

    def _results(self, tasks: Sequence[SessionTask],
                 results: Iterator[TaskResult]) -> Iterator[dict[str, Any]]:
        """Each task's `scan --json` objects in order, its failure said on stderr."""
        for task, result in zip(tasks, results, strict=True):
            if result.error is not None:
                if task.entry is None and task.required:
                    say_error(self._named(result.error))
                    self.status = EXIT_BAD_INPUT
                else:
                    said = self._named(result.error)
                    say_error(said if said.startswith(SKIPPED) else SKIPPED + said)
                    self.skipped += 1
                continue
            self.sessions += len(result.reports)
            for report in result.reports:
                # A folder read whole keeps the files it skipped as warnings: say each.
                for warning in report.get("warnings", ()):
                    if is_skipped_file(warning):
                        say_error(warning)
                        self.skipped += 1
            yield from result.reports
        if self.skipped and self.status == EXIT_OK:
            self.status = EXIT_SKIPPED if self.sessions else EXIT_BAD_INPUT

    def _plan(self, path: str, format: str | None, rules: Mapping[str, Any] | None,
              mapper: Mapper, kept: Any = None) -> list[SessionTask]:
        try:
            source: str | Path = path if is_url(path) else spooled(path)
        except ReaderError as error:
            say_error(str(error))
            self.status = EXIT_BAD_INPUT
            return []
        if str(source) != path:
            self._renames[str(source)] = path
        try:
            if kept is None:
                return plan(source, format, rules, mapper)
            from replay.core.corpus.rows import planned

            return planned(kept, source, format, rules, mapper)
        except ReaderError as error:
            say_error(self._named(str(error)))
            self.status = EXIT_BAD_INPUT
            return []

    def given(self, path: str) -> str:
        """The path as the user gave it (`-`, `/dev/fd/63`) for a pipe read into a file."""
        return self._renames.get(path, path)

    def _named(self, message: str) -> str:
        for spool, original in self._renames.items():
            message = named(message, Path(spool), original)
        return message
