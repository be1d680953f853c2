"""Issue 27: a jump far into a huge unfolded message (ctrl+end right after `o`, a search hit
on its last line) counts the rows it needs between frames, never in one go in the key's
handler: main counted every row up to the target there (2-4.6 s on 50 MB of controls or CJK,
keys waiting). Another key meanwhile replaces the jump; once counted, the jump lands on the
row the one-go count gave (the last row at the bottom; the hit's row)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from replay.ui.render import LongText, clean
from replay.ui.widgets.current_turn import CurrentTurn
from replay.ui.widgets.turn_view import TurnLines
from tests.ui.conftest import build_app, wait_until
from tests.ui.test_huge_message_formats import claude_code
from tests.ui.test_unfold_counted_later import BLOCK, LINE, cleaned, unfold_second_turn

TEXT = LINE * (4_000_000 // len(LINE)) + "the last line [/] \x1b[1m\n"
"""4 M characters of CJK, escapes, bidi and zero-width marks (61 blocks)."""


def _shown(pane: TurnLines) -> list[str]:
    return [("".join(segment.text for segment in pane.render_line(y))).strip()
            for y in range(pane.scrollable_content_region.height)]


def _during(monkeypatch: pytest.MonkeyPatch, owner: type, name: str,
            seen: list[int]) -> list[int]:
    """Characters counted (`seen`) within each call of `owner.name`."""
    counted: list[int] = []
    real: Callable[..., object] = getattr(owner, name)

    def wrapped(self: object, *args: object, **kwargs: object) -> object:
        before = seen[0]
        try:
            return real(self, *args, **kwargs)
        finally:
            counted.append(seen[0] - before)

    monkeypatch.setattr(owner, name, wrapped)
    return counted


async def test_ctrl_end_after_o_counts_between_frames_and_a_key_replaces_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A block a tenth of a second: the count takes many frames, as 50 MB do on any machine.
    monkeypatch.setattr(TurnLines, "COUNT_EVERY", 0.1)
    monkeypatch.setattr(TurnLines, "JUMP_EVERY", 0.1, raising=False)
    monkeypatch.setattr(TurnLines, "COUNT_FOR", 0.0)
    app = build_app(claude_code(tmp_path, TEXT))
    async with app.run_test(size=(80, 40)) as pilot:
        current, long = await unfold_second_turn(pilot, app)
        seen = cleaned(monkeypatch)
        in_handler = _during(monkeypatch, CurrentTurn, "action_turn_end", seen)
        await pilot.press("ctrl+end")
        # main counted the other 3.9 M characters (each looked at several times) right there
        assert in_handler and max(in_handler) <= 4 * 4 * BLOCK, in_handler
        assert not long.done
        await wait_until(pilot, lambda: any("counting rows" in row for row in _shown(current)))
        await pilot.press("ctrl+home")  # answered before the count ends: the jump is dropped
        assert not long.done and current.scroll_y == 0
        assert not any("counting rows" in row for row in _shown(current))
        await pilot.press("ctrl+end")
        await wait_until(pilot, lambda: long.done, rounds=3000)
        await pilot.pause()
        width = current._rendered_width
        assert long.rows == LongText(TEXT).layout(width)
        shown = _shown(current)
        assert next(row for row in reversed(shown) if row) == clean("the last line [/] \x1b[1m")
        assert current.scroll_y == current.max_scroll_y > long.rows - 40
        await pilot.press("j")  # nothing left waiting: keys scroll as ever
        assert current.scroll_y == current.max_scroll_y
        await pilot.press("k")
        assert current.scroll_y == current.max_scroll_y - 1


async def test_a_jump_to_text_on_the_last_line_lands_where_scroll_to_text_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TurnLines, "COUNT_EVERY", 0.1)
    monkeypatch.setattr(TurnLines, "COUNT_FOR", 0.0)
    monkeypatch.setattr(TurnLines, "JUMP_EVERY", 0.1, raising=False)
    monkeypatch.setattr(TurnLines, "JUMP_FOR", 0.0, raising=False)
    app = build_app(claude_code(tmp_path, TEXT))
    async with app.run_test(size=(80, 40)) as pilot:
        current, long = await unfold_second_turn(pilot, app)
        seen = cleaned(monkeypatch)
        current.jump_to_text("THE LAST line [/]")
        # the line is found without counting rows: they are counted between frames
        assert seen[0] <= 4 * 4 * BLOCK, seen[0]
        assert not long.done and current.scroll_y == 0
        await wait_until(pilot, lambda: current.scroll_y > 0, rounds=3000)
        landed = current.scroll_y
        assert any("the last line [/] ␛[ESC][1m" in row for row in _shown(current))
        current.scroll_home(animate=False, immediate=True)
        current.scroll_to_text("THE LAST line [/]")  # in one go, as main did
        assert current.scroll_y == landed
