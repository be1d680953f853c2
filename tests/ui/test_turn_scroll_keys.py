"""Issue 27: keys scroll the current turn (a line, a page, its top and its end), so the end of
an unfolded huge message is reached without the mouse; they are remappable by id, and typing
a note never scrolls."""

from __future__ import annotations

import json
from pathlib import Path

from textual.pilot import Pilot

from replay.config import Settings
from replay.ui.app import ReplayApp
from replay.ui.widgets.annotation_bar import NoteInput
from replay.ui.widgets.turn_view import TurnLines
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.test_huge_message_formats import chat_json

LINE = "line {n:05d} [/] [link=https://x]click[/link] list[int] 日本語のテキスト"


def _long_chat(folder: Path, lines: int = 4000) -> Path:
    return chat_json(folder, "\n".join(LINE.format(n=n) for n in range(lines)))  # > 100,000 chars


async def _at_the_long_message(pilot: Pilot[None], app: ReplayApp) -> TurnLines:
    """The current pane, once the session is read and the long message is the current turn."""
    await ready(pilot, app)
    screen = app.replay_screen
    assert screen is not None
    screen.go(1)
    await pilot.pause()
    return screen.query_one("#current", TurnLines)


def _shown(pane: TurnLines) -> list[str]:
    height = pane.scrollable_content_region.height
    return ["".join(segment.text for segment in pane.render_line(y)).strip()
            for y in range(height)]


async def test_keys_scroll_an_unfolded_huge_message_to_its_end_and_back(
        tmp_path: Path) -> None:
    app = build_app(_long_chat(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await _at_the_long_message(pilot, app)
        await pilot.press("o")  # the whole message, a screen at a time
        await pilot.pause()
        assert pane._long and pane.max_scroll_y > 3900
        page = pane.scrollable_content_region.height
        assert pane.scroll_y == 0
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert pane.scroll_y == pane.max_scroll_y
        assert any(row.startswith("line 03999 [/] [link=https://x]") for row in _shown(pane))
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert pane.scroll_y == 0 and _shown(pane)[0].startswith("#2 assistant")
        await pilot.press("pagedown")
        assert pane.scroll_y == page
        await pilot.press("ctrl+f")
        assert pane.scroll_y == 2 * page
        await pilot.press("pageup")
        assert pane.scroll_y == page
        await pilot.press("ctrl+b")
        assert pane.scroll_y == 0
        for key, top in (("down", 1), ("j", 2), ("j", 3), ("up", 2), ("k", 1)):
            await pilot.press(key)
            assert pane.scroll_y == top, key
        await pilot.press("ctrl+down")
        assert pane.scroll_y == pane.max_scroll_y
        await pilot.press("ctrl+up")
        assert pane.scroll_y == 0
        assert app.replay_screen is not None and app.replay_screen.index == 1  # same turn


async def test_the_scrolling_keys_are_remapped_by_id(tmp_path: Path) -> None:
    settings = Settings(animations=False, keymap={"page-turn-down": "f6",
                                                  "turn-text-end": "f7"})
    app = build_app(_long_chat(tmp_path), settings=settings)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await _at_the_long_message(pilot, app)
        await pilot.press("pagedown", "ctrl+end")  # the keymap took these ids elsewhere
        assert pane.scroll_y == 0
        await pilot.press("f6")
        assert pane.scroll_y == pane.scrollable_content_region.height
        await pilot.press("f7")
        await pilot.pause()
        assert pane.scroll_y == pane.max_scroll_y > 0


async def test_typing_a_note_never_scrolls_the_turn(tmp_path: Path) -> None:
    """At a stop whose reasoning is unfolded (long, scrolled by the keys), the note field
    takes j and k as letters, and the arrows, pages, top and end keys do nothing there."""
    thinking = "\n".join(f"thought {n}: maybe the schema" for n in range(300))
    path = tmp_path / "think.json"
    path.write_text(json.dumps({"id": "t", "messages": [
        {"role": "user", "content": "go on"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": thinking}]},
        {"role": "user", "content": "and?"}, {"role": "assistant", "content": "done"}]}))
    app = build_app(path, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None and screen.index == 1  # the reasoning-only stop
        await pilot.press("o")
        await pilot.pause()
        pane = screen.query_one("#current", TurnLines)
        assert pane.max_scroll_y > 100
        await pilot.press("pagedown")
        top = pane.scroll_y
        assert top > 0  # the keys scroll this pane...
        await pilot.press("tab")
        note = screen.query_one("#annotation-note", NoteInput)
        await wait_until(pilot, lambda: note.has_focus)
        await pilot.press("j", "k", "down", "up", "pagedown", "pageup", "ctrl+end",
                          "ctrl+home", "ctrl+f", "ctrl+b")
        await pilot.pause()
        assert note.value == "jk"  # ...but not while a note is typed
        assert pane.scroll_y == top
        await pilot.press("escape", "j")
        assert pane.scroll_y == top + 1  # out of the field, they scroll again
