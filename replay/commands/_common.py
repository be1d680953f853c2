"""Pieces the headless commands share: loading with clean errors, and stderr lines."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.core.files import regular_file_refusal, why_missing
from replay.core.readers import ReaderError, detect_reader, get_reader, load_sessions, read_entry
from replay.core.readers.base import Progress
from replay.core.readers.folder import is_skipped_file
from replay.core.readers.spool import named, spooled
from replay.core.safe import one_line, show_path
from replay.core.session.model import Session

if TYPE_CHECKING:
    from rich.console import Console

    from replay.config import Settings
    from replay.core.session.labels import LabelSet

# Settings (tomllib), label sets and journals are imported by the functions that read them:
# `scan` and `watch` need none of them, and each costs every start of replay.

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2
EXIT_SKIPPED = 1
"""Some files of a folder were read and some skipped (each said on stderr)."""


def say_error(message: str) -> None:
    """Print one clear line on stderr, every control, bidi or zero-width character and line
    feed escaped (messages name paths and quote transcript text: `one_line`)."""
    print(f"replay: {one_line(message)}", file=sys.stderr, flush=True)


def cannot_write(output: object, error: OSError) -> int:
    """Say that `output` cannot be written and give the exit status for it.

    A closed pipe is not a failure to report: the reader went away (`| head`), and
    `replay.cli.main` ends the run quietly, whatever the command. So a `BrokenPipeError`
    (also from `-o /dev/stdout` or a FIFO) goes on up to it.
    """
    if isinstance(error, BrokenPipeError):
        raise error
    say_error(f"cannot write {output}: {error.strerror or error}")
    return EXIT_FAILURE


def settings_or_defaults() -> Settings:
    """The user's settings; problems with the config file are reported on stderr, not fatal."""
    from replay.config import load_settings

    loaded = load_settings()
    for problem in loaded.problems:
        say_error(f"warning: {problem}")
    return loaded.settings


def label_set_or_none(path: str | None) -> LabelSet | None:
    """The label set from `path` (the default set when None), or None after printing why not."""
    from replay.core.session.labels import DEFAULT_LABELS, LabelSetError, load_label_set

    if not path:
        return DEFAULT_LABELS
    try:
        return load_label_set(path)
    except LabelSetError as error:
        say_error(str(error))
        return None


def load_or_none(
    path: str | Path, format: str | None = None, progress: Progress | None = None,
    only: set[str] | None = None,
) -> list[Session] | None:
    """Load sessions, or print the reader's one-line error and return None.

    A pipe (`<(zcat x.gz)`, or `-` for standard input) is copied to a file first. `only`
    keeps the sessions with these ids (one session of a database, named by its id).
    """
    source = _spooled_or_none(path)
    if source is None:
        return None
    try:
        sessions = load_sessions(source, format, progress)
    except ReaderError as error:
        say_error(named(str(error), source, path))
        return None
    return [s for s in sessions if s.session_id in only] if only else sessions


def named_only(args: object) -> set[str] | None:
    """The ids of the sessions of `args.path` that were named by id (`settle_paths`)."""
    only = getattr(args, "only", None) or {}
    return only.get(str(getattr(args, "path", "")))


def one_session(sessions: list[Session], wanted: str | None, path: str | Path,
                command: str) -> Session | None:
    """The session of a path that a command acting on one session takes: the only one, or
    the one `--session` names (its id, or a unique prefix of it). Says why on stderr and
    returns None when there is none or the choice is left open."""
    from replay.core.annotate.annotations import session_identity

    def ids(of: list[Session]) -> str:
        shown = [one_line(session.session_id or session_identity(session))
                 for session in of[:5]]
        return ", ".join(shown) + (f" and {len(of) - 5} more" if len(of) > 5 else "")

    where = show_path(path)
    if wanted is not None:
        chosen = [session for session in sessions
                  if wanted in (session.session_id, session_identity(session))]
        if not chosen:
            chosen = [session for session in sessions
                      if (session.session_id or "").startswith(wanted)]
        if len(chosen) == 1:
            return chosen[0]
        if not chosen:
            say_error(f"{where}: no session {one_line(wanted)!r} among its "
                      f"{len(sessions)} ({ids(sessions)})")
        else:
            say_error(f"{where}: {one_line(wanted)!r} names {len(chosen)} sessions "
                      f"({ids(chosen)}); give more of the id")
        return None
    if len(sessions) == 1:
        return sessions[0]
    if not sessions:
        say_error(f"{where}: holds no session")
    else:
        how = "add --session ID"
        if len({str(session.path) for session in sessions}) > 1:  # a folder of files
            how = f"name its file (e.g. {show_path(sessions[0].path)}) or {how}"
        say_error(f"{where}: holds {len(sessions)} sessions ({ids(sessions)}); {command} "
                  f"takes one: {how}")
    return None


def _spooled_or_none(path: str | Path) -> Path | None:
    """The path, or a pipe's copy; None after printing why it could not be copied."""
    try:
        return spooled(path)
    except ReaderError as error:
        say_error(str(error))
        return None


def stream_or_none(path: str | Path, format: str | None = None,
                   progress: Progress | None = None,
                   skipped: list[str] | None = None) -> Iterator[Session] | None:
    """The sessions at a path one at a time, or None after printing why it cannot be read.

    A source that lists its sessions (a Claude Code project folder, `~/.claude/projects`,
    an opencode database) is read one session at a time, oldest first, each let go before
    the next: memory stays that of one session and the first result comes at once. A
    session that cannot be read is one line on stderr, and the others still come; so is
    every file of a folder that is not read. `skipped`, when given, receives those lines.
    """
    said = skipped if skipped is not None else []

    def skip(line: str) -> None:
        say_error(line)
        said.append(line)

    source = _spooled_or_none(path)
    if source is None:
        return None
    try:
        reader = get_reader(format) if format else detect_reader(source)
        entries = reader.list_sessions(source) \
            if reader.list_sessions is not None and (source.is_dir() or reader.builder is None) \
            else None
    except ReaderError as error:
        say_error(named(str(error), source, path))
        return None
    if entries is None:
        sessions = load_or_none(source, reader.name, progress)
        if sessions is None:
            return None
        for session in sessions:
            for warning in session.warnings:
                if is_skipped_file(warning):
                    skip(warning)
        return iter(sessions)

    def each() -> Iterator[Session]:
        for entry in sorted(entries, key=lambda e: (e.started is None, e.started or 0.0, e.key)):
            try:
                yield read_entry(reader, entry)
            except ReaderError as error:
                skip(str(error))

    return each()


def journal_refusal(path: str | Path | None) -> str | None:
    """One line refusing a journal named by the user that is not a regular file (a FIFO, a
    device, a folder), said before anything is read; None when it may be used."""
    return regular_file_refusal(path, "an annotation journal") if path else None


def settings_and_labels_or_none(args: Any) -> tuple[Settings, LabelSet] | None:
    """The settings and label set of a command that reads a journal (`--annotations`,
    `--labels`): None, having said why on stderr, when the journal path is refused or the
    label set cannot be read."""
    refusal = journal_refusal(args.annotations)
    if refusal:
        say_error(refusal)
        return None
    settings = settings_or_defaults()
    labels = label_set_or_none(args.labels or settings.labels)
    if labels is None:
        return None
    return settings, labels


def journal_records_or_none(path: Path) -> list[dict[str, Any]] | None:
    """The records of an annotation journal, its ignored lines said as warnings on stderr;
    None after printing why it cannot be read."""
    from replay.core.annotate.journal import Journal, JournalError

    try:
        loaded = Journal(path).load()
    except JournalError as error:
        say_error(str(error))
        return None
    if loaded.foreign is not None and not loaded.records:
        # A transcript or other JSON given as a journal: one line, not one per line of it.
        say_error(f"{path}: not an annotation journal: no line is an annotation record "
                  f"({loaded.foreign})")
        return None
    for warning in loaded.warnings:
        say_error(f"warning: {warning}")
    return loaded.records


def journal_files_or_none(paths: list[str]) -> list[Path] | None:
    """The journals named: files as given, folders as their `*.jsonl` files; None after one
    line about the first path that is missing, a loop, or no regular file."""
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        missing = why_missing(path)
        if missing == "no such file or directory":
            say_error(f"{path}: no such journal file or folder")
            return None
        if missing:
            say_error(f"{path}: {missing}")
            return None
        if path.is_dir():
            files.extend(sorted(path.glob("*.jsonl")))
            continue
        refusal = journal_refusal(path)
        if refusal:
            say_error(refusal)
            return None
        files.append(path)
    return files


def pooled_records_or_none(files: list[Path]) -> list[dict[str, Any]] | None:
    """The records of every journal, in file order; None after the line about one that
    cannot be read."""
    records: list[dict[str, Any]] = []
    for path in files:
        found = journal_records_or_none(path)
        if found is None:
            return None
        records.extend(found)
    return records


def table_console() -> Console:
    """A Rich console for the human tables on standard output.

    Rich ends a closed pipe (`| head`) with exit status 1; the CLI treats it as `cat` does
    (exit 0, quietly), so the console hands the BrokenPipeError back to `replay.cli.main`.
    """
    from rich.console import Console

    console = Console(highlight=False)

    def closed_pipe() -> None:
        console.quiet = True
        raise BrokenPipeError

    console.on_broken_pipe = closed_pipe  # type: ignore[method-assign]
    return console


def stderr_progress(label: str) -> Progress | None:
    """A progress callback that redraws one stderr line, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None
    label = show_path(label)

    def report(done: int, total: int) -> None:
        percent = 100 * done // total if total else 100
        sys.stderr.write(f"\r{label[-60:]}: {percent:3d}%")
        if done >= total:
            sys.stderr.write("\r" + " " * (len(label[-60:]) + 6) + "\r")
        sys.stderr.flush()

    return report
