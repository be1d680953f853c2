"""The first search onto a huge message left in its file: found in a worker, and the row
to scroll to found by cleaning only the lines that may hold the needle (main cleaned the
whole message, escapes spelt out and tabs expanded, in the UI thread: 2.4 s for 50 MB of
controls, 4.9 s of CJK), the row then on screen holding the needle as shown, a needle
that looks like markup or holds a control too."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from replay.ui import literal
from replay.ui.screens.search_prompt import SearchPrompt
from replay.ui.widgets.turn_view import TurnLines
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.test_huge_message_formats import claude_code

CONTROLS = ("The fox [/] [link=x]click[/link] list[int] \x1b[2J\x1b]0;PWNED\x07 café \x00 "
            "\x9b31m \r\x7f\t[bold]jumps\x1b[0m naïve.\n")
WIDE = ("日本語のテキスト 🦊 [/] [link=x] list[int] \x1b[31m red\x07 é \u202e "
        "bidi\u202c\u200b end.\n")


def _text(line: str, chars: int = 6_000_000) -> str:
    """About `chars` characters of `line` (a record past 8 MB is left in its file), with
    `list[float] \\x1b[7m here` planted two thirds of the way, and a last line."""
    count = chars // len(line)
    return (line * (2 * count // 3) + "list[float] \x1b[7m here\t[/]\n" + line * (count // 3)
            + "the LAST line [/] \x1b[1m\n")


async def _search(tmp_path: Path, line: str, needle: str,
                  monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[str], int]:
    """`/needle` enter on the session (the needle set as pasted): the characters cleaned
    from enter to the match on screen, the rows then shown, the text's length."""
    text = _text(line)
    path = claude_code(tmp_path, text)
    cleaned = [0]

    def counting(real):  # type: ignore[no-untyped-def]
        def escape(piece: str) -> str:
            cleaned[0] += len(piece)
            return real(piece)
        return escape

    app = build_app(path, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        await pilot.press("slash")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchPrompt))
        app.screen.query_one("#prompt-input", Input).value = needle
        await pilot.pause()
        monkeypatch.setattr(literal, "escape_controls", counting(literal.escape_controls))
        try:
            from replay.core import escaped_find
        except ImportError:  # (main has none)
            pass
        else:
            monkeypatch.setattr(escaped_find, "escape_controls",
                                counting(escaped_find.escape_controls))
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.index == 1 and not screen.searching.finding
                         and not [w for w in app.workers if not w.is_finished], rounds=3000)
        current = screen.query_one("#current", TurnLines)
        await wait_until(pilot, lambda: current.scroll_y > 0, rounds=200)
        await pilot.pause()
        monkeypatch.undo()
        rows = ["".join(segment.text for segment in current.render_line(y))
                for y in range(current.scrollable_content_region.height)]
    return cleaned[0], rows, len(text)


@pytest.mark.parametrize(("line", "needle", "shown"), [
    (CONTROLS, "the last line [/]", "the LAST line [/] ␛[ESC][1m"),
    (WIDE, "list[float]", "list[float] ␛[ESC][7m here"),
    (CONTROLS, "\x1b[7m here", "list[float] ␛[ESC][7m here"),  # a control, shown escaped
])
async def test_the_row_of_a_match_is_found_cleaning_a_few_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, needle: str,
        shown: str) -> None:
    cleaned, rows, length = await _search(tmp_path, line, needle, monkeypatch)
    assert any(shown in row for row in rows), rows
    # the rows drawn and the lines holding the needle's anchor (main: the whole text)
    assert cleaned < 0.02 * length, (cleaned, length)


async def test_the_highlight_is_told_from_the_counted_matches(
        chat_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the matches are counted, going to one (`n`, `N`) marks it without looking
    through the turn again in the UI thread (main: each turn shown was searched again, a
    50 MB message a second); the turns marked are those holding the query."""
    from replay.ui.controls import search

    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        await pilot.press("slash", *"schema", "enter")
        await wait_until(pilot, lambda: screen.searching.position() is not None)
        asked: list[int] = []
        real = search.turn_holds

        def counting(turn: object, needle: str, *rest: object) -> bool:
            asked.append(1)
            return real(turn, needle, *rest)  # type: ignore[arg-type]

        monkeypatch.setattr(search, "turn_holds", counting)
        for key in ("n", "n", "N"):
            await pilot.press(key)
            await pilot.pause()
            assert screen.searching.marked() == "schema"
        screen.go(0)  # a turn without it
        await pilot.pause()
        assert screen.searching.marked() == ""
        assert not asked
