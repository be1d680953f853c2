"""`replay share` on the large Claude Code session: it finishes, and its page opens in Chromium.

Usage: python bench/bench_share.py [--lines N] [--no-browser]

Uses bench/out/claude-code-<N>.jsonl (written by bench/bench_scan.py; made here if missing),
then, each in its own subprocess with its peak memory measured:

- baseline: `replay scan --json FILE` (reading the session and finding its empty turns);
- `replay share FILE --as html|md|cast -o ...`.

It prints each one's time (and its ratio to the baseline), peak resident memory and output
size, then opens the page in headless Chromium over its DevTools pipe: the time to the load
event, the time `]` takes to reach the first empty turn, and the number of turns and empty
turns in the DOM. Exit status 1 if a share fails or the page does not show every turn.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_scan import OUT, Generator, run_timed  # noqa: E402


def main() -> int:
    """Generate if needed, run the shares, open the page."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100_000, help="records in the session")
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium part")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"claude-code-{args.lines}.jsonl"
    if not path.exists():
        Generator().write(path.with_suffix(".tmp"), args.lines)
        path.with_suffix(".tmp").replace(path)
    size = path.stat().st_size
    print(f"session: {path.name}, {size / 1e6:.1f} MB; load: {os.getloadavg()[0]:.2f}")
    python = sys.executable
    base = run_timed([python, "-m", "replay", "scan", "--json", str(path)])
    print(f"baseline scan --json: {base.wall:.1f} s, peak {base.peak / 1e6:.0f} MB")
    pages: dict[str, Path] = {}
    for kind in ("html", "md", "cast"):
        out = OUT / f"share-{args.lines}.{kind}"
        run = run_timed([python, "-m", "replay", "share", str(path), "--as", kind, "-o",
                         str(out)])
        pages[kind] = out
        print(f"share --as {kind}: {run.wall:.1f} s ({run.wall / base.wall:.1f}x the scan), "
              f"peak {run.peak / 1e6:.0f} MB, wrote {out.stat().st_size / 1e6:.1f} MB")
    if args.no_browser:
        return 0
    from tests.core.share_browser import BROWSER, Browser

    if BROWSER is None:
        print("no Chromium on PATH: the page was not opened")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-share-") as profile, \
            Browser(Path(profile)) as browser:
        started = time.perf_counter()
        browser.open(pages["html"].as_uri())
        loaded = time.perf_counter() - started
        turns = browser.eval("document.querySelectorAll('[data-turn]').length")
        empty = browser.eval("document.querySelectorAll('[data-empty]').length")
        folded = browser.eval("document.body.dataset.big || 'no'")
        started = time.perf_counter()
        browser.press("]")
        stepped = time.perf_counter() - started
        current = browser.eval("document.body.dataset.current")
        print(f"chromium: load event after {loaded:.1f} s; {turns:,} turns and {empty} empty "
              f"turns in the DOM; folded: {folded}; ']' reached #{current} in {stepped:.2f} s")
        expected = sum(1 for _ in open(pages["md"], encoding="utf-8") if _.startswith("### #"))
    return 0 if turns == expected else 1


if __name__ == "__main__":
    raise SystemExit(main())
