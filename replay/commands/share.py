"""`replay share PATH`: the whole session to show others, as a page, Markdown or a recording."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

from replay.arguments import add_format, add_labels
from replay.commands._common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    cannot_write,
    journal_records_or_none,
    load_or_none,
    named_only,
    one_session,
    say_error,
    settings_and_labels_or_none,
    stderr_progress,
)
from replay.core.annotate.annotations import (
    annotations_from_records,
    default_journal_path,
    session_identity,
)
from replay.core.detection.empty import DEFAULT_RULES
from replay.core.files import output_stream
from replay.core.safe import show_path
from replay.core.suggest import suggester_for

NAME = "share"
HELP = ("write a whole session to show others: a self-contained HTML page with a player that "
        "pauses at every empty turn (default), Markdown, or an asciicast recording")

KINDS = ("html", "md", "cast")
SUFFIXES = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".cast": "cast"}


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the share arguments."""
    parser.add_argument("path", metavar="PATH", help="session file (or a folder or database "
                                                     "holding one session)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="file to write; '-' for standard output (default: KEY.html, "
                             "KEY.md or KEY.cast in the current folder, KEY being the "
                             "session's format and id, as its journal is named); written "
                             "whole or not at all")
    parser.add_argument("--as", dest="kind", choices=KINDS,
                        help="html: one page, no network needed, every turn data-turn=N, a "
                             "player (space, arrows, [ ], + -) that stops at empty turns; md: "
                             "the transcript as Markdown; cast: an asciicast v2 recording with "
                             "a marker at every empty turn (default: from the -o suffix, else "
                             "html)")
    parser.add_argument("--redact", action="store_true",
                        help="replace secrets (cloud keys, tokens, private keys, passwords in "
                             "URLs, secret assignments, high-entropy strings: detect-secrets' "
                             "plugins) and e-mail addresses by [redacted: KIND], and the user "
                             "name of home-folder paths by ~; stderr says how many of each")
    parser.add_argument("--annotations", metavar="FILE",
                        help="journal whose annotations are shown (default: the session's "
                             "own journal in the user data directory)")
    parser.add_argument("--session", metavar="ID",
                        help="for a path holding several sessions (a folder, a database, an "
                             "Aider history, a chat dataset): the one to share, by its id or a "
                             "unique start of it")
    parser.add_argument("--missing-replies", action="store_true",
                        help="also show a placeholder #N+ after every request that got no "
                             "reply, as the app does with the same option (on by default when "
                             "the app's settings turn it on)")
    add_labels(parser, "TOML label set, for label titles and suggestions")
    add_format(parser, "read the session as this transcript format instead of detecting it")


def kind_of(args: argparse.Namespace) -> str:
    """The output kind: `--as`, else the suffix of `-o`, else html."""
    if args.kind:
        return str(args.kind)
    if args.output and args.output != "-":
        return SUFFIXES.get(Path(args.output).suffix.lower(), "html")
    return "html"


def run(args: argparse.Namespace) -> int:
    """Read one session, its annotations, and write it in the kind asked for."""
    inputs = settings_and_labels_or_none(args)
    if inputs is None:
        return EXIT_BAD_INPUT
    settings, labels = inputs
    sessions = load_or_none(args.path, args.format, stderr_progress(str(args.path)),
                            named_only(args))
    if sessions is None:
        return EXIT_BAD_INPUT
    session = one_session(sessions, args.session, args.path, NAME)
    if session is None:
        return EXIT_BAD_INPUT
    journal = Path(args.annotations) if args.annotations else default_journal_path(session)
    records = journal_records_or_none(journal)
    if records is None:
        return EXIT_BAD_INPUT
    annotations = annotations_from_records(records, session_id=session_identity(session))

    from replay.core.publish.share_model import share_session

    redactor = None
    if args.redact:
        from replay.core.publish.redact import Redactor

        redactor = Redactor()
    rules = DEFAULT_RULES.with_options(
        tool_only_is_empty=settings.tool_only_is_empty,
        missing_replies=args.missing_replies or settings.missing_replies)
    kind = kind_of(args)
    # Only a page must fit a browser: Markdown and the recording keep every word.
    shared = share_session(session, annotations, labels, suggester=suggester_for(labels),
                           rules=rules, idle_cap=settings.idle_cap, clean=redactor,
                           big=None if kind == "html" else False)
    output = args.output or f"{shared.key}.{kind}"
    try:
        where = _write(_chunks(shared, kind), output)
    except OSError as error:
        return cannot_write(output, error)
    if redactor is not None:
        say_error(f"redacted {redactor.summary()}")
    folded = " (large session: turns folded, long parts cut; the page says so)" \
        if shared.big and kind == "html" else ""
    print(f"replay: wrote {shared.count:,} turns, {len(shared.empties):,} empty ({kind}) to "
          f"{where}{folded}", file=sys.stderr, flush=True)
    return EXIT_OK


def _chunks(shared: object, kind: str) -> Iterable[str]:
    if kind == "md":
        from replay.core.publish.share_md import markdown_chunks

        return markdown_chunks(shared)  # type: ignore[arg-type]
    if kind == "cast":
        from replay.core.publish.share_cast import cast_chunks

        return cast_chunks(shared)  # type: ignore[arg-type]
    from replay.core.publish.share_html import html_chunks

    return html_chunks(shared)  # type: ignore[arg-type]


def _write(chunks: Iterable[str], output: str) -> str:
    """Write every chunk, atomically to a file or straight to standard output; where it went.

    Raises:
        OSError: the file cannot be written (nothing is left in its place).
    """
    if output == "-":
        sys.stdout.flush()
        for chunk in chunks:
            sys.stdout.buffer.write(chunk.encode("utf-8"))
        sys.stdout.flush()
        return "standard output"
    with output_stream(Path(output), "utf-8") as stream:
        for chunk in chunks:
            stream.write(chunk)
    return show_path(output)
