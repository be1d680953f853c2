"""A resize keeps the line of a long message that was on top, not its row number."""

from __future__ import annotations

from pathlib import Path

from replay.ui.render import LongText
from replay.ui.widgets.turn_view import TurnLines
from tests.ui.conftest import build_app, ready
from tests.ui.test_huge_message_formats import chat_json

LINE = "row {n:05d} [/] [link=x]list[int][/link] \x1b[31m red 漢字 and some more words to wrap"


def test_row_of_finds_the_row_holding_a_line_and_column() -> None:
    long = LongText("\n".join(LINE.format(n=n) for n in range(300)))
    rows = long.layout(40)
    assert rows > 300
    for row in range(rows):
        line, column = long.place_of(row)
        assert long.row_of(line, column) == row
        assert long.row_of(line, column + 1) == row or long.place_of(row + 1) == (line,
                                                                               column + 1)
    long.layout(400)  # every line fits: a row per line
    assert long.place_of(123) == (123, 0) and long.row_of(123, 50) == 123


async def test_a_resize_keeps_the_line_on_top_of_an_unfolded_message(tmp_path: Path) -> None:
    text = "\n".join(LINE.format(n=n) for n in range(20_000))
    app = build_app(chat_json(tmp_path, text))
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        screen.go(1)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("o")
        await pilot.pause()
        current = screen.query_one("#current", TurnLines)
        (start, _, long), = current._long
        current.scroll_to(y=start + long.row_of(15_000), animate=False, immediate=True,
                          force=True)
        await pilot.pause()

        def top() -> str:
            return "".join(segment.text for segment in current.render_line(0)).strip()

        assert top().startswith("row 15000 "), top()
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        assert current.size.width < 80 and long.layout(current._rendered_width) > 20_000
        assert top().startswith("row 15000 "), top()
        await pilot.resize_terminal(160, 40)
        await pilot.pause()
        await pilot.pause()
        assert top().startswith("row 15000 "), top()
