"""The scan cache: an unchanged file is not read again, a changed one is, a removed one is
dropped; the output is the same bytes; crashes, garbage and two writers never break it."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from replay.cli import main
from replay.core.corpus import cache as cache_module
from replay.core.corpus import pool
from replay.core.corpus.cache import BATCH, ScanCache, cache_path
from replay.core.corpus.rows import scan_cached
from replay.core.corpus.tasks import SessionTask
from tests.conftest import REALDATA, SAMPLES

REPO = Path(__file__).resolve().parents[2]
SESSION = SAMPLES / "refactor.claude-code.jsonl"


def _aged(path: Path, seconds: float = 100.0) -> Path:
    """Give a file a modification time in the past (a file changed just now is not cached)."""
    moment = time.time() - seconds
    os.utime(path, (moment, moment))
    return path


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources each scan actually read (the tasks run in this process with --jobs 1)."""
    seen: list[str] = []
    real = pool.scan_task

    def counted(task: SessionTask):  # type: ignore[no-untyped-def]
        seen.append(Path(task.entry.path if task.entry else task.source).name)
        return real(task)

    monkeypatch.setattr(pool, "scan_task", counted)
    return seen


def _scan(capsysbinary: pytest.CaptureFixture[bytes], *args: str) -> tuple[int, bytes, bytes]:
    status = main(["scan", "--json", "--jobs", "1", *args])
    out, err = capsysbinary.readouterr()
    return status, out, err


def test_an_unchanged_file_is_read_once(tmp_path: Path, reads: list[str],
                                        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    session = _aged(Path(shutil.copy(SESSION, tmp_path / "a.jsonl")))
    first = _scan(capsysbinary, str(session))
    second = _scan(capsysbinary, str(session))
    assert reads == ["a.jsonl"]
    assert first == second and first[0] == 0 and first[1]
    # --no-cache reads it again, and the same bytes come out.
    assert _scan(capsysbinary, "--no-cache", str(session)) == first
    assert reads == ["a.jsonl", "a.jsonl"]


def test_a_changed_file_is_read_again(tmp_path: Path, reads: list[str],
                                      capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    session = _aged(Path(shutil.copy(SESSION, tmp_path / "a.jsonl")))
    before = orjson.loads(_scan(capsysbinary, str(session))[1])
    with open(session, "ab") as handle:
        handle.write(orjson.dumps({"type": "user", "uuid": "late-1", "sessionId": "s",
                                   "timestamp": "2026-03-01T10:00:00.000Z",
                                   "message": {"role": "user", "content": "   "}}) + b"\n")
    _aged(session, 50)
    after = orjson.loads(_scan(capsysbinary, str(session))[1])
    assert reads == ["a.jsonl", "a.jsonl"]
    assert after["turns"] == before["turns"] + 1
    assert after["empty_turns"][-1]["id"] == "late-1"
    # Same size and time but another inode (a file replaced by a rename): read again too.
    replacement = tmp_path / "b.jsonl"
    shutil.copy2(session, replacement)
    os.replace(replacement, session)
    _scan(capsysbinary, str(session))
    assert reads == ["a.jsonl"] * 3


def test_a_file_written_just_now_is_not_kept(tmp_path: Path, reads: list[str],
                                             capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    # A write within the same timestamp tick and size would go unseen: not trusted yet.
    session = Path(shutil.copy(SESSION, tmp_path / "a.jsonl"))
    _scan(capsysbinary, str(session))
    _scan(capsysbinary, str(session))
    assert reads == ["a.jsonl", "a.jsonl"]


def test_rules_are_part_of_the_key(tmp_path: Path, reads: list[str],
                                   capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    session = _aged(Path(shutil.copy(SESSION, tmp_path / "a.jsonl")))
    plain = _scan(capsysbinary, str(session))[1]
    tools = _scan(capsysbinary, "--tool-only", str(session))[1]
    assert reads == ["a.jsonl", "a.jsonl"] and plain != tools
    assert _scan(capsysbinary, "--tool-only", str(session))[1] == tools
    assert _scan(capsysbinary, str(session))[1] == plain
    assert len(reads) == 2


def test_other_code_never_reads_old_results(tmp_path: Path, reads: list[str],
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    session = _aged(Path(shutil.copy(SESSION, tmp_path / "a.jsonl")))
    _scan(capsysbinary, str(session))
    monkeypatch.setattr(cache_module, "_CODE", "an edited checkout")
    _scan(capsysbinary, str(session))
    assert reads == ["a.jsonl", "a.jsonl"]


def test_a_removed_file_is_dropped(tmp_path: Path, reads: list[str],
                                   capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        _aged(Path(shutil.copy(SESSION, folder / name)))
    _scan(capsysbinary, str(folder))
    listing = os.fsencode(folder)  # (the folder's own row: its listing)
    # (a file's rows: its session's, and the facts its listing keeps: `file_facts`)
    with sqlite3.connect(cache_path()) as db:
        assert sorted(os.fsdecode(p) for (p,) in db.execute(
            "SELECT DISTINCT path FROM results WHERE path != ?", (listing,))) == [
            str(folder / "a.jsonl"), str(folder / "b.jsonl")]
    (folder / "b.jsonl").unlink()
    status, out, _ = _scan(capsysbinary, str(folder))
    assert status == 0 and len(out.splitlines()) == 1
    with sqlite3.connect(cache_path()) as db:
        assert [os.fsdecode(p) for (p,) in db.execute(
            "SELECT DISTINCT path FROM results WHERE path != ?", (listing,))] == [
            str(folder / "a.jsonl")]


def _corpus_paths() -> list[Path]:
    paths = sorted(SAMPLES.iterdir())
    if REALDATA.is_dir():
        paths += sorted(p for p in REALDATA.rglob("*") if p.is_file())
    return paths


def test_cached_output_is_the_same_bytes_on_real_files(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    # Copies with old times, so that they are cached (each file alone, and the folders).
    copies = tmp_path / "corpus"
    for path in _corpus_paths():
        relative = path.relative_to(REALDATA if path.is_relative_to(REALDATA) else REPO)
        target = copies / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        _aged(Path(shutil.copy(path, target)))
    arguments = [str(copies), *(str(p) for p in sorted(copies.rglob("*")) if p.is_file())]
    fresh = _scan(capsysbinary, "--no-cache", *arguments)
    assert _scan(capsysbinary, *arguments) == fresh  # computed, then kept
    with sqlite3.connect(cache_path()) as db:
        assert db.execute("SELECT count(*) FROM results").fetchone()[0] > 20
    assert _scan(capsysbinary, *arguments) == fresh  # from the cache


def test_a_garbage_cache_is_set_aside_with_one_warning(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    session = _aged(Path(shutil.copy(SESSION, tmp_path / "a.jsonl")))
    expected = _scan(capsysbinary, "--no-cache", str(session))
    cache_path().parent.mkdir(parents=True, exist_ok=True)
    cache_path().write_bytes(b"this is not a database\n" * 100)
    status, out, err = _scan(capsysbinary, str(session))
    assert (status, out) == expected[:2]
    lines = err.decode().splitlines()
    assert len(lines) == 1 and "scan cache" in lines[0] and "set it aside" in lines[0]
    assert cache_path().with_name(cache_path().name + ".broken").read_bytes().startswith(
        b"this is not")
    # The new cache works: the next run is quiet and answers from it.
    assert _scan(capsysbinary, str(session)) == (status, out, b"")
    with sqlite3.connect(cache_path()) as db:  # (its row, and its format: `file_facts`)
        assert db.execute("SELECT DISTINCT path FROM results").fetchall() == [
            (os.fsencode(session),)]


def test_a_cache_broken_in_its_pages_is_set_aside(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    session = _aged(Path(shutil.copy(SESSION, tmp_path / "a.jsonl")))
    expected = _scan(capsysbinary, str(session))
    data = bytearray(cache_path().read_bytes())
    data[100:] = b"\xff" * (len(data) - 100)  # the header stays: a database, corrupt inside
    cache_path().write_bytes(bytes(data))
    status, out, err = _scan(capsysbinary, str(session))
    assert (status, out) == expected[:2]
    assert len(err.splitlines()) == 1 and b"set it aside" in err


def test_an_unwritable_cache_directory_is_no_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("REPLAY_CACHE_DIR", str(blocker / "cache"))
    session = _aged(Path(shutil.copy(SESSION, tmp_path / "a.jsonl")))
    status, out, err = _scan(capsysbinary, str(session))
    assert status == 0 and out and err == b""


WRITER = """
import sys, time
from pathlib import Path
from replay.core.corpus.cache import ScanCache
from replay.core.corpus.tasks import SessionTask
name, count = sys.argv[1], int(sys.argv[2])
report = [{"path": name, "turns": 3, "empty_turns": [], "text": "x" * 2000}]
with ScanCache() as cache:
    assert cache.usable
    print("open", flush=True)
    for number in range(count):
        cache.store(SessionTask(f"{name}-{number}.jsonl"), Path(f"/n/{name}-{number}"),
                    f"stamp-{number}", report)
"""


def _writer(name: str, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WRITER, name, str(count)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _rows() -> tuple[int, str]:
    with sqlite3.connect(cache_path()) as db:
        return (db.execute("SELECT count(*) FROM results").fetchone()[0],
                db.execute("PRAGMA integrity_check").fetchone()[0])


def test_two_processes_writing_at_once(tmp_path: Path) -> None:
    writers = [_writer(name, 20 * BATCH) for name in ("one", "two")]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    assert _rows() == (40 * BATCH, "ok")
    with ScanCache() as cache:
        assert cache.lookup(SessionTask("two-5.jsonl"), "stamp-5") is not None
        assert cache.lookup(SessionTask("one-5.jsonl"), "stamp-6") is None


def test_killed_mid_write_leaves_whole_batches(tmp_path: Path) -> None:
    writer = _writer("killed", 10_000 * BATCH)
    assert writer.stdout is not None and writer.stdout.readline() == "open\n"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            if _rows()[0] >= 5 * BATCH:
                break
        except sqlite3.OperationalError:
            continue
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    count, check = _rows()
    assert check == "ok" and count >= 5 * BATCH and count % BATCH == 0
    # And the cache goes on working.
    with ScanCache() as cache:
        assert cache.lookup(SessionTask("killed-1.jsonl"), "stamp-1") is not None
        cache.store(SessionTask("after.jsonl"), Path("/n/after"), "s", [])
    assert _rows() == (count + 1, "ok")


def test_scan_cached_is_what_a_session_list_calls(tmp_path: Path, reads: list[str]) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        _aged(Path(shutil.copy(SESSION, folder / name)))
    first = list(scan_cached(folder))
    again = list(scan_cached(folder))
    assert first == again and [len(result.reports) for result in first] == [1, 1]
    assert sorted(reads) == ["a.jsonl", "b.jsonl"]
    list(scan_cached(folder, use_cache=False))
    assert len(reads) == 4


def test_a_file_name_that_is_not_utf8_is_cached_too(
        tmp_path: Path, reads: list[str], capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    name = os.fsdecode(b"caf\xe9-session.jsonl")
    session = _aged(Path(shutil.copy(SESSION, tmp_path / name)))
    first = _scan(capsysbinary, str(tmp_path))
    assert b"path_base64" in first[1]
    assert _scan(capsysbinary, str(tmp_path)) == first
    assert len(reads) == 1
    session.unlink()
    _scan(capsysbinary, str(tmp_path))
    with sqlite3.connect(cache_path()) as db:
        assert db.execute("SELECT count(*) FROM results").fetchone()[0] == 0


def _project(tmp_path: Path) -> Path:
    """A Claude Code project folder of three sessions (listed: each read only when asked)."""
    folder = tmp_path / "project"
    folder.mkdir()
    sources = sorted((REALDATA / "claude-code").glob("*.jsonl")) if REALDATA.is_dir() else []
    sources = [path for path in sources if path.stat().st_size > 20_000
               and "agent-" not in path.name][:2] + [SESSION]
    for number, source in enumerate(sources):
        name = f"{number:08d}-0000-4000-8000-{number:012d}.jsonl"
        _aged(Path(shutil.copy(source, folder / name)))
    return folder


@pytest.fixture
def entry_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from replay.core.annotate import queue_sources

    seen: list[str] = []
    real = queue_sources.read_entry

    def counted(reader, entry, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(entry.path.name)
        return real(reader, entry, *args, **kwargs)

    monkeypatch.setattr(queue_sources, "read_entry", counted)
    return seen


def test_a_second_review_queue_reads_no_unchanged_session(
        tmp_path: Path, entry_reads: list[str],
        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    folder = _project(tmp_path)
    assert main(["review", "--json", str(folder)]) == 0
    first = capsysbinary.readouterr().out
    assert first and len(entry_reads) == 3
    assert main(["review", "--json", str(folder)]) == 0
    assert capsysbinary.readouterr().out == first and len(entry_reads) == 3
    # A sample draws from the same counts, still without reading.
    assert main(["review", "--json", "--sample", "2", "--seed", "3", str(folder)]) == 0
    sampled = capsysbinary.readouterr().out
    assert len(sampled.splitlines()) == 2 and len(entry_reads) == 3
    assert main(["review", "--json", "--no-cache", "--sample", "2", "--seed", "3",
                 str(folder)]) == 0
    assert capsysbinary.readouterr().out == sampled and len(entry_reads) == 6
    # Another label set limits the suggestions: read again.
    labels = tmp_path / "labels.toml"
    labels.write_text('[[label]]\nname = "artifact"\nkey = "a"\ntitle = "Artifact"\n'
                      'description = "x"\n')
    assert main(["review", "--json", "--labels", str(labels), str(folder)]) == 0
    capsysbinary.readouterr()
    assert len(entry_reads) == 9


def _used() -> dict[str, float]:
    with sqlite3.connect(cache_path()) as db:
        return dict(db.execute("SELECT task, used FROM results"))


def test_rows_not_used_for_a_month_are_pruned_and_a_read_keeps_a_row(tmp_path: Path) -> None:
    now = time.time()
    with ScanCache() as cache:
        for name in ("old", "read", "new"):
            cache.store_key(name, Path(f"/n/{name}"), "s", [name])
    day = 86400
    with sqlite3.connect(cache_path()) as db:
        db.execute("UPDATE results SET used = ? WHERE task IN ('old', 'read')",
                   (now - (cache_module.MAX_AGE_DAYS + 1) * day,))
    # Reading a row marks it used again (once its mark is a day old).
    with ScanCache() as cache:
        assert cache.lookup_key("read", "s") == ["read"]
    assert _used()["read"] > now - 60
    with ScanCache() as cache:
        assert cache.prune(force=True) == 1
        assert cache.lookup_key("old", "s") is None
        assert cache.lookup_key("new", "s") == ["new"]
        # A prune is at most hourly, whichever process ran the last one.
        cache.store_key("other", Path("/n/other"), "s", [])
        assert cache.prune() == 0


def test_past_its_size_bound_the_least_recently_used_rows_go(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "x" * 10_000
    with ScanCache() as cache:
        for number in range(30):
            cache.store_key(f"k{number}", Path(f"/n/{number}"), "s", [text])
    assert len(_used()) == 30
    monkeypatch.setattr(cache_module, "MAX_BYTES", 100_000)
    with sqlite3.connect(cache_path()) as db:
        for number in range(30):  # k0 the least recently used, k29 the most
            db.execute("UPDATE results SET used = ? WHERE task = ?",
                       (time.time() - 3600 + number, f"k{number}"))
    with ScanCache() as cache:
        dropped = cache.prune(force=True)
    kept = sorted(_used(), key=lambda key: int(key[1:]))
    # Down to three quarters of the bound, the newest kept.
    assert dropped == 30 - len(kept) and 6 <= len(kept) <= 7
    assert kept == [f"k{number}" for number in range(30 - len(kept), 30)]


def test_a_run_that_writes_prunes_by_itself(tmp_path: Path) -> None:
    with ScanCache() as cache:
        cache.store_key("stale", Path("/n/stale"), "s", [])
    with sqlite3.connect(cache_path()) as db:
        db.execute("UPDATE results SET used = 0")
        db.execute("DELETE FROM meta")
    with ScanCache() as cache:
        cache.store_key("fresh", Path("/n/fresh"), "s", [])
    assert list(_used()) == ["fresh"]


def test_a_database_changed_only_in_its_write_ahead_log_has_a_new_stamp(tmp_path: Path) -> None:
    from replay.core.corpus.cache import file_stamp

    database = tmp_path / "opencode.db"
    database.write_bytes(b"x" * 100)
    _aged(database)
    before = file_stamp(database)
    assert before is not None
    log = tmp_path / "opencode.db-wal"
    log.write_bytes(b"y" * 10)
    assert file_stamp(database) is None  # the log written a moment ago: not trusted yet
    _aged(log)
    with_log = file_stamp(database)
    assert with_log is not None and with_log != before
    log.write_bytes(b"y" * 20)
    _aged(log)
    assert file_stamp(database) not in (None, with_log)


def test_a_cache_of_the_older_schema_is_started_again_without_a_warning(
        tmp_path: Path) -> None:
    location = cache_path()
    location.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(location) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("CREATE TABLE results (task TEXT PRIMARY KEY, path BLOB NOT NULL, "
                   "stamp TEXT NOT NULL, code TEXT NOT NULL, reports BLOB NOT NULL)")
        db.execute("INSERT INTO results VALUES ('old', x'2f61', 's', 'c', '[]')")
        db.execute("PRAGMA user_version = 1")
    said: list[str] = []
    with ScanCache(warn=said.append) as cache:
        assert cache.usable and cache.lookup_key("old", "s") is None
        cache.store_key("new", Path("/n/new"), "s", [1])
    with ScanCache(warn=said.append) as cache:
        assert cache.lookup_key("new", "s") == [1]
    assert said == [] and not location.with_name(location.name + ".broken").exists()


def test_two_session_lists_counting_at_once_share_the_cache_safely(tmp_path: Path) -> None:
    """`replay sessions` twice at once on a fresh cache (each counting every session and
    writing its rows, one of them in a process pool): both print the same and the cache
    stays whole, a row per session."""
    from tests.core.homes import build_home

    home = build_home(tmp_path / "home")
    for folder, _, names in os.walk(home.root):
        for name in names:
            _aged(Path(folder) / name)
    env = {key: value for key, value in os.environ.items()
           if key not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME",
                          "GEMINI_CLI_HOME")} | {"HOME": str(home.root)}
    command = [sys.executable, "-m", "replay", "sessions", "--json", "--jobs"]
    # One counts in this process, the other in a pool of two.
    both = [subprocess.Popen([*command, jobs], cwd=REPO, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE) for jobs in ("1", "2")]
    outputs = [process.communicate(timeout=120) for process in both]
    assert [process.returncode for process in both] == [0, 0], outputs
    assert outputs[0][0] == outputs[1][0] and len(outputs[0][0].splitlines()) == 10
    assert [err for _, err in outputs] == [b"", b""]
    with sqlite3.connect(cache_path()) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT count(*) FROM results").fetchone()[0] == 10


def test_a_review_of_a_folder_drops_the_rows_of_its_files_gone(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    folder = _project(tmp_path)
    assert main(["review", "--json", str(folder)]) == 0
    capsysbinary.readouterr()

    def kept() -> set[str]:
        with sqlite3.connect(cache_path()) as db:
            return {os.fsdecode(path) for (path,) in db.execute("SELECT path FROM results")}

    files = sorted(folder.iterdir())
    assert kept() == {str(path) for path in files}
    files[0].unlink()
    assert main(["review", "--json", str(folder)]) == 0
    capsysbinary.readouterr()
    assert kept() == {str(path) for path in files[1:]}


def test_a_review_of_the_same_folder_named_otherwise_reads_nothing_again(
        tmp_path: Path, entry_reads: list[str], monkeypatch: pytest.MonkeyPatch,
        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    folder = _project(tmp_path)
    assert main(["review", "--json", str(folder)]) == 0
    first = capsysbinary.readouterr().out
    assert len(entry_reads) == 3
    monkeypatch.chdir(folder)
    assert main(["review", "--json", "."]) == 0
    assert len(entry_reads) == 3  # `.` is the same folder: its rows are shared
    assert len(capsysbinary.readouterr().out.splitlines()) == len(first.splitlines())
