"""`replay DIR --follow`: the session written now, a move to a new one (f stays), and labels
of turns that grew content after they were saved."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.widgets import Static

from replay.core.annotate.journal import Journal
from replay.ui import folder_follow
from replay.ui.screens.replay_screen import ReplayScreen
from tests.core.tool_writer import SESSION_ID, THINKING, cc_assistant, cc_user
from tests.ui.conftest import build_app, ready, wait_until

REPO = Path(__file__).resolve().parents[2]
OLD = 1_700_000_000


def _append(path: Path, *records: dict[str, Any]) -> None:
    with open(path, "ab") as stream:
        stream.write(b"".join(orjson.dumps(record) + b"\n" for record in records))


def _session_file(folder: Path, name: str, session_id: str, *records: dict[str, Any]) -> Path:
    path = folder / f"{name}.jsonl"
    _append(path, *({**record, "sessionId": session_id} for record in records))
    return path


def _banner(screen: ReplayScreen) -> str:
    return str(screen.query_one("#banner", Static).render())


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "-work-app"
    project.mkdir()
    old = _session_file(project, "old", "11111111-0000-4000-8000-000000000001",
                        cc_user(0, "an old question"),
                        cc_assistant(1, "msg_1", {"type": "text", "text": "An old answer."},
                                     stop="end_turn"))
    os.utime(old, (OLD, OLD))
    _session_file(project, "current", SESSION_ID, cc_user(0, "the current question"),
                  cc_assistant(1, "msg_1", {"type": "text", "text": "Working on it."},
                               stop="end_turn"))
    return project


@pytest.fixture
def quick_move(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(folder_follow, "MOVE_SECONDS", 0.6)


async def test_opens_the_session_written_last_and_moves_to_a_new_one(
        tmp_path: Path, quick_move: None) -> None:
    project = _project(tmp_path)
    app = build_app(project, follow=True, stall=30.0)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        assert screen.session.session_id == SESSION_ID and screen.live.silent_since is None
        # The old session is written again: followed, but the view stays where it is.
        _append(project / "old.jsonl", {**cc_user(2, "one more thing"),
                                        "sessionId": "11111111-0000-4000-8000-000000000001"})
        await pilot.pause(0.6)
        assert app.replay_screen is screen
        # A new session starts: said, then the app moves to it.
        new_id = "22222222-0000-4000-8000-000000000002"
        _session_file(project, "new", new_id,
                      cc_user(0, "write [b]notes[/b] for list[int]\x1b]0;pwned\x07"))
        await wait_until(pilot, lambda: any("New session started" in n.message
                                            for n in app._notifications), rounds=300)
        said = next(n.message for n in app._notifications if "New session started" in n.message)
        assert "write [b]notes[/b] for list[int]" in said and "f stays" in said
        assert "\x1b" not in said and "\x07" not in said and "␛" in said
        await wait_until(pilot, lambda: app.replay_screen is not screen, rounds=300)
        moved = app.replay_screen
        assert isinstance(moved, ReplayScreen) and moved.session.session_id == new_id
        await wait_until(pilot, lambda: not moved.indexing and moved.is_mounted)
        # It goes on being followed there: its reply's reasoning-only turn is a stop.
        _append(project / "new.jsonl",
                {**cc_assistant(1, "msg_9", THINKING), "sessionId": new_id},
                {**cc_assistant(2, "msg_9", {"type": "text", "text": ""}, stop="end_turn"),
                 "sessionId": new_id})
        await wait_until(pilot, lambda: moved.paused_at_empty, rounds=300)
        assert moved.index == 1 and "EMPTY TURN 1 / 1" in _banner(moved)


async def test_f_stays_on_the_session_shown(tmp_path: Path, quick_move: None) -> None:
    project = _project(tmp_path)
    app = build_app(project, follow=True, stall=30.0)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        _session_file(project, "new", "22222222-0000-4000-8000-000000000002",
                      cc_user(0, "another task"))
        await wait_until(pilot, lambda: any("New session started" in n.message
                                            for n in app._notifications), rounds=300)
        await pilot.press("f")
        await pilot.pause(1.2)
        assert app.replay_screen is screen and screen.session.session_id == SESSION_ID
        assert any("Staying on this session" in n.message for n in app._notifications)
        # This session is still followed.
        _append(project / "current.jsonl", cc_user(2, ""))
        await wait_until(pilot, lambda: screen.navigator.empty_indices == [2], rounds=300)


async def test_a_folder_with_no_session_yet_waits_for_one(tmp_path: Path) -> None:
    project = tmp_path / "empty-project"
    project.mkdir()
    app = build_app(project, follow=True, stall=30.0)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await wait_until(pilot, lambda: any("waiting for one" in n.message
                                            for n in app._notifications), rounds=300)
        _session_file(project, "first", SESSION_ID, cc_user(0, "hello"))
        await ready(pilot, app)
        assert app.replay_screen is not None
        assert app.replay_screen.session.session_id == SESSION_ID


async def test_a_label_saved_before_the_turn_showed_content_is_kept_and_said(
        tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    _append(path, cc_user(0, "start"))
    journal = tmp_path / "journal.jsonl"
    app = build_app(path, follow=True, stall=30.0, annotations=journal, reviewer="ann")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        # A blank text line with its stop reason: complete and empty, so a stop...
        _append(path, cc_assistant(1, "msg_1", {"type": "text", "text": "\n"}, stop="end_turn"))
        await wait_until(pilot, lambda: screen.paused_at_empty, rounds=300)
        await pilot.press("6", "enter")  # ...labelled `thinking` at once
        assert screen.store.get("msg_1") is not None
        # ...then the same message writes its words after all.
        _append(path, cc_assistant(2, "msg_1", {"type": "text", "text": "Here it is."},
                                   stop="end_turn"))
        await wait_until(pilot, lambda: not screen.paused_at_empty, rounds=300)
        await pilot.press("left", "right")
        assert screen.index == 1
        banner = _banner(screen)
        assert "shows content now" in banner and "label is kept" in banner
        assert any("shows content now" in n.message for n in app._notifications)
    records = Journal(journal).load().records
    assert [(r["label"], r.get("turn_has_content")) for r in records] == [
        ("thinking", None), ("thinking", True)]
    export = subprocess.run([sys.executable, "-m", "replay", "export", str(path),
                             "--annotations", str(journal)],
                            capture_output=True, cwd=REPO, timeout=30, check=True)
    (row,) = csv.DictReader(io.StringIO(export.stdout.decode("utf-8-sig")))
    assert (row["label"], row["empty_reason"], row["turn_now_has_content"]) == (
        "thinking", "", "true")
    agree = subprocess.run([sys.executable, "-m", "replay", "agree", str(journal), "--json"],
                           capture_output=True, cwd=REPO, timeout=30, check=True)
    assert json.loads(agree.stdout)["left_out_with_content"] == 1


@pytest.mark.parametrize("ended", [True, False])
async def test_silent_for_counts_from_the_last_write_and_never_after_the_end(
        tmp_path: Path, ended: bool) -> None:
    path = tmp_path / "s.jsonl"
    records = [cc_user(0, "go"), cc_assistant(1, "msg_1", {"type": "text", "text": "Done."},
                                              stop="end_turn")]
    if ended:
        records += [cc_user(2, "<command-name>/exit</command-name>"),
                    cc_user(3, "<local-command-stdout>See ya!</local-command-stdout>")]
    else:
        records += [cc_user(2, "and the docs?")]
    _append(path, *records)
    os.utime(path, (OLD, OLD))
    app = build_app(path, follow=True, stall=0.3)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        await pilot.pause(0.8)
        if ended:
            assert screen.live.silent_since is None
            assert "silent" not in str(screen.status_text())
        else:
            # Silent since the file was last written, long before following began.
            assert screen.live.silent_since == OLD
            assert "silent for" in str(screen.status_text())


async def test_follow_local_follows_the_machines_session_folders(
        tmp_path: Path, quick_move: None) -> None:
    from replay.core.discovery import discovery_roots

    home = Path(os.environ["HOME"])  # the empty home every test discovers in
    project = home / ".claude" / "projects" / "-work-app"
    project.mkdir(parents=True)
    _session_file(project, "current", SESSION_ID, cc_user(0, "hello"))
    roots = discovery_roots()
    assert roots == [home / ".claude" / "projects"]
    app = build_app(roots[0], follow=True, stall=30.0, follow_roots=roots)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        assert app.replay_screen is not None
        assert app.replay_screen.session.session_id == SESSION_ID


def test_local_without_follow_is_one_line() -> None:
    result = subprocess.run([sys.executable, "-m", "replay", "--local"], capture_output=True,
                            cwd=REPO, timeout=30)
    assert result.returncode == 2
    assert result.stderr.startswith(b"replay: --local goes with --follow here")
    empty = subprocess.run([sys.executable, "-m", "replay", "--follow", "--local"],
                           capture_output=True, cwd=REPO, timeout=30)
    assert empty.returncode == 2 and empty.stderr.startswith(
        b"replay: --local: no session folder found on this machine (looked in ")
