"""Peak memory of `scan` and of the app on a large-record and a tiny-record Claude Code file.

Usage: python bench/bench_memory.py [--tiny-turns N] [--skip-app] [--regenerate]

Files (generated once into bench/out/, git-ignored, reused afterwards):

- large records: bench/out/claude-code-100000.jsonl, the 238.7 MB session of bench_scan.py
  (tool results, thinking, payloads: 26,466 turns);
- tiny records: bench/out/claude-code-tiny-<N>.jsonl, N one-line turns (789,000 by default,
  about 200 MB), prompts and short answers, one turn in 500 empty.

Each command runs in its own subprocess; peak RSS is that child's `ru_maxrss` (`os.wait4`):

- baseline: `iter_lines` and `orjson.loads` over every line, nothing kept (what any reader
  costs at least);
- `replay scan --json FILE` and `replay scan FILE` (the table), stdout to /dev/null;
- app (unless --skip-app): `replay FILE` run headless until indexing is done, then ctrl+p:
  the time until the command palette is on screen and until it lists empty turns, how many
  turns the app read back from the file for it, and the process's peak RSS.

Prints each peak over the file size and over the baseline's peak, and the table's time over
`--json`'s. Targets: scan <= 0.5x the file on both files, the table no slower than `--json`
(ratio <= 1.1, for noise), the app <= 1.0x the tiny file with the palette open in < 1 s.
Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scan import BASELINE, OUT, REPO, Generator, Run  # noqa: E402

SCAN_TARGET = 0.5
APP_TARGET = 1.0
PALETTE_TARGET = 1.0
TABLE_TARGET = 1.1


def write_tiny(path: Path, turns: int) -> None:
    """Tiny Claude Code records, one turn each: prompts and short answers, every 500th empty."""
    session_id = "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
    start = 1_772_355_600  # 2026-03-01T09:00:00Z
    with open(path, "wb") as handle:
        for number in range(turns):
            uuid = f"{number:08x}-0000-4000-8000-{number * 7919 % (1 << 48):012x}"
            seconds = start + number * 3
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + ".000Z"
            record: dict[str, object] = {"sessionId": session_id, "uuid": uuid,
                                         "timestamp": stamp}
            if number % 2 == 0:
                text = ("<local-command-stdout></local-command-stdout>" if number % 1000 == 0
                        else f"please go on with step {number} now, thanks")
                record.update(type="user", message={"role": "user", "content": text})
            else:
                content = ([{"type": "thinking", "thinking": "", "signature": "Eq"}]
                           if number % 1000 == 501 else
                           [{"type": "text", "text": f"Done with step {number}. All good."}])
                record.update(type="assistant", message={
                    "id": f"msg_{number:08d}", "role": "assistant", "content": content})
            handle.write(orjson.dumps(record) + b"\n")


def measure(command: list[str]) -> Run:
    """Run a subprocess, stdout discarded; wall and CPU time and its own peak RSS."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, cwd=REPO)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{command[:4]} exited with {os.waitstatus_to_exitcode(status)}")
    return Run(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024)


def child_app(path: Path) -> None:
    """The app on the file, headless: indexing done, then ctrl+p; prints its figures."""
    sys.path.insert(0, str(REPO))  # the replay beside this script, whatever is installed
    scratch = tempfile.mkdtemp(prefix="bench-memory-")
    os.environ.update(REPLAY_CONFIG_FILE=os.path.join(scratch, "config.toml"),
                      REPLAY_DATA_DIR=scratch, TEXTUAL_ANIMATIONS="none")
    import asyncio

    from headless import run_headless
    from textual import events
    from textual.command import CommandList, CommandPalette

    from replay.ui.app import ReplayApp

    begun = time.perf_counter()

    async def pilot_run(pilot: object) -> None:
        app = pilot.app  # type: ignore[attr-defined]
        while app.replay_screen is None or app.replay_screen.indexing:
            await pilot.pause(0.05)  # type: ignore[attr-defined]
        screen = app.replay_screen
        print(f"indexed-after {time.perf_counter() - begun:.2f}", flush=True)
        indexed = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(f"turns {len(screen.session.turns)}", flush=True)
        print(f"indexed-peak {indexed}", flush=True)
        await pilot.pause(0.2)  # type: ignore[attr-defined]
        before = screen.session.turns
        read_back = getattr(before, "materialised", None)
        started = time.perf_counter()
        # The key as the terminal sends it. Not `pilot.press`: it then waits until the whole
        # process is idle (up to 1 s while a worker thread describes the empty turns),
        # which is no part of what the reviewer waits for.
        app.post_message(events.Key("ctrl+p", None))
        shown = None
        while True:
            await asyncio.sleep(0.005)
            palette = app.screen
            if shown is None and isinstance(palette, CommandPalette):
                shown = time.perf_counter() - started
            if isinstance(palette, CommandPalette) and any(
                    "Empty #" in str(option.prompt)
                    for found in palette.query(CommandList) for option in found._options):
                break
        listed = time.perf_counter() - started
        print(f"palette {shown:.3f}", flush=True)
        print(f"palette-listed {listed:.3f}", flush=True)
        if read_back is not None:
            print(f"read-back {before.materialised - read_back}", flush=True)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(f"peak {peak}", flush=True)
        app.exit()

    run_headless(ReplayApp, pilot_run, [str(path)])


def run_app(path: Path) -> dict[str, str]:
    """The app child's `key value` lines."""
    result = subprocess.run([sys.executable, __file__, "--child-app", str(path)],
                            capture_output=True, text=True, check=False, timeout=1800, cwd=REPO)
    if result.returncode != 0:
        raise SystemExit(f"app child failed: {result.stderr[-2000:]}")
    return dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)


def main() -> int:
    """Generate the files if needed, measure, print ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny-turns", type=int, default=789_000)
    parser.add_argument("--skip-app", action="store_true", help="measure scan only")
    parser.add_argument("--regenerate", action="store_true", help="write the files again")
    parser.add_argument("--child-app", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_app is not None:
        child_app(args.child_app)
        return 0

    OUT.mkdir(parents=True, exist_ok=True)
    large = OUT / "claude-code-100000.jsonl"
    tiny = OUT / f"claude-code-tiny-{args.tiny_turns}.jsonl"
    if args.regenerate or not large.exists():
        Generator().write(large.with_suffix(".tmp"), 100_000)
        large.with_suffix(".tmp").replace(large)
    if args.regenerate or not tiny.exists():
        write_tiny(tiny.with_suffix(".tmp"), args.tiny_turns)
        tiny.with_suffix(".tmp").replace(tiny)

    python = sys.executable
    passed = True
    for name, path in (("large records", large), ("tiny records", tiny)):
        size = path.stat().st_size
        with open(path, "rb") as handle:  # from the page cache for every run
            while handle.read(1 << 24):
                pass
        base = measure([python, "-c", BASELINE, str(path)])
        json = measure([python, "-m", "replay", "scan", "--json", "--no-cache", str(path)])
        table = measure([python, "-m", "replay", "scan", "--no-cache", str(path)])
        print(f"{name}: {path.name}, {size / 1e6:.1f} MB")
        for label, run in (("baseline (orjson loop)", base), ("scan --json", json),
                           ("scan (table)", table)):
            print(f"  {label:<24} peak {run.peak / 1e6:7.1f} MB = {run.peak / size:.2f}x file, "
                  f"{run.peak / base.peak:.2f}x baseline; {run.wall:.2f} s wall, "
                  f"{run.cpu:.2f} s CPU")
        print(f"  table / json time: {table.cpu / json.cpu:.2f} CPU, {table.wall / json.wall:.2f}"
              f" wall (target <= {TABLE_TARGET})")
        passed &= max(json.peak, table.peak) / size <= SCAN_TARGET
        passed &= table.cpu / json.cpu <= TABLE_TARGET
        if not args.skip_app:
            found = run_app(path)
            peak = int(found["peak"])
            print(f"  app: {found['turns']} turns indexed {float(found['indexed-after']):.1f} s "
                  f"after start; peak {int(found['indexed-peak']) / 1e6:.1f} MB"
                  f" when indexed, {peak / 1e6:.1f} MB with the palette open = "
                  f"{peak / size:.2f}x file, {peak / base.peak:.2f}x baseline; palette open in "
                  f"{float(found['palette']):.2f} s, its empty turns listed in "
                  f"{float(found['palette-listed']):.2f} s"
                  + (f" ({found['read-back']} turns read back from the file)"
                     if "read-back" in found else ""))
            if path is tiny:
                passed &= peak / size <= APP_TARGET
                passed &= float(found["palette-listed"]) < PALETTE_TARGET
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
