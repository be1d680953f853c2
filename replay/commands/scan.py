"""`replay scan PATH...`: list the empty turns of sessions without opening the app."""

from __future__ import annotations

import argparse
import sys

import orjson

from replay.commands._common import EXIT_BAD_INPUT, EXIT_OK, stderr_progress, stream_or_none
from replay.core.detect import DEFAULT_RULES, DetectionRules
from replay.core.safe import escape_controls
from replay.core.scan import ScanReport, scan_session
from replay.core.suggest import default_suggester

NAME = "scan"
HELP = "list the empty turns of one or more sessions (a table, or JSON lines with --json)"


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the scan arguments."""
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="session files, directories or databases")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object per session per line")
    parser.add_argument("--format", metavar="NAME", help="skip detection and read as this format")
    parser.add_argument("--tool-only", action="store_true",
                        help="also count assistant turns that only call tools as empty")
    parser.add_argument("--missing-replies", action="store_true",
                        help="also count a request that got no reply at all (reason no-reply)")


def run(args: argparse.Namespace) -> int:
    """Scan every path; exit 2 if any could not be read, after scanning the rest."""
    rules: DetectionRules = DEFAULT_RULES.with_options(tool_only_is_empty=args.tool_only,
                                                        missing_replies=args.missing_replies)
    status = EXIT_OK
    for path in args.paths:
        sessions = stream_or_none(path, args.format, stderr_progress(str(path)))
        if sessions is None:
            status = EXIT_BAD_INPUT
            continue
        for session in sessions:
            report = scan_session(session, rules, default_suggester())
            if args.json:
                sys.stdout.buffer.write(orjson.dumps(report.to_json()) + b"\n")
                sys.stdout.flush()
            else:
                print_table(report)
    return status


def print_table(report: ScanReport) -> None:
    """A readable summary of one session's empty turns."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    session = report.session
    console = Console(highlight=False)
    heading = Text()
    heading.append(escape_controls(session.label), style="bold")
    heading.append(f"  {session.format} · {len(session.turns):,} turns · ")
    count_style = "bold yellow" if report.empty_turns else ""
    heading.append(f"{len(report.empty_turns)} empty", style=count_style)
    if session.skipped:
        heading.append(f" · {session.skipped} records skipped", style="red")
    heading.append(f"\n{session.path}", style="dim")
    console.print(heading)
    for warning in session.warnings[:5]:
        console.print(Text(f"  warning: {escape_controls(warning)}", style="dim red"))
    if not report.empty_turns:
        console.print()
        return
    if console.width < 120:
        console.print(Text("  (ids: replay scan --json, or a wider terminal)", style="dim"))
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("role", no_wrap=True)
    table.add_column("when", no_wrap=True)
    table.add_column("reason", no_wrap=True)
    table.add_column("suggestion", no_wrap=True)
    table.add_column("evidence", ratio=1, overflow="fold")
    wide = console.width >= 120
    if wide:
        table.add_column("id", no_wrap=True)
    for empty in report.empty_turns:
        when = (empty.timestamp or "")[5:16].replace("T", " ")
        table.add_row(
            Text(str(empty.index + 1)),
            Text(empty.role),
            Text(escape_controls(when)),
            Text(empty.reason),
            Text(empty.suggestion or "", style="bold"),
            Text(escape_controls(" · ".join(empty.evidence))),
            *([Text(escape_controls(empty.id), style="dim")] if wide else []),
        )
    console.print(table)
    console.print()
