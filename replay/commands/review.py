"""`replay review PATH...`: one review queue over the empty turns of every session under the
paths, in the app (or printed with --json)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from replay.arguments import (
    add_blind,
    add_format,
    add_labels,
    add_paths,
    add_reviewer,
    add_rules,
    add_theme,
    positive_int,
    whole_number,
)
from replay.commands._common import EXIT_BAD_INPUT, EXIT_OK, label_set_or_none, say_error
from replay.core.annotate.queue_position import QueueDefinition
from replay.core.annotate.review_queue import QueueFilters, ReviewQueue, build_queue, index_corpus
from replay.core.detection.empty import DEFAULT_RULES, REASON_BY_CODE
from replay.core.safe import json_line
from replay.core.session.labels import LabelSet

NAME = "review"
HELP = "review the empty turns of many sessions as one queue (all, filtered, or a sample)"

EPILOG = """\
The queue walks every empty turn of every session under the paths, session by session, on
the usual replay screen: ] and [ move to the next and previous empty turn of the queue (into
the next or previous session at its ends), u to the next one you have not annotated. Each
annotation goes to its own session's journal, so `replay export` and `replay agree` work on
each session as usual. The same command reopens the queue where you stopped (per reviewer);
--restart starts again at the first turn not annotated.

--sample N --seed S draws N empty turns, stratified by format and reason (at least one of
each kind when N allows it): two reviewers given the same corpus and seed get the same turns.
--reason, --suggestion and --format narrow the queue before the draw."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the review arguments."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    add_paths(parser, local=True)
    parser.add_argument("--sample", type=positive_int, metavar="N",
                        help="review a reproducible random sample of N empty turns")
    parser.add_argument("--seed", type=whole_number, default=0, metavar="S",
                        help="seed of the sample (default 0); same seed, same turns")
    parser.add_argument("--reason", action="append", metavar="CODE",
                        help="only empty turns with this reason (repeatable): "
                             + ", ".join(REASON_BY_CODE))
    parser.add_argument("--suggestion", metavar="LABEL",
                        help="only empty turns whose suggested label is LABEL")
    add_format(parser, "only sessions of this format (a path nothing recognises is read as it)")
    add_reviewer(parser)
    parser.add_argument("--annotations", metavar="FILE",
                        help="one journal for every session of the queue (default: each "
                             "session's own, in the user data directory)")
    add_labels(parser)
    add_theme(parser)
    add_rules(parser, missing_replies="also stop at a request that got no reply (as `scan` does)")
    add_blind(parser)
    parser.add_argument("--restart", action="store_true",
                        help="forget where you stopped; start at the first turn not annotated")
    parser.add_argument("--json", action="store_true",
                        help="print the queue, one JSON line per empty turn, instead of "
                             "opening the app")
    parser.add_argument("--no-cache", dest="cache", action="store_false",
                        help="read every session to build the queue, neither using nor "
                             "updating the scan cache")


def _check(args: argparse.Namespace, labels: LabelSet) -> str | None:
    """The first problem with the arguments, as one line, or None."""
    from replay.core.readers import format_names

    for path in args.paths:
        if not Path(path).exists():
            return f"{path}: no such file or directory"
    if args.format and args.format not in format_names():
        return f"unknown format {args.format!r}; known formats: {', '.join(format_names())}"
    for code in args.reason or []:
        if code not in REASON_BY_CODE:
            return f"unknown reason {code!r}; reasons: {', '.join(REASON_BY_CODE)}"
    if args.suggestion and args.suggestion not in labels.names:
        return f"unknown label {args.suggestion!r}; labels: {', '.join(labels.names)}"
    return None


def run(args: argparse.Namespace) -> int:
    """Build the queue and open it in the app (or print it)."""
    from replay.config import load_settings
    from replay.core.annotate.annotations import default_reviewer

    loaded = load_settings()
    settings = loaded.settings
    labels = label_set_or_none(args.labels or settings.labels)
    if labels is None:
        return EXIT_BAD_INPUT
    problem = _check(args, labels)
    if problem:
        say_error(problem)
        return EXIT_BAD_INPUT
    if args.seed and args.sample is None:
        say_error("warning: --seed has no effect without --sample")
    paths = [Path(p) for p in args.paths]
    tool_only = args.tool_only or settings.tool_only_is_empty
    missing_replies = args.missing_replies or settings.missing_replies
    filters = QueueFilters(reasons=frozenset(args.reason or ()), suggestion=args.suggestion,
                           format=args.format, sample=args.sample, seed=args.seed)
    reviewer = default_reviewer(args.reviewer or settings.reviewer)
    definition = QueueDefinition.of(
        paths, format=args.format, reasons=args.reason or (), suggestion=args.suggestion,
        sample=args.sample, seed=args.seed, tool_only=tool_only,
        missing_replies=missing_replies, reviewer=reviewer)
    rules = DEFAULT_RULES.with_options(tool_only_is_empty=tool_only,
                                       missing_replies=missing_replies)
    if args.json:
        return _print_queue(paths, filters, rules, labels, args.cache)
    if args.theme:
        settings = replace(settings, theme=args.theme)
    if args.blind:
        settings = replace(settings, blind=True)
    from replay.ui.review import ReviewOptions, make_review_app

    app = make_review_app(
        ReviewOptions(paths, definition, filters, restart=args.restart, cache=args.cache),
        settings=settings, reviewer=reviewer,
        annotations=Path(args.annotations) if args.annotations else None,
        labels=labels, rules=rules, problems=loaded.problems)
    app.run()
    return app.return_code or 0


def _print_queue(paths: list[Path], filters: QueueFilters, rules: object,
                 labels: LabelSet, cache: bool = True) -> int:
    from replay.core.annotate.queue_sources import SourceProblem
    from replay.core.corpus.queue_cache import queue_memo
    from replay.core.detection.empty import DetectionRules
    from replay.core.suggest import suggester_for

    assert isinstance(rules, DetectionRules)
    fatal: list[str] = []

    def problem(found: SourceProblem) -> None:
        say_error(found.message)
        if found.fatal:
            fatal.append(found.message)

    with queue_memo(cache, rules, labels, say_error, roots=paths) as memo:
        indexed = list(index_corpus(paths, filters.format, rules, suggester_for(labels),
                                    problem, memo))
    queue = build_queue(indexed, filters)
    write_queue(queue)
    return EXIT_BAD_INPUT if fatal else EXIT_OK


def write_queue(queue: ReviewQueue) -> None:
    """One JSON line per queue entry on stdout."""
    total = len(queue)
    for position, entry in enumerate(queue.entries):
        session = queue.sessions[entry.session]
        line = {
            "position": position + 1, "of": total,
            "session": entry.session + 1, "sessions": len(queue.sessions),
            "path": session.ref.path, "key": session.ref.key, "format": session.format,
            "session_id": session.identity, "index": entry.index, "number": entry.number,
            "id": entry.turn_id, "role": entry.role, "reason": entry.reason,
            "suggestion": entry.suggestion,
        }
        sys.stdout.buffer.write(json_line(line))
    sys.stdout.flush()
