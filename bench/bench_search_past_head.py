"""A word on the last line of a long message held in memory (shortened to its head by the
reader, under the 8 MB past which it is left in its file): whether `/word` enter finds its
turn in the app, headless, the search's wall seconds and the process's peak RSS before the
search and at its end (`ru_maxrss`).

Usage: python bench/bench_search_past_head.py [--mb 0.5,2,5] [--formats claude-code,codex]

Each run is a child process (one file, one search), the file made by the makers of
`tests/ui/test_huge_message_formats.py`. Run it from the checkout to measure (main, then a
branch) and compare the lines.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORD = "zqxlastword"
LINE = "log line lorem ipsum dolor sit amet 0123456789 abcdefghij\n"


def _child(fmt: str, mb: float) -> None:
    sys.path.insert(0, str(Path.cwd()))
    from textual.widgets import Input

    from replay.ui.screens.search_prompt import SearchPrompt
    from tests.ui.conftest import build_app, ready, wait_until
    from tests.ui.test_huge_message_formats import claude_code, codex

    make = {"claude-code": claude_code, "codex": codex}[fmt]
    text = LINE * int(mb * (1 << 20) // len(LINE)) + f"the final line holds {WORD}"

    async def run(folder: Path) -> str:
        app = build_app(make(folder, text), annotations=folder / "j.jsonl")
        async with app.run_test(size=(160, 45)) as pilot:
            await ready(pilot, app)
            screen = app.replay_screen
            assert screen is not None
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            started = time.perf_counter()
            await pilot.press("slash")
            await wait_until(pilot, lambda: isinstance(app.screen, SearchPrompt))
            app.screen.query_one("#prompt-input", Input).value = WORD
            await pilot.pause()
            await pilot.press("enter")
            await wait_until(pilot, lambda: not screen.searching.finding
                             and not [w for w in app.workers if not w.is_finished],
                             rounds=3000)
            took = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            found = "found" if screen.index == 1 else "NOT found"
            return (f"{fmt:12} {mb:5} MB  {found:9}  search {took:5.2f} s  peak RSS "
                    f"{before / 1024:6.1f} MB before, {after / 1024:6.1f} MB after")

    with tempfile.TemporaryDirectory() as folder:
        print(asyncio.run(run(Path(folder))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", default="0.5,2,5")
    parser.add_argument("--formats", default="claude-code,codex")
    parser.add_argument("--child", nargs=2, metavar=("FORMAT", "MB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], float(args.child[1]))
        return
    for fmt in args.formats.split(","):
        for mb in args.mb.split(","):
            subprocess.run([sys.executable, __file__, "--child", fmt, mb], check=False)


if __name__ == "__main__":
    main()
