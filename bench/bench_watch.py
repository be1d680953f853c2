"""How fast `replay watch` reports a new empty turn, whether it keeps up, and what it costs idle.

Run: `python bench/bench_watch.py [--events 100] [--duration 30] [--rate 1000] [--idle 5]
[--think-pause 10] [--think-rounds 2] [--stall 2] [--stalls 5]`.

1. Latency: from the write of an empty user line that ends the file (complete the moment it
   is written: nothing follows it) to `replay watch` printing it; p50/p95 over `--events`
   writes. The baseline is a bare watchfiles loop with the same debounce, started the same
   way, printing a line per change: the ratio is what replay adds over being woken up.
2. Throughput: a writer appends `--rate` lines per second for `--duration` seconds; reported
   are the empty turns printed against those written, the lag between the last write and
   its line, and the growth of the watch process's resident memory.
3. Idle: CPU time the watch process uses over `--idle` seconds with no change at all.
4. A reply still being written: a thinking line, `--think-pause` seconds of nothing but
   bookkeeping (a queue operation, an attachment and a progress record half-way), then the
   text of the same message, `--think-rounds` times, followed at once by `replay watch`
   and by the app (`--follow`, headless, sampled every 50 ms): false empty turns printed and
   false stops must both be zero.
5. Stalls: `replay watch --stall S` on a session whose last line is a prompt with no reply;
   from the moment the threshold passes (last write + S) to the `stalled` line, over
   `--stalls` silences (target: within 1 s).
6. A folder: `replay watch DIR --stall S` on a project folder holding `--folder-sessions`
   finished sessions; `--folder-events` new session files are started while it watches
   (half written whole at once, half with the reply's last line written 0.3 s later), each
   ending with an empty reply; from the write that completes it to its `empty` line
   (target p95 <= 0.5 s), and the `stalled` lines printed for the finished sessions, old
   and new, over S + 3 s of silence at the end (target 0). `--only folder` runs only this,
   `--only think` only section 4.
"""

from __future__ import annotations

import argparse
import os
import selectors
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
WRITER = REPO / "tests" / "core" / "writer_proc.py"
SESSION = "0b7d2c1e-6a4f-4c3b-8e2d-9f1a5b6c7d80"
TICKS = os.sysconf("SC_CLK_TCK")

BASELINE = """
import sys
from pathlib import Path
from watchfiles import watch
from replay.watching import DEBOUNCE_MS, STEP_MS
target = str(Path(sys.argv[1]).absolute())
print("ready", flush=True)
for changes in watch(str(Path(target).parent), debounce=DEBOUNCE_MS, step=STEP_MS,
                     recursive=False, watch_filter=lambda change, path: path == target):
    print("changed", flush=True)
"""


LOAD_BASELINE = """
import sys
from pathlib import Path
from replay.core.readers import load_sessions
def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
load_sessions(sys.argv[2])  # imports and warms every reader first, as the watch process has
before = rss()
sessions = load_sessions(sys.argv[1])
print(rss() - before, len(sessions[0].turns))
"""


def record(kind: str, n: int, content: object, message_id: str | None = None) -> bytes:
    """One Claude Code record."""
    message: dict[str, object] = {"role": kind, "content": content}
    if message_id is not None:
        message.update(id=message_id, model="bench")
    return orjson.dumps({"type": kind, "sessionId": SESSION, "uuid": f"{kind[0]}-{n}",
                         "parentUuid": None, "timestamp": "2026-03-01T10:00:00.000Z",
                         "message": message}) + b"\n"


def empty_pair(n: int) -> bytes:
    """An empty user turn, then a reply that makes it complete."""
    return record("user", n, "   ") + record("assistant", n, [{"type": "text", "text": "ok"}],
                                            f"msg_{n}")


def busy_lines(count: int, empty_every: int) -> tuple[bytes, int, str]:
    """`count` lines of a lively session; (bytes, empty turns in it, id of the last one)."""
    lines: list[bytes] = []
    empties = 0
    n = 1_000_000
    while len(lines) < count:
        n += 1
        if n % empty_every == 0:
            lines.extend(empty_pair(n).splitlines(keepends=True))
            empties += 1
            continue
        lines.append(record("user", n, f"request {n} " + "x" * 200))
        lines.append(record("assistant", n, [{"type": "thinking", "thinking": "y" * 300,
                                              "signature": "s"}], f"msg_{n}"))
        lines.append(record("assistant", n, [{"type": "text", "text": "z" * 400}], f"msg_{n}"))
    # End on an empty pair, so the last write has a line to wait for.
    n += 1
    lines.extend(empty_pair(n).splitlines(keepends=True))
    return b"".join(lines), empties + 1, f"u-{n}"


class Lines:
    """Reads a subprocess's stdout lines with deadlines."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        self.fd = process.stdout.fileno()
        self.selector = selectors.DefaultSelector()
        self.selector.register(process.stdout, selectors.EVENT_READ)
        self.buffer = b""

    def next(self, timeout: float) -> bytes | None:
        """The next line, or None after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not self.selector.select(left):
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line


def append(path: Path, data: bytes) -> None:
    """Append and close, as a writer would."""
    with open(path, "ab") as handle:
        handle.write(data)


def start_watch(path: Path, *options: str) -> tuple[subprocess.Popen[bytes], Lines]:
    """`replay watch PATH`, once its first read is done and it is watching."""
    process = subprocess.Popen([sys.executable, "-m", "replay", "watch", str(path), *options],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    lines = Lines(process)
    probe = 0
    while True:  # records written before its first read are not printed: probe until one is
        probe += 1
        append(path, empty_pair(probe))
        line = lines.next(0.5)
        if line is not None:
            break
    while orjson.loads(line)["id"] != f"u-{probe}":
        line = lines.next(10.0)
        assert line is not None
    return process, lines


def latencies_watch(path: Path, events: int) -> list[float]:
    """Seconds from each write to `replay watch` printing its empty turn."""
    process, lines = start_watch(path)
    found: list[float] = []
    try:
        for n in range(events):
            data = record("user", 10_000 + n, "   ")  # the last line: nothing completes it
            started = time.perf_counter()
            append(path, data)
            line = lines.next(10.0)
            found.append(time.perf_counter() - started)
            assert line is not None and orjson.loads(line)["id"] == f"u-{10_000 + n}", line
            time.sleep(0.05)
    finally:
        stop(process)
    return found


def latencies_baseline(path: Path, events: int) -> list[float]:
    """Seconds from each write to a bare watchfiles loop noticing it."""
    process = subprocess.Popen([sys.executable, "-c", BASELINE, str(path)],
                               stdout=subprocess.PIPE, cwd=REPO)
    lines = Lines(process)
    assert lines.next(10.0) == b"ready"
    time.sleep(0.5)  # the watcher starts after "ready": let it settle
    found: list[float] = []
    try:
        for n in range(events):
            started = time.perf_counter()
            append(path, empty_pair(20_000 + n))
            line = lines.next(10.0)
            found.append(time.perf_counter() - started)
            assert line == b"changed"
            time.sleep(0.05)
    finally:
        process.kill()
        process.wait()
    return found


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGINT, as a user's Ctrl-C; the exit must be clean."""
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=10)
    assert process.returncode == 0 and not err, (process.returncode, err)


def rss_kib(pid: int) -> int:
    """Resident memory of a process."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def main() -> int:
    """Run the three measurements and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--idle", type=float, default=5.0)
    parser.add_argument("--think-pause", type=float, default=10.0)
    parser.add_argument("--think-rounds", type=int, default=2)
    parser.add_argument("--stall", type=float, default=2.0)
    parser.add_argument("--stalls", type=int, default=5)
    parser.add_argument("--folder-sessions", type=int, default=50)
    parser.add_argument("--folder-events", type=int, default=40)
    parser.add_argument("--only", choices=["folder", "think"], default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-watch-") as folder:
        base = Path(folder)
        if args.only == "folder":
            folder_case(base / "project", args)
            return 0
        if args.only == "think":
            think_case(base, args)
            return 0

        print(f"1. latency, write -> printed line, {args.events} events")
        target = base / f"{SESSION}.jsonl"
        target.write_bytes(record("user", 0, "start"))
        ours = latencies_watch(target, args.events)
        baseline_target = base / "baseline.jsonl"
        baseline_target.write_bytes(b"")
        bare = latencies_baseline(baseline_target, args.events)
        for name, values in (("replay watch", ours), ("bare watchfiles", bare)):
            print(f"   {name:<16} p50 {percentile(values, 0.5) * 1000:7.1f} ms   "
                  f"p95 {percentile(values, 0.95) * 1000:7.1f} ms   "
                  f"max {max(values) * 1000:7.1f} ms")
        print(f"   ratio replay/bare: p50 {statistics.median(ours) / statistics.median(bare):.2f}"
              f"   p95 {percentile(ours, 0.95) / percentile(bare, 0.95):.2f}"
              f"   (target p95 <= 500 ms: {'met' if percentile(ours, 0.95) <= 0.5 else 'MISSED'})")

        total = int(args.rate * args.duration)
        print(f"2. throughput, {args.rate:.0f} lines/s for {args.duration:.0f} s ({total:,} lines)")
        data, expected, last_id = busy_lines(total, empty_every=50)
        source = base / "source.jsonl"
        source.write_bytes(data)
        busy = base / f"busy-{SESSION}.jsonl"
        busy.write_bytes(record("user", 0, "start"))
        process, lines = start_watch(busy)
        start_size = busy.stat().st_size
        rss_before = rss_kib(process.pid)
        cpu_before = cpu_seconds(process.pid)
        writer = subprocess.Popen([sys.executable, str(WRITER), str(source), str(busy),
                                   "--rate", str(args.rate)])
        printed: list[str] = []
        final_size = start_size + len(data)
        written: list[float] = []

        def note_last_write() -> None:  # a 1 ms stat loop, so the write time is not blurred
            while busy.stat().st_size < final_size:
                time.sleep(0.001)
            written.append(time.perf_counter())

        watcher_of_writes = threading.Thread(target=note_last_write, daemon=True)
        watcher_of_writes.start()
        seen_last_at = None
        deadline = time.monotonic() + args.duration * 2 + 30
        while seen_last_at is None and time.monotonic() < deadline:
            line = lines.next(1.0)
            if line is not None and orjson.loads(line)["event"] == "empty":
                printed.append(orjson.loads(line)["id"])
                if printed[-1] == last_id:
                    seen_last_at = time.perf_counter()
        watcher_of_writes.join(timeout=5)
        written_at = written[0] if written else None
        writer.wait()
        rss_after = rss_kib(process.pid)
        cpu_busy = cpu_seconds(process.pid) - cpu_before
        lag = (seen_last_at - written_at) if seen_last_at and written_at else float("nan")
        print(f"   empty turns printed {len(printed):,} of {expected:,} written; "
              f"duplicates {len(printed) - len(set(printed))}")
        print(f"   lag at end (last write -> its line): {lag * 1000:.1f} ms")
        print(f"   RSS {rss_before / 1024:.1f} MiB -> {rss_after / 1024:.1f} MiB "
              f"(+{(rss_after - rss_before) / 1024:.1f} MiB for {len(data) / 1e6:.1f} MB read)")
        fresh = subprocess.run([sys.executable, "-c", LOAD_BASELINE, str(busy), str(target)],
                               cwd=REPO,
                               capture_output=True, check=True, text=True).stdout.split()
        fresh_kib, fresh_turns = int(fresh[0]), int(fresh[1])
        print(f"   a fresh load of the final file grows RSS by {fresh_kib / 1024:.1f} MiB "
              f"({fresh_turns:,} turns): follow/fresh "
              f"{(rss_after - rss_before) / max(fresh_kib, 1):.2f}")
        print(f"   CPU of the watch process while following: {cpu_busy:.2f} s "
              f"({100 * cpu_busy / args.duration:.1f}% of one core)")

        print(f"3. idle, {args.idle:.0f} s without changes")
        time.sleep(0.5)
        cpu_start = cpu_seconds(process.pid)
        time.sleep(args.idle)
        idle_cpu = cpu_seconds(process.pid) - cpu_start
        print(f"   CPU {idle_cpu * 1000:.0f} ms over {args.idle:.0f} s "
              f"({100 * idle_cpu / args.idle:.2f}% of one core; clock tick {1000 / TICKS:.0f} ms)")
        stop(process)

        think_case(base, args)

        print(f"5. stalls, --stall {args.stall:g}, {args.stalls} silences")
        delays = stall_delays(base / f"stall-{SESSION}.jsonl", args.stall, args.stalls)
        print(f"   threshold -> stalled line: p50 {percentile(delays, 0.5) * 1000:.0f} ms, "
              f"max {max(delays) * 1000:.0f} ms "
              f"(target <= 1000 ms: {'met' if max(delays) <= 1.0 else 'MISSED'})")
        folder_case(base / "project", args)
    return 0


def finished_session(session_id: str, n: int, *, exits: bool) -> bytes:
    """A session that is over: a prompt, its reply with a stop reason, maybe `/exit`."""
    lines = [record("user", n, f"request {n}"),
             record("assistant", n, [{"type": "thinking", "thinking": "t", "signature": "s"}],
                    f"msg_{n}"),
             finished_reply(n, "Done.")]
    if exits:
        lines += [record("user", n + 1, "<command-name>/exit</command-name>"),
                  record("user", n + 2, "<local-command-stdout>See ya!</local-command-stdout>")]
    return b"".join(lines).replace(SESSION.encode(), session_id.encode())


def finished_reply(n: int, text: str) -> bytes:
    """The last line of a reply, with the stop reason Claude Code writes on it."""
    return orjson.dumps({"type": "assistant", "sessionId": SESSION, "uuid": f"a-{n}-end",
                         "parentUuid": None, "timestamp": "2026-03-01T10:00:00.000Z",
                         "message": {"role": "assistant", "id": f"msg_{n}", "model": "bench",
                                     "stop_reason": "end_turn",
                                     "content": [{"type": "text", "text": text}]}}) + b"\n"


def folder_case(project: Path, args: argparse.Namespace) -> None:
    """Section 6: new sessions in a watched folder of finished ones."""
    print(f"6. a folder of {args.folder_sessions} finished sessions, --stall {args.stall:g}; "
          f"{args.folder_events} new session files started while watching")
    project.mkdir(parents=True)
    for n in range(args.folder_sessions):
        sid = f"00000000-0000-4000-8000-{n:012d}"
        (project / f"{sid}.jsonl").write_bytes(finished_session(sid, n, exits=n % 2 == 0))
    process = subprocess.Popen([sys.executable, "-m", "replay", "watch", str(project),
                                "--stall", str(args.stall)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    lines = Lines(process)
    probe = 0
    while True:  # files there before its first walk are old: probe with new ones until one prints
        probe += 1
        (project / f"probe-{probe}.jsonl").write_bytes(
            record("user", 0, "   ") + record("user", 1, "<local-command-stdout>ok"
                                                     "</local-command-stdout>"))
        line = lines.next(1.0)
        if line is not None:
            break
    stalls = 0
    whole: list[float] = []
    later: list[float] = []
    try:
        for n in range(args.folder_events):
            sid = f"11111111-0000-4000-8000-{n:012d}"
            target = project / f"{sid}.jsonl"
            head = finished_session(sid, 100 + n, exits=False).splitlines(keepends=True)[:2]
            last = finished_reply(100 + n, "").replace(SESSION.encode(), sid.encode())
            if n % 2 == 0:
                started = time.perf_counter()
                target.write_bytes(b"".join(head) + last)
                bucket = whole
            else:
                target.write_bytes(b"".join(head))
                time.sleep(0.3)
                started = time.perf_counter()
                append(target, last)
                bucket = later
            while True:
                line = lines.next(10.0)
                assert line is not None, "no empty line for a new session"
                event = orjson.loads(line)
                if event["event"] == "stalled":
                    stalls += 1
                    continue
                if event["event"] == "empty" and event["id"] == f"msg_{100 + n}":
                    bucket.append(time.perf_counter() - started)
                    break
            time.sleep(0.1)
        # Every session is finished now: a silence longer than --stall must print nothing.
        silence = args.stall + 3
        cpu_start = cpu_seconds(process.pid)
        until = time.monotonic() + silence
        while (left := until - time.monotonic()) > 0:
            line = lines.next(left)
            if line is not None and orjson.loads(line)["event"] == "stalled":
                stalls += 1
        idle_cpu = cpu_seconds(process.pid) - cpu_start
    finally:
        stop(process)
    both = whole + later
    for name, values in (("file written whole", whole), ("last line later", later),
                         ("all", both)):
        print(f"   {name:<18} p50 {percentile(values, 0.5) * 1000:7.1f} ms   "
              f"p95 {percentile(values, 0.95) * 1000:7.1f} ms   "
              f"max {max(values) * 1000:7.1f} ms")
    print(f"   target p95 <= 500 ms: {'met' if percentile(both, 0.95) <= 0.5 else 'MISSED'}; "
          f"stalled lines for finished sessions: {stalls} (target 0)")
    print(f"   idle CPU with {args.folder_sessions + args.folder_events} sessions in the folder: "
          f"{idle_cpu * 1000:.0f} ms over {silence:g} s ({100 * idle_cpu / silence:.1f}% of one "
          "core: a walk of the folder every 2 s, and ticks)")


def think_case(base: Path, args: argparse.Namespace) -> None:
    """Section 4: a reply whose text comes long after its thinking line."""
    print(f"4. a reply still being written: thinking, {args.think_pause:g} s of nothing but "
          f"bookkeeping, then its text; {args.think_rounds} rounds")
    false_reports, false_stops, samples = thinking_pauses(
        base / f"think-{SESSION}.jsonl", args.think_pause, args.think_rounds)
    print(f"   replay watch: {false_reports} empty or retract lines printed (target 0)")
    print(f"   app --follow: {false_stops} false stops over {samples:,} samples (target 0)")


SIDE_RECORDS = b"".join(orjson.dumps(record) + b"\n" for record in (
    {"type": "queue-operation", "operation": "enqueue", "sessionId": SESSION,
     "timestamp": "2026-03-01T10:00:00.000Z", "content": "and the tests"},
    {"type": "attachment", "uuid": "att", "sessionId": SESSION,
     "timestamp": "2026-03-01T10:00:00.000Z", "attachment": {"type": "todo", "content": []}},
    {"type": "progress", "uuid": "prog", "sessionId": SESSION,
     "timestamp": "2026-03-01T10:00:00.000Z", "data": {"type": "hook_progress"}},
))
"""Bookkeeping Claude Code writes between the lines of a reply."""


def thinking_lines(n: int) -> tuple[bytes, bytes]:
    """A prompt and the thinking line of its reply; then the reply's text and the next prompt."""
    first = record("user", n, f"request {n}") + record(
        "assistant", n, [{"type": "thinking", "thinking": "t" * 300, "signature": "s"}],
        f"msg_{n}")
    second = record("assistant", n, [{"type": "text", "text": "Here it is."}], f"msg_{n}")
    return first, second


def thinking_pauses(path: Path, pause: float, rounds: int) -> tuple[int, int, int]:
    """(empty and retract lines `watch` printed, app samples stopped at an empty turn, app
    samples)."""
    import asyncio

    from replay.config import Settings
    from replay.ui.app import make_app

    path.write_bytes(record("user", 0, "start"))
    process, lines = start_watch(path)
    printed: list[bytes] = []
    stops = samples = 0

    async def run() -> None:
        nonlocal stops, samples
        app = make_app(path, settings=Settings(animations=False), follow=True)
        async with app.run_test(size=(120, 36)) as pilot:
            while app.replay_screen is None or app.replay_screen.indexing:
                await pilot.pause(0.05)
            screen = app.replay_screen
            known = list(screen.navigator.empty_indices)  # the probes' empty turns

            def stopped() -> bool:
                return screen.paused_at_empty or screen.navigator.empty_indices != known

            for n in range(rounds):
                first, second = thinking_lines(50_000 + n)
                append(path, first)
                until = time.monotonic() + pause
                side_at = time.monotonic() + pause / 2
                while time.monotonic() < until:
                    if side_at and time.monotonic() >= side_at:
                        # The person types ahead, an attachment and a hook's progress are
                        # written: bookkeeping between the reply's lines completes nothing.
                        append(path, SIDE_RECORDS)
                        side_at = 0.0
                    await pilot.pause(0.05)
                    samples += 1
                    stops += stopped()
                    while (line := lines.next(0.001)) is not None:
                        printed.append(line)
                append(path, second + record("user", 60_000 + n, "thanks"))
                until = time.monotonic() + 1.0
                while time.monotonic() < until:
                    await pilot.pause(0.05)
                    samples += 1
                    stops += stopped()

    try:
        asyncio.run(run())
        while (line := lines.next(0.5)) is not None:
            printed.append(line)
    finally:
        stop(process)
    wrong = [line for line in printed if orjson.loads(line)["event"] in ("empty", "retract")]
    return len(wrong), stops, samples


def stall_delays(path: Path, threshold: float, count: int) -> list[float]:
    """Seconds from each silence passing the threshold to the `stalled` line."""
    path.write_bytes(record("user", 0, "start") + record(
        "assistant", 0, [{"type": "text", "text": "Ready."}], "msg_0"))
    process, lines = start_watch(path, "--stall", str(threshold))
    delays: list[float] = []
    try:
        for n in range(count):
            # The prompt that gets no reply for a while (records after the probes' pairs).
            append(path, record("user", 70_000 + n, f"question {n}"))
            written = time.time()
            while True:
                line = lines.next(threshold + 10)
                assert line is not None, "no stalled line"
                event = orjson.loads(line)
                if event["event"] == "stalled":
                    break
            delays.append(time.time() - (written + threshold))
            append(path, record("assistant", 70_000 + n, [{"type": "text", "text": "Yes."}],
                                f"msg_{70_000 + n}"))
            line = lines.next(10)
            assert line is not None and orjson.loads(line)["event"] == "resumed", line
    finally:
        stop(process)
    return delays


if __name__ == "__main__":
    raise SystemExit(main())
