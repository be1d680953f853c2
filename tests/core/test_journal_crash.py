"""Reliability of the journal: kill -9 at random instants, concurrent writers, unwritable places."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from replay.core.annotate.annotations import AnnotationStore
from replay.core.annotate.journal import Journal, JournalError

REPO = Path(__file__).resolve().parents[2]

KILL_ROUNDS = 30
"""How many writer processes are killed with SIGKILL."""

WRITERS = 4
"""Processes appending to one journal at the same time."""

RECORDS_PER_WRITER = 250
"""Records each concurrent writer appends."""

LABELLER = """
import sys
from replay.core.annotate.annotations import AnnotationStore
from replay.core.annotate.journal import Journal

path, prefix = sys.argv[1], sys.argv[2]
store = AnnotationStore(Journal(path), "s1", "ana")
print("ready", flush=True)
for i in range(100_000):
    turn = f"{prefix}-{i}"
    store.commit(turn, i, "continue", note="x" * (i * 37 % 900))
    sys.stdout.write(turn + "\\n")
    sys.stdout.flush()
"""

APPENDER = """
import sys
from replay.core.annotate.journal import Journal

path, writer, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
journal = Journal(path)
print("ready", flush=True)
sys.stdin.readline()
for i in range(count):
    # Notes up to 9 KB: larger than PIPE_BUF, so unlocked writers could interleave.
    journal.append({"session_id": "s1", "turn_id": f"{writer}-{i}", "turn_index": i,
                    "label": "continue", "reviewer": writer, "note": writer[-1] * (i * 97 % 9000)})
"""


def _python(code: str, *args: str, stdin: int | None = None) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                            stdin=stdin, env=env, cwd=REPO)


@pytest.mark.slow
def test_every_commit_reported_before_sigkill_survives(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    rng = random.Random(20240611)
    printed_total = 0
    for round_number in range(KILL_ROUNDS):
        prefix = f"r{round_number}"
        child = _python(LABELLER, str(path), prefix)
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        printed = [child.stdout.readline() for _ in range(rng.randint(0, 40))]
        # A random extra pause so the kill lands at a different point of commit each round.
        time.sleep(rng.random() * 0.003)
        child.send_signal(signal.SIGKILL)
        child.wait()
        printed += child.stdout.read().splitlines(keepends=True)
        child.stdout.close()
        assert child.returncode == -signal.SIGKILL
        # Only whole lines count: the child may die halfway through printing one.
        printed_ids = [line.decode().strip() for line in printed if line.endswith(b"\n")]
        assert printed_ids == [f"{prefix}-{i}" for i in range(len(printed_ids))]
        loaded = Journal(path).load()
        # A kill inside a multi-page write() can leave a torn line (Linux stops a write
        # between pages for a fatal signal); it is skipped with a warning, never fatal, and
        # the next append starts on a fresh line. At most one per kill.
        assert len(loaded.warnings) <= round_number + 1
        assert all("torn" in warning for warning in loaded.warnings)
        ids = [r["turn_id"] for r in loaded.records if r["turn_id"].startswith(prefix + "-")]
        # Every printed id is there, in order, plus at most the one committed but not printed.
        assert ids[: len(printed_ids)] == printed_ids
        assert len(ids) - len(printed_ids) in (0, 1)
        printed_total += len(printed_ids)
    store = AnnotationStore(Journal(path), "s1", "ana")
    # The torn lines the rounds allowed are still there to warn about, and nothing else.
    warnings = store.load()
    assert len(warnings) <= KILL_ROUNDS and all("torn" in warning for warning in warnings)
    assert len(store.annotated_ids) >= printed_total
    assert printed_total > KILL_ROUNDS  # the loop really committed between kills


def test_concurrent_writers_never_lose_or_mix_records(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    writers = [f"writer{n}" for n in range(WRITERS)]
    children = [
        _python(APPENDER, str(path), name, str(RECORDS_PER_WRITER), stdin=subprocess.PIPE)
        for name in writers
    ]
    for child in children:
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    for child in children:
        assert child.stdin is not None
        child.stdin.write(b"go\n")
        child.stdin.close()
    for child in children:
        assert child.wait() == 0
        assert child.stdout is not None
        child.stdout.close()
    loaded = Journal(path).load()
    assert loaded.warnings == []
    assert len(loaded.records) == WRITERS * RECORDS_PER_WRITER
    assert path.read_bytes().count(b"\n") == WRITERS * RECORDS_PER_WRITER
    seen = Counter(record["turn_id"] for record in loaded.records)
    assert seen == Counter(f"{name}-{i}" for name in writers for i in range(RECORDS_PER_WRITER))
    for record in loaded.records:
        writer, index = record["turn_id"].rsplit("-", 1)
        assert record["note"] == writer[-1] * (int(index) * 97 % 9000)
    # Each writer's own records stay in the order it appended them.
    for name in writers:
        mine = [int(r["turn_id"].rsplit("-", 1)[1])
                for r in loaded.records if r["reviewer"] == name]
        assert mine == list(range(RECORDS_PER_WRITER))


def test_append_after_a_torn_tail_from_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    store = AnnotationStore(Journal(path), "s1", "ana")
    store.commit("m1", 1, "approval")
    with open(path, "ab") as handle:
        handle.write(b'{"v":1,"session_id":"s1","turn_id":"m2","turn_in')
    again = AnnotationStore(Journal(path), "s1", "ana")
    assert again.load() == [f"{path}:2: unreadable annotation line ignored (torn or not JSON)"]
    again.commit("m3", 3, "reflect")
    assert again.load() == [f"{path}:2: unreadable annotation line ignored (torn or not JSON)"]
    assert sorted(again.annotated_ids) == ["m1", "m3"]


@contextlib.contextmanager
def _unprivileged() -> Iterator[None]:
    """Run the block as `nobody` when the tests run as root, who ignores permission bits."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(65534)
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@pytest.fixture
def locked_dir() -> Iterator[Path]:
    """A read-only directory any user can enter (pytest's own tmp dirs are private to root)."""
    with tempfile.TemporaryDirectory() as base:
        os.chmod(base, 0o755)
        locked = Path(base) / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        try:
            yield locked
        finally:
            locked.chmod(0o755)


def test_read_only_directory_raises_and_keeps_the_annotation(
    locked_dir: Path, tmp_path: Path
) -> None:
    journal_path = locked_dir / "journal.jsonl"
    store = AnnotationStore(Journal(journal_path), "s1", "ana")
    with _unprivileged():
        assert store.load() == []
        with pytest.raises(JournalError) as caught:
            store.commit("m1", 3, "approval", note="keep me")
        with pytest.raises(JournalError):
            store.commit("m2", 5, "continue")
        with pytest.raises(JournalError):
            store.retry_unsaved()
    assert str(caught.value) == (
        f"cannot write annotations to {journal_path}: "
        "permission denied (read-only file or directory)"
    )
    assert [(a.turn_id, a.label, a.note) for a in store.unsaved] == [
        ("m1", "approval", "keep me"), ("m2", "continue", "")]
    assert store.get("m1").label == "approval"  # type: ignore[union-attr]
    assert not journal_path.exists()
    assert store.save_unsaved_to(tmp_path / "elsewhere.jsonl") == 2
    assert store.unsaved == []
    records = Journal(tmp_path / "elsewhere.jsonl").load().records
    assert [(r["turn_id"], r["label"]) for r in records] == [("m1", "approval"), ("m2", "continue")]


def test_missing_parent_that_cannot_be_created(locked_dir: Path) -> None:
    journal = Journal(locked_dir / "sub" / "journal.jsonl")
    with _unprivileged(), pytest.raises(JournalError) as caught:
        journal.append({"session_id": "s1", "turn_id": "m1", "label": "x"})
    assert str(caught.value) == (
        f"cannot create the folder for annotations {locked_dir / 'sub'}: "
        "permission denied (read-only file or directory)"
    )


def test_disk_full_keeps_the_annotation() -> None:
    # /dev/full accepts the open and fails every write with ENOSPC, like a full disk.
    store = AnnotationStore(Journal("/dev/full"), "s1", "ana")
    with pytest.raises(JournalError) as caught:
        store.commit("m1", 1, "artifact")
    assert str(caught.value) == "cannot write annotations to /dev/full: the disk is full"
    assert [a.turn_id for a in store.unsaved] == ["m1"]
