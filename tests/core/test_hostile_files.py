"""Issue 27, text that reaches the terminal and files used wrongly (items 6-13)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, SAMPLES

SESSION = str(SAMPLES / "refactor.claude-code.jsonl")
CHAT = json.dumps({"messages": [{"role": "user", "content": "q"},
                                {"role": "assistant", "content": ""}]})


def _env() -> dict[str, str]:
    env = dict(os.environ, TERM="dumb", COLUMNS="160", LINES="50")
    env.pop("FORCE_COLOR", None)
    return env


def replay(*args: str, **options: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "replay", *args], capture_output=True,
                          env=_env(), stdin=subprocess.DEVNULL, timeout=120, cwd=REPO,
                          **options)  # type: ignore[call-overload]


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Run a shell command line with `replay` on the PATH as this checkout's."""
    env = _env()
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    return subprocess.run(["bash", "-c", command], capture_output=True, env=env, cwd=cwd,
                          timeout=120, stdin=subprocess.DEVNULL)


# --- 6. the app's launch errors ----------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["/tmp/no\x1b]0;PWNED\x07\x1b[2J"],
    ["--follow", "/tmp/no\x1b]0;PWNED\x07\x1b[2J.jsonl"],
    ["--labels", "/tmp/no\x1b]0;PWNED\x07\x1b[2J.toml", SESSION],
    ["/tmp/no\nreplay: forged line"],
])
def test_the_apps_launch_errors_escape_the_path(args: list[str]) -> None:
    result = replay(*args)
    assert result.returncode == 2
    err = result.stderr
    assert b"\x1b" not in err and b"\x07" not in err, err
    assert err.count(b"\n") == 1 and err.startswith(b"replay: "), err


def test_a_bad_files_name_is_escaped_by_the_app(tmp_path: Path) -> None:
    bad = tmp_path / "x\x1b[2J\nreplay: forged.json"
    bad.write_text("not a transcript\n")
    result = replay(str(bad))
    assert result.returncode == 2 and b"\x1b" not in result.stderr
    assert result.stderr.count(b"\n") == 1 and b"[LF]" in result.stderr, result.stderr


# --- 7. a line feed in a file name -------------------------------------------------------------

def test_a_newline_in_a_file_name_forges_no_line(tmp_path: Path) -> None:
    (tmp_path / "a\nreplay: forged line.json").write_text(CHAT)
    (tmp_path / "b\nreplay: forged too.txt").write_text("nothing\n")
    table = replay("scan", str(tmp_path))
    lines = (table.stdout + table.stderr).decode().splitlines()
    assert not any(line.startswith("replay: forged") for line in lines), lines
    assert any("a[LF]replay: forged line.json" in line for line in lines), lines
    out = tmp_path / "o\nreplay: forged export.csv"
    exported = replay("export", "--all-empty", str(tmp_path / "a\nreplay: forged line.json"),
                      "-o", str(out))
    assert exported.returncode == 0 and out.exists()
    assert exported.stderr.count(b"\n") == 1 and b"[LF]" in exported.stderr


# --- 8, 9. `-o` onto the shell's descriptors and read-only files ---------------------------

@pytest.mark.parametrize("kind", ["csv", "html", "jsonl"])
def test_export_to_dev_stdout_through_a_pipe(tmp_path: Path, kind: str) -> None:
    result = shell(f"replay export --all-empty --as {kind} {SESSION} -o /dev/stdout | cat",
                   tmp_path)
    assert result.returncode == 0, result.stderr
    assert b"wrote" in result.stderr
    head = {"csv": b"session_id,", "html": b"<!DOCTYPE html>", "jsonl": b'{"session_id"'}[kind]
    assert result.stdout.startswith(head), result.stdout[:80]


def test_export_to_dev_stderr(tmp_path: Path) -> None:
    result = shell(f"replay export --all-empty {SESSION} -o /dev/stderr 2>&1 >/dev/null | cat",
                   tmp_path)
    assert result.returncode == 0 and result.stdout.startswith(b"session_id,"), result.stdout


def test_export_to_dev_stdout_appended_to_a_file_appends(tmp_path: Path) -> None:
    (tmp_path / "f.csv").write_text("keep\n")
    result = shell(f"replay export --all-empty {SESSION} -o /dev/stdout >> f.csv", tmp_path)
    assert result.returncode == 0, result.stderr
    data = (tmp_path / "f.csv").read_bytes()
    # Appended, and no byte-order mark in the middle of the file.
    assert data.startswith(b"keep\nsession_id,") and b"\xef\xbb\xbf" not in data


def test_export_to_a_file_through_dev_fd_writes_from_the_start(tmp_path: Path) -> None:
    result = shell(f"replay export --all-empty {SESSION} -o /dev/fd/3 3> new.csv", tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "new.csv").read_bytes().startswith(b"\xef\xbb\xbfsession_id,")


@pytest.mark.parametrize("kind", ["csv", "md"])
def test_export_onto_a_read_only_file_refuses(tmp_path: Path, kind: str) -> None:
    target = tmp_path / f"locked.{kind}"
    target.write_text("keep\n")
    target.chmod(0o444)
    result = replay("export", "--all-empty", "--as", kind, SESSION, "-o", str(target))
    assert result.returncode == 1
    assert b"read-only" in result.stderr and result.stderr.count(b"\n") == 1
    assert target.read_text() == "keep\n" and (target.stat().st_mode & 0o777) == 0o444


# --- 10. a folder of very many files --------------------------------------------------------

def _chat(number: int) -> str:
    return json.dumps({"id": f"conv-{number}", "messages": [
        {"role": "user", "content": f"task {number}"}, {"role": "assistant", "content": ""}]})


def test_every_session_of_a_folder_past_twenty_thousand_files_is_listed(tmp_path: Path) -> None:
    from replay.core.corpus.tasks import plan

    folder = tmp_path / "many"
    folder.mkdir()
    for number in range(20_050):
        (folder / f"s{number:05d}.json").write_text(_chat(number))
    assert len(plan(folder)) == 20_050


def test_sessions_beside_twenty_thousand_text_files_are_found(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    for number in range(20_001):
        (folder / f"a{number:05d}.txt").write_text("notes\n")
    for number in range(3):
        (folder / f"z{number}.json").write_text(_chat(number))
    result = replay("scan", "--json", str(folder))
    assert result.returncode == 0, result.stderr
    assert sorted(json.loads(line)["session_id"] for line in result.stdout.splitlines()) == [
        "conv-0", "conv-1", "conv-2"]


# --- 11. an opencode.db among other files -------------------------------------------------------

def test_an_opencode_database_in_a_folder_hides_no_other_file(tmp_path: Path) -> None:
    from tests.core.test_opencode import build_database

    folder = tmp_path / "mixed"
    folder.mkdir()
    build_database(folder / "opencode.db", ["curious-sailor"])
    (folder / "chat.json").write_text(_chat(7))
    (folder / "cc.jsonl").write_bytes((SAMPLES / "refactor.claude-code.jsonl").read_bytes())
    for where in (folder, tmp_path):  # the folder given, and as a folder inside the one given
        result = replay("scan", "--json", str(where))
        assert result.returncode == 0, result.stderr
        formats = sorted(json.loads(line)["format"] for line in result.stdout.splitlines())
        assert formats == ["chat-json", "claude-code", "opencode-db"], (where, formats)


def test_opencodes_own_data_directory_is_still_read_as_one_database(tmp_path: Path) -> None:
    from replay.core.readers import detect_reader
    from tests.core.test_opencode import build_database

    data = tmp_path / "opencode"
    data.mkdir()
    build_database(data / "opencode.db", ["curious-sailor"])
    (data / "auth.json").write_text("{}")
    assert detect_reader(data).name == "opencode-db"


# --- 12. a symbolic link loop -------------------------------------------------------------

def test_a_directory_symlink_loop_lists_each_session_once(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.json").write_text(_chat(1))
    (folder / "sub" / "b.json").write_text(_chat(2))
    (folder / "sub" / "up").symlink_to(folder)
    (folder / "again").symlink_to(folder / "sub")
    result = replay("scan", "--json", str(folder))
    assert result.returncode == 0, result.stderr
    ids = [json.loads(line)["session_id"] for line in result.stdout.splitlines()]
    assert sorted(ids) == ["conv-1", "conv-2"]


# --- 13. a failed append on a full disk -----------------------------------------------------

def test_a_failed_append_leaves_no_torn_fragment(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from replay.core.annotate import journal as journal_module
    from replay.core.annotate.journal import Journal, JournalError

    journal = Journal(tmp_path / "annotations.jsonl")
    journal.append({"v": 1, "turn": "a", "label": "ok"})
    before, warned = journal.path.read_bytes(), journal.load().warnings
    real_write = os.write

    def full_disk(fd: int, data: object) -> int:
        view = memoryview(data)  # type: ignore[arg-type]
        if len(view) > 8:
            real_write(fd, view[:8])  # the disk takes a few bytes, then is full
            return 8
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(journal_module.os, "write", full_disk)
    with pytest.raises(JournalError, match="the disk is full"):
        journal.append({"v": 1, "turn": "b", "label": "ok"})
    monkeypatch.setattr(journal_module.os, "write", real_write)
    assert journal.path.read_bytes() == before
    assert journal.load().warnings == warned  # nothing about a torn line 2
