"""Issue 27: a long message of CJK or emoji is laid out from each line's cells, not cut
grapheme by grapheme (20 s for 50 MB at 80 columns), and its rows are still exactly those
of the whole text cleaned and cut by Rich's `chop_cells` (`OldLongText`, a93613b's, is the
oracle)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import get_character_cell_size

from replay.core.safe import has_controls
from replay.ui import render
from replay.ui.render import LongText
from tests.ui.test_huge_message_rows import OldLongText, _rows

WIDE_PIECES = [
    "日本語", "中文文本，", "한국어", "ｶﾀｶﾅ", "ＡＢ", "🦊", "🎉🎉", "👍🏽", "a\u0301",
    "e\u0308\u0301", "\u0301", "\u200d", "\ufe0f", "❤\ufe0f", "👩\u200d💻",
    "\U000e0100", "\U0001d167", "\U00010000", "\U00020000", "\u1100\u1161", "\u115f",
    "\u3164", "\t", " ", "word ", "[/]", "[link=x]", "\x1b[31m", "\x07", "\u202e", "\u200b",
    "é", "␛", "\n", "\n\n",
]
"""CJK, Hangul, half- and full-width forms, emoji with skin tones, joiners and variation
selectors (which `clean` spells out), combining marks, characters past the BMP of none, one
and two cells, tabs, escapes and markup-looking text."""

wide_text = st.lists(st.one_of(st.sampled_from(WIDE_PIECES), st.text(max_size=4)),
                     max_size=80).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=wide_text, width=st.sampled_from([3, 4, 5, 12, 21, 80, 81, 160]),
       indent=st.sampled_from([1, 3]), long_line=st.sampled_from([0, 0, 0, 1500]))
def test_wide_rows_are_exactly_those_rich_cuts(text: str, width: int, indent: int,
                                               long_line: int) -> None:
    if long_line:  # a line longer than LongText's step is cleaned from its kept places
        text = text[:len(text) // 2] + ("漢a🦊\t\x1b" * long_line)[:long_line] \
            + text[len(text) // 2:]
    if not text:
        return
    new, old = LongText(text, indent=indent), OldLongText(text, indent=indent)
    assert _rows(new, width) == _rows(old, width)
    assert _rows(new, width + 7) == _rows(old, width + 7)  # laid out again, another width
    rows = new.layout(width)
    for row in range(rows):
        line, column = new.place_of(row)
        assert new.place_of(new.row_of(line, column)) == (line, column)


def test_a_line_longer_than_a_piece_is_walked_a_piece_at_a_time() -> None:
    # 200,000 characters in one line: three pieces of 64 K, cut across their ends.
    text = "あ🦊b\u0301" * 50_000 + "\nend"
    new, old = LongText(text), OldLongText(text)
    assert new.layout(80) == old.layout(80)
    rows = new.layout(80)
    for row in (0, 1, 1000, 1637, 1638, 1639, rows // 2, rows - 2, rows - 1):
        assert new.row(row) == old.row(row), row


def test_cjk_lines_are_laid_out_without_cutting_any(monkeypatch: pytest.MonkeyPatch) -> None:
    """a93613b cut every line of CJK that did not fit with `chop_cells`, grapheme by
    grapheme: now only a line whose cells leave its row count in doubt is walked (none of
    these), and a line's cuts are found when it is drawn."""
    line = "日本語のテキスト 🦊 [/] [link=x] list[int] \x1b[31m red\x07 é \u202e bidi end."
    long = LongText((line + "\n") * 3000 + "the end")
    old = OldLongText((line + "\n") * 3000 + "the end")
    expected = _rows(old, 80)

    def no_cutting(*_: object) -> list[str]:
        raise AssertionError("a line was cut grapheme by grapheme")

    walked: list[int] = []
    walk = getattr(long, "_walk", None)
    monkeypatch.setattr(render, "chop_cells", no_cutting)
    monkeypatch.setattr(long, "_walk", lambda number: walked.append(number) or walk(number),
                        raising=False)
    assert long.layout(80) == len(expected) == 6001
    assert walked == []  # 99 cells: two rows at 79, whatever the cuts
    assert [_rows_of(long, row) for row in (0, 1, 2, 5999, 6000)] == \
        [expected[row] for row in (0, 1, 2, 5999, 6000)]
    assert walked == [0, 1, 2999]  # the lines drawn, once each ('the end' is ASCII)


def _rows_of(long: LongText, row: int) -> str:
    return "".join(segment.text for segment in long.row(row))


def test_doubtful_lines_are_walked() -> None:
    # 158 and 157 cells at 79 columns: two rows, or three when a wide character would
    # cross a row's end (the first line).
    text = "a" * 78 + "漢" + "b" * 78 + "\n" + "a" * 79 + "漢" * 39
    new, old = LongText(text), OldLongText(text)
    assert _rows(new, 80) == _rows(old, 80)
    assert new.layout(80) == 3 + 2


def test_the_cell_classes_are_rich_s_widths() -> None:
    """Every character a shown text may hold in the BMP is in the class of its width as
    Rich measures it (`get_character_cell_size`, what `chop_cells` cuts by)."""
    patterns = render._cell_patterns()
    for code in range(0x10000):
        character = chr(code)
        if character in "\t\n" or has_controls(character):
            continue
        cells = get_character_cell_size(character)
        assert bool(patterns.one.fullmatch(character)) == (cells == 1), hex(code)
        assert bool(patterns.zero.fullmatch(character)) == (cells == 0), hex(code)
        run = patterns.runs.fullmatch(character)
        assert run is not None and run.lastindex == {2: 1, 0: 2, 1: None}[cells], hex(code)
    for code in range(0x10000, 0x110000, 97):
        assert patterns.runs.fullmatch(chr(code)).lastindex == 3  # type: ignore[union-attr]
