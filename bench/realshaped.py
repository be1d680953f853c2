"""A real-shaped Claude Code session: the real sessions' records written again and again.

Usage: python bench/realshaped.py [--mb 40] [--out PATH]

The records come from the Claude Code session files of `../shared/realdata/claude-code`
(main sessions only: no subagent file, no deliberately broken edge-case file), in order,
file after file, repeated until the output reaches the size asked for. Each repetition gives
every id a fresh value (uuids, `msg_`, `toolu_`, `req_` ids, derived from the original and
the repetition, so references inside a repetition still match) and every record the one
session id, so the result reads as one long session whose records are byte for byte the
real ones but for their ids. The output is cached in bench/out and reused while its size
and the source files are the same.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "claude-code"

SESSION_ID = b"9d3f61c2-1b7e-4c0a-8f55-2e6a7b1c0d94"
"""The one session id every record gets."""

_ID = re.compile(rb"\b(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
                 rb"|(?:msg|toolu|req)_(?:bdrk_)?[0-9A-Za-z]{8,})\b")
"""Ids to give fresh values: uuids, and Anthropic's (`msg_01…`) and Bedrock's (`msg_bdrk_01…`)
message, tool call and request ids. (Before the Bedrock ones were matched, one session's
message ids came back in every repetition: a reply's lines 100 turns apart, merged into one
turn by a whole read.)"""

VERSION = 2
"""Bumped when the records written change: part of the cached file's name, so a file written
by an older version is never measured."""
_SESSION = re.compile(rb'"sessionId":"[^"]*"')


def sources(folder: Path = REALDATA) -> list[Path]:
    """The real main-session files, in name order (subagent and edge-case files left out)."""
    return [path for path in sorted(folder.glob("*.jsonl"))
            if path.stat().st_size > 1000 and "agent-" not in path.name
            and "edge_cases" not in path.name]


def fresh_id(original: bytes, repetition: int) -> bytes:
    """The id `original` takes in `repetition`: the same shape, other characters."""
    digest = hashlib.blake2b(original + repetition.to_bytes(4, "little"), digest_size=16)
    hexed = digest.hexdigest().encode()
    if original[8:9] == b"-":  # a uuid
        return b"-".join((hexed[:8], hexed[8:12], hexed[12:16], hexed[16:20], hexed[20:32]))
    prefix, _, rest = original.rpartition(b"_")  # `msg_bdrk` keeps its two parts
    body = (hexed * 2)[: len(rest)]
    return prefix + b"_" + body


def records(folder: Path = REALDATA) -> list[bytes]:
    """Every non-blank line of the source files (each ends with a newline)."""
    lines: list[bytes] = []
    for path in sources(folder):
        for line in path.read_bytes().splitlines():
            if line.strip():
                lines.append(line + b"\n")
    return lines


def write(path: Path, size: int, folder: Path = REALDATA) -> int:
    """Write at least `size` bytes of repeated real records to `path`; the records written."""
    lines = records(folder)
    if not lines:
        raise SystemExit(f"no Claude Code session files in {folder}")
    block = b"".join(lines)
    session = b'"sessionId":"' + SESSION_ID + b'"'
    written = count = repetition = 0
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as handle:
        while written < size:
            cache: dict[bytes, bytes] = {}

            def renamed(match: re.Match[bytes], cache: dict[bytes, bytes] = cache,
                        repetition: int = repetition) -> bytes:
                found = match.group(0)
                new = cache.get(found)
                if new is None:
                    new = cache[found] = fresh_id(found, repetition)
                return new

            data = _SESSION.sub(session, _ID.sub(renamed, block))
            handle.write(data)
            written += len(data)
            count += len(lines)
            repetition += 1
    tmp.replace(path)
    return count


def cached(megabytes: int, folder: Path = REALDATA) -> Path:
    """bench/out/realshaped-v<VERSION>-<MB>mb.jsonl, written first when missing or older than
    its sources."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"realshaped-v{VERSION}-{megabytes}mb.jsonl"
    newest = max((source.stat().st_mtime for source in sources(folder)), default=0.0)
    if not path.exists() or path.stat().st_mtime < newest:
        write(path, megabytes * 1_000_000, folder)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=40, help="size of the file, in MB")
    parser.add_argument("--out", type=Path, help="write here instead of the cached file")
    args = parser.parse_args()
    if not REALDATA.is_dir():
        print(f"{REALDATA} is missing: the real files are needed", file=sys.stderr)
        return 1
    if args.out is not None:
        count = write(args.out, args.mb * 1_000_000)
        print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB, {count:,} records")
    else:
        path = cached(args.mb)
        print(f"{path}: {path.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
