"""Time to the first turn on screen, against a minimal Textual app; stepping latency.

Usage: python bench/bench_ui.py [--file PATH] [--repeat K] [--steps N]

Uses bench/out/claude-code-100000.jsonl (made by bench_scan.py) unless --file is given.
Each measurement runs in its own headless subprocess, side by side in one run:

- baseline: a minimal Textual app (one Static) from process start to its first screen;
- replay:   `replay FILE` (the CLI's own path, run headless) from process start to the
            first turn on screen.

It prints replay / baseline (target <= 1.5) and the same in CPU time of each process (what
the process did, whatever the load), then, in the replay process once indexing is
done, the p50/p95 latency of stepping (right arrow) and of `]` (next empty turn), each from
the key press until the first frame painted with the new turn (target p95 < 50 ms), the
number of widgets mounted (bounded: never one per turn) and the peak memory.
"""

from __future__ import annotations

import time

PROCESS_START = time.perf_counter()

import argparse  # noqa: E402
import compileall  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
RATIO_TARGET = 1.5
STEP_TARGET_MS = 50.0


def cpu_seconds() -> float:
    """CPU time of this process so far, every thread, user and system: on a busy machine it
    says what the process itself did, where the wall clock also counts waiting for a core."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child_minimal() -> None:
    """A minimal Textual app: report when its first screen has been painted."""
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    class Minimal(App[None]):
        def compose(self) -> ComposeResult:
            yield Static("hello")

        def on_mount(self) -> None:
            self.call_after_refresh(self.done)

        def done(self) -> None:
            print(f"first-screen {time.perf_counter() - PROCESS_START:.4f}", flush=True)
            print(f"first-cpu {cpu_seconds():.4f}", flush=True)
            self.exit()

    Minimal().run(headless=True, size=(160, 45))


def child_replay(path: Path, steps: int) -> None:
    """replay on the file: report the first turn on screen, then stepping latencies."""
    # Default settings and no saved annotations, whoever runs it; no animations.
    scratch = tempfile.mkdtemp(prefix="bench-ui-")
    os.environ.update(REPLAY_CONFIG_FILE=os.path.join(scratch, "config.toml"),
                      REPLAY_DATA_DIR=scratch, TEXTUAL_ANIMATIONS="none")
    from headless import run_headless
    from textual.screen import Screen

    from replay.ui.app import ReplayApp
    from replay.ui.screens.replay_screen import ReplayScreen

    reported: list[float] = []
    paint = Screen._compositor_refresh

    def first_paint(self: Screen[object]) -> None:
        # The moment the first frame holding a turn is painted, as the baseline's is.
        paint(self)
        if not reported and isinstance(self, ReplayScreen) \
                and any(pane.indices for pane in self.query("#current")):  # type: ignore
            reported.append(time.perf_counter() - PROCESS_START)
            print(f"first-screen {reported[0]:.4f}", flush=True)
            print(f"first-cpu {cpu_seconds():.4f}", flush=True)

    Screen._compositor_refresh = first_paint  # type: ignore[method-assign]

    async def pilot_run(pilot: object) -> None:
        app = pilot.app  # type: ignore[attr-defined]
        while not reported:
            await pilot.pause(0.01)  # type: ignore[attr-defined]
        Screen._compositor_refresh = paint  # type: ignore[method-assign]
        screen = app.replay_screen
        assert screen is not None
        while screen.indexing:
            await pilot.pause(0.05)  # type: ignore[attr-defined]
        print(f"indexed {time.perf_counter() - PROCESS_START:.2f} "
              f"turns {len(screen.session.turns)} empty {len(screen.navigator.empty_indices)}",
              flush=True)
        painted: list[float] = []
        original = type(screen)._compositor_refresh

        def timed_refresh(self: object) -> None:
            original(self)  # type: ignore[arg-type]
            painted.append(time.perf_counter())

        type(screen)._compositor_refresh = timed_refresh  # type: ignore[method-assign]
        shown: list[float] = []
        original_show = type(screen).show

        def timed_show(self: object) -> None:
            original_show(self)  # type: ignore[arg-type]
            shown.append(time.perf_counter())

        type(screen).show = timed_show  # type: ignore[method-assign]
        await pilot.press("home")  # type: ignore[attr-defined]
        for key, count in (("right", steps), ("right_square_bracket", steps // 4)):
            timings = []
            for _ in range(count):
                if key == "right_square_bracket" and screen.navigator.next_empty(
                        screen.index) is None:
                    await pilot.press("home")  # type: ignore[attr-defined]
                await pilot.pause(0.03)  # type: ignore[attr-defined]
                painted.clear()
                shown.clear()
                started = time.perf_counter()
                await pilot.press(key)  # type: ignore[attr-defined]
                await pilot.pause(0.1)  # type: ignore[attr-defined]
                # Latency: from the key press until the first frame painted after the screen
                # took the new turn (later frames are scroll bars and timers, not the step).
                ready_at = max(shown, default=started)
                frame = min((t for t in painted if t >= ready_at), default=ready_at)
                timings.append((frame - started) * 1000)
            print(f"step {key} {','.join(f'{t:.2f}' for t in timings)}", flush=True)
        widgets = len(list(app.screen.walk_children()))
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(f"widgets {widgets} peak {peak}", flush=True)
        app.exit()

    # The user's path: `replay FILE` (settings, detection, then the app), run headless.
    run_headless(ReplayApp, pilot_run, [str(path)])


def percentile(values: list[float], percent: float) -> float:
    """The nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, int(round(len(ordered) * percent / 100)) - 1)]


def run_child(arguments: list[str]) -> dict[str, str]:
    """Run one measurement process and collect its `key value ...` lines."""
    # Imports from cached bytecode, as after `pip install` (which compiles every module):
    # with PYTHONDONTWRITEBYTECODE set, replay's modules were compiled from source on every
    # start (30 ms) while Textual's came precompiled from site-packages.
    environment = {key: value for key, value in os.environ.items()
                   if key != "PYTHONDONTWRITEBYTECODE"}
    result = subprocess.run([sys.executable, __file__, *arguments], capture_output=True,
                            text=True, check=False, timeout=900, env=environment)
    if result.returncode != 0:
        raise SystemExit(f"child failed: {result.stderr[-2000:]}")
    found: dict[str, str] = {}
    for line in result.stdout.splitlines():
        key, _, rest = line.partition(" ")
        if key == "step":
            name, _, rest = rest.partition(" ")
            key = f"step {name}"
        found[key] = rest
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=OUT / "claude-code-100000.jsonl")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--child", choices=["minimal", "replay"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "minimal":
        child_minimal()
        return 0
    if args.child == "replay":
        child_replay(args.file, args.steps)
        return 0
    if not args.file.exists():
        print(f"{args.file} is missing: run bench/bench_scan.py first to generate it")
        return 1
    compileall.compile_dir(Path(__file__).resolve().parent.parent / "replay", quiet=1)
    baselines, firsts, baseline_cpu, first_cpu = [], [], [], []
    details: dict[str, str] = {}
    pooled: dict[str, list[float]] = {"step right": [], "step right_square_bracket": []}
    run_p95: dict[str, list[float]] = {key: [] for key in pooled}
    for _ in range(args.repeat):
        minimal = run_child(["--child", "minimal"])
        baselines.append(float(minimal["first-screen"]))
        baseline_cpu.append(float(minimal["first-cpu"]))
        details = run_child(["--child", "replay", "--file", str(args.file),
                             "--steps", str(args.steps)])
        firsts.append(float(details["first-screen"]))
        first_cpu.append(float(details["first-cpu"]))
        for key in pooled:
            timings = [float(value) for value in details[key].split(",")]
            pooled[key].extend(timings)
            run_p95[key].append(percentile(timings, 95))
    base, first = min(baselines), min(firsts)
    size = args.file.stat().st_size
    print(f"file        {args.file.name}: {size / 1e6:.1f} MB; {details['indexed']}")
    print(f"baseline    minimal Textual app first screen: {base:.3f} s "
          f"(runs {', '.join(f'{b:.3f}' for b in baselines)})")
    print(f"replay      first turn on screen: {first:.3f} s "
          f"(runs {', '.join(f'{f:.3f}' for f in firsts)})")
    ratio = first / base
    middle = statistics.median(firsts) / statistics.median(baselines)
    print(f"ratio       replay / baseline = {ratio:.2f} best of each, {middle:.2f} median of "
          f"each  (target <= {RATIO_TARGET}, on the best)")
    print(f"cpu         to the first screen: replay {statistics.median(first_cpu):.3f} s, "
          f"minimal {statistics.median(baseline_cpu):.3f} s (medians): "
          f"{statistics.median(first_cpu) / statistics.median(baseline_cpu):.2f}x  "
          f"(load {os.getloadavg()[0]:.1f})")
    passed = ratio <= RATIO_TARGET
    for key, timings in pooled.items():
        p95 = percentile(timings, 95)
        passed = passed and p95 < STEP_TARGET_MS
        runs = ", ".join(f"{value:.0f}" for value in run_p95[key])
        print(f"{key:<11} p50 {statistics.median(timings):.1f} ms, p95 {p95:.1f} ms over "
              f"{len(timings)} presses (p95 per run: {runs}; target < {STEP_TARGET_MS:.0f})")
    widgets, peak = details["widgets"].split()[0], int(details["widgets"].split()[2])
    print(f"memory      {widgets} widgets on screen; peak RSS {peak / 1e6:.0f} MB "
          f"({peak / size:.2f}x the file)")
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
