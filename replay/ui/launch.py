"""From parsed command-line arguments to a running app, with clean errors before it starts."""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from replay.config import load_settings
from replay.core.readers import ReaderError, detect_reader, get_reader
from replay.core.readers.spool import STDIN, follow_refusal, named, spooled
from replay.core.safe import one_line
from replay.core.session.labels import DEFAULT_LABELS, LabelSetError, load_label_set

if TYPE_CHECKING:
    from replay.core.discovery.found import FoundSession


def _fail(message: str) -> int:
    """One line on stderr, escaped as the subcommands escape theirs (the message names paths
    and quotes files: no control sequence or line feed may reach the terminal)."""
    print(f"replay: {one_line(message)}", file=sys.stderr, flush=True)
    return 2


def _chosen(args: argparse.Namespace) -> list[FoundSession]:
    """The one session of a database a PATH named by id (to open it at once, not the whole
    database's list); [] otherwise (a file named by id is simply that file)."""
    named: dict[str, FoundSession] = getattr(args, "sessions", {}) or {}
    session = next(iter(named.values()), None)
    if session is not None and not session.entry.own_file and not args.follow:
        return [session]
    return []


def _follow_roots(args: argparse.Namespace) -> list[Path] | str:
    """`--follow --local`: the folders the machine's agents write sessions in (PATH too,
    when given); [] without `--local`; the line saying why not, when it cannot be."""
    if not getattr(args, "follow_local", False):
        return []
    if not args.follow:
        return "--local goes with --follow here (the list of this machine's sessions is " \
            "what `replay` with no PATH shows)"
    from replay.core.discovery import discovery_roots, looked_in

    roots = ([Path(args.path)] if args.path is not None else []) + discovery_roots()
    if not roots:
        return f"--local: no session folder found on this machine (looked in {looked_in()})"
    return roots


def launch(args: argparse.Namespace) -> int:
    """Check the path and options, then run the app; returns the exit status."""
    from replay.resources import default_sample

    loaded = load_settings()
    settings = loaded.settings
    follow_roots = _follow_roots(args)
    if isinstance(follow_roots, str):
        return _fail(follow_roots)
    if follow_roots and args.path is None:
        args.path = str(follow_roots[0])
    chosen = _chosen(args) if args.path is not None else []
    # No PATH: the app lists the sessions it finds (the sample when there is none).
    given: str | Path = chosen[0].path if chosen else args.path or default_sample()
    if str(given) == STDIN:
        return _fail("standard input: the app reads keys from it; give a file, or a pipe as "
                     "`replay <(command)`")
    if args.follow and (refusal := follow_refusal(given)):
        return _fail(refusal)
    try:
        path = spooled(given)  # a pipe, as `replay <(zcat session.jsonl.gz)`, becomes a file
    except ReaderError as error:
        return _fail(str(error))
    # A followed folder may hold no session yet, or sessions of several tools: each file is
    # recognised as it is read.
    folder_follow = args.follow and path.is_dir()
    try:
        reader = get_reader(args.format) if args.format else \
            get_reader(chosen[0].format or "folder") if chosen else \
            None if folder_follow else detect_reader(path)
    except ReaderError as error:
        return _fail(named(str(error), path, given))
    labels_path = args.labels or settings.labels
    labels = DEFAULT_LABELS
    if labels_path:
        try:
            labels = load_label_set(labels_path)
        except LabelSetError as error:
            return _fail(str(error))
    if args.follow and not path.exists():
        return _fail(f"{path}: no such file to follow")
    if args.theme:
        from dataclasses import replace

        settings = replace(settings, theme=args.theme)
    if args.tool_only:
        from dataclasses import replace

        settings = replace(settings, tool_only_is_empty=True)
    if args.blind or args.missing_replies:
        from dataclasses import replace

        settings = replace(settings, blind=settings.blind or args.blind,
                           missing_replies=settings.missing_replies or args.missing_replies)
    from replay.core.index.heap import keep_big_blocks_mapped
    from replay.ui.app import make_app

    keep_big_blocks_mapped()  # a big file's growing columns leave no holes in the heap

    app = make_app(path, settings=settings, format=reader.name if reader else None,
                   follow=args.follow,
                   reviewer=args.reviewer,
                   annotations=Path(args.annotations) if args.annotations else None,
                   labels=labels, problems=loaded.problems, stall=args.stall,
                   settle=args.settle, discovered=chosen or None, chosen=bool(chosen),
                   discover=args.path is None and not args.follow,
                   follow_roots=follow_roots, cache=getattr(args, "cache", True))
    # Everything made so far (the modules, their classes and functions, the settings) lives
    # as long as the process: frozen, the collector stops walking it. Unfrozen, a full
    # collection landed in the first paint and cost 15-25 ms of it.
    gc.freeze()
    app.run()
    return app.return_code or 0
