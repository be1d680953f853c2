"""Issue 27: `o` on a huge message draws its first screen at once, in every kind of text: its
rows are counted a block at a time, only those of the first screen before it is drawn, the
rest between frames (keys still answer), and whatever needs a row past them (the end, a
row scrolled to) counts up to it first. Main counted every line's cleaned length and cells
before the first screen: 1-26 s on 50 MB. The rows are exactly those of the old full layout
(`OldLongText`), however the counting is cut, the width changed or rows drawn halfway."""

from __future__ import annotations

import json
from bisect import bisect_left
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.core.readers import huge_strings
from replay.core.session import lifted
from replay.ui import render
from replay.ui.app import ReplayApp
from replay.ui.render import LongText, clean
from replay.ui.widgets.turn_view import TurnLines
from tests.core.test_huge_strings import _loads, small_thresholds
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.test_huge_message_formats import claude_code
from tests.ui.test_huge_message_rows import OldLongText, _rows, hostile

LINE = ("日本語のテキスト 🦊 [/] [link=x] list[int] \x1b[31m red\x07 é \u202e "
        "bidi\u202c\u200b end.\n")
TEXT = LINE * (3_000_000 // len(LINE)) + "the last line [/] \x1b[1m\n"
"""3 M characters of CJK, an emoji, escapes, bidi and zero-width marks (48 blocks)."""
BLOCK = 1 << 16


def cleaned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Characters of text `LongText` has looked at to count its rows (whether each is shown
    as it is, its escapes, its cells), counted from now."""
    seen = [0]
    for name in ("has_controls", "escaped_shape", "_not_one_cell", "_narrow"):
        real = getattr(render, name)

        def counting(text: str, *args: object, real: object = real, **kwargs: object) -> object:
            seen[0] += len(text)
            return real(text, *args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(render, name, counting)
    seen[0] = 0
    return seen


async def unfold_second_turn(pilot: Any, app: ReplayApp) -> tuple[TurnLines, LongText]:
    """The session ready, its second turn shown, then `o`: the current turn's pane and its
    long text (counted only as far as the first screen needs)."""
    await ready(pilot, app)
    screen = app.replay_screen
    assert screen is not None
    screen.go(1)
    await pilot.pause()
    await pilot.press("o")
    current = screen.query_one("#current", TurnLines)
    (_, _, long), = current._long
    return current, long


async def test_o_counts_only_the_first_screen_before_drawing_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The counting between frames waits: what is counted is what the first screen needed.
    monkeypatch.setattr(TurnLines, "COUNT_EVERY", 600.0, raising=False)
    app = build_app(claude_code(tmp_path, TEXT))
    async with app.run_test(size=(80, 40)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        screen.go(1)
        await pilot.pause()
        seen = cleaned(monkeypatch)
        await pilot.press("o")
        await pilot.pause()
        current = screen.query_one("#current", TurnLines)
        first = [("".join(segment.text for segment in current.render_line(y))).strip()
                 for y in range(current.scrollable_content_region.height)]
        # main looked at the whole text three times (12 M characters) before this screen
        assert seen[0] <= 4 * 3 * BLOCK, seen[0]
        assert clean(LINE.rstrip("\n"))[:40] in " ".join(first)


async def test_keys_answer_while_counting_and_the_end_is_the_true_last_row(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The counting between frames slowed to a tick a minute: on a quiet machine it would
    # count these 3 M characters before the first key, and the key would test nothing.
    monkeypatch.setattr(TurnLines, "COUNT_EVERY", 60.0, raising=False)
    app = build_app(claude_code(tmp_path, TEXT))
    async with app.run_test(size=(80, 40)) as pilot:
        current, long = await unfold_second_turn(pilot, app)
        assert not long.done  # counted between frames, not before the first
        await pilot.press("j")
        assert current.scroll_y == 1
        await pilot.press("ctrl+end")  # (the rows counted between frames, then the jump)
        await wait_until(pilot, lambda: long.done
                         and current.scroll_y == current.max_scroll_y, rounds=3000)
        await pilot.pause()
        width = current._rendered_width
        assert long.done and long.rows == OldLongText(TEXT).layout(width)
        shown = [("".join(segment.text for segment in current.render_line(y))).strip()
                 for y in range(current.scrollable_content_region.height)]
        last = next(row for row in reversed(shown) if row)
        assert last == clean("the last line [/] \x1b[1m")
        assert current.scroll_y == current.max_scroll_y > long.rows - 40


class Small(LongText):
    """Blocks and long lines small enough for a few hundred characters to hold many."""

    _BLOCK = 48
    _STEP = 12


actions = st.lists(st.one_of(
    st.tuples(st.just("layout"), st.sampled_from([3, 5, 12, 40]), st.integers(0, 60)),
    st.tuples(st.just("row"), st.integers(0, 200)),
    st.tuples(st.just("row_of"), st.integers(0, 40)),
    st.tuples(st.just("count"), st.just(0)),
    st.tuples(st.just("line"), st.integers(0, 40))), max_size=8)


def _row(long: LongText | OldLongText, number: int) -> str:
    return "".join(segment.text for segment in long.row(number))


def _in_file(folder: Path, text: str) -> lifted.Rope | None:
    """The text left in a file (a window read a piece at a time); None if too short."""
    path = folder / "s.jsonl"
    path.write_bytes(json.dumps({"text": text}).encode() + b"\n")
    with small_thresholds(), open(path, "rb") as handle:
        found = huge_strings.lift_line(handle.fileno(), str(path), 0)
    assert found is not None
    return lifted.source(_loads(found[0])["text"])  # type: ignore[index]


@settings(max_examples=300, deadline=None)
@given(text=hostile, long_line=st.sampled_from([0, 0, 30, 100, 500]), steps=actions,
       width=st.sampled_from([3, 7, 12, 40, 81]), indent=st.sampled_from([1, 3]),
       in_file=st.booleans())
def test_rows_counted_in_pieces_are_those_of_the_full_layout(
        tmp_path_factory: pytest.TempPathFactory, text: str, long_line: int,
        steps: list[tuple[str, int, int] | tuple[str, int]], width: int, indent: int,
        in_file: bool) -> None:
    """Counted a piece at a time (blocks of 48 characters, lines past 12 long), its width
    changed halfway, rows drawn, lines read and rows found before they are counted: every
    row is the old full layout's, and at the end so is their count; also of a text left in
    its file (each block read from it once)."""
    if long_line:
        text = text[:len(text) // 2] + ("日a\x1b\t" * long_line)[:long_line] \
            + text[len(text) // 2:]
    rope = _in_file(tmp_path_factory.mktemp("rows"), text) if in_file else None
    old, new = OldLongText(text, indent=indent), Small(rope or text, indent=indent)
    for kind, number, *rest in steps:
        if kind == "layout":
            new.layout(number, rows=rest[0])
            total = old.layout(number)
            assert new.rows >= min(rest[0], total) and new.rows <= total
            assert not new.done or new.rows == total
            assert _row(new, rest[0] % total) == _row(old, rest[0] % total)
        elif kind == "line":
            line = number % old.line_count
            assert render.shown_piece(new.line(line)) == old.line(line)
        elif new._width < 0:
            continue
        elif kind == "row":
            row = number % old.layout(new._width)
            assert _row(new, row) == _row(old, row)
        elif kind == "row_of":
            line = number % old.line_count
            old.layout(new._width)
            row = new.row_of(line)  # (a row of its line showing its column 0)
            assert old._line_of[row] == line and old._start_of[row] == 0
            assert row - bisect_left(old._line_of, line) <= (new._room < 2)
        else:
            new.count_for(0.0)
    assert _rows(new, width) == _rows(old, width)
    assert new.done and new.line_count == old.line_count
