"""Accuracy of the suggestion rules against evaluation/labels.jsonl, and their cost.

Run: python bench/eval_suggest.py [--labels FILE] [--speed]

Prints, for the development part and the test part of the labelled set separately: accuracy,
n, precision and recall per label, the confusion table (rows: hand label, columns:
suggestion) and every miss. The test part was fixed before the rules were changed against the
development part; only its figure says how the rules generalise.

With --speed, also times a scan of a built 100,000-turn session with and without
suggestions and prints the ratio (same process, same data).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from replay.core.detection.empty import find_empty_turns
from replay.core.session.model import Kind, Part, Session, Turn
from replay.core.suggest import default_suggester
from replay.core.suggest.evaluate import (
    SPLITS,
    EvalResult,
    cache_root,
    default_roots,
    evaluate,
    held_out_sessions,
    read_sources,
    session_accuracy,
    session_macro,
    source_health,
    wilson_lower,
)

REPO = Path(__file__).resolve().parents[1]


def print_confusion(result: EvalResult) -> None:
    """The confusion table as aligned text."""
    gold = sorted({g for g, _ in result.confusion})
    predicted = sorted({p for _, p in result.confusion})
    width = max([len(name) for name in gold + predicted] + [10])
    print("gold \\ suggested".ljust(width + 2) + "".join(p[:width].rjust(width + 1)
                                                       for p in predicted))
    for row in gold:
        cells = "".join(str(result.confusion.get((row, col), "")).rjust(width + 1)
                        for col in predicted)
        print(row.ljust(width + 2) + cells)


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def print_per_label(result: EvalResult) -> None:
    """Precision, recall and support of every label, as aligned text."""
    print(f"{'label':<14}{'precision':>10}{'recall':>8}{'n':>5}")
    for label in result.labels():
        print(f"{label:<14}{_share(result.precision(label)):>10}"
              f"{_share(result.recall(label)):>8}{result.support(label):>5}")


def print_part(name: str, result: EvalResult) -> None:
    """Everything measured on one part of the labelled set."""
    hits = round(result.accuracy * result.n)
    print(f"== {name}: accuracy {result.accuracy:.3f}  ({hits} / {result.n} hand-labelled "
          "empty turns)\n")
    print_per_label(result)
    print()
    print_confusion(result)
    if result.misses:
        print("\nmisses:")
        for miss in result.misses:
            print(f"  {miss.path} #{miss.index + 1} {miss.turn_id}: gold {miss.gold}, "
                  f"suggested {miss.predicted} ({'; '.join(miss.reasons)})")
    if result.not_found:
        print(f"\nlabels whose turn was not found as empty: {len(result.not_found)}")
        for gold in result.not_found:
            print(f"  {gold.path} {gold.turn_id}")
    if result.missing:
        files = len({gold.path for gold in result.missing})
        print(f"\nlabels left out, their file is not on this machine: {len(result.missing)} "
              f"(in {files} file{'s' if files != 1 else ''})")
    print()


def print_by_format(labels: str) -> None:
    """The figures of the labels on each source format, per part (turns of formats that have
    few labels say more apart than inside the total)."""
    from replay.core.suggest.evaluate import read_labels

    formats: dict[str, str] = {}
    for source in read_sources(Path(labels).with_name("sources.jsonl")):
        formats[source.name] = source.format
    kinds = sorted({formats.get(gold.path, "") for gold in read_labels(labels)} - {""})
    if not kinds:
        return
    print("== labels on external files, by format\n")
    print(f"{'format':<12}{'part':<6}{'accuracy':>9}{'n':>5}{'missing':>9}")
    for kind in kinds:
        for split in SPLITS:
            result = evaluate(labels, split=split)
            hits = sum(h for path, (h, _) in result.by_session.items()
                       if formats.get(path) == kind)
            count = sum(n for path, (_, n) in result.by_session.items()
                        if formats.get(path) == kind)
            missing = sum(1 for gold in result.missing if formats.get(gold.path) == kind)
            share = f"{hits / count:.3f}" if count else "—"
            print(f"{kind:<12}{split:<6}{share:>9}{f'{hits}/{count}':>5}{missing:>9}")
    print()


def print_sources(labels: str) -> None:
    """How many external files are here and read without a warning, per format."""
    sources_path = Path(labels).with_name("sources.jsonl")
    if not sources_path.exists():
        return
    roots = default_roots(Path(labels))
    health = source_health(read_sources(sources_path), roots)
    print(f"== external files (cache: {cache_root(Path(labels))})\n")
    for kind, entry in sorted(health.items()):
        print(f"{kind:<12}{entry.present} of {entry.listed} here, {entry.clean} read without "
              "warnings")
        for problem in entry.problems:
            print(f"  {problem}")
    print()


def print_by_session(labels: str) -> None:
    """The test part measured by turn (as above) and by session, side by side.

    Split by turn, turns of one session sit in both parts, and neighbouring turns are alike:
    each test turn counts as independent evidence although it is not. Two session views:
    the test turns of sessions with no development label at all (whole sessions held out),
    and the mean of per-session accuracies (each session weighs one). The lower end of the
    95 % Wilson interval is given with n = turns for the first and n = sessions for the
    others, the number of independent draws each view assumes.
    """
    result = evaluate(labels, split="test")
    accuracy, hits, turns = session_accuracy(result)
    held = held_out_sessions(labels)
    held_accuracy, held_hits, held_turns = session_accuracy(result, held)
    macro, sessions = session_macro(result)
    print("== test part, by turn and by session\n")
    print(f"{'view':<44}{'accuracy':>9}{'n':>14}{'95% lower':>11}")
    print(f"{'split by turn (the figure above)':<44}{accuracy:>9.3f}"
          f"{f'{hits}/{turns} turns':>14}{wilson_lower(hits, turns):>11.3f}")
    print(f"{'whole sessions held out (no dev label)':<44}{held_accuracy:>9.3f}"
          f"{f'{held_hits}/{held_turns} turns':>14}"
          f"{wilson_lower(held_accuracy * len(held), len(held)):>11.3f}"
          f"   ({len(held)} session{'s' if len(held) != 1 else ''})")
    print(f"{'each session weighs one':<44}{macro:>9.3f}{f'{sessions} sessions':>14}"
          f"{wilson_lower(macro * sessions, sessions):>11.3f}")
    print()


def built_session(turns: int = 100_000, every: int = 1000) -> Session:
    """A long session with an empty user turn every `every` turns."""
    session = Session(path="built", format="bench")
    for number in range(turns):
        role = "user" if number % 2 == 0 else "assistant"
        text = "" if number % every == 0 else f"message {number} " * (3 + number % 17)
        session.add(Turn(id=str(number), role=role, parts=[Part(Kind.TEXT, text)],
                         time=float(number * 7), completed=float(number * 7 + 3)))
    return session


def speed() -> None:
    """Scan time with suggestions over scan time without, on the same built sessions."""
    for every in (1000, 10):
        session = built_session(every=every)
        start = time.perf_counter()
        plain = find_empty_turns(session)
        baseline = time.perf_counter() - start
        start = time.perf_counter()
        find_empty_turns(session, suggester=default_suggester())
        with_rules = time.perf_counter() - start
        print(f"\nspeed: {len(session.turns):,} turns, {len(plain):,} empty turns")
        print(f"  scan without suggestions {baseline * 1000:8.1f} ms")
        print(f"  scan with suggestions    {with_rules * 1000:8.1f} ms  "
              f"(ratio {with_rules / baseline:.1f}x, "
              f"{(with_rules - baseline) / max(len(plain), 1) * 1000:.2f} ms per empty turn)")


def main() -> None:
    """Evaluate and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", default=str(REPO / "evaluation" / "labels.jsonl"))
    parser.add_argument("--speed", action="store_true", help="also time suggestions")
    args = parser.parse_args()
    for split in SPLITS:
        print_part(split, evaluate(args.labels, split=split))
    print_by_session(args.labels)
    print_by_format(args.labels)
    print_sources(args.labels)
    unlabelled = evaluate(args.labels).unlabelled
    if unlabelled:
        print(f"default empty turns without a label: {len(unlabelled)}")
        for path, turn_id in unlabelled:
            print(f"  {path} {turn_id}")
    if args.speed:
        speed()


if __name__ == "__main__":
    main()
