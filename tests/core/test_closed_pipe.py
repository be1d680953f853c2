"""A closed pipe (`replay COMMAND | head`) ends every command quietly: exit 0, nothing on
stderr, no traceback, no "Broken pipe" line, whatever the command and however it writes
(Rich tables, JSON lines, a page streamed with `-o -` or `-o /dev/stdout`, a follower)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SAMPLE = REPO / "sample_sessions" / "refactor.claude-code.jsonl"


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, TERM="dumb", COLUMNS="160", LINES="50", **extra)
    env.pop("FORCE_COLOR", None)
    return env


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three sessions whose every output is far larger than a pipe holds (64 KiB)."""
    folder = tmp_path_factory.mktemp("big")
    messages = [{"role": role, "content": "" if role == "user" else f"ok [/] [link=x] {n}"}
                for n in range(1500) for role in ("user", "assistant")]
    for number in range(3):
        (folder / f"s{number}.json").write_text(json.dumps({"messages": messages}))
    return folder


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A machine with 400 Claude Code sessions, for `replay sessions --json`."""
    root = tmp_path_factory.mktemp("home")
    project = root / "claude" / "projects" / "-tmp-project"
    project.mkdir(parents=True)
    for number in range(400):
        shutil.copyfile(SAMPLE, project / f"{number:08d}-0000-4000-8000-000000000000.jsonl")
    return root


def _head(args: list[str], env: dict[str, str]) -> tuple[int, bytes]:
    """Run `replay ARGS | head -1`: (exit status, stderr)."""
    process = subprocess.Popen([sys.executable, "-m", "replay", *args], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, env=env)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline()
    process.stdout.close()
    try:
        status = process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()  # still running long after its reader left: a failure
        raise
    return status, process.stderr.read()


COMMANDS = {
    "share html": ["share", "{big}/s0.json", "-o", "-"],
    "share md": ["share", "{big}/s0.json", "-o", "-", "--as", "md"],
    "share cast": ["share", "{big}/s0.json", "-o", "-", "--as", "cast"],
    "share /dev/stdout": ["share", "{big}/s0.json", "-o", "/dev/stdout"],
    "export csv": ["export", "{big}", "--all-empty", "--annotations", "{big}/none.jsonl"],
    "export jsonl": ["export", "{big}", "--all-empty", "--as", "jsonl",
                     "--annotations", "{big}/none.jsonl"],
    "export csv /dev/stdout": ["export", "{big}", "--all-empty", "-o", "/dev/stdout",
                               "--annotations", "{big}/none.jsonl"],
    "scan": ["scan", "--no-cache", "{big}"],
    "scan --json": ["scan", "--no-cache", "--json", "{big}"],
    "report": ["report", "--no-cache", "{big}"],
    "review --json": ["review", "--json", "{big}"],
    "sessions --json": ["sessions", "--json", "--no-cache"],
    "sessions": ["sessions", "--no-cache"],
    "watch": ["watch", "--from-start", "{big}/s0.json"],
    "watch folder": ["watch", "--from-start", "{big}"],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_closed_pipe_ends_the_command_quietly(name: str, big: Path, home: Path,
                                                 tmp_path: Path) -> None:
    args = [arg.format(big=big) for arg in COMMANDS[name]]
    env = _env(HOME=str(tmp_path), CLAUDE_CONFIG_DIR=str(home / "claude"),
               XDG_CACHE_HOME=str(tmp_path / "cache"), XDG_DATA_HOME=str(tmp_path / "data"))
    status, err = _head(args, env)
    assert b"Traceback" not in err
    assert b"Broken pipe" not in err and b"BrokenPipe" not in err
    # What a command says on stderr after it wrote (e.g. "wrote N turns") is not said: its
    # output did not reach anyone.
    assert err == b""
    assert status == 0
