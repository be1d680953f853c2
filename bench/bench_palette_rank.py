"""What the palette's turn ranking adds to a search keystroke: `TurnRanking.score` over every
empty turn's title, against the fuzzy matcher's own pass over the same titles (the baseline,
run side by side in the same process).

    python bench/bench_palette_rank.py [--turns 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from textual.fuzzy import Matcher

from replay.ui.commands import TurnRanking

QUERIES = ("cont", "#4567", "blank 45")
"""Words, a turn number, words with a number."""


def main() -> int:
    """Print, per query, the best time of each pass and the ratio ranking / matcher."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=100_000, help="empty turns in the session")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best is kept")
    args = parser.parse_args()
    titles = [f"Empty #{n} assistant · blank-text · suggests continue"
              for n in range(1, args.turns + 1)]
    for query in QUERIES:
        matcher, ranking = Matcher(query), TurnRanking(query)
        matched, ranked = [], []
        for _ in range(args.repeat):
            started = time.perf_counter()
            scores = [matcher.match(title) for title in titles]
            matched.append(time.perf_counter() - started)
            started = time.perf_counter()
            for number, (title, score) in enumerate(zip(titles, scores, strict=True), 1):
                ranking.score(title, number, score)
            ranked.append(time.perf_counter() - started)
        print(f"{query!r:12} matcher {min(matched):.3f} s  ranking {min(ranked):.3f} s  "
              f"ratio {min(ranked) / min(matched):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
