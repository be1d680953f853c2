"""A word past the head of a long message held in memory is found: the app's readers cut
every text over `PREVIEW_CHARS` (400 characters) held in memory to its head
(`Part.shortened`), and a search looked through that head only, so the last line of a 5 KB
or a 2 MB message (under the 8 MB past which a record is left in its file) was no match
on main, though the view shows it. Now a shortened turn is looked through whole, read back
from its file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input

from replay.core.index.navigation import Navigator
from replay.core.readers import huge_strings, load_sessions
from replay.ui.screens.search_prompt import SearchPrompt
from replay.ui.widgets.turn_view import TurnLines
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.test_huge_message_formats import claude_code, claude_code_result, codex

LINE = "log line lorem ipsum dolor sit amet 0123456789 abcdefghij\n"
WORD = "zqxlastword"


def _text(chars: int) -> str:
    """About `chars` characters of log lines, the last of them holding WORD."""
    return LINE * (chars // len(LINE)) + f"the final line holds {WORD.upper()}"


@pytest.mark.parametrize("make", [claude_code, codex, claude_code_result])
@pytest.mark.parametrize("chars", [5_000, 2_000_000])
async def test_a_word_on_the_last_line_is_found_and_shown(
        tmp_path: Path, make: Callable[[Path, str], Path], chars: int) -> None:
    path = make(tmp_path, _text(chars))
    app = build_app(path, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        await pilot.press("slash")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchPrompt))
        app.screen.query_one("#prompt-input", Input).value = WORD
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: not screen.searching.finding
                         and not [w for w in app.workers if not w.is_finished], rounds=3000)
        assert screen.index == 1  # (a tool result is shown on its call)
        assert list(screen.navigator.matches(WORD)) == [screen.index]
        current = screen.query_one("#current", TurnLines)
        await wait_until(pilot, lambda: any(
            WORD.upper() in "".join(segment.text for segment in current.render_line(y))
            for y in range(current.scrollable_content_region.height)), rounds=300)


@pytest.mark.parametrize("make", [claude_code, codex])
@pytest.mark.parametrize("lift", [False, True])
def test_the_core_search_finds_it_in_a_session_read_whole_or_indexed(
        tmp_path: Path, make: Callable[[Path, str], Path], lift: bool) -> None:
    path = make(tmp_path, _text(2_000_000))
    huge_strings.enable(lift)
    try:
        for indexed in (False, True):
            navigator = Navigator(load_sessions(path, indexed=indexed)[0])
            assert list(navigator.matches(WORD)) == [1]
            assert navigator.search(WORD, 0) == 1
            assert navigator.search(WORD, 3, forward=False) == 1
            assert list(navigator.matches(WORD + "x")) == []
    finally:
        huge_strings.enable(False)
