"""The review queue at a session boundary: is the next session read before the reviewer
gets there?

Usage: python bench/bench_review.py [PATH ...] [--speed 16] [--repeat 3]

Plays `replay review PATH...` (default: sample_sessions/) headless at --speed, from the
first empty turn of the queue to the end of its last session: playback pauses at each empty
turn of the queue (the script presses space again at once, a reviewer who never stops to
read) and carries on into the next session at the end of each one. Each run is its own
process, with a scratch data directory; side by side in one invocation:

- read ahead (what `replay review` does): the next session is read in the background once a
  session is on screen;
- baseline: the same with reading ahead turned off, so each session is read when playback
  reaches it.

For every session boundary it records whether the next session was already read when
playback reached it, how long before that its read had finished (the margin), and the wait:
from the moment playback asked for the next session to the first frame painted with it. It
prints p50 / max of the wait for both, the count of boundaries met with the session ready,
and the largest number of sessions held in memory at once. Exit status 1 when a boundary
waited for a read with reading ahead on.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def child(paths: list[str], speed: float, prefetch: bool) -> None:
    """Play the queue to its end and print one JSON line of figures."""
    from replay.config import Settings
    from replay.core.annotate.queue_position import QueueDefinition
    from replay.core.annotate.review_queue import QueueFilters
    from replay.ui.review import QueueScreen, ReviewOptions, make_review_app

    given = [Path(p) for p in paths]
    options = ReviewOptions(given, QueueDefinition.of(given, reviewer="bench"), QueueFilters(),
                            restart=True, prefetch=prefetch)
    settings = Settings(animations=False, speed=speed)
    app = make_review_app(options, settings=settings, reviewer="bench")
    held = 0

    async def play() -> None:
        nonlocal held
        async with app.run_test(size=(160, 45)) as pilot:
            for _ in range(20_000):
                await pilot.pause(0.01)
                held = max(held, len(app.cache))
                screen = app.screen
                if not isinstance(screen, QueueScreen) or not screen.is_mounted:
                    continue
                assert app.queue is not None
                last_session = len(app.queue.sessions) - 1
                at_end = screen.index >= len(screen.session.turns) - 1
                if screen.number == last_session and at_end and not screen.playing:
                    break
                if not screen.playing and (screen.paused_at_empty or screen.index
                                           == app.queue.entries[0].index
                                           and screen.number == 0):
                    await pilot.press("space")
            else:
                raise SystemExit("the queue did not reach its end")

    asyncio.run(play())
    crossings = [
        {"session": c.number, "ready": c.ready, "wait": (c.shown or c.asked) - c.asked,
         "margin": c.asked - app.read_at[c.number] if c.ready else None}
        for c in app.crossings[1:]
    ]
    print(json.dumps({"crossings": crossings, "held": held,
                      "sessions": len(app.queue.sessions) if app.queue else 0}), flush=True)


def run_child(paths: list[str], speed: float, prefetch: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, REPLAY_DATA_DIR=scratch,
                   REPLAY_CONFIG_FILE=str(Path(scratch) / "none.toml"))
        result = subprocess.run(
            [sys.executable, __file__, "--child", "--speed", str(speed),
             *(["--no-prefetch"] if not prefetch else []), *paths],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise SystemExit(f"child failed: {result.stderr[-2000:]}")
    line = result.stdout.strip().splitlines()[-1]
    return json.loads(line)  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=[str(REPO / "sample_sessions")])
    parser.add_argument("--speed", type=float, default=16.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-prefetch", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.paths, args.speed, not args.no_prefetch)
        return 0
    results: dict[bool, list[dict[str, object]]] = {True: [], False: []}
    for _ in range(args.repeat):
        for prefetch in (True, False):  # alternating, so both see the same machine load
            results[prefetch].append(run_child(args.paths, args.speed, prefetch))
    failed = False
    print(f"queue over {', '.join(args.paths)} played at {args.speed:g}x, "
          f"{args.repeat} runs each")
    waits_by_mode: dict[bool, list[float]] = {}
    for prefetch in (True, False):
        runs = results[prefetch]
        crossings = [c for run in runs for c in run["crossings"]]  # type: ignore[attr-defined]
        waits = [c["wait"] * 1000 for c in crossings]
        waits_by_mode[prefetch] = waits
        ready = sum(1 for c in crossings if c["ready"])
        margins = [c["margin"] * 1000 for c in crossings if c["margin"] is not None]
        held = max(int(run["held"]) for run in runs)  # type: ignore[call-overload]
        name = "read ahead" if prefetch else "baseline (read on arrival)"
        print(f"\n{name}: {len(crossings)} boundaries, {ready} met with the session ready")
        if waits:
            print(f"  wait at a boundary, ask -> first frame: p50 {statistics.median(waits):.1f} "
                  f"ms, max {max(waits):.1f} ms")
        if margins:
            print(f"  read finished before the boundary by: min {min(margins):.0f} ms, "
                  f"p50 {statistics.median(margins):.0f} ms")
        print(f"  sessions held at once: at most {held} "
              f"(of {runs[0]['sessions']} in the queue)")
        if prefetch and ready < len(crossings):
            failed = True
            for c in crossings:
                if not c["ready"]:
                    print(f"  not ready: session {c['session'] + 1}, waited "
                          f"{c['wait'] * 1000:.0f} ms")
    if waits_by_mode[True] and waits_by_mode[False]:
        ratio = statistics.median(waits_by_mode[True]) / max(
            statistics.median(waits_by_mode[False]), 1e-9)
        print(f"\nwait ratio read ahead / baseline (p50): {ratio:.2f}")
    print("\nverdict:", "FAIL: a boundary waited for a read" if failed
          else "every boundary met its session already read")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
