"""Search on a turn index: raw-byte candidates against reading every turn back.

Usage: python bench/bench_search.py [--tiny-turns N]

Takes the tiny-record file of bench_memory.py (generating it when missing), writes a copy
into bench/out/ with three planted prompts a third and two thirds of the way in (one
JSON-escaped `un café [x] à la Straße`, one raw UTF-8 `second: CAFÉ noir`), indexes it as
the app does, and for each needle times, in the same run:

- candidates: `Navigator.matches` on the index (find the lines holding the needle casefolded,
  as written or with their JSON escapes decoded; read back only those turns);
- baseline: every turn read back and checked with `turn_search_text` (what a needle the
  bytes could not decide cost before).

Prints both times, their ratio and the turns read back; exits 1 when the two disagree.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_memory import write_tiny  # noqa: E402
from bench_scan import OUT, REPO  # noqa: E402

sys.path.insert(0, str(REPO))
from replay.core.index.navigation import Navigator, turn_search_text  # noqa: E402
from replay.core.index.turn_index import TurnIndex  # noqa: E402
from replay.core.readers.base import iter_lines  # noqa: E402
from replay.core.readers.claude_code_builder import ClaudeCodeBuilder, index_turns  # noqa: E402

NEEDLES = ("café", "CAFÉ [x]", "STRASSE", 'Done with step 4242.', "zz-not-there")


def planted(source: Path, target: Path) -> None:
    """`source` with the planted prompts a third and two thirds of the way in."""
    record = {"sessionId": "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f", "type": "user",
              "uuid": "ffffffff-0000-4000-8000-00000000beef",
              "timestamp": "2026-03-01T12:00:00.000Z",
              "message": {"role": "user", "content": "un café [x] à la Straße"}}
    escaped = json.dumps(record).encode()
    record["uuid"] = "ffffffff-0000-4000-8000-00000000bee2"
    record["message"] = {"role": "user", "content": "second: CAFÉ noir"}
    raw = json.dumps(record, ensure_ascii=False).encode()
    lines = source.read_bytes().split(b"\n")
    third = len(lines) // 3
    lines[2 * third:2 * third] = [raw]
    lines[third:third] = [escaped]
    target.write_bytes(b"\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny-turns", type=int, default=789_000)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    tiny = OUT / f"claude-code-tiny-{args.tiny_turns}.jsonl"
    if not tiny.exists():
        write_tiny(tiny.with_suffix(".tmp"), args.tiny_turns)
        tiny.with_suffix(".tmp").replace(tiny)
    path = OUT / f"search-planted-{args.tiny_turns}.jsonl"
    planted(tiny, path)
    builder = ClaudeCodeBuilder(str(path))
    turns = index_turns(builder)
    with open(path, "rb") as handle:
        for line, offset, lineno in iter_lines(handle):
            builder.feed(line, offset, lineno)
    builder.finish()
    assert isinstance(turns, TurnIndex)
    navigator = Navigator(builder.session)
    print(f"{path.name}: {path.stat().st_size / 1e6:.1f} MB, {len(turns):,} turns")
    print(f"{'needle':<24}{'candidates s':>14}{'read back':>11}{'baseline s':>12}"
          f"{'ratio':>8}{'found':>7}")
    failed = False
    for needle in NEEDLES:
        before = turns.materialised
        start = time.perf_counter()
        found = navigator.matches(needle)
        fast = time.perf_counter() - start
        read = turns.materialised - before
        folded = needle.casefold()
        start = time.perf_counter()
        every = [index for index in range(len(turns))
                 if folded in turn_search_text(turns[index]).casefold()]
        slow = time.perf_counter() - start
        failed |= found != every
        print(f"{needle!r:<24}{fast:>14.2f}{read:>11,}{slow:>12.1f}{fast / slow:>8.3f}"
              f"{len(found):>7}{'' if found == every else '  DIFFERENT'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
