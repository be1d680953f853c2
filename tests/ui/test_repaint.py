"""A step repaints the panes it changes and nothing else, yet heights, scroll bars and scroll
positions still follow the content (the no-layout fast path must not leave them stale)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static

from replay.ui.widgets.turn_view import TurnLines
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.sessions import START, write_chat
from tests.ui.test_replay_screen import screen_of


def write_uneven(path: Path) -> Path:
    """A chat whose turns alternate between one line and sixty lines."""
    messages = []
    for index in range(24):
        lines = 60 if index % 4 in (1, 2) else 1
        content = "" if index == 13 else "\n".join(
            f"turn {index} line {line}" for line in range(lines))
        messages.append({"id": f"u{index:02d}", "role": "user" if index % 2 == 0 else "assistant",
                         "content": content, "timestamp": START + index * 30})
    path.write_text(json.dumps({"id": "uneven", "messages": messages}), encoding="utf-8")
    return path


async def test_a_step_repaints_the_panes_without_a_layout_pass(chat_file: Path) -> None:
    app = build_app(chat_file)
    # Tall enough that every pane's turns fit: no scroll bar comes or goes while stepping.
    async with app.run_test(size=(120, 60)) as pilot:
        await ready(pilot, app)
        await pilot.press("home")
        await pilot.pause()
        screen = screen_of(app)
        layouts: list[object] = []
        # Published after every layout pass, which repaints the whole screen.
        screen.screen_layout_refresh_signal.subscribe(screen, layouts.append)
        current = screen.query_one("#current", TurnLines)
        for index in range(1, 5):
            await pilot.press("right")
            await pilot.pause()
            assert screen.index == index
            assert current.plain_text.startswith(f"#{index + 1} ")
        assert layouts == []
        await pilot.press("right_square_bracket")  # the banner appears: that needs one
        await pilot.pause()
        assert layouts


@pytest.mark.parametrize("width", [60, 120])
async def test_banner_height_follows_its_text(chat_file: Path, width: int) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(width, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        banner = screen.query_one("#banner", Static)

        def wrapped_lines() -> int:
            console = Console(width=banner.content_size.width, file=io.StringIO())
            text = screen.banner_text(screen.session.turns[screen.index],
                                      screen.empty_turn(screen.index))
            return min(3, len(text.wrap(console, banner.content_size.width)))

        assert screen.index == 9
        assert banner.size.height == wrapped_lines() >= 2  # the alarm and its evidence
        await pilot.press("right")
        await pilot.pause()
        assert not banner.display  # an ordinary turn without subagents has no banner
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert screen.index == 20 and banner.size.height == wrapped_lines()


async def test_scroll_bars_and_positions_follow_each_step(tmp_path: Path) -> None:
    app = build_app(write_uneven(tmp_path / "uneven.json"))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        before = screen.query_one("#before", TurnLines)
        after = screen.query_one("#after", TurnLines)
        screen.panes.set_reactive(type(screen.panes).context_turns, 1)
        seen, scrolled = set(), set()
        for index in range(0, 23):
            screen.index = index
            await pilot.pause()
            for pane in (before, after):
                lines = len(pane.plain_text.splitlines()) if pane.indices else 0
                fits = lines <= pane.container_size.height
                assert pane.virtual_size.height == lines
                assert pane.show_vertical_scrollbar is not fits, (index, pane.id)
                seen.add(fits)
            # Before ends at the turn just before the current one; After starts at its top.
            assert before.scroll_y == before.max_scroll_y
            assert after.scroll_y == 0
            scrolled.add(before.scroll_y > 0)
        assert seen == {True, False} and scrolled == {True, False}


@pytest.mark.parametrize("width", [80, 160])
async def test_empty_turn_pane_height_follows_the_turn(tmp_path: Path, width: int) -> None:
    path = write_chat(tmp_path / "chat.json", turns=30, empty_at=(9, 20))
    app = build_app(path)
    async with app.run_test(size=(width, 36)) as pilot:
        await ready(pilot, app)
        current = screen_of(app).query_one("#current", TurnLines)
        assert screen_of(app).index == 9
        at_empty = current.size.height
        assert at_empty <= len(current.plain_text.splitlines()) + 1
        await pilot.press("right")
        await pilot.pause()
        assert current.size.height > at_empty  # an ordinary turn takes the free height


async def test_garbage_is_collected_once_the_reviewer_pauses(
        chat_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gc
    from types import SimpleNamespace

    import replay.ui.app as app_module

    collected: list[float] = []
    monkeypatch.setattr(app_module, "gc", SimpleNamespace(
        freeze=gc.freeze, collect=lambda: collected.append(1)))
    monkeypatch.setattr(app_module, "IDLE_COLLECT_SECONDS", 1.0)
    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        await pilot.pause(1.2)
        collected.clear()
        for _ in range(5):  # a burst of steps: nothing collected while they come
            await pilot.press("right")
        assert collected == []
        await wait_until(pilot, lambda: bool(collected))  # the reviewer reads: one
        await pilot.pause(1.2)
        assert collected == [1]  # and no more while nothing happens
