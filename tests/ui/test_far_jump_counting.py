"""Issue 27: a jump far into a huge unfolded message (ctrl+end right after `o`, a search hit
on its last line) counts the rows it needs between frames, never in one go in the key's
handler: main counted every row up to the target there (2-4.6 s on 50 MB of controls or CJK,
keys waiting). Another key meanwhile replaces the jump; once counted, the jump lands on the
row the one-go count gave (the last row at the bottom; the hit's row)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from replay.core import escaped_find
from replay.ui.render import LongText, clean
from replay.ui.widgets.current_turn import CurrentTurn
from replay.ui.widgets.turn_view import TurnLines
from tests.ui.conftest import build_app, ready, wait_until
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


def _a_block_a_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows counted a block a tenth of a second, a jump waiting or not: a count takes many
    frames, as 50 MB do on any machine."""
    monkeypatch.setattr(TurnLines, "COUNT_EVERY", 0.1)
    monkeypatch.setattr(TurnLines, "COUNT_FOR", 0.0)
    monkeypatch.setattr(TurnLines, "JUMP_EVERY", 0.1, raising=False)
    monkeypatch.setattr(TurnLines, "JUMP_FOR", 0.0, raising=False)


async def test_ctrl_end_after_o_counts_between_frames_and_a_key_replaces_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (main's counting slices, at 80 ms, counted all 4 M characters within a few frames
    # on a quiet machine once counting got faster: a block a tick keeps it many frames long)
    _a_block_a_tick(monkeypatch)
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
    _a_block_a_tick(monkeypatch)
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


async def test_a_search_hit_at_the_end_of_a_huge_message_is_counted_to_between_frames(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `/` then enter: the hit is on the message's last line. main scrolled to it from a
    # callback that counted every row before it in one go (4 s on 50 MB, keys waiting).
    from replay.ui.screens.search_prompt import SearchPrompt

    _a_block_a_tick(monkeypatch)
    monkeypatch.setattr(LongText, "SEARCH_FOR", 0.0, raising=False)
    app = build_app(claude_code(tmp_path, TEXT), annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(80, 40)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        seen = cleaned(monkeypatch)
        in_calls = [_during(monkeypatch, TurnLines, name, seen)
                    for name in ("scroll_to_text", "jump_to_text")]
        read = [0]
        real_slice = LongText._slice

        def reading(self: LongText, start: int, end: int) -> str:
            piece = real_slice(self, start, end)
            read[0] += len(piece)
            return piece

        monkeypatch.setattr(LongText, "_slice", reading)
        # (each step of the jump looks through a block of the text at most, then pauses)
        in_steps = _during(monkeypatch, TurnLines, "_advance_jump", read)
        await pilot.press("slash", *["space" if key == " " else key for key in "last line [/]"])
        await wait_until(pilot, lambda: isinstance(app.screen, SearchPrompt))
        await pilot.press("enter")
        current = screen.query_one("#current", TurnLines)
        await wait_until(pilot, lambda: any("counting rows" in row for row in _shown(current)))
        assert screen.index == 1 and current._long
        long = current._long[0][2]
        assert not long.done
        await wait_until(pilot, lambda: current.scroll_y > 0 and not current.jumping, 3000)
        await pilot.pause()
        counted = [count for calls in in_calls for count in calls]
        assert counted and max(counted) <= 4 * 4 * BLOCK, counted
        assert len(in_steps) > 10 and max(in_steps) <= 2 * escaped_find.BLOCK, max(in_steps)
        assert any("the last line [/] ␛[ESC][1m" in row for row in _shown(current))


def test_looking_for_a_far_hit_pauses_between_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """`rows_holding` says how far it has looked (a share, a float) between the blocks it
    looks through, so a UI can answer keys meanwhile; the row found is the same."""
    monkeypatch.setattr(LongText, "SEARCH_FOR", 0.0, raising=False)
    long = LongText(TEXT)
    long.layout(80, rows=40)
    steps = long.rows_holding("the last line")
    shares: list[float] = []
    try:
        while True:
            step = next(steps)
            if isinstance(step, float):
                shares.append(step)
            else:
                long.layout(80, rows=long.rows + 1)
    except StopIteration as stop:
        row = stop.value
    assert len(shares) >= len(TEXT) // escaped_find.BLOCK - 1, len(shares)
    assert shares == sorted(shares) and 0 < shares[0] and shares[-1] < 1
    whole = LongText(TEXT)
    whole.layout(80)
    assert row == whole.first_row_holding("the last line") is not None


def test_a_hit_in_a_long_line_needs_its_rows_counted_only_up_to_the_hit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A search hit a tenth of the way into one line of 4 M characters (CJK, escapes): the
    place's row is asked for once it is known (`knows_row`), not once the whole line is
    counted, and it is the row a count of the whole line gives."""
    from tests.ui.test_long_line_pieces import KINDS

    piece = KINDS["wide"]
    text = piece * (400_000 // len(piece)) + "the needle [/]" + piece * (3_600_000 // len(piece))
    long = LongText(text)
    long.layout(80, rows=40)
    steps = long.rows_holding("THE needle [/]")
    try:
        while True:
            step = next(steps)
            if not isinstance(step, float):
                while not long.knows_row(*step):
                    long.count_for(0.0)  # (a block: as the pane counts between frames)
    except StopIteration as stop:
        row = stop.value
    assert not long.done and long.share_counted < 0.5, long.share_counted
    whole = LongText(text)
    whole.layout(80)
    assert row == whole.first_row_holding("the needle [/]") is not None
    assert "the needle [/]" in "".join(segment.text for segment in long.row(row))
