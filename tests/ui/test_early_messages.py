"""Messages that reach a screen before it is composed (a worker thread posts them as soon as
it reads, and under load the new screen may not have run its compose yet): skipped or kept
for later, never a `NoMatches` that ends the app. Each test calls the app's handler in the
very turn the screen is pushed, before any await lets it compose: the ordering a loaded
machine gives now and then, made certain."""

from __future__ import annotations

import time
from pathlib import Path

from textual.widgets import ProgressBar

from replay.core.readers import load_sessions
from replay.ui.app import LoadingScreen
from replay.ui.messages import LoadProgress, SilenceChanged, TurnsAdded
from replay.ui.widgets.timeline import Timeline
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.sessions import write_chat_jsonl


async def test_load_progress_before_the_loading_screen_is_composed(tmp_path: Path) -> None:
    # Fixed in 6d97603 (it was `query_one(ProgressBar)`): failed on 4ef31cb.
    path = write_chat_jsonl(tmp_path / "c.jsonl", turns=6, empty_at=(3,))
    app = build_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        app.push_screen(LoadingScreen(Path("[/] list[int] [link=x]")))
        assert isinstance(app.screen, LoadingScreen) and not app.screen.query(ProgressBar)
        app.show_progress(LoadProgress(1, 4))  # before the bar exists
        await wait_until(pilot, lambda: bool(app.screen.query(ProgressBar)))
        app.show_progress(LoadProgress(3, 4))
        await pilot.pause()
        assert app.screen.query_one(ProgressBar).progress == 75
        assert app.return_code is None


async def test_a_followed_files_messages_before_its_screen_is_composed(tmp_path: Path) -> None:
    # The follower's thread posts the session, its turns and its silence one after the other;
    # the replay screen they are for may not be composed when they are handled.
    path = write_chat_jsonl(tmp_path / "live.jsonl", turns=6, empty_at=(3,))
    app = build_app(path, follow=True, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        first = app.replay_screen
        [session] = load_sessions(path)
        app.open_session(session, loading=True)  # a new screen, not composed yet
        screen = app.replay_screen
        assert screen is not None and screen is not first and not screen.query(Timeline)
        app.show_silence(SilenceChanged(time.time() - 600))
        app.grow_session(TurnsAdded(session, 0, done=True))
        app.show_silence(SilenceChanged(None))
        await wait_until(pilot, lambda: screen.is_mounted and bool(screen.query(Timeline))
                         and not screen.indexing)
        await pilot.pause()
        assert app.return_code is None and app.screen is screen
        assert screen.index == 5  # following: the last turn, once the turns were handled


async def test_a_followed_files_turns_that_come_once_its_screen_is_gone(tmp_path: Path) -> None:
    # The app closing: its screens' widgets are removed while the follower's thread still
    # posts (an annotation saved beside the followed file wakes it). The screen stays
    # "mounted" while its widgets go; handling the turns then was a NoMatches on its
    # Timeline that ended the app with a traceback (the flaky test_annotating_while_the_file_grows).
    from textual.screen import Screen

    path = write_chat_jsonl(tmp_path / "live.jsonl", turns=6, empty_at=(3,))
    app = build_app(path, follow=True, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        await app.switch_screen(Screen())  # the replay screen is removed, as at exit
        await wait_until(pilot, lambda: not screen.is_running)
        assert screen.is_mounted and not screen.query(Timeline)
        app.grow_session(TurnsAdded(screen.session, 0, done=True))
        app.show_silence(SilenceChanged(time.time() - 600))
        await pilot.pause()
        assert app.return_code is None
