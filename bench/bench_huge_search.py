"""The first search onto a huge message: `/`, the needle, enter, until the hit is on screen.

Usage: python bench/bench_huge_search.py [--mb 50] [--texts controls,wide] [--needles ...]
       [--repo DIR ...] [--keep] [--out DIR] [--limit-gb 5] [--rounds 1]

The files are bench_huge_message.py's (a Claude Code session whose second turn is one
message of about `--mb` MB, text `controls` or `wide`; `--keep` reuses them). For each file,
needle and `--repo` (a checkout of replay whose code the child runs: compare main and a
branch in the same run, alternated), a child process runs the app headless at 160x45 as a
user does, and prints:

- prompt: `/` pressed, to the prompt on screen;
- typed: the needle typed, a key at a time (the prompt counts matches as typing pauses);
- turn: enter, to the turn holding the hit on screen;
- found: from there to the needle's row in view, every worker done (the matches counted;
  the pane scrolled to the hit: at once, or once the rows before it are counted, between
  frames);
- stall: the longest the UI thread did not answer a 20 ms timer during those phases;
- shown: whether a row on screen holds the needle (as the screen shows it, any case).

With `--rows`, `LongText.first_row_holding` alone is timed instead (wall/CPU), on the
message in memory and on it left in its file, laid out at 160 columns first.

Each child is capped at `--limit-gb` of address space; its wall and CPU seconds (all its
threads) are those of the phases (not the start-up, also printed: `start`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
NEEDLES = ("the last line", "list[int]", "[/] [link=x]", "\x1b[1m")
"""Needles looked for: the message's last line (every character before it read), markup
that is no markup, and a control (an escape once shown)."""


def child(path: Path, needle: str) -> None:
    """The app on `path`, headless: `phase NAME WALL CPU STALL` per phase, `shown yes|no`."""
    import tempfile

    sys.path.insert(0, str(BENCH))
    scratch = tempfile.mkdtemp(prefix="bench-search-")
    os.environ.update(REPLAY_CONFIG_FILE=os.path.join(scratch, "config.toml"),
                      REPLAY_DATA_DIR=scratch, REPLAY_CACHE_DIR=os.path.join(scratch, "c"),
                      TEXTUAL_ANIMATIONS="none")
    from headless import run_headless

    from replay.ui.app import ReplayApp
    from replay.ui.render import clean
    from replay.ui.widgets.turn_view import TurnLines

    clock = [time.perf_counter(), time.process_time()]
    ticks = [time.perf_counter(), 0.0]  # last tick, longest gap

    def tick() -> None:
        now = time.perf_counter()
        ticks[1] = max(ticks[1], now - ticks[0])
        ticks[0] = now

    def phase(name: str) -> None:
        tick()
        wall, cpu = time.perf_counter(), time.process_time()
        print(f"phase {name} {wall - clock[0]:.3f} {cpu - clock[1]:.3f} {ticks[1]:.3f}",
              flush=True)
        clock[:] = [wall, cpu]
        ticks[1] = 0.0

    async def pilot_run(pilot: Any) -> None:
        app = pilot.app
        while app.replay_screen is None or app.replay_screen.indexing:
            await pilot.pause(0.02)
        await pilot.pause()
        screen = app.replay_screen
        phase("start")
        ticks[0] = time.perf_counter()
        app.set_interval(0.02, tick)
        await pilot.press("slash")
        await pilot.pause()
        phase("prompt")
        if needle.isprintable():
            for key in needle:
                await pilot.press(key)
        else:  # (a control is pasted: typed, ESC would close the prompt)
            from textual.widgets import Input

            app.screen.query_one("#prompt-input", Input).value = needle
        await pilot.pause(0.5)  # the count once typing pauses
        phase("typed")
        await pilot.press("enter")
        current = screen.query_one("#current", TurnLines)
        limit = time.monotonic() + 300
        turn = False
        while time.monotonic() < limit:
            await pilot.pause(0.05)
            if not turn and screen.index == 1:
                phase("turn")
                turn = True
            busy = [w for w in app.workers if not w.is_finished]
            if not busy and screen.searching.query_text == needle \
                    and not screen.searching.finding and screen.index == 1:
                break
        await pilot.pause()
        await pilot.pause()
        # A hit far into the message is scrolled to once the rows up to it are counted
        # (between frames, `TurnLines.jumping` meanwhile).
        while getattr(current, "jumping", False) and time.monotonic() < limit:
            await pilot.pause(0.05)
        await pilot.pause()
        phase("found")
        height = current.scrollable_content_region.height
        rows = ["".join(segment.text for segment in current.render_line(y)).lower()
                for y in range(height)]
        wanted = clean(needle).lower()
        print(f"shown {'yes' if any(wanted in row for row in rows) else 'no'} "
              f"index {screen.index}", flush=True)
        app.exit()

    run_headless(ReplayApp, pilot_run, [str(path)])


def child_rows(path: Path, kind: str, needle: str) -> None:
    """`LongText.first_row_holding` alone, on the message in memory and left in its file
    (laid out at 160 columns first): `rows WHERE ROW WALL CPU`."""
    import json

    from replay.core.readers import huge_strings
    from replay.core.session import lifted
    from replay.ui.render import LongText

    # (after replay: bench_huge_message puts this checkout first on the path)
    sys.path.insert(0, str(BENCH))
    from bench_huge_message import huge_text

    huge_strings.enable()
    with open(path, "rb") as handle:
        found = huge_strings.lift_line(handle.fileno(), str(path), _message_offset(path))
    assert found is not None
    record = json.loads(found[0])
    rope = lifted.source(record["message"]["content"][0]["text"])
    size = len(rope) if rope is not None else 0
    for where, text in (("memory", huge_text(kind, size)), ("file", rope)):
        long = LongText(text)
        long.layout(160)
        wall, cpu = time.perf_counter(), time.process_time()
        row = long.first_row_holding(needle.lower())
        print(f"rows {where} {row} {time.perf_counter() - wall:.3f} "
              f"{time.process_time() - cpu:.3f}", flush=True)
        del long, text


def _message_offset(path: Path) -> int:
    """Where the second line (the huge message's record) of a bench file starts."""
    with open(path, "rb") as handle:
        return len(handle.readline())


def _parse(out: str) -> tuple[dict[str, tuple[float, float, float]], str]:
    phases: dict[str, tuple[float, float, float]] = {}
    shown = "?"
    for line in out.splitlines():
        words = line.split()
        if len(words) == 5 and words[0] == "phase":
            phases[words[1]] = (float(words[2]), float(words[3]), float(words[4]))
        elif words[:1] == ["shown"]:
            shown = words[1]
    return phases, shown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--texts", default="controls,wide")
    parser.add_argument("--needles", nargs="+", default=list(NEEDLES),
                        help="needles (Python escapes allowed: '\\x1b[1m')")
    parser.add_argument("--repo", action="append", type=Path,
                        help="a checkout whose code the child runs (repeatable; default this)")
    parser.add_argument("--keep", action="store_true", help="reuse files already made")
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench-huge-message"))
    parser.add_argument("--limit-gb", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--rows", action="store_true",
                        help="time LongText.first_row_holding alone (in memory, in its file)")
    parser.add_argument("--child", nargs=2, metavar=("PATH", "NEEDLE"), help=argparse.SUPPRESS)
    parser.add_argument("--child-rows", nargs=3, metavar=("PATH", "TEXT", "NEEDLE"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(Path(args.child[0]), args.child[1])
        return 0
    if args.child_rows is not None:
        child_rows(Path(args.child_rows[0]), args.child_rows[1], args.child_rows[2])
        return 0
    import subprocess

    sys.path.insert(0, str(BENCH))
    from bench_hostile import measure_child

    repos = args.repo or [BENCH.parent]
    limit = int(args.limit_gb * 2**30)
    needles = [needle.encode("latin-1", "backslashreplace").decode("unicode_escape")
               for needle in args.needles]
    print(f"load: {' '.join(f'{x:.1f}' for x in os.getloadavg())} (1, 5, 15 min), "
          f"{os.cpu_count()} cores; a {args.mb:g} MB message, Claude Code, 160x45")
    print(f"{'repo':<14} {'text':<9} {'needle':<16} {'prompt s':>10} {'typed s':>10} "
          f"{'turn s':>10} {'+found s':>10}  (wall/CPU)  stall s  shown")
    passed = True
    for kind in args.texts.split(","):
        folder = args.out / f"claude-code-{kind}"
        found = sorted(folder.glob("*")) if folder.exists() else []
        if args.keep and found:
            path = found[0]
        else:
            made = subprocess.run(
                [sys.executable, str(BENCH / "bench_huge_message.py"), "--child-make",
                 "claude-code", kind, str(int(args.mb * 1e6)), str(folder)],
                check=True, capture_output=True, text=True)
            path = Path(made.stdout.strip())
        for needle in needles:
            for _ in range(args.rounds):
                for repo in repos:
                    os.environ["PYTHONPATH"] = str(repo.resolve())  # (the child's replay)
                    if args.rows:
                        _, _, code, out, _ = measure_child(
                            [sys.executable, __file__, "--child-rows", str(path), kind,
                             needle], limit)
                        for line in out.splitlines():
                            words = line.split()
                            if words[:1] == ["rows"]:
                                print(f"{repo.resolve().name[:14]:<14} {kind:<9} "
                                      f"{ascii(needle)[:16]:<16} first_row_holding in "
                                      f"{words[1]:<6} row {words[2]:>8} {float(words[3]):5.2f}"
                                      f"/{float(words[4]):<5.2f} s", flush=True)
                        passed &= code == 0
                        continue
                    _, _, code, out, _ = measure_child(
                        [sys.executable, __file__, "--child", str(path), needle], limit)
                    phases, shown = _parse(out)

                    def cell(name: str, phases: dict[str, tuple[float, float, float]]
                             = phases) -> str:
                        wall, cpu, _ = phases.get(name, (float("nan"),) * 3)
                        return f"{wall:4.1f}/{cpu:<4.1f}"

                    stall = max((phases[n][2] for n in ("prompt", "typed", "turn", "found")
                                 if n in phases), default=float("nan"))
                    print(f"{repo.resolve().name[:14]:<14} {kind:<9} {ascii(needle)[:16]:<16} "
                          + " ".join(f"{cell(n):>10}" for n in ("prompt", "typed", "turn", "found"))
                          + f"  {stall:7.2f}  {shown}" + ("" if code == 0 else f" exit {code}"),
                          flush=True)
                    passed &= code == 0 and shown == "yes"
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
