"""`replay watch` as a user runs it: a subprocess printing one JSON line per new empty turn."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from replay.core.readers import load_sessions
from tests.core.test_follow import SESSION_ID, assistant_lines, user_line

REPO = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 15.0
"""Upper bound for a line to arrive; the watcher's idle poll makes it at most ~2 s."""


class Watch:
    """A running `replay watch` whose stdout lines can be awaited with a deadline."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "replay", "watch", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
        )
        assert self.process.stdout is not None
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.process.stdout, selectors.EVENT_READ)

    def lines(self, count: int, timeout: float = WAIT_SECONDS) -> list[dict[str, object]]:
        """The next `count` output lines, parsed; fails if they do not come in time."""
        deadline = time.monotonic() + timeout
        assert self.process.stdout is not None
        while self._buffer.count(b"\n") < count:
            left = deadline - time.monotonic()
            assert left > 0, f"no output after {timeout} s; got {self._buffer!r}"
            if self._selector.select(left):
                chunk = os.read(self.process.stdout.fileno(), 65536)
                assert chunk, "replay watch ended early"
                self._buffer += chunk
        found = []
        for _ in range(count):
            line, self._buffer = self._buffer.split(b"\n", 1)
            found.append(orjson.loads(line))
        return found

    def stop(self, signum: int = signal.SIGINT) -> tuple[int, bytes, bytes]:
        """Send a signal; (exit status, rest of stdout, stderr)."""
        self.process.send_signal(signum)
        out, err = self.process.communicate(timeout=WAIT_SECONDS)
        return self.process.returncode, self._buffer + out, err


@pytest.fixture
def watch_processes() -> Iterator[list[Watch]]:
    started: list[Watch] = []
    yield started
    for watch in started:
        if watch.process.poll() is None:
            watch.process.kill()
            watch.process.wait()


def _append(path: Path, *chunks: bytes) -> None:
    with open(path, "ab") as handle:
        for chunk in chunks:
            handle.write(chunk)
            handle.flush()


def _wait_until_watching(watch: Watch, path: Path) -> None:
    """Return once the first read is done and the watcher is live.

    Records written before `replay watch` finished its first read are "already there" and
    not printed; so probe (an empty turn, then a turn that completes it) until one prints,
    then take the lines of every later probe too.
    """
    deadline = time.monotonic() + WAIT_SECONDS
    probe = 900
    while True:
        _append(path, user_line(probe, "   "), user_line(probe + 1, "still there?"))
        try:
            seen = [str(watch.lines(1, timeout=0.5)[0]["id"])]
            break
        except AssertionError:
            assert time.monotonic() < deadline, "replay watch never printed a probe"
            probe += 2
    while seen[-1] != f"u-{probe}":
        seen += [str(line["id"]) for line in watch.lines(1)]
    assert all(identifier.startswith("u-9") for identifier in seen)


def test_prints_new_empty_turns_and_stops_quietly_on_sigint(
    tmp_path: Path, watch_processes: list[Watch]
) -> None:
    path = tmp_path / f"{SESSION_ID}.jsonl"
    # Already there: an empty turn that is complete. Not printed without --from-start.
    path.write_bytes(user_line(0, "<command-name></command-name>") + user_line(1, "hello"))
    watch = Watch(str(path))
    watch_processes.append(watch)
    _wait_until_watching(watch, path)
    wrapper = user_line(2, "<local-command-stdout></local-command-stdout>")
    # Written in two pieces, the first ending mid-record.
    _append(path, wrapper[:50])
    _append(path, wrapper[50:], *assistant_lines(2, [{"type": "thinking", "thinking": "",
                                                      "signature": "s"}]))
    _append(path, *assistant_lines(2, [{"type": "text", "text": "Done."}]), user_line(3, "next"))
    (line,) = watch.lines(1)
    position = [turn.id for turn in load_sessions(path)[0].turns].index("u-2")
    assert position >= 4
    assert line == {
        "index": position,
        "number": position + 1,
        "id": "u-2",
        "role": "user",
        "timestamp": "2026-03-01T10:00:02.000Z",
        "reason": "empty-wrapper",
        "evidence": ["empty <local-command-stdout> wrapper"],
        "suggestion": line["suggestion"],
        "gap_before": 0.0,
        "path": str(path),
        "session_id": SESSION_ID,
    }
    status, rest, err = watch.stop(signal.SIGINT)
    assert (status, rest, err) == (0, b"", b"")


def test_from_start_prints_what_is_there_and_sigterm_exits_zero(
    tmp_path: Path, watch_processes: list[Watch]
) -> None:
    path = tmp_path / f"{SESSION_ID}.jsonl"
    path.write_bytes(user_line(0, "  ") + user_line(1, "hello")
                     + b"".join(assistant_lines(1, [{"type": "text", "text": "\n\n"}]))
                     + user_line(2, "anyone?"))
    watch = Watch(str(path), "--from-start")
    watch_processes.append(watch)
    first = watch.lines(2)
    assert [(line["id"], line["index"], line["number"], line["reason"]) for line in first] == [
        ("u-0", 0, 1, "blank-text"), ("msg_1", 2, 3, "blank-text")]
    status, rest, err = watch.stop(signal.SIGTERM)
    assert (status, rest, err) == (0, b"", b"")


def test_tool_only_option_reports_tool_only_replies(
    tmp_path: Path, watch_processes: list[Watch]
) -> None:
    path = tmp_path / f"{SESSION_ID}.jsonl"
    path.write_bytes(user_line(0, "list files"))
    watch = Watch(str(path), "--tool-only")
    watch_processes.append(watch)
    _wait_until_watching(watch, path)
    _append(path, *assistant_lines(5, [{"type": "tool_use", "id": "toolu_5", "name": "Bash",
                                        "input": {"command": "ls"}}]), user_line(6, "thanks"))
    (line,) = watch.lines(1)
    assert (line["id"], line["reason"], line["evidence"]) == ("msg_5", "tool-only", ["tools: Bash"])
    assert watch.stop()[0] == 0


def test_file_that_starts_empty(tmp_path: Path, watch_processes: list[Watch]) -> None:
    path = tmp_path / f"{SESSION_ID}.jsonl"
    path.write_bytes(b"")
    watch = Watch(str(path))
    watch_processes.append(watch)
    _wait_until_watching(watch, path)
    _append(path, user_line(0, ""), user_line(1, "hello"))
    assert [line["id"] for line in watch.lines(1)] == ["u-0"]
    assert watch.stop() == (0, b"", b"")


def test_missing_path_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "replay", "watch", str(tmp_path / "nope.jsonl")],
                            capture_output=True, cwd=REPO, timeout=WAIT_SECONDS)
    assert result.returncode == 2
    assert result.stdout == b""
    assert result.stderr.decode().count("\n") == 1
    assert "nope.jsonl" in result.stderr.decode()


def test_unknown_content_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"plain notes\nnot a transcript\n")
    result = subprocess.run([sys.executable, "-m", "replay", "watch", str(path)],
                            capture_output=True, cwd=REPO, timeout=WAIT_SECONDS)
    assert result.returncode == 2
    assert result.stderr.decode().count("\n") == 1
    assert "formats tried" in result.stderr.decode()
