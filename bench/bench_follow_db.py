"""Following one session of a big opencode.db: the cost of each change.

Usage: python bench/bench_follow_db.py [--copies 50] [--changes 20]

Builds bench/out/opencode-<copies>.db once (git-ignored): the six real opencode exports of
../shared/realdata, inserted as the tests do, then copied `--copies` times under new ids
(300 sessions for the default). Then, in this process:

- baseline: reading every session of the database, which is what a change cost when the
  follower re-read the whole source;
- follow:   `SessionFollower.poll()` after a change to the followed (newest) session's rows,
  which reads that session only (`Reader.read_session`); the first poll, which finds the
  newest session, is timed too.

It prints both (median of `--changes` changes) and their ratio, and checks that the followed
session equals the same session read from scratch.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from replay.core.live.follow import SessionFollower  # noqa: E402
from replay.core.readers import opencode_sqlite  # noqa: E402
from tests.core.test_opencode import TURNS, build_database  # noqa: E402

OUT = ROOT / "bench" / "out"


def make_database(copies: int) -> Path:
    """The real exports, then `copies - 1` renamed copies of every row."""
    path = OUT / f"opencode-{copies}.db"
    if path.exists():
        return path
    OUT.mkdir(exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    build_database(partial, list(TURNS))
    with sqlite3.connect(partial) as connection:
        for copy in range(1, copies):
            tag = f"#{copy}"
            connection.execute(
                "INSERT INTO session SELECT id || ?1, project_id, parent_id, slug, directory, "
                "title, version, time_created - ?2, time_updated FROM session "
                "WHERE instr(id, '#') = 0", (tag, copy))
            connection.execute(
                "INSERT INTO message SELECT id || ?1, session_id || ?1, time_created, "
                "time_updated, data FROM message WHERE instr(id, '#') = 0", (tag,))
            connection.execute(
                "INSERT INTO part SELECT id || ?1, message_id || ?1, session_id || ?1, "
                "time_created, time_updated, data FROM part WHERE instr(id, '#') = 0", (tag,))
    partial.rename(path)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=50)
    parser.add_argument("--changes", type=int, default=20)
    args = parser.parse_args()
    database = make_database(args.copies)
    whole: list[float] = []
    for _ in range(3):
        started = time.perf_counter()
        sessions = opencode_sqlite.read(database)
        whole.append(time.perf_counter() - started)
    follower = SessionFollower(database)
    started = time.perf_counter()
    followed = follower.poll().session
    first = time.perf_counter() - started
    assert followed is not None
    polls: list[float] = []
    for change in range(args.changes):
        with sqlite3.connect(database) as connection:
            connection.execute("UPDATE message SET time_updated = time_updated + 1 "
                               "WHERE session_id = ?", (followed.session_id,))
        started = time.perf_counter()
        update = follower.poll()
        polls.append(time.perf_counter() - started)
        assert update.session is not None, f"change {change}: the session was lost"
    fresh = opencode_sqlite.read_session(database, followed.session_id or "")
    assert fresh is not None and follower.session is not None
    same = [t.id for t in fresh.turns] == [t.id for t in follower.session.turns]
    base, poll = statistics.median(whole), statistics.median(polls)
    size = database.stat().st_size
    print(f"database    {database.name}: {size / 1e6:.0f} MB, {len(sessions)} sessions, "
          f"{sum(len(s.turns) for s in sessions):,} turns")
    print(f"baseline    read every session: {base * 1000:.0f} ms (median of 3)")
    print(f"first poll  finds and reads the newest session: {first * 1000:.1f} ms")
    print(f"follow      poll after a change to the followed session ({len(followed.turns)} "
          f"turns): {poll * 1000:.1f} ms (median of {len(polls)}; max {max(polls) * 1000:.1f})")
    print(f"ratio       {poll / base:.4f} of a whole read; same turns as a fresh read: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
