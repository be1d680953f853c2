"""A note typed and not entered survives the app being ended: SIGTERM, SIGHUP sent, the
terminal closed (which sends SIGHUP), and even SIGKILL (the drafts kept every few seconds
while typing). The app runs as a user runs it, in a real pseudo-terminal; the next launch
finds the draft back at its stop, and the journal keeps what was saved before."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import sys
import time
from pathlib import Path

import pytest

from replay.ui.drafts import drafts_path
from replay.ui.hangup import AUTOSAVE_SECONDS
from replay.ui.screens.replay_screen import ReplayScreen
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.sessions import write_chat

REPO = Path(__file__).resolve().parents[2]
TYPED = "list[int] [/] [link=x] later"
ESCAPES = re.compile(rb"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-_])")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pseudo-terminal")


class Terminal:
    """`replay FILE` in a pseudo-terminal of its own (its controlling terminal)."""

    def __init__(self, session: Path, journal: Path, env: dict[str, str]) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: becomes replay, the pty its terminal
            os.chdir(REPO)
            os.execve(sys.executable, [sys.executable, "-m", "replay", str(session),
                                       "--annotations", str(journal)], env)
        self.pid, self.fd = pid, fd
        os.set_blocking(fd, False)
        self.seen = b""

    def read(self, seconds: float) -> None:
        """What the app draws for `seconds` (stops early once the terminal is gone)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.fd < 0:
                time.sleep(0.05)
                continue
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                try:
                    self.seen += os.read(self.fd, 65536)
                except OSError:
                    return

    def shown(self, since: int = 0) -> str:
        return ESCAPES.sub(b"", self.seen[since:]).decode("utf-8", "replace")

    def wait_for(self, text: str, seconds: float = 60.0, since: int = 0) -> None:
        """Read until `text` is drawn (in what came after byte `since` of the output)."""
        deadline = time.monotonic() + seconds
        while text not in self.shown(since):
            assert time.monotonic() < deadline, f"never showed {text!r}: {self.shown()[-800:]}"
            self.read(0.1)

    def type(self, keys: str) -> None:
        for key in keys:  # one at a time, as typed (a burst could be read as a paste)
            os.write(self.fd, key.encode())
            self.read(0.02)

    def ended(self, seconds: float = 20.0) -> int:
        """The exit status once the app has ended (it must, by itself)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.read(0.05)
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        raise AssertionError(f"the app did not end: {self.shown()[-800:]}")

    def close(self) -> None:
        """Close the terminal's side of it (as a terminal window closed)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def environment(tmp_path: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env.update(TERM="xterm-256color", COLUMNS="120", LINES="36",
               REPLAY_CACHE_DIR=str(tmp_path / "cache"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"))
    return env


@pytest.mark.parametrize("ending", ["SIGTERM", "SIGHUP", "terminal closed", "SIGKILL"])
async def test_a_draft_typed_when_the_app_is_ended_is_back_next_launch(
        tmp_path: Path, ending: str) -> None:
    session = write_chat(tmp_path / "migration.json")
    journal = tmp_path / "j.jsonl"
    # Saved before: one annotation the ending must leave as it is.
    app = build_app(session, annotations=journal)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        await pilot.press("1", "tab", *"saved first", "enter")
        await pilot.pause()
        await pilot.press("right_square_bracket")
        await pilot.pause()
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running)
    saved = journal.read_bytes()
    assert b"saved first" in saved

    terminal = Terminal(session, journal, environment(tmp_path))
    try:
        terminal.wait_for("turn 21 / 30")  # resumed at the first stop not annotated (#21)
        terminal.type("2\t")
        # (The focus moves to the note field as its own message: on a loaded machine a key
        # typed within milliseconds of tab can still reach the screen.)
        terminal.read(1.0)
        terminal.type(TYPED)
        terminal.wait_for("1 draft not saved")
        # Keys are handled in order: once escape (leaving the note field) has brought the
        # screen's bindings back to the footer, every key typed before it was handled too.
        before = len(terminal.seen)
        terminal.type("\x1b")
        terminal.wait_for("Play/pause", since=before)
        if ending == "terminal closed":
            terminal.close()
        elif ending == "SIGKILL":
            # No handler sees it: what was kept while typing is what is left.
            deadline = time.monotonic() + 2 * AUTOSAVE_SECONDS + 30
            while TYPED not in (drafts_path(journal).read_text(encoding="utf-8")
                                if drafts_path(journal).exists() else ""):
                assert time.monotonic() < deadline, (
                    "the draft was never kept while typing: "
                    + (drafts_path(journal).read_text(encoding="utf-8")
                       if drafts_path(journal).exists() else "no file"))
                terminal.read(0.1)
            os.kill(terminal.pid, signal.SIGKILL)
        else:
            os.kill(terminal.pid, getattr(signal, ending))
        code = terminal.ended()
    finally:
        terminal.close()
    if ending == "SIGKILL":
        assert code == -signal.SIGKILL
    else:
        number = signal.SIGTERM if ending == "SIGTERM" else signal.SIGHUP
        assert code == 128 + number  # ended by the signal, by its own exit: not mid-way
    kept = json.loads(drafts_path(journal).read_text(encoding="utf-8"))["drafts"]
    assert [(item["stop"], item["label"], item["note"]) for item in kept] == \
        [("m020", "approval", TYPED)]
    assert journal.read_bytes() == saved  # the journal as it was: nothing lost, nothing added
    if ending == "SIGTERM":
        terminal_text = terminal.shown()
        assert "kept for the next run" in terminal_text

    # The next launch puts it back at its stop, as a draft (enter saves it).
    app = build_app(session, annotations=journal)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen) and screen.index == 20
        assert screen.annotation.note == TYPED
        assert screen.annotation.pending_label == "approval"
        assert screen.store.get("m009") is not None and screen.store.get("m020") is None
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: screen.store.get("m020") is not None)
        app.exit()
    text = journal.read_text(encoding="utf-8")
    assert "saved first" in text and "later" in text


async def test_ended_with_annotations_the_journal_could_not_take_writes_them_elsewhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.annotate.journal import Journal
    from replay.ui.hangup import ended_by
    from replay.ui.quitting import UNSAVED_NAME

    monkeypatch.chdir(tmp_path)
    session = write_chat(tmp_path / "migration.json")
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the journal's folder should be", encoding="utf-8")
    app = build_app(session, annotations=blocker / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        await pilot.press("4", "enter")
        await pilot.pause()
        assert len(screen.store.unsaved) == 1
        ended_by(app, signal.SIGTERM)  # as the loop's handler calls it
        await wait_until(pilot, lambda: not app.is_running)
    assert app.return_code == 128 + signal.SIGTERM
    rescued = tmp_path / UNSAVED_NAME
    records = Journal(rescued).load().records
    assert [(record["turn_id"], record["label"]) for record in records] == \
        [("m009", "reflect")]
