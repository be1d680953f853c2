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
