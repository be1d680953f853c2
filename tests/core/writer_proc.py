"""A stand-in for an agent tool writing its session: appends a file's bytes in random chunks.

Run as `python writer_proc.py SOURCE TARGET [--seed N] [--max-chunk BYTES] [--max-pause-ms MS]`.
Chunk sizes are random, so records are often split mid-line (and mid-UTF-8 character);
each chunk is flushed and followed by a short random pause, as a real writer's would be.
With `--rate LINES_PER_SECOND` it instead writes whole lines at a steady pace (for benches).
"""

from __future__ import annotations

import argparse
import random
import time


def write_chunks(source: bytes, target: str, seed: int, max_chunk: int, max_pause: float) -> None:
    """Append `source` to `target` in random pieces with random pauses."""
    generator = random.Random(seed)
    written = 0
    with open(target, "ab", buffering=0) as handle:
        while written < len(source):
            size = generator.randint(1, max_chunk)
            handle.write(source[written : written + size])
            written += size
            if max_pause > 0:
                time.sleep(generator.uniform(0, max_pause))


def write_paced(source: bytes, target: str, rate: float) -> None:
    """Append whole lines at `rate` lines per second, in 10 ms batches."""
    lines = source.splitlines(keepends=True)
    start = time.monotonic()
    done = 0
    with open(target, "ab", buffering=0) as handle:
        while done < len(lines):
            due = min(len(lines), int((time.monotonic() - start) * rate) + 1)
            if due > done:
                handle.write(b"".join(lines[done:due]))
                done = due
            time.sleep(0.01)


def main() -> int:
    """Parse arguments and write."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("source")
    parser.add_argument("target")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-chunk", type=int, default=300)
    parser.add_argument("--max-pause-ms", type=float, default=5.0)
    parser.add_argument("--rate", type=float, default=0.0)
    args = parser.parse_args()
    with open(args.source, "rb") as handle:
        source = handle.read()
    if args.rate > 0:
        write_paced(source, args.target, args.rate)
    else:
        write_chunks(source, args.target, args.seed, args.max_chunk, args.max_pause_ms / 1000)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
