"""How long `replay review CORPUS` takes to its first screen, and to a complete queue.

Usage: python bench/bench_review_start.py [--corpus FOLDER] [--repeat 3] [--cached]
[--tree PATH]

Each run is its own process: the CLI's own path (`replay.cli.main(["review", CORPUS])`) with
the app made headless, default settings and a scratch data directory; it notes the time from
process start to the first frame painted with a queued session on screen, and to the queue
being complete (every session read; a tree without a growing queue is complete at its first
screen). `--cached` measures a second review of an unchanged corpus (one scan cache shared
by the runs, filled first); otherwise each run has a cold one. `--tree` runs another
checkout (its `replay` package first on the path), so a before and an after can be measured
side by side. Default corpus: bench_corpus.py's bench/out/corpus-300x1500 (1.07 GB, 300
Claude Code sessions).
"""

from __future__ import annotations

import time

PROCESS_START = time.perf_counter()

import argparse  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"


def child(corpus: Path) -> None:
    """In the measured process: run `replay review CORPUS` headless and print the times."""
    scratch = tempfile.mkdtemp(prefix="bench-review-start-")
    os.environ.update(REPLAY_CONFIG_FILE=os.path.join(scratch, "config.toml"),
                      REPLAY_DATA_DIR=scratch, TEXTUAL_ANIMATIONS="none")
    os.environ.setdefault("REPLAY_CACHE_DIR", scratch)  # a cold cache unless --cached
    from headless import run_headless
    from textual.screen import Screen

    from replay.ui.review import QueueScreen, ReviewApp

    first: list[float] = []
    paint = Screen._compositor_refresh

    def noted(self: Screen[object]) -> None:
        paint(self)
        if not first and isinstance(self, QueueScreen):
            first.append(time.perf_counter() - PROCESS_START)

    Screen._compositor_refresh = noted  # type: ignore[method-assign]

    async def pilot_run(pilot: object) -> None:
        app = pilot.app  # type: ignore[attr-defined]
        while not first:
            await pilot.pause(0.01)  # type: ignore[attr-defined]
        while app.queue is None or not getattr(app.queue, "complete", True):
            await pilot.pause(0.02)  # type: ignore[attr-defined]
        done = time.perf_counter() - PROCESS_START
        print(f"first {first[0]:.3f} complete {done:.3f} entries {len(app.queue)} "
              f"sessions {len(app.queue.sessions)}", flush=True)
        app.exit()

    run_headless(ReviewApp, pilot_run, ["review", str(corpus)])


def measure(corpus: Path, tree: Path | None, cache: str | None = None) -> dict[str, float]:
    environment = {key: value for key, value in os.environ.items()
                   if key != "REPLAY_CACHE_DIR"}
    if cache is not None:
        environment["REPLAY_CACHE_DIR"] = cache
    if tree is not None:
        environment["PYTHONPATH"] = str(tree)
    result = subprocess.run([sys.executable, __file__, "--child", str(corpus)],
                            capture_output=True, text=True, env=environment, timeout=1800,
                            cwd=tree or Path(__file__).resolve().parents[1])
    line = next((line for line in result.stdout.splitlines() if line.startswith("first ")),
                None)
    if line is None:
        raise SystemExit(f"child failed: {result.stderr[-2000:]}")
    words = line.split()
    return {words[i]: float(words[i + 1]) for i in range(0, len(words), 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=OUT / "corpus-300x1500")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tree", type=Path, help="another checkout to measure instead")
    parser.add_argument("--cached", action="store_true",
                        help="share one scan cache, filled by a first run not counted")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return 0
    if not args.corpus.exists():
        print(f"{args.corpus} is missing: run bench/bench_corpus.py first")
        return 1
    runs = []
    shared = tempfile.mkdtemp(prefix="bench-review-cache-") if args.cached else None
    if shared is not None:
        measure(args.corpus, args.tree, shared)
    for _ in range(args.repeat):
        load = os.getloadavg()[0]
        runs.append((measure(args.corpus, args.tree, shared), load))
        found = runs[-1][0]
        print(f"run: first screen {found['first']:.2f} s, queue complete "
              f"{found['complete']:.2f} s, {found['entries']:.0f} queued turns in "
              f"{found['sessions']:.0f} sessions (load {load:.1f})")
    firsts = [found["first"] for found, _ in runs]
    completes = [found["complete"] for found, _ in runs]
    print(f"median: first screen {statistics.median(firsts):.2f} s, queue complete "
          f"{statistics.median(completes):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
