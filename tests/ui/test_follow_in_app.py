"""Following a growing session in the app: new turns arrive, a new empty turn pauses the view."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import orjson
from textual.widgets import Static

from replay.core.annotate.annotations import default_journal_path, session_identity
from replay.core.annotate.journal import Journal
from replay.core.readers import load_sessions
from replay.core.session.model import Session
from replay.ui.screens.replay_screen import ReplayScreen
from replay.ui.widgets.timeline import Timeline
from tests.core.tool_writer import SESSION_ID, THINKING, cc_assistant, cc_user
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.sessions import START, write_chat_jsonl

REPO = Path(__file__).resolve().parents[2]


def append(path: Path, *messages: dict[str, object]) -> None:
    with open(path, "a", encoding="utf-8") as stream:
        for message in messages:
            stream.write(json.dumps(message) + "\n")


def message(index: int, role: str, content: str) -> dict[str, object]:
    return {"id": f"m{index:03d}", "role": role, "content": content,
            "timestamp": START + index * 40}


async def test_new_turns_arrive_and_a_new_empty_turn_pauses(tmp_path: Path) -> None:
    path = write_chat_jsonl(tmp_path / "live.jsonl", turns=10)
    app = build_app(path, follow=True)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        assert screen.index == 9 and screen.live.at_live_end
        append(path, message(10, "user", "next step please"))
        await wait_until(pilot, lambda: len(screen.session.turns) == 11, rounds=300)
        await wait_until(pilot, lambda: screen.index == 10)
        append(path, message(11, "assistant", ""), message(12, "user", "hello?"))
        await wait_until(pilot, lambda: len(screen.navigator.empty_indices) == 1, rounds=300)
        await wait_until(pilot, lambda: screen.index == 11)
        assert screen.paused_at_empty and not screen.live.at_live_end
        await wait_until(pilot, lambda: screen.live.new_turns == 1)
        assert "+1 new turn (f)" in str(screen.status_text())
        append(path, message(13, "assistant", "Sorry, here it is."))
        await wait_until(pilot, lambda: len(screen.session.turns) == 14, rounds=300)
        await wait_until(pilot, lambda: screen.live.new_turns == 2)
        assert screen.index == 11
        assert "+2 new turns" in str(screen.status_text())
        await pilot.press("f")
        assert screen.index == 13 and screen.live.new_turns == 0
        ids = [turn.id for turn in screen.session.turns]
        assert ids == [f"m{i:03d}" for i in range(14)]


async def test_annotating_while_the_file_grows(tmp_path: Path) -> None:
    path = write_chat_jsonl(tmp_path / "live.jsonl", turns=6, empty_at=(3,))
    app = build_app(path, follow=True, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        await pilot.press("left_square_bracket")
        assert screen.index == 3
        append(path, message(6, "user", "and now?"))
        await wait_until(pilot, lambda: len(screen.session.turns) == 7, rounds=300)
        await pilot.press("1", "enter")
        assert screen.store.get("m003").label == "continue"  # type: ignore[union-attr]
        assert screen.index == 3


# -- Claude Code written the way it writes, with what the screen shows at each moment --------

def _cc_append(path: Path, *records: dict[str, object]) -> None:
    with open(path, "ab") as stream:
        stream.write(b"".join(orjson.dumps(record) + b"\n" for record in records))


def _banner(screen: ReplayScreen) -> str:
    return str(screen.query_one("#banner", Static).render())


async def test_a_reply_still_being_written_is_never_a_stop(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    _cc_append(path, cc_user(0, "please fix the test"))
    app = build_app(path, follow=True, stall=30.0)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        # The reply's thinking line, and nothing after it for a while.
        _cc_append(path, cc_assistant(1, "msg_1", THINKING))
        await wait_until(pilot, lambda: len(screen.session.turns) == 2, rounds=300)
        await pilot.pause(0.5)
        assert (screen.index, screen.live.pending) == (1, 1)
        assert screen.navigator.empty_indices == []
        assert not screen.paused_at_empty and screen.live.at_live_end
        assert "EMPTY TURN" not in _banner(screen)
        assert "paused at empty turn" not in str(screen.status_text())
        # Its text arrives: still no stop, the view stays at the live end.
        _cc_append(path, cc_assistant(2, "msg_1", {"type": "text", "text": "Fixed."},
                                      stop="end_turn"))
        await wait_until(pilot, lambda: screen.live.pending is None, rounds=300)
        assert screen.navigator.empty_indices == [] and screen.index == 1
        # An empty user line ends the file: complete at once, the view stops at it.
        _cc_append(path, cc_user(3, ""))
        await wait_until(pilot, lambda: screen.navigator.empty_indices == [2], rounds=300)
        assert screen.index == 2 and screen.paused_at_empty and not screen.live.at_live_end
        assert "EMPTY TURN 1 / 1" in _banner(screen)
        # Whatever arrives after it, the view stays until the reviewer moves.
        _cc_append(path, cc_assistant(4, "msg_2", {"type": "text", "text": "Anything else?"},
                                      stop="end_turn"))
        _cc_append(path, cc_user(5, "no, thanks"))
        await wait_until(pilot, lambda: len(screen.session.turns) == 5, rounds=300)
        await wait_until(pilot, lambda: screen.live.new_turns == 2)
        assert screen.index == 2 and screen.paused_at_empty
        assert "paused at empty turn" in str(screen.status_text())
        assert "+2 new turns" in str(screen.status_text())
        await pilot.press("f")
        assert (screen.index, screen.live.new_turns, screen.live.at_live_end) == (4, 0, True)


async def test_a_stall_shows_how_long_the_session_is_silent(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    _cc_append(path, cc_user(0, "start"), cc_assistant(1, "msg_1", {"type": "text",
                                                                    "text": "Ready."},
                                                       stop="end_turn"))
    app = build_app(path, follow=True, stall=0.6)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        timeline = screen.query_one(Timeline)
        # The agent's reply ended: the person is due, that is no stall.
        await pilot.pause(1.2)
        assert screen.live.silent_since is None and "silent" not in str(screen.status_text())
        _cc_append(path, cc_user(2, "run the migration"))
        # The timeline hears of the silence by a message after the follower: wait for both.
        await wait_until(pilot, lambda: screen.live.silent_since is not None
                         and timeline.silence.startswith("silent for"), rounds=300)
        assert "silent for" in str(screen.status_text())
        await pilot.pause()
        timeline_row = timeline.render_line(1).text
        assert timeline_row.rstrip().endswith("▏") and "silent for" in timeline_row
        # The reply comes: the silence is over.
        _cc_append(path, cc_assistant(3, "msg_2", {"type": "text", "text": "Done."},
                                      stop="end_turn"))
        await wait_until(pilot, lambda: screen.live.silent_since is None
                         and timeline.silence == "", rounds=300)
        assert "silent" not in str(screen.status_text())


async def test_a_stop_that_shows_content_after_all_is_left(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    _cc_append(path, cc_user(0, "start"))
    app = build_app(path, follow=True, stall=30.0)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        # A blank text line that says its message ended: complete, empty, a stop...
        _cc_append(path, cc_assistant(1, "msg_1", {"type": "text", "text": "\n\n"},
                                      stop="end_turn"))
        await wait_until(pilot, lambda: screen.paused_at_empty, rounds=300)
        assert screen.index == 1
        # ...until the same message writes its words after all: the stop is taken back.
        _cc_append(path, cc_assistant(2, "msg_1", {"type": "text", "text": "Here it is."},
                                      stop="end_turn"))
        await wait_until(pilot, lambda: not screen.paused_at_empty, rounds=300)
        assert screen.navigator.empty_indices == [] and screen.live.at_live_end
        assert "EMPTY TURN" not in _banner(screen)


async def test_annotations_made_while_following_an_empty_file_are_found_again(
    tmp_path: Path
) -> None:
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"")
    app = build_app(path, follow=True, stall=30.0)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        assert screen.store.session_id.startswith("path-")
        _cc_append(path, cc_user(0, "go on"), cc_assistant(1, "msg_1", THINKING),
                   cc_user(2, "hello?"))
        await wait_until(pilot, lambda: screen.paused_at_empty, rounds=300)
        assert screen.index == 1
        await pilot.press("6", "enter")
        assert screen.store.session_id == SESSION_ID
        assert screen.store.get("msg_1").label == "thinking"  # type: ignore[union-attr]
    # Reopened later, not following: the annotation is there.
    again = build_app(path)
    async with again.run_test(size=(120, 36)) as pilot:
        await ready(pilot, again)
        screen = again.replay_screen
        assert isinstance(screen, ReplayScreen)
        assert "1 / 1 annotated" in str(screen.status_text())
    # And `replay export` writes its row.
    result = subprocess.run([sys.executable, "-m", "replay", "export", str(path)],
                            capture_output=True, cwd=REPO, timeout=30, check=True)
    rows = list(csv.DictReader(io.StringIO(result.stdout.decode("utf-8-sig"))))
    assert [(row["session_id"], row["turn_id"], row["label"]) for row in rows] == [
        (SESSION_ID, "msg_1", "thinking")]


async def test_records_filed_under_the_path_are_carried_over(tmp_path: Path) -> None:
    """Records a reviewer made under the path key (an older version, or a move cut short)
    are copied under the session id when the file is opened, the originals kept."""
    path = tmp_path / "live.jsonl"
    _cc_append(path, cc_user(0, "go on"), cc_assistant(1, "msg_1", THINKING),
               cc_user(2, "hello?"))
    session = load_sessions(path)[0]
    bare = Session(path=session.path, format=session.format)
    old = Journal(default_journal_path(bare))
    record = {"v": 1, "session_id": session_identity(bare), "turn_id": "msg_1",
              "turn_index": 1, "label": "artifact", "note": "kept", "confidence": "high",
              "reviewer": "ann", "time": "2026-03-01T10:00:00.000Z"}
    old.append(record)
    app = build_app(path, reviewer="ann")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        assert screen.store.get("msg_1").note == "kept"  # type: ignore[union-attr]
    assert old.load().records == [record]
    moved = Journal(default_journal_path(session)).load().records
    assert moved == [{**record, "session_id": SESSION_ID}]
