"""`replay report PATH...`: the corpus in numbers, in the terminal and as one HTML file."""

from __future__ import annotations

import argparse
from typing import Any

from replay.arguments import add_format, add_paths, add_rules, positive_int
from replay.commands._common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    cannot_write,
    journal_files_or_none,
    pooled_records_or_none,
    say_error,
    table_console,
)
from replay.commands._corpus import CorpusScan, add_arguments
from replay.core.annotate.annotations import journal_path_for
from replay.core.corpus.report import CorpusReport
from replay.core.safe import escape_controls
from replay.core.session.text import plural

NAME = "report"
HELP = ("the corpus in numbers: sessions, turns and empty turns by format, role, reason and "
        "suggestion, labels and agreement, the most silent sessions, the gaps before silences")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the report arguments."""
    add_paths(parser, local=True)
    parser.add_argument("--annotations", metavar="FILE", action="append",
                        help="journal file or folder of journals to count labels and agreement "
                             "from (repeatable; default: each session's own journal)")
    parser.add_argument("--html", metavar="FILE",
                        help="also write the report as one self-contained HTML file with "
                             "charts (charts need the extra replay[report])")
    parser.add_argument("--top", type=positive_int, default=10, metavar="N",
                        help="how many of the most silent sessions to list (default: 10)")
    parser.add_argument("--redact", action="store_true",
                        help="replace secrets and e-mail addresses in session titles, paths, "
                             "evidence and notes by [redacted: KIND], home-folder user names "
                             "by ~ (in the tables and the HTML); stderr says how many")
    add_format(parser)
    add_rules(parser)
    add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Scan the corpus, attach annotations, print the tables and maybe write the HTML."""
    # Files --local found but cannot read were each said already: they count as skipped.
    corpus = CorpusScan(skipped=len(getattr(args, "local_problems", ())))
    report = CorpusReport()
    rules = {"tool_only_is_empty": args.tool_only, "missing_replies": args.missing_replies}
    for scanned in corpus.reports(args.paths, args.format, rules, args.jobs, args.dask,
                                 getattr(args, "only", None), args.cache):
        report.add(scanned)
    if not report.sessions and corpus.status != EXIT_OK:
        # Nothing could be read and each path has had its line: a table of zeros (or a
        # page of them) would contradict that.
        return corpus.status
    records = _records(report, args.annotations)
    if records is None:
        return EXIT_BAD_INPUT
    report.add_annotations(records)
    if args.redact:
        from replay.core.publish.redact import Redactor, redact_report

        redactor = Redactor()
        redact_report(report, redactor)
        say_error(f"redacted {redactor.summary()}")
    print_report(report, args.top)
    if args.html:
        from replay.core.publish.report_html import write_report_html

        try:
            charts = write_report_html(report, args.html, args.top)
        except OSError as error:
            return cannot_write(args.html, error)
        if not charts:
            say_error('warning: no charts in the HTML (they need: pip install "replay[report]")')
        say_error(f"wrote {args.html}")
    return corpus.status


def _records(report: CorpusReport, given: list[str] | None) -> list[dict[str, Any]] | None:
    """Journal records from the files given, else from each session's own journal."""
    if given:
        files = journal_files_or_none(given)
        if files is None:
            return None
    else:
        files = [path for path in dict.fromkeys(journal_path_for(row.key)
                                                for row in report.sessions) if path.exists()]
    return pooled_records_or_none(files)


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "—"


def print_report(report: CorpusReport, top: int = 10) -> None:
    """The report as rich tables on standard output."""
    from rich.table import Table
    from rich.text import Text

    console = table_console()

    def heading(title: str) -> None:
        # A line of its own: a table title would wrap to the width of a narrow table.
        console.print()
        console.print(Text(title, style="bold"))

    def counted(title: str, column: str, counts: list[tuple[str, int]], whole: int,
                unit: str = "empty turns") -> None:
        heading(title)
        table = Table()
        table.add_column(column)
        table.add_column(unit, justify="right")
        table.add_column("share", justify="right")
        for name, count in counts:
            table.add_row(Text(escape_controls(name)), f"{count:,}", _share(count, whole))
        console.print(table)

    empty = report.empty
    summary = Text()
    summary.append(f"{plural(len(report.sessions), 'session')} · {plural(report.turns, 'turn')} · ",
                   style="bold")
    summary.append(f"{empty:,} empty turns", style="bold yellow" if empty else "bold")
    summary.append(f" ({_share(empty, report.turns)} of turns)")
    if report.skipped_records:
        summary.append(f" · {report.skipped_records:,} records skipped", style="red")
    console.print(summary)

    heading("By format")
    formats = Table()
    for column in ("format", "sessions", "turns", "empty turns", "per 1,000 turns"):
        formats.add_column(column, justify="left" if column == "format" else "right")
    for name, count in sorted(report.formats.items()):
        per_mille = f"{1000 * count.empty / count.turns:.1f}" if count.turns else "—"
        formats.add_row(name, f"{count.sessions:,}", f"{count.turns:,}", f"{count.empty:,}",
                        per_mille)
    console.print(formats)
    if not empty:
        return
    counted("By role", "role", report.roles.most_common(), empty)
    counted("By reason", "reason", report.reasons.most_common(), empty)
    counted("By suggestion", "suggestion", report.suggestions.most_common(), empty)
    counted("Gap before the empty turn", "gap", report.gap_rows(), empty)

    heading(f"Most silent sessions (top {top})")
    silent = Table()
    for column in ("session", "format", "turns", "empty", "rate"):
        silent.add_column(column, justify="right" if column in ("turns", "empty", "rate")
                          else "left", overflow="fold")
    for row in report.silent_sessions(top):
        silent.add_row(Text(escape_controls(row.label)), row.format, f"{row.turns:,}",
                       f"{len(row.empty_turns):,}", _share(len(row.empty_turns), row.turns))
    console.print(silent)

    if not report.labels:
        console.print()
        console.print(Text("No annotations yet: label empty turns in the app, or pass "
                           "--annotations JOURNAL.", style="dim"))
        return
    total_labels = sum(report.labels.values())
    counted(f"Labels ({report.annotated_turns:,} of {empty:,} empty turns annotated)",
            "label", report.labels.most_common(), total_labels, unit="annotations")
    _print_agreement(console, report)


def _print_agreement(console: Any, report: CorpusReport) -> None:
    from rich.table import Table
    from rich.text import Text

    agreement = report.agreement
    console.print()
    if agreement is None:
        console.print(Text("Agreement: only one reviewer annotated.", style="dim"))
        return
    console.print(Text("Agreement", style="bold"))
    table = Table()
    for column in ("reviewers", "items", "observed", "Cohen's kappa"):
        table.add_column(column, justify="left" if column == "reviewers" else "right")
    for pair in agreement.pairs:
        table.add_row(Text(escape_controls(f"{pair.first} · {pair.second}")), f"{pair.n:,}",
                      "—" if pair.observed is None else f"{pair.observed:.3f}",
                      "—" if pair.kappa is None else f"{pair.kappa:.3f}")
    console.print(table)
    alpha = "—" if agreement.alpha is None else f"{agreement.alpha:.3f}"
    line = Text(f"Krippendorff's alpha: {alpha} over {plural(agreement.alpha_items, 'item')}")
    if agreement.alpha_reason:
        line.append(f" ({escape_controls(agreement.alpha_reason)})", style="dim")
    line.append(f" · {plural(len(agreement.disagreements), 'disagreement')}")
    console.print(line)
