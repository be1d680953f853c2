"""Issue 27: a line longer than a block (a minified JSON output, a base64 blob, a log without
line ends, CJK without them) is counted a piece at a time like the blocks of shorter lines:
the first screen is laid out from the part counted, the rest between frames. Main counted
such a line whole before its first row (1.6 s of CPU for 10 M characters of CJK). Whatever is
asked of its rows (a row drawn, a row's place, the row of a column, the end, a search, a
resize halfway) gets exactly the rows of the same text counted whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.ui import render
from replay.ui.render import LongText, clean
from replay.ui.widgets.turn_view import TurnLines
from tests.ui.conftest import build_app, wait_until
from tests.ui.test_huge_message_formats import claude_code
from tests.ui.test_huge_message_rows import OldLongText, _rows, hostile
from tests.ui.test_unfold_counted_later import BLOCK, cleaned, unfold_second_turn

KINDS = {
    "plain": "word " * 12,
    "controls": ("The fox [/] [link=x]click[/link] list[int] \x1b[2J\x1b]0;PWNED\x07 café "
                 "\x00 \x9b31m \r\x7f [bold]jumps\x1b[0m naïve.\t"),
    "wide": ("日本語のテキスト 🦊 [/] [link=x] list[int] \x1b[31m red\x07 é \u202e "
             "bidi\u202c\u200b end a\u0301 "),
}
"""The characters of each one-line text (`bench/bench_huge_message.py`'s, without line ends;
a tab and a combining mark added)."""


def one_line(kind: str, size: int) -> str:
    """About `size` characters of `kind` in one line, then a last line."""
    piece = KINDS[kind]
    return piece * (size // len(piece)) + "\nthe last line [/] \x1b[1m"


@pytest.mark.parametrize(("kind", "size"), [("plain", 50_000_000), ("controls", 20_000_000),
                                            ("wide", 5_000_000)])
def test_the_first_screen_of_one_huge_line_is_laid_out_from_a_part_of_it(
        monkeypatch: pytest.MonkeyPatch, kind: str, size: int) -> None:
    text = one_line(kind, size)
    # its rows are those of the line counted whole (the first rows of its head: the same)
    head = LongText(text[:300_000])
    head.layout(160)
    rows, line, column = [head.row(n) for n in range(45)], *head.place_of(30)
    seen = cleaned(monkeypatch)
    long = LongText(text)
    assert long.layout(160, rows=45) >= 45
    # main looked at the whole line (each character at least twice) before this returned
    assert seen[0] <= 8 * BLOCK, seen[0]
    assert not long.done and long.share_counted < 0.1
    assert [long.row(n) for n in range(45)] == rows
    assert long.place_of(30) == (line, column)
    assert long.row_of(line, column + 1) == 30
    assert seen[0] <= 12 * BLOCK, seen[0]  # (and none of that counted the line on)


class Small(LongText):
    """Blocks, steps and pieces small enough for a few thousand characters to hold many."""

    _BLOCK = 48
    _STEP = 12


class Whole(LongText):
    """The text counted in one block: every line counted whole before its first row."""

    _BLOCK = 1 << 30
    _STEP = 12


LONG_PIECES = ["日本", "🦊", "a\u0301", "\u0301", "\t", "\x1b[31m", "\x00", "é", "ab", "─",
               "中文文本", "x", " ", "\u200b", "\r", "[/]", "\U00020000", "\U0001d167"]
"""Pieces of the long line: wide characters (in and past the BMP) meeting every row end,
combining marks, tabs, controls and escapes, marks `clean` spells out."""

long_line = st.lists(st.sampled_from(LONG_PIECES), min_size=700, max_size=2500).map("".join)
"""A line of 1,000 to 10,000 characters: 2 to 13 of `Small`'s pieces (768 characters)."""

actions = st.lists(st.one_of(
    st.tuples(st.just("layout"), st.sampled_from([3, 4, 9, 40, 81]), st.integers(1, 60)),
    st.tuples(st.just("row"), st.integers(0, 3000)),
    st.tuples(st.just("place"), st.integers(0, 3000)),
    st.tuples(st.just("row_of"), st.integers(0, 40), st.integers(0, 12_000)),
    st.tuples(st.just("count"), st.just(0)),
    st.tuples(st.just("line"), st.integers(0, 40))), max_size=10)


def _row(long: LongText | OldLongText, number: int) -> str:
    return "".join(segment.text for segment in long.row(number))


@settings(max_examples=150, deadline=None)
@given(before=hostile, line=long_line, after=hostile, steps=actions,
       width=st.sampled_from([3, 4, 7, 12, 40, 81, 160]), indent=st.sampled_from([1, 3]),
       tail=st.booleans())
def test_a_long_line_counted_in_pieces_has_the_rows_of_it_counted_whole(
        before: str, line: str, after: str, steps: list[tuple[object, ...]], width: int,
        indent: int, tail: bool) -> None:
    """Counted a piece at a time, the width changed halfway, rows drawn, placed and found
    by their column before the line is counted: every answer is that of the text counted
    whole (`Whole`), whose rows are those of the whole text cleaned (`OldLongText`)."""
    before = before.rsplit("\n", 1)[0] + "\n" if "\n" in before else ""
    text = before + line + ("\n" + after if tail else "")
    new, whole, old = Small(text, indent=indent), Whole(text, indent=indent), \
        OldLongText(text, indent=indent)
    first = new.layout(40, rows=1)
    if len(line) > 3 * 768 and not before:  # main counted the line whole here
        assert not new.done and new.share_counted < 0.75, new.share_counted
        assert first < whole.layout(40)
    for kind, number, *rest in steps:
        if kind == "layout":
            assert isinstance(number, int) and isinstance(rest[0], int)
            wanted = rest[0]
            new.layout(number, rows=wanted)
            total = whole.layout(number)
            assert min(wanted, total) <= new.rows <= total
            assert _row(new, wanted % total) == _row(whole, wanted % total)
            continue
        assert isinstance(number, int)
        if kind == "line":
            at = number % whole.line_count
            assert new.line(at) == whole.line(at)
            continue
        if new._width < 0:
            continue
        total = whole.layout(new._width)
        if kind == "row":
            assert _row(new, number % total) == _row(whole, number % total)
        elif kind == "place":
            assert new.place_of(number % total) == whole.place_of(number % total)
        elif kind == "row_of":
            at = number % whole.line_count
            column = rest[0] % (len(render.shown_piece(whole.line(at))) + 2)
            assert isinstance(column, int)
            assert new.row_of(at, column) == whole.row_of(at, column)
        else:
            new.count_for(0.0)
    assert _rows(new, width) == _rows(whole, width) == _rows(old, width)
    assert new.done and new.rows == whole.rows
    for row in range(0, new.rows, max(1, new.rows // 50)):
        assert new.place_of(row) == whole.place_of(row)


@settings(max_examples=40, deadline=None)
@given(line=long_line, needle=st.sampled_from(["[esc]", "日本", "[/]", "\\x00", "a\u0301",
                                               "zz", "<u+200b>", "中文"]),
       width=st.sampled_from([4, 12, 40, 160]))
def test_a_search_in_a_long_line_counted_in_pieces_finds_the_row_a_row_by_row_search_does(
        line: str, needle: str, width: int) -> None:
    text = "first\n" + line + "\nend"
    new = Small(text)
    new.layout(width, rows=1)
    found = new.first_row_holding(needle)
    rows = _rows(Whole(text), width)
    assert found == next((n for n, row in enumerate(rows) if needle in row.lower()), None)


@pytest.mark.parametrize("kind", ["controls", "wide"])
async def test_o_on_a_one_line_message_draws_its_first_screen_and_ctrl_end_its_last_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    monkeypatch.setattr(TurnLines, "COUNT_EVERY", 0.1)
    monkeypatch.setattr(TurnLines, "COUNT_FOR", 0.0)
    text = one_line(kind, 2_000_000)
    app = build_app(claude_code(tmp_path, text))
    async with app.run_test(size=(80, 40)) as pilot:
        seen = cleaned(monkeypatch)
        current, long = await unfold_second_turn(pilot, app)
        await pilot.pause()
        shown = [("".join(segment.text for segment in current.render_line(y))).strip()
                 for y in range(current.scrollable_content_region.height)]
        assert clean(KINDS[kind])[:30] in " ".join(shown)
        # main counted the whole line (2 M characters, each looked at twice) before this
        assert not long.done and seen[0] <= 16 * BLOCK, seen[0]
        await pilot.press("ctrl+end")
        await wait_until(pilot, lambda: long.done
                         and current.scroll_y == current.max_scroll_y, rounds=3000)
        await pilot.pause()
        assert long.rows == OldLongText(text).layout(current._rendered_width)
        shown = [("".join(segment.text for segment in current.render_line(y))).strip()
                 for y in range(current.scrollable_content_region.height)]
        assert next(row for row in reversed(shown) if row) == clean("the last line [/] \x1b[1m")
