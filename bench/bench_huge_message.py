"""One huge message in every format that can hold one: the app's peak RSS over the file
size, and the time to open, unfold (`o`), scroll to the end of and fold again that message
(issue 27: each step within 2 s, the app's peak RSS <= 2x the file, folded and unfolded).

Usage: python bench/bench_huge_message.py [--mb 50] [--formats a,b] [--texts plain,controls]
       [--keep] [--out DIR] [--limit-gb 5.5] [--width 160]

Each file is made by the makers of `tests/ui/test_huge_message_formats.py` around a text of
about `--mb` MB, one of `TEXTS`:

- plain: `word word ...` lines of ASCII;
- controls: lines full of ESC, BEL, NUL, CSI, CR, DEL, markup-looking text and Latin-1 (the
  text is one byte a character; its escaped form, with `␛[ESC]`, two);
- wide: the same with CJK, an emoji, a bidi override and a zero-width space (the text itself
  four bytes a character);
- plain-line, controls-line, wide-line: the same characters as one line (no line end inside:
  a minified JSON output, a base64 blob, a log without newlines), then the last line.

Each run is a child process capped at `--limit-gb` of address space; its peak RSS is its own
`ru_maxrss` (`os.wait4`). The child runs the app headless (`--width` x 45, 160 columns
unless told: at 80 a line of CJK wraps where at 160 it fits) and prints, per phase, the
wall and CPU seconds and the peak RSS so far:

- shown: start to the session on screen with every turn read;
- open: to the turn with the most text (folded);
- unfold: `o`;
- end: the message scrolled to its end (its last row checked against the text's last line:
  OK, or `tool` for a tool call's output, of which the turn shows the first lines);
- fold: `o` again;
- back: to the first turn and back to the message (folded).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_hostile import _rss_now, _Sampler, measure_child  # noqa: E402

OUT = Path("/tmp/bench-huge-message")
APP_TARGET, STEP_TARGET = 2.0, 2.0
FORMATS = ("aider", "chat-json", "chat-jsonl", "sharegpt", "claude-code", "claude-code-result",
           "codex", "codex-output", "gemini-json", "gemini-jsonl", "opencode-export",
           "opencode-run", "swe-agent")
"""The makers of `tests/ui/test_huge_message_formats.py` used by default."""

TEXT_LINES = {
    "plain": "word " * 12 + "\n",
    "controls": ("The fox [/] [link=x]click[/link] list[int] \x1b[2J\x1b]0;PWNED\x07 café "
                 "\x00 \x9b31m \r\x7f [bold]jumps\x1b[0m naïve.\n"),
    "wide": ("日本語のテキスト 🦊 [/] [link=x] list[int] \x1b[31m red\x07 é \u202e "
             "bidi\u202c\u200b end.\n"),
}
"""The line each text is made of, repeated to the size asked for."""
PHASES = ("shown", "open", "unfold", "end", "fold", "back")


def huge_text(kind: str, size: int) -> str:
    """About `size` characters of the text `kind`, ending with a last line of its own (so
    the end of the message is told from any other line). A kind `NAME-line` is NAME's
    characters as one line (each line end a space), then the last line."""
    base, _, one_line = kind.partition("-")
    line = TEXT_LINES[base]
    last = "the last line [/]" + ("" if base == "plain" else " \x1b[1m") + "\n"
    if one_line:
        return (line[:-1] + " ") * max(1, size // len(line)) + "\n" + last
    return line * max(1, size // len(line)) + last


def make(fmt: str, kind: str, size: int, folder: Path) -> Path:
    """The file of format `fmt` holding one message of text `kind`, in `folder`."""
    from tests.ui import test_huge_message_formats as formats

    folder.mkdir(parents=True, exist_ok=True)
    return formats.FORMATS[fmt](folder, huge_text(kind, size))


def child_app(path: Path, kind: str, width: int = 160) -> None:
    """The app on the file, headless: prints `phase NAME WALL CPU PEAK_RSS` for each phase
    and `last-row OK|WRONG TEXT`."""
    import tempfile

    scratch = tempfile.mkdtemp(prefix="bench-huge-")
    os.environ.update(REPLAY_CONFIG_FILE=os.path.join(scratch, "config.toml"),
                      REPLAY_DATA_DIR=scratch, REPLAY_CACHE_DIR=os.path.join(scratch, "c"),
                      TEXTUAL_ANIMATIONS="none")
    from headless import run_headless

    from replay.ui.app import ReplayApp
    from replay.ui.render import clean
    from replay.ui.widgets.turn_view import TurnLines

    sampler = _Sampler()
    clock = [time.perf_counter(), time.process_time()]
    expected = clean(huge_text(kind, 1).rstrip("\n").rsplit("\n", 1)[-1])

    def phase(name: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        print(f"phase {name} {wall - clock[0]:.3f} {cpu - clock[1]:.3f} "
              f"{max(sampler.peak, _rss_now())}", flush=True)
        clock[:] = [wall, cpu]

    async def pilot_run(pilot: Any) -> None:
        app = pilot.app
        while app.replay_screen is None or app.replay_screen.indexing:
            await pilot.pause(0.02)
        await pilot.pause()
        phase("shown")
        screen = app.replay_screen
        turns = screen.session.turns
        sizes = [max([p.text_length + len(p.output or "") for p in turn.parts] or [0])
                 for turn in turns]
        big = max(range(len(sizes)), key=sizes.__getitem__)
        clock[:] = [time.perf_counter(), time.process_time()]
        screen.go(big)
        await pilot.pause()
        phase("open")
        await pilot.press("o")
        await pilot.pause()
        phase("unfold")
        current = screen.query_one("#current", TurnLines)
        current.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        height = current.scrollable_content_region.height
        shown = ["".join(segment.text for segment in current.render_line(y)).strip()
                 for y in range(height)]
        last = next((row for row in reversed(shown) if row), "")
        phase("end")
        # An unfolded tool call shows its output's first lines (`v` shows the rest), and the
        # turn may go on after it (Codex's reply `done`).
        folded_output = any("more lines folded (v shows the raw record)" in row for row in shown)
        verdict = ("OK" if last and expected.endswith(last) else
                   "tool" if folded_output else "WRONG")
        print(f"last-row {verdict} {last!r}", flush=True)
        await pilot.press("o")
        await pilot.pause()
        phase("fold")
        screen.go(0)
        await pilot.pause()
        screen.go(big)
        await pilot.pause()
        phase("back")
        app.exit()

    run_headless(ReplayApp, pilot_run, [str(path)], size=(width, 45))


def _parse(out: str) -> tuple[dict[str, tuple[float, float, int]], str]:
    phases: dict[str, tuple[float, float, int]] = {}
    last = "?"
    for line in out.splitlines():
        words = line.split()
        if len(words) == 5 and words[0] == "phase":
            phases[words[1]] = (float(words[2]), float(words[3]), int(words[4]))
        elif words[:1] == ["last-row"]:
            last = words[1]
    return phases, last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--texts", default="plain,controls")
    parser.add_argument("--keep", action="store_true", help="reuse files already made")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--limit-gb", type=float, default=5.5)
    parser.add_argument("--width", type=int, default=160, help="the terminal's columns")
    parser.add_argument("--child-app", nargs=2, metavar=("PATH", "TEXT"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--child-make", nargs=4, metavar=("FORMAT", "TEXT", "CHARS", "DIR"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_make is not None:
        fmt, kind, size, folder = args.child_make
        print(make(fmt, kind, int(size), Path(folder)))
        return 0
    if args.child_app is not None:
        child_app(Path(args.child_app[0]), args.child_app[1], args.width)
        return 0
    import subprocess

    limit = int(args.limit_gb * 2**30)
    print(f"load: {' '.join(f'{x:.1f}' for x in os.getloadavg())} (1, 5, 15 min), "
          f"{os.cpu_count()} cores; a {args.mb:g} MB message at {args.width} columns")
    print(f"{'format':<19} {'text':<9} {'MB':>5} " + " ".join(
        f"{name + ' s':>9}" for name in PHASES) + "  (wall/CPU)  RSS/file: folded unfolded"
          " peak  last row")
    passed = True
    for fmt in args.formats.split(","):
        for kind in args.texts.split(","):
            folder = args.out / f"{fmt}-{kind}"
            found = sorted(folder.glob("*")) if folder.exists() else []
            if args.keep and found:
                path = found[0]
            else:
                for old in found:
                    old.unlink()
                made = subprocess.run(
                    [sys.executable, __file__, "--child-make", fmt, kind,
                     str(int(args.mb * 1e6)), str(folder)],
                    check=True, capture_output=True, text=True)
                path = Path(made.stdout.strip())
            size = path.stat().st_size
            wall, peak, code, out, _ = measure_child(
                [sys.executable, __file__, "--child-app", str(path), kind,
                 "--width", str(args.width)], limit)
            phases, last = _parse(out)

            def seconds(name: str, phases: dict[str, tuple[float, float, int]] = phases) -> str:
                wall_s, cpu_s, _ = phases.get(name, (float("nan"),) * 3)
                return f"{wall_s:4.1f}/{cpu_s:<4.1f}"

            folded = max(phases.get(n, (0, 0, 0))[2] for n in ("shown", "open"))
            unfolded = max(phases.get(n, (0, 0, 0))[2] for n in ("unfold", "end"))
            print(f"{fmt:<19} {kind:<9} {size / 1e6:5.1f} "
                  + " ".join(f"{seconds(name):>9}" for name in PHASES)
                  + f"  {folded / size:5.2f}x {unfolded / size:5.2f}x {peak / size:5.2f}x  "
                  + last + ("" if code == 0 else f"  exit {code}"), flush=True)
            steps = [phases[n][1] for n in ("open", "unfold", "fold") if n in phases]
            passed &= (code == 0 and last in ("OK", "tool") and peak / size <= APP_TARGET
                       and len(steps) == 3 and max(steps) <= STEP_TARGET)
            if not args.keep:
                path.unlink(missing_ok=True)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
