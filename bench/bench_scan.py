"""Scan speed and memory on a large Claude Code session, against a bare JSON-decoding loop.

Usage: python bench/bench_scan.py [--lines N] [--repeat K] [--regenerate]
       python bench/bench_scan.py --realshaped MB [--repeat K]
       python bench/bench_scan.py --file PATH [--repeat K]
       ... [--against TREE]  (also the scan of another checkout, e.g. main before a change)
       ... [--instructions]  (also each command's instruction count, under callgrind)

Generates (once, reused afterwards) bench/out/claude-code-<N>.jsonl, a realistic Claude Code
session of N records (about 230 MB for the default 100,000), or takes the real-shaped file of
`realshaped.py` (the real sessions' records repeated with fresh ids, cached in bench/out;
`--realshaped 458` is issue #24's) or any file, then runs, each in its own subprocess, in
alternating rounds:

- baseline: read the file line by line with `replay.core.readers.base.iter_lines` (how the
  reader reads it) and `orjson.loads` every line, nothing else;
- scan: `replay scan --json FILE > /dev/null`.

It prints the scan time divided by the baseline time, whole process (target <= 1.5 on the
generated file, <= 1.2 on a real-shaped one) and per byte (each side's start-up, the same
command on the file's first line, taken off), the scan's peak resident memory divided by the
file size (target <= 0.5), and the load average before and after; on the generated file it
then checks the scan's output against what the generator wrote (turn count, empty turns).
Exit status 1 if a target or the check fails.
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import orjson

OUT = Path(__file__).resolve().parent / "out"
REPO = Path(__file__).resolve().parents[1]

TIME_TARGET = 1.5
REALSHAPED_TARGET = 1.2
"""Issue #24's target for a real-shaped file (whole process, CPU)."""
MEMORY_TARGET = 0.5

BASELINE = """\
import sys, orjson
from replay.core.readers.base import iter_lines
with open(sys.argv[1], "rb") as handle:
    for line, offset, lineno in iter_lines(handle):
        orjson.loads(line)
"""

WORDS = (
    "the a to of and in is that it for on with as this be are by file function test value "
    "error return self import from class def if else not none true false list dict string "
    "path line session turn reader builder config update check run build module package "
    "should would could we need let me first now then next because so but also more data "
    "éclair naïve 数据 ✓ → 'quoted' \"double\" back\\slash tab\there"
).split(" ")


@dataclass
class Expected:
    """What the generated file holds, counted without replay, to check the scan against."""

    turns: int = 0
    empty_ids: list[str] = field(default_factory=list)


class Generator:
    """Writes a plausible Claude Code session: prompts, multi-line responses, tools, bookkeeping."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.corpus = self._corpus()
        self.clock = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
        self.counter = 0
        self.parent: str | None = None
        self.session_id = "5b0d6c1e-2f64-4c1b-9a55-6f1f0a4f7e21"
        self.response: tuple[str, dict[str, object], str] = ("", {}, "")

    def _corpus(self) -> str:
        rng = self.rng
        lines = []
        for _ in range(40_000):
            indent = " " * rng.choice((0, 0, 4, 8, 12))
            lines.append(indent + " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 14))))
        return "\n".join(lines)

    def text(self, mean: int) -> str:
        """A slice of the corpus with a log-normal length around `mean` characters."""
        size = max(1, min(int(self.rng.lognormvariate(0, 0.9) * mean), len(self.corpus) // 2))
        start = self.rng.randrange(0, len(self.corpus) - size)
        return self.corpus[start : start + size]

    def uuid(self) -> str:
        self.counter += 1
        value = self.rng.getrandbits(128) ^ self.counter
        digits = f"{value:032x}"
        return f"{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-a{digits[17:20]}-{digits[20:]}"

    def stamp(self, seconds: float) -> str:
        self.clock += timedelta(seconds=seconds)
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def envelope(self, kind: str, **fields: object) -> dict[str, object]:
        uuid = self.uuid()
        record: dict[str, object] = {
            "parentUuid": self.parent, "isSidechain": False, "userType": "external",
            "cwd": "/home/dev/projects/replay", "sessionId": self.session_id,
            "version": "2.1.42", "gitBranch": "main", "type": kind, **fields,
            "uuid": uuid, "timestamp": self.stamp(self.rng.uniform(0.05, 4.0)),
        }
        self.parent = uuid
        return record

    def user_prompt(self, content: str) -> dict[str, object]:
        return self.envelope("user", message={"role": "user", "content": content})

    def assistant(self, message_id: str, block: dict[str, object], model: str) -> dict[str, object]:
        # Every line of one response repeats its usage and request id, as Claude Code does.
        if self.response[0] != message_id:
            usage = {
                "input_tokens": self.rng.randint(1, 20), "cache_creation_input_tokens": 1200,
                "cache_read_input_tokens": self.rng.randint(10_000, 150_000),
                "output_tokens": self.rng.randint(1, 3000), "service_tier": "standard",
                "cache_creation": {"ephemeral_5m_input_tokens": 0,
                                   "ephemeral_1h_input_tokens": 1200},
            }
            self.response = (message_id, usage, f"req_{self.uuid().replace('-', '')[:24]}")
        _, usage, request_id = self.response
        return self.envelope(
            "assistant",
            message={"model": model, "id": message_id, "type": "message", "role": "assistant",
                     "content": [block], "stop_reason": None, "stop_sequence": None,
                     "usage": usage},
            requestId=request_id,
        )

    def tool(self) -> tuple[str, dict[str, object], str, object]:
        """A tool name, its input, the result text and the `toolUseResult` payload."""
        rng = self.rng
        name = rng.choices(("Read", "Bash", "Edit", "Grep", "Write", "TodoWrite"),
                           weights=(30, 30, 18, 10, 7, 5))[0]
        path = f"/home/dev/projects/replay/src/module_{rng.randint(1, 400)}.py"
        if name == "Read":
            body = self.text(2000)
            numbered = "\n".join(f"{i:>6}\u2192{line}"
                                  for i, line in enumerate(body.split("\n"), 1))
            payload: object = {"type": "text", "file": {"filePath": path, "content": body,
                               "numLines": body.count("\n") + 1, "startLine": 1,
                               "totalLines": body.count("\n") + 1}}
            return name, {"file_path": path}, numbered, payload
        if name == "Bash":
            out = self.text(1400)
            command = {"command": f"pytest -q tests/test_{rng.randint(1, 90)}.py",
                       "description": "Run the tests"}
            return name, command, out, {"stdout": out, "stderr": "", "interrupted": False,
                                        "isImage": False}
        if name == "Edit":
            old, new, original = self.text(300), self.text(320), self.text(2000)
            message = f"The file {path} has been updated. Here's the result:\n{self.text(600)}"
            return name, {"file_path": path, "old_string": old, "new_string": new}, message, {
                "filePath": path, "oldString": old, "newString": new, "originalFile": original,
                "structuredPatch": [{"oldStart": 10, "oldLines": 3, "newStart": 10, "newLines": 4,
                                     "lines": new.split("\n")[:20]}], "userModified": False}
        if name == "Grep":
            out = "\n".join(f"src/module_{rng.randint(1, 400)}.py:{rng.randint(1, 900)}: "
                            + self.text(60).replace("\n", " ") for _ in range(rng.randint(1, 30)))
            return name, {"pattern": "def .*reader", "path": "src"}, out, {
                "mode": "content", "numFiles": 3, "filenames": [], "content": out}
        if name == "Write":
            content = self.text(2500)
            return name, {"file_path": path, "content": content}, f"File created at: {path}", {
                "type": "create", "filePath": path, "content": content, "structuredPatch": []}
        todos = [{"content": self.text(50), "status": "pending", "activeForm": self.text(40)}
                 for _ in range(rng.randint(2, 6))]
        return name, {"todos": todos}, "Todos have been modified successfully.", {
            "oldTodos": todos[:1], "newTodos": todos}

    def exchange(self) -> list[dict[str, object]]:
        """One prompt and the whole agentic response to it."""
        rng = self.rng
        records: list[dict[str, object]] = []
        prompt = (self.text(900) if rng.random() < 0.3 else self.text(120)).strip() or "go on"
        prompt_record = self.user_prompt(prompt)
        records.append({"type": "file-history-snapshot", "messageId": prompt_record["uuid"],
                        "snapshot": {"messageId": prompt_record["uuid"], "trackedFileBackups": {},
                                     "timestamp": prompt_record["timestamp"]},
                        "isSnapshotUpdate": False})
        records.append(prompt_record)
        model = "claude-opus-4-6"
        steps = rng.randint(1, 7)
        for step in range(steps):
            message_id = f"msg_01{self.uuid().replace('-', '')[:22]}"
            if rng.random() < 0.7:
                thinking = "" if rng.random() < 0.5 else self.text(900)
                records.append(self.assistant(message_id, {
                    "type": "thinking", "thinking": thinking,
                    "signature": "Eq" + self.text(300).encode().hex()[:400]}, model))
            last = step == steps - 1
            if last or rng.random() < 0.45:
                if rng.random() < 0.05:
                    records.append(self.assistant(message_id, {"type": "text", "text": "\n\n"},
                                                  model))
                records.append(self.assistant(message_id, {"type": "text",
                                                           "text": self.text(500)}, model))
            if last:
                break
            for _ in range(rng.choice((1, 1, 1, 2, 3))):
                name, arguments, result, payload = self.tool()
                call_id = f"toolu_01{self.uuid().replace('-', '')[:22]}"
                records.append(self.assistant(message_id, {"type": "tool_use", "id": call_id,
                                                           "name": name, "input": arguments},
                                              model))
                if rng.random() < 0.3:
                    records.append(self.envelope("progress", data={
                        "type": "hook_progress", "hookEvent": "PostToolUse", "hookName": name,
                        "command": "echo ok"}, toolUseID=call_id, parentToolUseID=call_id))
                records.append(self.envelope("user", message={"role": "user", "content": [{
                    "tool_use_id": call_id, "type": "tool_result", "content": result,
                    "is_error": rng.random() < 0.03}]}, toolUseResult=payload))
        if rng.random() < 0.5:
            records.append(self.envelope("system", subtype="turn_duration",
                                         durationMs=rng.randint(2000, 900_000), isMeta=False))
        return records

    def empty_pair(self) -> list[dict[str, object]]:
        """An empty user turn (an empty wrapper) and an assistant turn that only thought."""
        user = self.user_prompt("<local-command-stdout></local-command-stdout>")
        message_id = f"msg_01{self.uuid().replace('-', '')[:22]}"
        thought = self.assistant(message_id, {"type": "thinking", "thinking": "",
                                              "signature": "EqAbC"}, "claude-opus-4-6")
        return [user, thought]

    def write(self, path: Path, lines: int) -> None:
        written = 0
        exchanges = 0
        with open(path, "wb") as handle:
            handle.write(orjson.dumps({"type": "summary", "summary": "Earlier work",
                                       "leafUuid": self.uuid()}) + b"\n")
            written += 1
            while written < lines:
                exchanges += 1
                batch = self.empty_pair() if exchanges % 1500 == 0 else self.exchange()
                for record in batch[: lines - written]:
                    handle.write(orjson.dumps(record) + b"\n")
                    written += 1


def recount(path: Path) -> Expected:
    """Turns and empty turns of the generated file, counted the plain way (dicts, no replay)."""
    expected = Expected()
    seen: set[str] = set()
    visible: dict[str, bool] = {}
    with open(path, "rb") as handle:
        for line in handle:
            record = orjson.loads(line)
            message = record.get("message")
            if record.get("type") == "assistant":
                message_id = message["id"]
                if message_id not in seen:
                    seen.add(message_id)
                    expected.turns += 1
                    visible[message_id] = False
                    expected.empty_ids.append(message_id)
                for block in message["content"]:
                    if block["type"] == "tool_use" or (block["type"] == "text"
                                                       and block["text"].strip()):
                        visible[message_id] = True
            elif record.get("type") == "user" and isinstance(message["content"], str):
                expected.turns += 1
                if message["content"] == "<local-command-stdout></local-command-stdout>":
                    expected.empty_ids.append(record["uuid"])
                    visible[record["uuid"]] = False
    expected.empty_ids = [i for i in expected.empty_ids if not visible.get(i, True)]
    return expected


@dataclass
class Run:
    """One subprocess run: wall seconds, CPU seconds (user + system), peak RSS in bytes."""

    wall: float
    cpu: float
    peak: int


def run_timed(command: list[str], cwd: Path = REPO) -> Run:
    """Run a subprocess with its stdout discarded and measure it (its own rusage, via wait4);
    `python -m replay` runs the replay package of `cwd`."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, cwd=cwd)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{command[:3]} exited with {process.returncode}")
    return Run(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024)


def instructions(command: list[str], cwd: Path = REPO) -> int:
    """Instructions the command runs (`valgrind --tool=callgrind`, its `Collected` total):
    what other processes on the machine cannot change, unlike its time."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           *command], cwd=cwd, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"valgrind could not count {command[:3]}: {done.stderr[-300:]}")
    return int(found.group(1))


def print_instructions(counted: dict[str, int]) -> None:
    """The instruction counts beside each other: whole process, and per byte (each side's
    start-up, the same command on the file's first line, taken off)."""
    base, scan = counted["base"], counted["scan"]
    base_bytes, scan_bytes = base - counted["base0"], scan - counted["scan0"]
    print(f"instr     loop {base / 1e6:,.0f}M (start-up {counted['base0'] / 1e6:,.0f}M), "
          f"scan {scan / 1e6:,.0f}M (start-up {counted['scan0'] / 1e6:,.0f}M): "
          f"{scan / base:.3f}x whole process, {scan_bytes / base_bytes:.3f}x per byte")
    if "other" in counted:
        other = counted["other"]
        print(f"instr     against: {other / 1e6:,.0f}M, {other / base:.3f}x the loop; "
              f"this tree / that one = {scan / other:.3f}")


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> int:
    """Generate if needed, measure, print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100_000, help="records in the session")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best is kept")
    parser.add_argument("--regenerate", action="store_true", help="write the file again")
    parser.add_argument("--realshaped", type=int, metavar="MB",
                        help="scan realshaped.py's file of this size instead")
    parser.add_argument("--file", type=Path, help="scan this file instead")
    parser.add_argument("--against", type=Path, metavar="TREE",
                        help="also run the scan of this checkout (its own replay package), "
                             "alternating with the others: before against after")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each command's instructions once under valgrind's "
                             "callgrind (slow: about a minute per 100 MB; the load cannot "
                             "change them)")
    args = parser.parse_args()

    OUT.mkdir(parents=True, exist_ok=True)
    expected: Expected | None = None
    target = REALSHAPED_TARGET
    if args.file is not None:
        path = args.file.resolve()
    elif args.realshaped is not None:
        import realshaped

        path = realshaped.cached(args.realshaped)
    else:
        target = TIME_TARGET
        path = OUT / f"claude-code-{args.lines}.jsonl"
        if args.regenerate or not path.exists():
            started = time.perf_counter()
            Generator().write(path.with_suffix(".tmp"), args.lines)
            path.with_suffix(".tmp").replace(path)
            print(f"generated {path} in {time.perf_counter() - started:.1f} s")
        expected = recount(path)
    size = path.stat().st_size
    with open(path, "rb") as handle:  # warm the page cache so both runs read from memory
        while handle.read(1 << 24):
            pass

    # Imports from bytecode, as installed (with PYTHONDONTWRITEBYTECODE set, a changed module
    # would be compiled again in every run, and the start-up measure that).
    compileall.compile_dir(REPO / "replay", quiet=1)
    if args.against is not None:
        compileall.compile_dir(args.against / "replay", quiet=1)
    print(f"load      {_load()} (1, 5, 15 min) at the start")
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="bench-scan-") as folder:
        tiny = Path(folder) / "first-line.jsonl"
        with open(path, "rb") as handle:
            tiny.write_bytes(handle.readline())
        commands = {
            "base": [python, "-c", BASELINE, str(path)],
            "scan": [python, "-m", "replay", "scan", "--json", "--no-cache", str(path)],
            "base0": [python, "-c", BASELINE, str(tiny)],
            "scan0": [python, "-m", "replay", "scan", "--json", "--no-cache", str(tiny)],
        }
        if args.against is not None:
            commands["other"] = commands["scan"]
        runs: dict[str, list[Run]] = {key: [] for key in commands}
        for _ in range(args.repeat):
            for key, command in commands.items():
                runs[key].append(run_timed(command, args.against if key == "other" else REPO))
        counted = {key: instructions(command, args.against if key == "other" else REPO)
                   for key, command in commands.items()} if args.instructions else None
    base_runs, scan_runs = runs["base"], runs["scan"]
    # Best of the runs: other processes only ever add time.
    base_wall, scan_wall = min(r.wall for r in base_runs), min(r.wall for r in scan_runs)
    base_cpu, scan_cpu = min(r.cpu for r in base_runs), min(r.cpu for r in scan_runs)
    start_base = min(r.cpu for r in runs["base0"])
    start_scan = min(r.cpu for r in runs["scan0"])
    peak = max(r.peak for r in scan_runs)
    wall_ratio, cpu_ratio, memory_ratio = scan_wall / base_wall, scan_cpu / base_cpu, peak / size
    per_byte = (scan_cpu - start_scan) / (base_cpu - start_base)
    rounds = sorted(s.cpu / b.cpu for s, b in zip(scan_runs, base_runs, strict=True))

    report = orjson.loads(subprocess.run(commands["scan"], capture_output=True, check=True,
                                         cwd=REPO).stdout)
    found = [empty["id"] for empty in report["empty_turns"]]
    correct = expected is None or (report["turns"] == expected.turns
                                   and found == expected.empty_ids)

    described = (f"{expected.turns:,} turns, {len(expected.empty_ids)} empty"
                 if expected is not None else f"{report['turns']:,} turns, {len(found)} empty")
    print(f"file      {path.name}: {size / 1e6:.1f} MB, {described}")
    print(f"baseline  orjson.loads loop: {base_wall:.2f} s wall, {base_cpu:.2f} s CPU "
          f"(best of {args.repeat}; start-up {start_base:.2f} s)")
    print(f"scan      replay scan --json:  {scan_wall:.2f} s wall, {scan_cpu:.2f} s CPU "
          f"(start-up {start_scan:.2f} s)")
    print(f"time      scan / baseline = {wall_ratio:.2f} wall, {cpu_ratio:.2f} CPU  "
          f"(target <= {target}); rounds {' '.join(f'{r:.2f}' for r in rounds)}; "
          f"per byte (start-up off) {per_byte:.2f}")
    print(f"memory    peak RSS {peak / 1e6:.1f} MB / file = {memory_ratio:.2f}  "
          f"(target <= {MEMORY_TARGET})")
    if "other" in runs:
        other = min(r.cpu for r in runs["other"])
        pairs = sorted(o.cpu / b.cpu for o, b in zip(runs["other"], base_runs, strict=True))
        print(f"against   {args.against}: {other:.2f} s CPU, {other / base_cpu:.2f}x the loop "
              f"(rounds {' '.join(f'{r:.2f}' for r in pairs)}); this tree / that one = "
              f"{scan_cpu / other:.2f}")
    if counted is not None:
        print_instructions(counted)
    if expected is not None:
        print(f"check     scan found {report['turns']:,} turns, {len(found)} empty: "
              f"{'as generated' if correct else 'MISMATCH'}")
    print(f"load      {_load()} at the end")
    # CPU time is the verdict: on a shared machine wall time also measures the neighbours.
    passed = cpu_ratio <= target and memory_ratio <= MEMORY_TARGET and correct
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
