"""`replay export PATH`: write a session's annotations as CSV or JSON lines."""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import Any

from replay.arguments import add_format, add_labels, add_reviewer
from replay.commands._casestudy import write_case_studies
from replay.commands._common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    cannot_write,
    journal_records_or_none,
    load_or_none,
    named_only,
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
from replay.core.publish.casestudy import CaseStudy, case_studies
from replay.core.publish.export import export_rows, write_csv, write_file, write_jsonl
from replay.core.safe import escape_controls, show_path
from replay.core.suggest import suggester_for

NAME = "export"
HELP = ("write the annotations of a session as CSV (default) or JSON lines, or as case "
        "studies in Markdown or HTML (--as md|html)")

KINDS = ("csv", "jsonl", "md", "html")
CASE_KINDS = ("md", "html")
"""Output kinds that write case studies instead of rows."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the export arguments."""
    parser.add_argument("path", metavar="PATH", help="session file, directory or database")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="file to write (default or '-': standard output); a file gets a "
                             "UTF-8 byte-order mark so spreadsheets read it as UTF-8 (a "
                             "script reads it with encoding 'utf-8-sig', or see --no-bom)")
    parser.add_argument("--no-bom", action="store_true",
                        help="with -o FILE: write the CSV without the byte-order mark, for "
                             "scripts that read plain UTF-8 (spreadsheets may then show "
                             "accented letters wrongly)")
    parser.add_argument("--as", dest="kind", choices=KINDS,
                        help="output kind: csv or jsonl rows, or md or html case studies "
                             "(default: from the output file's suffix, else csv)")
    parser.add_argument("--all-empty", action="store_true",
                        help="also write a row for every empty turn nobody annotated")
    parser.add_argument("--missing-replies", action="store_true",
                        help="with --all-empty: also a row for every request that got no reply "
                             "(the placeholder #N+; an annotated one is always written)")
    parser.add_argument("--annotations", metavar="FILE",
                        help="journal to read (default: the session's own journal in the user "
                             "data directory)")
    parser.add_argument("--redact", action="store_true",
                        help="replace secrets and e-mail addresses in what is written by "
                             "[redacted: KIND], and home-folder user names by ~ (as share "
                             "--redact); stderr says how many of each")
    add_labels(parser, "TOML label set, for the label_title column and suggestions")
    add_reviewer(parser, "only this reviewer's annotations (default: every reviewer)")
    # `--format md|html` (case studies) is still taken from scripts written before `--as`
    # had them; the help names only the transcript format.
    add_format(parser)


def _kind(args: argparse.Namespace) -> str:
    if args.format in CASE_KINDS:
        return str(args.format)
    if args.kind:
        return str(args.kind)
    output = args.output or "-"
    suffix = Path(output).suffix.lower() if output != "-" else ""
    return {".jsonl": "jsonl", ".ndjson": "jsonl", ".md": "md", ".html": "html",
            ".htm": "html"}.get(suffix, "csv")


def run(args: argparse.Namespace) -> int:
    """Collect the rows of every session at PATH and write them to one output."""
    inputs = settings_and_labels_or_none(args)
    if inputs is None:
        return EXIT_BAD_INPUT
    settings, labels = inputs
    kind = _kind(args)
    reader_format = None if args.format in CASE_KINDS else args.format
    sessions = load_or_none(args.path, reader_format, stderr_progress(str(args.path)),
                            named_only(args))
    if sessions is None:
        return EXIT_BAD_INPUT
    suggester = suggester_for(labels)
    rules = DEFAULT_RULES.with_options(missing_replies=args.missing_replies)
    loaded: dict[Path, list[dict[str, Any]]] = {}
    rows: list[dict[str, Any]] = []
    studies: list[CaseStudy] = []
    for session in sessions:
        path = Path(args.annotations) if args.annotations else default_journal_path(session)
        if path not in loaded:
            found = journal_records_or_none(path)
            if found is None:
                return EXIT_BAD_INPUT
            loaded[path] = found
        annotations = annotations_from_records(
            loaded[path], session_id=session_identity(session), reviewer=args.reviewer
        )
        if kind in CASE_KINDS:
            studies.extend(case_studies(session, annotations, labels, all_empty=args.all_empty,
                                        suggester=suggester))
            continue
        rows.extend(export_rows(session, annotations, labels, all_empty=args.all_empty,
                                suggester=suggester, rules=rules))
    if args.redact:
        from replay.core.publish.redact import Redactor, redact_rows, redact_studies

        redactor = Redactor()
        studies = redact_studies(studies, redactor)
        rows = redact_rows(rows, redactor)
        say_error(f"redacted {redactor.summary()}")
    if kind in CASE_KINDS:
        return write_case_studies(studies, kind, args.output)
    if args.output in (None, "-"):
        count = _write_stdout(rows, kind)
        where = "standard output"
    else:
        try:
            count = write_file(rows, args.output, kind, bom=not args.no_bom)
        except OSError as error:
            return cannot_write(args.output, error)
        where = show_path(args.output)
    noun = "row" if count == 1 else "rows"
    print(f"replay: wrote {count} {noun} ({kind}) to {where}{_why_none(args, count)}",
          file=sys.stderr, flush=True)
    return EXIT_OK


def _why_none(args: argparse.Namespace, count: int) -> str:
    """Why an export wrote no row, for the person who expected some ("" when it wrote any)."""
    if count:
        return ""
    if args.all_empty:
        return ": no empty turn and no annotation"
    who = f" by {args.reviewer}" if args.reviewer else ""
    return (f": no annotation{who} yet (label turns in the app or with replay label; "
            "--all-empty also writes a row per empty turn)")


def _write_stdout(rows: list[dict[str, Any]], kind: str) -> int:
    """Plain UTF-8 on standard output whatever the locale, with CSV line endings kept as written."""
    sys.stdout.flush()
    if kind == "csv" and sys.stdout.isatty():
        # A person reads it: no cell may drive the terminal (a file or pipe gets the text).
        rows = [{key: escape_controls(value) if isinstance(value, str) else value
                 for key, value in row.items()} for row in rows]
    stream = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="")
    try:
        return write_csv(rows, stream) if kind == "csv" else write_jsonl(rows, stream)
    finally:
        stream.flush()
        stream.detach()
