"""Listing and scanning a big Claude Code project folder, and reading deeply nested tags.

Usage: python bench/bench_folder.py [--sessions N] [--repeat K] [--regenerate]

Generates (once, reused afterwards) bench/out/cc-project-<N>/: N session files of a few
dozen records each, one in ten with a subagent file beside it (`agent-<id>.jsonl`, the older
layout) and one in ten with one under `<session>/subagents/`, plus a quarter-size folder
for the growth ratio. Then, each in its own subprocess, best of K:

- listing: `claude_code.list_sessions` on the folder, at N/4 and at N (a linear listing
  takes about 4x; the old one listed the folder again per session);
- scanning: `replay scan --json FOLDER` against a baseline that reads every file of the
  folder with `iter_lines` and `orjson.loads` (the bytes, nothing else): the ratio says the
  scan costs time in proportion to the bytes;
- nested tags: `replay scan --json` on a one-line session whose prompt is 1 MB of nested
  empty tags (`<a>` * n + `</a>` * n), against the same baseline on that file.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scan import OUT, Run, run_timed  # noqa: E402

LIST_TARGET = 2.0
"""CPU seconds to list 10,000 session files."""
NESTED_TARGET = 1.0
"""CPU seconds to read 1 MB of nested tags."""

LIST = """\
import sys
from pathlib import Path
from replay.core.readers.claude_code import list_sessions
print(len(list_sessions(Path(sys.argv[1]))))
"""

BASELINE = """\
import sys, orjson
from pathlib import Path
from replay.core.readers.base import iter_lines
root = Path(sys.argv[1])
for path in sorted(root.rglob("*.jsonl")) if root.is_dir() else [root]:
    with open(path, "rb") as handle:
        for line, offset, lineno in iter_lines(handle):
            orjson.loads(line)
"""


def _uuid(number: int, salt: int) -> str:
    digits = f"{(number * 2654435761 + salt * 40503) % (1 << 128):032x}"
    return f"{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-a{digits[17:20]}-{digits[20:]}"


def _records(session_id: str, number: int, agent: str | None = None) -> list[bytes]:
    """A short session: prompts and answers, every eighth answer only thinking (empty)."""
    lines = []
    parent = None
    for step in range(24):
        stamp = f"2026-03-01T{9 + number % 12:02d}:{step:02d}:{number % 60:02d}.000Z"
        uuid = _uuid(number * 100 + step, 3)
        base = {"parentUuid": parent, "isSidechain": agent is not None, "userType": "external",
                "cwd": "/home/dev/project", "sessionId": session_id, "version": "2.1.42",
                "gitBranch": "main", "uuid": uuid, "timestamp": stamp}
        if agent is not None:
            base["agentId"] = agent
        if step % 2 == 0:
            record = {**base, "type": "user", "message": {
                "role": "user", "content": f"step {step} of session {number}: check the reader"}}
        else:
            content = ([{"type": "thinking", "thinking": "", "signature": "Eq"}] if step % 8 == 7
                       else [{"type": "text", "text": f"Done with step {step}. " * 8}])
            record = {**base, "type": "assistant", "message": {
                "id": f"msg_{uuid[:20]}", "role": "assistant", "model": "claude-opus-4-6",
                "content": content}}
        lines.append(orjson.dumps(record))
        parent = uuid
    return lines


def generate(folder: Path, sessions: int) -> None:
    """Write the project folder (into a temporary name, renamed when complete)."""
    scratch = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    for number in range(sessions):
        session_id = _uuid(number, 1)
        (scratch / f"{session_id}.jsonl").write_bytes(b"\n".join(_records(session_id, number))
                                                      + b"\n")
        if number % 10 == 3:
            agent = f"a{number:07x}"
            (scratch / f"agent-{agent}.jsonl").write_bytes(
                b"\n".join(_records(session_id, number, agent)) + b"\n")
        if number % 10 == 7:
            agent = f"b{number:07x}"
            nested = scratch / session_id / "subagents"
            nested.mkdir(parents=True)
            (nested / f"agent-{agent}.jsonl").write_bytes(
                b"\n".join(_records(session_id, number, agent)) + b"\n")
    shutil.rmtree(folder, ignore_errors=True)
    scratch.rename(folder)


def nested_tags_file(path: Path, size: int) -> None:
    """A one-record session whose prompt is `size` bytes of nested empty tags."""
    depth = size // 7
    record = {"parentUuid": None, "type": "user", "sessionId": _uuid(0, 9), "uuid": _uuid(1, 9),
              "timestamp": "2026-03-01T09:00:00.000Z",
              "message": {"role": "user", "content": "<a>" * depth + "</a>" * depth}}
    path.write_bytes(orjson.dumps(record) + b"\n")


def best(command: list[str], repeat: int) -> Run:
    """The fastest of `repeat` runs (others on the machine only ever add time)."""
    runs = [run_timed(command) for _ in range(repeat)]
    return min(runs, key=lambda run: run.cpu)


def main() -> int:
    """Generate if needed, measure, print the figures and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000, help="session files")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best is kept")
    parser.add_argument("--regenerate", action="store_true", help="write the folders again")
    args = parser.parse_args()

    OUT.mkdir(parents=True, exist_ok=True)
    small_count = args.sessions // 4
    large = OUT / f"cc-project-{args.sessions}"
    small = OUT / f"cc-project-{small_count}"
    for folder, count in ((small, small_count), (large, args.sessions)):
        if args.regenerate or not folder.exists():
            started = time.perf_counter()
            generate(folder, count)
            print(f"generated {folder} in {time.perf_counter() - started:.1f} s")
    nested = OUT / "nested-tags-1mb.jsonl"
    if args.regenerate or not nested.exists():
        nested_tags_file(nested, 1_000_000)

    python = sys.executable
    passed = True

    list_small = best([python, "-c", LIST, str(small)], args.repeat)
    list_large = best([python, "-c", LIST, str(large)], args.repeat)
    # CPU time is the verdict, as in bench_scan: on a shared machine wall time also measures
    # the neighbours.
    growth = list_large.cpu / list_small.cpu
    passed &= list_large.cpu * 10_000 / args.sessions < LIST_TARGET
    print(f"listing   {small_count:,} sessions: {list_small.wall:.2f} s wall / "
          f"{list_small.cpu:.2f} s CPU; {args.sessions:,}: {list_large.wall:.2f} s wall / "
          f"{list_large.cpu:.2f} s CPU (target < {LIST_TARGET} s for 10,000); growth for 4x "
          f"the files: {growth:.1f}x CPU")

    size = sum(path.stat().st_size for path in large.rglob("*.jsonl"))
    base = best([python, "-c", BASELINE, str(large)], args.repeat)
    scan = best([python, "-m", "replay", "scan", "--json", "--no-cache", str(large)], args.repeat)
    print(f"scanning  {args.sessions:,} sessions, {size / 1e6:.1f} MB: baseline "
          f"{base.wall:.2f} s wall / {base.cpu:.2f} s CPU, replay scan --json "
          f"{scan.wall:.2f} s wall / {scan.cpu:.2f} s CPU: ratio {scan.cpu / base.cpu:.2f} CPU")

    base = best([python, "-c", BASELINE, str(nested)], args.repeat)
    scan = best([python, "-m", "replay", "scan", "--json", "--no-cache", str(nested)], args.repeat)
    passed &= scan.cpu < NESTED_TARGET
    print(f"nested    1 MB of nested tags: baseline {base.wall:.2f} s wall / {base.cpu:.2f} s "
          f"CPU, replay scan --json {scan.wall:.2f} s wall / {scan.cpu:.2f} s CPU (target < "
          f"{NESTED_TARGET} s): ratio {scan.cpu / base.cpu:.2f} CPU")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
