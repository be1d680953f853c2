"""`replay agree JOURNAL...`: how far reviewers agree (Cohen's kappa, Krippendorff's alpha)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from replay.commands._common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    journal_records_or_none,
    journal_refusal,
    say_error,
    table_console,
)
from replay.core.agree import AgreementReport, agreement
from replay.core.files import why_missing
from replay.core.safe import escape_controls, json_line, path_text

NAME = "agree"
HELP = "agreement between reviewers over annotation journals (a table, or JSON with --json)"

SHOWN_DISAGREEMENTS = 20
"""Disagreements listed in the table; --json lists them all."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the agree arguments."""
    parser.add_argument("journals", nargs="+", metavar="JOURNAL",
                        help="journal files (.jsonl), or folders of them; records of every file "
                             "are pooled, the latest label per reviewer and turn counts")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _journal_files(paths: list[str]) -> list[Path] | None:
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


def run(args: argparse.Namespace) -> int:
    """Pool the journals and print the agreement report."""
    files = _journal_files(args.journals)
    if files is None:
        return EXIT_BAD_INPUT
    records: list[dict[str, Any]] = []
    for path in files:
        found = journal_records_or_none(path)
        if found is None:
            return EXIT_BAD_INPUT
        records.extend(found)
    report = agreement(records)
    if args.json:
        document = {"journals": [path_text(path) for path in files], **report.to_json()}
        sys.stdout.buffer.write(json_line(document))
        sys.stdout.flush()
    else:
        print_report(report, len(files))
    return EXIT_OK


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def print_report(report: AgreementReport, journals: int) -> None:
    """A readable agreement report."""
    from rich.table import Table
    from rich.text import Text

    console = table_console()
    console.print(Text(
        f"{_plural(len(report.reviewers), 'reviewer')} · {_plural(report.items, 'annotated turn')}"
        f" · {_plural(journals, 'journal')}", style="bold"))
    if not report.reviewers:
        console.print("no annotations found")
        return
    counts = Table(box=None, pad_edge=False, header_style="bold")
    counts.add_column("reviewer")
    counts.add_column("turns rated", justify="right")
    for name in report.reviewers:
        counts.add_row(Text(escape_controls(name)), str(report.counts[name]))
    console.print(counts)
    console.print()
    if report.pairs:
        pairs = Table(box=None, pad_edge=False, header_style="bold", title_justify="left")
        for column in ("reviewers", "both rated", "agreed", "Cohen's kappa", "note"):
            numeric = column in ("both rated", "agreed")
            pairs.add_column(column, justify="right" if numeric else "left")
        for pair in report.pairs:
            agreed = "—" if pair.observed is None else f"{pair.observed:.0%}"
            pairs.add_row(Text(f"{escape_controls(pair.first)} · {escape_controls(pair.second)}"),
                          str(pair.n), agreed, _number(pair.kappa), Text(pair.reason or ""))
        console.print(pairs)
        console.print()
    alpha = Text("Krippendorff's alpha (nominal): ", style="bold")
    alpha.append(_number(report.alpha))
    alpha.append(f" over {_plural(report.alpha_items, 'turn')} rated by two or more")
    if report.alpha_reason:
        alpha.append(f" ({report.alpha_reason})", style="dim")
    console.print(alpha)
    if not report.disagreements:
        return
    console.print()
    table = Table(box=None, pad_edge=False, header_style="bold",
                  title=_plural(len(report.disagreements), "disagreement"), title_justify="left")
    table.add_column("session")
    table.add_column("turn")
    for name in report.reviewers:
        table.add_column(Text(escape_controls(name)))
    for item in report.disagreements[:SHOWN_DISAGREEMENTS]:
        labels = [Text(escape_controls(item.labels.get(name, ""))) for name in report.reviewers]
        # A person names a turn `#N` as the app shows it; the id only when no index was recorded.
        turn = f"#{item.number}" if item.number is not None else escape_controls(item.turn_id)
        table.add_row(Text(escape_controls(item.session_id)), Text(turn), *labels)
    console.print(table)
    hidden = len(report.disagreements) - SHOWN_DISAGREEMENTS
    if hidden > 0:
        console.print(Text(f"… {hidden} more (use --json for all)", style="dim"))
