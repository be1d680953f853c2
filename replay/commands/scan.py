"""`replay scan PATH...`: list the empty turns of sessions without opening the app."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from replay.arguments import add_format, add_paths, add_rules
from replay.commands._common import table_console
from replay.commands._corpus import CorpusScan, add_arguments
from replay.core.corpus.encoded import write_json_line
from replay.core.corpus.scan import report_label
from replay.core.safe import one_line
from replay.core.session.model import MORE_PROBLEMS
from replay.core.session.text import plural

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

NAME = "scan"
SHOWN_WARNINGS = 5
"""Warnings the table shows of a session; the rest are counted (`--json` has them all)."""

HELP = "list the empty turns of one or more sessions (a table, or JSON lines with --json)"


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the scan arguments."""
    add_paths(parser, local=True)
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object per session per line")
    add_format(parser)
    add_rules(parser)
    add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Scan every path; exit 2 if any could not be read (or nothing could), 1 if some file of a
    folder was skipped, after scanning the rest."""
    # Files --local found but cannot read were each said already: they count as skipped.
    corpus = CorpusScan(skipped=len(getattr(args, "local_problems", ())))
    rules = {"tool_only_is_empty": args.tool_only, "missing_replies": args.missing_replies}
    for report in corpus.reports(args.paths, args.format, rules, args.jobs, args.dask,
                                 getattr(args, "only", None), args.cache):
        # Standard input was read into a file that is gone when replay exits: name `-`.
        report["path"] = corpus.given(report["path"])
        if args.json:
            # A report of many empty turns is written a batch of them at a time, never as
            # one line held whole (the line is the one `json_line` gives).
            write_json_line(report, sys.stdout.buffer.write)
            sys.stdout.flush()
        else:
            print_table(report)
    return corpus.status


def print_table(report: dict[str, Any]) -> None:
    """A readable summary of one session's empty turns, from its `scan --json` object."""
    from rich.text import Text

    empty_turns = report["empty_turns"]
    console = table_console()
    heading = Text()
    heading.append(one_line(report_label(report)), style="bold")
    heading.append(f"  {report['format']} · {plural(report['turns'], 'turn')} · ")
    count_style = "bold yellow" if empty_turns else ""
    heading.append(f"{len(empty_turns)} empty", style=count_style)
    if report["skipped"]:
        skipped = report["skipped"]
        heading.append(f" · {skipped:,} record{'' if skipped == 1 else 's'} skipped", style="red")
    heading.append(f"\n{one_line(report['path'])}", style="dim")
    console.print(heading)
    warnings = report["warnings"]
    for warning in warnings[:SHOWN_WARNINGS]:
        console.print(Text(f"  warning: {one_line(warning)}", style="dim red"))
    if len(warnings) > SHOWN_WARNINGS:
        # A session keeps its first problems verbatim, then one line saying there were more.
        capped = warnings[-1] == MORE_PROBLEMS
        more = len(warnings) - SHOWN_WARNINGS - capped
        listed = f"{more:,} more warning{'' if more == 1 else 's'}"
        console.print(Text(
            f"  … {listed} (replay scan --json lists the first {len(warnings) - 1:,}; "
            "later ones are counted, not kept)" if capped
            else f"  … {listed} (replay scan --json lists them all)", style="dim red"))
    if not empty_turns:
        console.print()
        return
    if console.width < 120:
        console.print(Text("  (ids: replay scan --json, or a wider terminal)", style="dim"))
    wide = console.width >= 120
    widths = _widths(console, empty_turns, wide) if len(empty_turns) > TABLE_BLOCK else None
    if widths is None:
        table = _table(wide)
        for empty in empty_turns:
            table.add_row(*_cells(empty, wide))
        console.print(table)
        console.print()
        return
    # A session of 100,000 empty turns: one table would hold every row's cells at once (a
    # gigabyte). Blocks of rows, each column given the width one table of every row gives
    # it, print the same lines and hold one block.
    block: list[list[Text]] = []
    first = True
    for empty in empty_turns:
        block.append(_cells(empty, wide))
        if len(block) == TABLE_BLOCK:
            _print_block(console, block, wide, widths, first)
            block, first = [], False
    if block:
        _print_block(console, block, wide, widths, first)
    console.print()


TABLE_BLOCK = 1000
"""Rows of empty turns printed as one table; more are printed in blocks of this many."""


def _table(wide: bool, widths: list[int] | None = None, header: bool = True) -> Table:
    """The empty-turn table's columns (each as wide as `widths` says, padding included;
    None: as wide as its cells)."""
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold",
                  show_header=header)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("role", no_wrap=True)
    table.add_column("when", no_wrap=True)
    table.add_column("reason", no_wrap=True)
    table.add_column("suggestion", no_wrap=True)
    table.add_column("evidence", ratio=1, overflow="fold")
    if wide:
        table.add_column("id", no_wrap=True)
    if widths is not None:
        for number, column in enumerate(table.columns):
            column.width = max(0, widths[number] - table._get_padding_width(number))
    return table


def _cells(empty: dict[str, Any], wide: bool) -> list[Text]:
    """One empty turn's row (untrusted text made one line, never markup)."""
    from rich.text import Text

    when = (empty["timestamp"] or "")[5:16].replace("T", " ")
    return [
        Text(str(empty["index"] + 1)),
        Text(empty["role"]),
        Text(one_line(when)),
        Text(empty["reason"]),
        Text(empty["suggestion"] or "", style="bold"),
        Text(one_line(" · ".join(empty["evidence"]))),
        *([Text(one_line(empty["id"]), style="dim")] if wide else []),
    ]


def _widths(console: Console, empty_turns: Iterable[dict[str, Any]],
            wide: bool) -> list[int] | None:
    """The column widths one table of every row would have on this console, found by Rich
    from only the cells that decide them (each column's widest and its longest unbreakable
    one); None when this Rich cannot say (print one table)."""
    from rich.measure import Measurement
    from rich.text import Text

    options = console.options
    widest: dict[int, tuple[int, Text]] = {}
    longest: dict[int, tuple[int, Text]] = {}
    for empty in empty_turns:
        for number, cell in enumerate(_cells(empty, wide)):
            low, high = Measurement.get(console, options, cell)
            if high > widest.get(number, (-1, cell))[0]:
                widest[number] = (high, cell)
            if low > longest.get(number, (-1, cell))[0]:
                longest[number] = (low, cell)
    table = _table(wide)
    columns = len(table.columns)
    for deciding in (widest, longest):
        for number, (_, cell) in deciding.items():
            table.add_row(*(cell if at == number else Text("") for at in range(columns)))
    calculate = getattr(table, "_calculate_column_widths", None)
    if calculate is None or not hasattr(table, "_get_padding_width"):
        return None
    return list(calculate(console, options))


def _print_block(console: Console, block: list[list[Text]], wide: bool,
                 widths: list[int], header: bool) -> None:
    table = _table(wide, widths, header)
    for cells in block:
        table.add_row(*cells)
    console.print(table)
