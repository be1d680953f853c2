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

from replay.core.detection.empty import find_empty_turns
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
    _append(path, wrapper[50:] + b"".join(assistant_lines(2, [
        {"type": "thinking", "thinking": "", "signature": "s"}])))
    _append(path, *assistant_lines(2, [{"type": "text", "text": "Done."}]), user_line(3, "next"))
    (line,) = watch.lines(1)
    position = [turn.id for turn in load_sessions(path)[0].turns].index("u-2")
    assert position >= 4
    assert line == {
        "event": "empty",
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


# -- live sessions written the way each tool writes them ------------------------------------

TOOL_WRITER = Path(__file__).with_name("tool_writer.py")
STALL = "0.6"
"""Short stall and quiet times keep these tests fast; the rules are the same at any scale."""


class ToolWriter:
    """`tool_writer.py --gated`: each `step()` writes the scenario's next step and returns
    once it is on disk."""

    def __init__(self, fmt: str, scenario: str, target: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(TOOL_WRITER), fmt, scenario, str(target), "--gated"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=REPO)
        self.steps = 0
        self._expect()

    def _expect(self) -> None:
        assert self.process.stdout is not None
        self.steps += 1
        assert self.process.stdout.readline() == f"step {self.steps}\n".encode()

    def step(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"\n")
        self.process.stdin.flush()
        self._expect()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=WAIT_SECONDS)


def _brief(line: dict[str, object]) -> tuple[object, ...]:
    """(event, role, index) of a watch line: of its turn, or of the turn a stall hangs on."""
    turn = line.get("last_turn", line)
    assert isinstance(turn, dict)
    return (line["event"], turn["role"], turn["index"])


def _no_more(watch: Watch, seconds: float) -> None:
    """Nothing else is printed for a while (longer than a stall)."""
    with pytest.raises(AssertionError, match="no output"):
        watch.lines(1, timeout=seconds)


def _live(tmp_path: Path, fmt: str, scenario: str,
          watch_processes: list[Watch]) -> tuple[Path, Watch, ToolWriter]:
    if fmt == "opencode-storage":
        target = tmp_path / "storage"
        (target / "session" / "prj_live").mkdir(parents=True)
    else:
        target = tmp_path / ("rollout-live.jsonl" if fmt == "codex" else "live.jsonl")
        target.write_bytes(b"")
    # --from-start: what the first step writes is printed however soon after start it lands.
    watch = Watch(str(target), "--from-start", "--stall", STALL, "--settle", "0.2",
                  *(["--format", fmt] if fmt != "claude-code" else []))
    watch_processes.append(watch)
    return target, watch, ToolWriter(fmt, scenario, target)


@pytest.mark.parametrize("fmt", ["claude-code", "opencode-storage", "codex"])
def test_thinking_then_text_is_never_reported_empty(
    tmp_path: Path, watch_processes: list[Watch], fmt: str
) -> None:
    target, watch, writer = _live(tmp_path, fmt, "thinking-then-text", watch_processes)
    # The reply's reasoning, then silence: a stall on the unfinished reply, no empty turn.
    stalled = watch.lines(1)
    assert [_brief(line) for line in stalled] == [("stalled", "assistant", 1)]
    writer.step()  # the text of the same reply
    assert [_brief(line) for line in watch.lines(1)] == [("resumed", "assistant", 1)]
    if fmt == "codex":
        writer.step()  # the next prompt: now the agent is due again
        assert [_brief(line) for line in watch.lines(1)] == [("stalled", "user", 2)]
    else:
        writer.step()  # an empty user message ends the file: printed at once, then a stall
        assert [_brief(line) for line in watch.lines(2)] == [
            ("empty", "user", 2), ("stalled", "user", 2)]
    _no_more(watch, 1.0)
    writer.close()
    status, rest, err = watch.stop(signal.SIGTERM)
    assert (status, rest, err) == (0, b"", b"")
    fresh = load_sessions(target)[-1]
    assert [e.id for e in find_empty_turns(fresh)] == ([] if fmt == "codex"
                                                       else [fresh.turns[2].id])
    assert stalled[0]["last_turn"]["id"] == fresh.turns[1].id  # type: ignore[index]


@pytest.mark.parametrize("fmt", ["claude-code", "opencode-storage", "codex"])
def test_a_reply_completed_later_with_nothing_visible(
    tmp_path: Path, watch_processes: list[Watch], fmt: str
) -> None:
    target, watch, writer = _live(tmp_path, fmt, "completed-later", watch_processes)
    assert [_brief(line) for line in watch.lines(1)] == [("stalled", "assistant", 1)]
    writer.step()  # the record that completes the reasoning-only reply
    expected = [("resumed", "assistant", 1), ("empty", "assistant", 1)]
    if fmt == "claude-code":
        expected.append(("stalled", "user", 2))  # completed by a prompt nobody answers
    lines = watch.lines(len(expected))
    assert [_brief(line) for line in lines] == expected
    _no_more(watch, 1.0)
    writer.close()
    assert watch.stop(signal.SIGINT) == (0, b"", b"")
    fresh = load_sessions(target)[-1]
    assert lines[1]["id"] == fresh.turns[1].id
    assert [e.id for e in find_empty_turns(fresh)] == [fresh.turns[1].id]


@pytest.mark.parametrize("fmt", ["claude-code", "opencode-storage", "codex"])
def test_a_reply_that_does_not_come_is_a_stall_until_it_does(
    tmp_path: Path, watch_processes: list[Watch], fmt: str
) -> None:
    target, watch, writer = _live(tmp_path, fmt, "no-reply", watch_processes)
    (stalled,) = watch.lines(1)
    asked = 2 if fmt == "claude-code" else 0
    assert _brief(stalled) == ("stalled", "user", asked)
    assert set(stalled) == {"event", "since", "last_turn", "path", "session_id"}
    writer.step()
    (resumed,) = watch.lines(1)
    assert _brief(resumed) == ("resumed", "user", asked)
    assert resumed["since"] == stalled["since"]
    assert isinstance(resumed["duration"], float) and resumed["duration"] >= float(STALL)
    _no_more(watch, 1.0)
    writer.close()
    assert watch.stop(signal.SIGTERM) == (0, b"", b"")
    assert find_empty_turns(load_sessions(target)[-1]) == []


def test_ctrl_c_prints_the_complete_empty_turns_not_yet_printed(
    tmp_path: Path, watch_processes: list[Watch]
) -> None:
    path = tmp_path / f"{SESSION_ID}.jsonl"
    path.write_bytes(user_line(0, "") + b"".join(assistant_lines(0, [
        {"type": "text", "text": "Hi."}])))
    watch = Watch(str(path), "--from-start")
    watch_processes.append(watch)
    # The first line printed: the first read is done and Ctrl-C is handled from now on.
    assert [line["id"] for line in watch.lines(1)] == ["u-0"]
    # Written, then Ctrl-C at once: before the watcher's next wake-up could print it.
    _append(path, user_line(1, ""))
    status, rest, err = watch.stop(signal.SIGINT)
    assert (status, err) == (0, b"")
    (line,) = [orjson.loads(raw) for raw in rest.splitlines()]
    assert (line["event"], line["id"], line["index"]) == ("empty", "u-1", 2)


def test_bad_stall_value_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(user_line(0, "hello"))
    result = subprocess.run([sys.executable, "-m", "replay", "watch", str(path),
                             "--stall", "soon"], capture_output=True, cwd=REPO,
                            timeout=WAIT_SECONDS)
    assert result.returncode == 2
    assert "expected a number of seconds" in result.stderr.decode()


def test_missing_replies_prints_the_placeholder_once_no_reply_is_coming(
    tmp_path: Path, watch_processes: list[Watch]
) -> None:
    from tests.core.test_missing_reply import GEMINI_HEAD, gemini_line

    path = tmp_path / "gemini.jsonl"
    path.write_bytes(orjson.dumps(GEMINI_HEAD) + b"\n"
                     + gemini_line("1", "user", "summarise the failing tests", 0))
    # --from-start: whatever the first read already finds is printed too, so no race.
    watch = Watch(str(path), "--missing-replies", "--from-start")
    watch_processes.append(watch)
    with pytest.raises(AssertionError, match="no output"):
        watch.lines(1, timeout=1.5)  # the request waits for its reply: nothing to say yet
    _append(path, gemini_line("2", "info", "Request cancelled.", 3))
    (line,) = watch.lines(1)
    assert {key: line[key] for key in ("event", "id", "index", "number", "placeholder",
                                       "role", "reason")} == {
        "event": "empty", "id": "1+no-reply", "index": 0, "number": 1, "placeholder": "#1+",
        "role": "assistant", "reason": "no-reply"}
    assert line["evidence"][:2] == ["no reply", "info: Request cancelled."]
    _append(path, gemini_line("3", "user", "summarise the failing tests", 8),
            gemini_line("4", "gemini", "Two tests fail.", 12))
    status, rest, err = watch.stop()
    assert status == 0 and rest == b"", (rest, err)


# -- a folder (#20) ---------------------------------------------------------------------------

def _wait_until_folder_watched(watch: Watch, folder: Path) -> None:
    """Return once the watcher reports a session started after it began (a probe file)."""
    deadline = time.monotonic() + WAIT_SECONDS
    number = 0
    probes: list[str] = []
    while True:
        probe = folder / f"probe-{number}.jsonl"
        probes.append(str(probe))
        # Ends with a local command's output: nothing is due, so no probe ever stalls.
        probe.write_bytes(user_line(0, "   ")
                          + user_line(1, "<local-command-stdout>ok</local-command-stdout>"))
        try:
            line = watch.lines(1, timeout=1.0)[0]
            break
        except AssertionError:
            assert time.monotonic() < deadline, "replay watch never printed a probe"
            number += 1
    # Probes written before the first walk are old sessions: never printed; any written
    # after it is printed once. One written while the walk ran may be printed after a later
    # one (on a busy machine): drained here, once each, so a test's own lines come next.
    assert line["path"] in probes and line["id"] == "u-0"
    seen = [line["path"]]
    due = set(probes[probes.index(str(line["path"])) + 1:])
    while True:
        try:
            (more,) = watch.lines(1, timeout=WAIT_SECONDS if due else 1.5)
        except AssertionError:
            break
        assert more["path"] in probes and more["path"] not in seen, (more, seen)
        seen.append(more["path"])
        due.discard(more["path"])
    assert not due, f"probes never printed: {sorted(due)}"


def test_watching_a_folder_follows_a_session_started_later(
    tmp_path: Path, watch_processes: list[Watch]
) -> None:
    from tests.core.test_follow import SIDE_RECORDS, _cc_line, _ended_claude

    project = tmp_path / "projects" / "-work-app"
    project.mkdir(parents=True)
    _ended_claude(project)  # ended long ago: never stalled
    waiting = project / "waiting.jsonl"
    waiting.write_bytes(user_line(0, "are you there?"))  # old, silent: not a stall either
    os.utime(waiting, (1_700_000_000, 1_700_000_000))
    watch = Watch(str(tmp_path / "projects"), "--stall", "3")
    watch_processes.append(watch)
    _wait_until_folder_watched(watch, project)
    # A new session, written as Claude Code writes it: a line at a time, with the person
    # typing ahead (a queue operation) between the thinking and the text of one message;
    # no silence reaches --stall while the reply is due.
    target = project / "22222222-3333-4444-5555-666666666666.jsonl"
    thinking = {"type": "thinking", "thinking": "plan", "signature": "s"}
    _append(target, user_line(0, "go"))
    time.sleep(0.3)
    _append(target, _cc_line(1, "msg_1", thinking, None))
    time.sleep(0.3)
    _append(target, orjson.dumps(SIDE_RECORDS["queue-operation"]) + b"\n")
    time.sleep(1.0)
    _append(target, orjson.dumps(SIDE_RECORDS["attachment"]) + b"\n")
    time.sleep(1.0)
    _append(target, _cc_line(3, "msg_1", {"type": "text", "text": "Done."}, "end_turn"))
    _append(target, user_line(4, "and the tests?"))
    _append(target, _cc_line(5, "msg_2", thinking, None))
    time.sleep(0.3)
    _append(target, _cc_line(6, "msg_2", {"type": "text", "text": ""}, "end_turn"))
    (line,) = watch.lines(1)
    assert (line["event"], line["id"], line["reason"]) == ("empty", "msg_2", "reasoning-only")
    assert line["path"] == str(target) and line["session_id"] == SESSION_ID
    # The session ends; nothing is due, so no stall however long the silence.
    _append(target, user_line(7, "<command-name>/exit</command-name>"),
            user_line(8, "<local-command-stdout>See ya!</local-command-stdout>"))
    time.sleep(4.5)
    code, rest, err = watch.stop()
    events = [orjson.loads(raw) for raw in rest.splitlines()]
    assert code == 0 and err == b""
    # See ya! is a user line with words; nothing else may be printed: no stall, no retract.
    assert events == []


def test_watching_codex_sessions_follows_a_new_days_folder(
    tmp_path: Path, watch_processes: list[Watch]
) -> None:
    from tests.core.test_follow import CODEX_META, _codex, _codex_prompt

    sessions = tmp_path / ".codex" / "sessions"
    yesterday = sessions / "2026" / "11" / "30"
    yesterday.mkdir(parents=True)
    old = yesterday / "rollout-2026-11-30T23-00-00-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    old.write_bytes(CODEX_META + _codex_prompt("an old prompt, never answered"))
    os.utime(old, (1_700_000_000, 1_700_000_000))
    watch = Watch(str(sessions), "--stall", "3")
    watch_processes.append(watch)
    time.sleep(1.5)  # its first walk: the old session is there before
    # Midnight: a new day's folder, and a session in it written record by record.
    today = sessions / "2026" / "12" / "01"
    today.mkdir(parents=True)
    target = today / "rollout-2026-12-01T00-00-05-019e1625-1111-76c0-80ab-3724b5ddb799.jsonl"
    for record in (CODEX_META, _codex_prompt("go"),
                   _codex("event_msg", {"type": "user_message", "message": "go"}),
                   _codex("turn_context", {"cwd": "/w"}),
                   _codex("event_msg", {"type": "token_count", "info": None}),
                   _codex("response_item", {"type": "reasoning", "summary": []}),
                   _codex("event_msg", {"type": "token_count", "info": None})):
        _append(target, record)
        time.sleep(0.3)
    # Token counts after the reasoning complete nothing: the step is still open.
    _no_more(watch, 1.0)
    _append(target, _codex("event_msg", {"type": "task_complete", "last_agent_message": None}))
    (line,) = watch.lines(1)
    assert (line["event"], line["reason"], line["path"]) == ("empty", "reasoning-only",
                                                            str(target))
    time.sleep(4.0)  # the task is complete: nothing is due, no stall however long
    code, rest, err = watch.stop()
    assert (code, rest, err) == (0, b"", b"")


def test_watch_local_follows_the_folders_of_every_agent(
    tmp_path: Path, watch_processes: list[Watch]
) -> None:
    from tests.core.test_follow import CODEX_META, _codex, _codex_prompt

    home = Path(os.environ["HOME"])  # the empty home every test discovers in
    projects = home / ".claude" / "projects"
    (projects / "-work-app").mkdir(parents=True)
    sessions = home / ".codex" / "sessions"
    sessions.mkdir(parents=True)
    watch = Watch("--local", "--stall", "30")
    watch_processes.append(watch)
    _wait_until_folder_watched(watch, projects / "-work-app")
    # A session of another agent, in a day folder that does not exist yet.
    day = sessions / "2026" / "12" / "01"
    day.mkdir(parents=True)
    rollout = day / "rollout-2026-12-01T00-00-05-019e1625-2222-76c0-80ab-3724b5ddb799.jsonl"
    _append(rollout, CODEX_META, _codex_prompt("go"),
            _codex("response_item", {"type": "reasoning", "summary": []}),
            _codex("event_msg", {"type": "task_complete", "last_agent_message": None}))
    (line,) = watch.lines(1)
    assert (line["path"], line["reason"]) == (str(rollout), "reasoning-only")
    code, rest, err = watch.stop()
    assert (code, rest, err) == (0, b"", b"")


def test_watch_without_path_or_local_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "replay", "watch"], capture_output=True,
                            cwd=REPO, timeout=30)
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr == b"replay: give a PATH (a session file, a folder or a database), " \
        b"or --local\n"
    empty = subprocess.run([sys.executable, "-m", "replay", "watch", "--local"],
                           capture_output=True, cwd=REPO, timeout=30)
    assert empty.returncode == 2 and empty.stderr.startswith(
        b"replay: --local: no session folder found on this machine (looked in ")
