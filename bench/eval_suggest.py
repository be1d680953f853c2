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

from replay.core.detect import find_empty_turns
from replay.core.model import Kind, Part, Session, Turn
from replay.core.suggest import default_suggester
from replay.core.suggest.evaluate import SPLITS, EvalResult, evaluate

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
    unlabelled = evaluate(args.labels).unlabelled
    if unlabelled:
        print(f"default empty turns without a label: {len(unlabelled)}")
        for path, turn_id in unlabelled:
            print(f"  {path} {turn_id}")
    if args.speed:
        speed()


if __name__ == "__main__":
    main()
