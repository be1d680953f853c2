"""Transcript text that looks like markup or carries terminal sequences is shown literally on
every screen and in the palette, and nothing of it reaches the terminal as a sequence."""

from __future__ import annotations

import json
from pathlib import Path

from textual.app import App
from textual.command import CommandPalette

from replay.core.session.labels import Label, LabelSet
from replay.ui.literal import as_markup, literal, shown
from replay.ui.screens.help import HelpScreen
from replay.ui.screens.picker import SessionPicker
from replay.ui.screens.raw import RawScreen
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.screen import screen_segments, screen_text

HOSTILE: dict[str, str] = {
    # text in the transcript: how the app must show it
    "[/]": "[/]",
    '[link="https://x"]L[/]': '[link="https://x"]L[/]',
    "list[int] and dict[str, int]": "list[int] and dict[str, int]",
    "Usage: dir [/s] [/b]": "Usage: dir [/s] [/b]",
    "[/home/user/x]": "[/home/user/x]",
    "[REDACTED_TEXT len=124]": "[REDACTED_TEXT len=124]",
    "[bold red]not styled[/bold red]": "[bold red]not styled[/bold red]",
    "[@click=app.quit]quit[/]": "[@click=app.quit]quit[/]",
    "[$accent]variable": "[$accent]variable",
    "osc0 \x1b]0;pwned\x07 end": "osc0 ␛[ESC]]0;pwned[BEL] end",
    "osc8 \x1b]8;;https://evil\x1b\\here\x1b]8;;\x1b\\ end":
        "osc8 ␛[ESC]]8;;https://evil␛[ESC]\\here␛[ESC]]8;;␛[ESC]\\ end",
    "osc52 \x1b]52;c;cm0gLXJm\x07 end": "osc52 ␛[ESC]]52;c;cm0gLXJm[BEL] end",
    "csi \x1b[2J\x1b[31mred end": "csi ␛[ESC][2J␛[ESC][31mred end",
    "c1 \x9b31m\x9d0;t\x9c end": "c1 [CSI]31m[OSC]0;t\\x9c end",
    "bidi \u202eevil\u202c \u2067iso\u2069 \u200fmark end":
        "bidi <U+202E>evil<U+202C> <U+2067>iso<U+2069> <U+200F>mark end",
    "zero\u200bwidth\u200dj\ufeffoin\u2060ed": "zero<U+200B>width<U+200D>j<U+FEFF>oin<U+2060>ed",
}
MARKDOWN = "# Plan\n\nFirst `ls`, then <!-- rm -rf / --> and <b>tags</b> stay.\n"
SESSION_TITLE = "[b]title[/b] \x1b]0;t\x07"
FORBIDDEN = {chr(c) for c in [*range(0x20), 0x7f, *range(0x80, 0xa0)]} | set(
    "\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068"
    "\u2069\ufeff")


def hostile_chat(path: Path, title: str = SESSION_TITLE) -> Path:
    """Each hostile text as an assistant turn followed by an empty user turn."""
    messages: list[dict[str, str]] = []
    for text in [*HOSTILE, MARKDOWN]:
        messages += [{"role": "user", "content": "go"},
                     {"role": "assistant", "content": text},
                     {"role": "user", "content": ""}]
    messages.append({"role": "assistant", "content": "done"})
    path.write_text(json.dumps({"title": title, "messages": messages}), encoding="utf-8")
    return path


def assert_terminal_safe(app: App[object]) -> None:
    """Nothing on screen is a control character, an invisible one, or a hyperlink."""
    for line in screen_segments(app):
        for segment in line:
            if segment.control:
                continue
            bad = FORBIDDEN & set(segment.text)
            assert not bad, f"{bad!r} reaches the terminal in {segment.text!r}"
            assert segment.style is None or not segment.style.link, segment


def test_the_helper_shows_every_hostile_text_as_expected() -> None:
    from textual.content import Content

    for text, expected in HOSTILE.items():
        assert shown(text) == expected
        assert literal(text).plain == expected
        assert Content.from_markup(as_markup(text)).plain == expected


async def test_every_turn_shows_hostile_text_literally(tmp_path: Path) -> None:
    app = build_app(hostile_chat(tmp_path / "hostile.json"), annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        assert "[b]title[/b] ␛[ESC]]0;t[BEL]" in screen_text(app)  # the header
        for number, expected in enumerate(HOSTILE.values()):
            screen.go(number * 3 + 1)
            await pilot.pause()
            text = screen_text(app)
            assert expected in text, text
            assert_terminal_safe(app)
            await pilot.press("right")  # the empty turn: the text is in Before
            await pilot.pause()
            assert expected in screen_text(app)
            assert_terminal_safe(app)
        screen.go(len(HOSTILE) * 3 + 1)
        await pilot.pause()
        text = screen_text(app)
        assert "<!-- rm -rf / --> and <b>tags</b> stay." in text, text
        assert app.is_running


async def test_palette_shows_hostile_neighbours_literally(tmp_path: Path) -> None:
    app = build_app(hostile_chat(tmp_path / "hostile.json"), annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 100)) as pilot:
        await ready(pilot, app)
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette)
                         and "before:" in screen_text(app))
        await pilot.pause(0.3)
        text = screen_text(app)
        for expected in HOSTILE.values():
            assert f"before: {expected}" in text, (expected, text)
        assert_terminal_safe(app)
        await pilot.press(*"empty")  # search hits are drawn by our own highlighter
        await pilot.pause(0.3)
        assert "before: Usage: dir [/s] [/b]" in screen_text(app)
        assert_terminal_safe(app)
        assert app.is_running


async def test_raw_help_notifications_and_annotation_bar(tmp_path: Path) -> None:
    labels = LabelSet((Label("odd", "1", "[b]Odd[/b]", "[/] \x1b]52;c;eA==\x07 \u202ex"),
                       Label("fine", "2", "Fine", "plain")))
    journal = tmp_path / "j.jsonl"
    app = build_app(hostile_chat(tmp_path / "hostile.json"), annotations=journal,
                    labels=labels)
    async with app.run_test(size=(160, 90), notifications=True) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        osc0 = [number for number, text in enumerate(HOSTILE) if text.startswith("osc0")][0]
        screen.go(osc0 * 3 + 1)
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, RawScreen))
        await pilot.pause()
        assert '"content": "osc0 \\u001b]0;pwned\\u0007 end"' in screen_text(app)
        assert_terminal_safe(app)
        await pilot.press("escape", "question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        text = screen_text(app)
        assert "[/] ␛[ESC]]52;c;eA==[BEL] <U+202E>x" in text, text
        assert_terminal_safe(app)
        await pilot.press("escape")
        screen.go(2)  # the empty turn after "[/]"
        await pilot.pause()
        await pilot.press("1", "tab", *"[b]n[/b]", "enter")
        await pilot.pause(0.2)
        text = screen_text(app)
        assert "1 odd" in text and "Saved odd for #3." in text, text
        screen.searching.query_text = "[/x] \x1b[2J"
        screen.searching.action_search_next(True)
        await pilot.pause(0.2)
        assert "No match for '[/x] \\x1b[2J'." in screen_text(app)
        assert_terminal_safe(app)
        screen.go(2)
        await pilot.pause()
        assert "[b]n[/b]" in screen_text(app)  # the note, back in its field
        assert app.is_running


async def test_picker_shows_hostile_titles_literally(tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    hostile_chat(folder / "a.json", title="Usage: dir [/s] [/b] \x1b]8;;x\x1b\\")
    hostile_chat(folder / "b.json", title="list[int] \u202eevil")
    app = build_app(folder, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and "list[int]" in screen_text(app))
        await pilot.pause()
        text = screen_text(app)
        assert "Usage: dir [/s] [/b] ␛[ESC]]8;;x␛[ESC]\\" in text, text
        assert "list[int] <U+202E>evil" in text
        assert_terminal_safe(app)
        assert app.is_running
