"""`replay agree JOURNAL...`: how far reviewers agree (Cohen's kappa, Krippendorff's alpha)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from replay.commands._common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    journal_files_or_none,
    pooled_records_or_none,
    table_console,
)
from replay.core.annotate.agree import AgreementReport, SuggesterReport, agreement
from replay.core.annotate.annotations import OVERRULE_REASONS
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
    parser.add_argument("--suggester", action="store_true",
                        help="also print the suggestion rules most often overruled by reviewers, "
                             "with the labels they chose instead and the reasons they gave")


def run(args: argparse.Namespace) -> int:
    """Pool the journals and print the agreement report."""
    files = journal_files_or_none(args.journals)
    records = pooled_records_or_none(files) if files is not None else None
    if files is None or records is None:
        return EXIT_BAD_INPUT
    report = agreement(records)
    if args.json:
        document = {"journals": [path_text(path) for path in files], **report.to_json()}
        sys.stdout.buffer.write(json_line(document))
        sys.stdout.flush()
    else:
        print_report(report, len(files), rules=args.suggester)
    return EXIT_OK


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def print_report(report: AgreementReport, journals: int, *, rules: bool = False) -> None:
    """A readable agreement report."""
    from rich.table import Table
    from rich.text import Text

    console = table_console()
    console.print(Text(
        f"{_plural(len(report.reviewers), 'reviewer')} · {_plural(report.items, 'annotated turn')}"
        f" · {_plural(journals, 'journal')}", style="bold"))
    if report.left_out_with_content:
        console.print(Text(
            f"left out: {_plural(report.left_out_with_content, 'label')} of turns that showed "
            "content after they were labelled (a reply still being written)", style="dim"))
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
    if report.disagreements:
        print_disagreements(console, report)
    if report.suggester is not None:
        print_suggester(console, report.suggester, rules=rules)
    elif rules:
        console.print()
        console.print("no record names the suggestion it was offered (journals written before "
                      "replay saved suggestions): nothing to compare with the suggester")


def print_disagreements(console: Any, report: AgreementReport) -> None:
    """The turns where reviewers differ, one row each."""
    from rich.table import Table
    from rich.text import Text

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
        turn = escape_controls(item.name)
        table.add_row(Text(escape_controls(item.session_id)), Text(turn), *labels)
    console.print(table)
    hidden = len(report.disagreements) - SHOWN_DISAGREEMENTS
    if hidden > 0:
        console.print(Text(f"… {hidden} more (use --json for all)", style="dim"))


def _share(agreed: int, rated: int) -> str:
    return f"{agreed} / {rated} ({agreed / rated:.0%})" if rated else "—"


REASON_WORDS = dict(OVERRULE_REASONS)


def print_suggester(console: Any, suggester: SuggesterReport, *, rules: bool) -> None:
    """The suggestion rules as one more rater; with `rules`, the rules most often overruled."""
    from rich.table import Table
    from rich.text import Text

    console.print()
    head = Text("suggester as a rater: ", style="bold")
    head.append(f"reviewers agreed with {_share(suggester.agreed, suggester.rated)}")
    head.append(f" · blind {_share(suggester.blind_agreed, suggester.blind_rated)}")
    head.append(f" · suggestion in view {_share(suggester.seen_agreed, suggester.seen_rated)}")
    console.print(head)
    if suggester.blind_rated and suggester.seen_rated:
        console.print(Text("  (a suggestion in view anchors the reviewer: compare with the "
                           "blind figure)", style="dim"))
    pairs = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("reviewers", "both rated", "agreed", "Cohen's kappa", "note"):
        pairs.add_column(column, justify="right" if column in ("both rated", "agreed") else "left")
    for pair in suggester.pairs:
        agreed = "—" if pair.observed is None else f"{pair.observed:.0%}"
        pairs.add_row(Text(f"{escape_controls(pair.first)} · {pair.second}"), str(pair.n), agreed,
                      _number(pair.kappa), Text(pair.reason or ""))
    console.print(pairs)
    if suggester.overrules:
        console.print()
        table = Table(box=None, pad_edge=False, header_style="bold", title_justify="left",
                      title=f"where reviewers overruled the suggester "
                            f"({len(suggester.overrules)})")
        for column in ("session", "turn", "reviewer", "suggested", "rule", "chose", "why"):
            table.add_column(column)
        for item in suggester.overrules[:SHOWN_DISAGREEMENTS]:
            turn = item.name
            why = REASON_WORDS.get(item.reason, item.reason) or "not said"
            why += " (blind)" if item.blind else ""
            table.add_row(*(Text(escape_controls(cell)) for cell in (
                item.session_id, turn, item.reviewer, item.suggestion, item.rule or "?",
                item.label, why)))
        console.print(table)
        hidden = len(suggester.overrules) - SHOWN_DISAGREEMENTS
        if hidden > 0:
            console.print(Text(f"… {hidden} more (use --json for all)", style="dim"))
    if not rules:
        return
    console.print()
    table = Table(box=None, pad_edge=False, header_style="bold", title_justify="left",
                  title="rules most often overruled")
    for column in ("rule", "suggests", "rated", "overruled", "share", "chosen instead",
                   "reasons given"):
        table.add_column(column, justify="right" if column in ("rated", "overruled", "share")
                         else "left")
    for rule in suggester.rules:
        instead = ", ".join(f"{label} {count}" for label, count in rule.instead.most_common(3))
        reasons = ", ".join(f"{REASON_WORDS.get(code, code) if code else 'none given'} {count}"
                            for code, count in rule.reasons.most_common(3))
        table.add_row(Text(escape_controls(rule.rule or "(unnamed)")),
                      Text(escape_controls(rule.suggested)), str(rule.rated),
                      str(rule.overruled), f"{rule.share:.0%}", Text(escape_controls(instead)),
                      Text(reasons))
    console.print(table)
