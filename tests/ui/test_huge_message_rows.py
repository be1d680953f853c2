"""Issue 27: an unfolded huge message is cleaned row by row as it is drawn, never copied
whole, and its rows are exactly those of the whole text cleaned (a93613b's `LongText`, kept
here verbatim as `OldLongText`, is the oracle): no control character reaches the terminal,
markup-looking text stays literal, and the last row of a 50 MB message is its last line."""

from __future__ import annotations

import json
import os
import tracemalloc
from array import array
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import chop_cells
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from replay.core.safe import escape_controls, escaped_shape, has_controls
from replay.ui import render
from replay.ui.render import FOLD_LINES, LongText, clean
from replay.ui.widgets.turn_view import TurnLines
from tests.ui.conftest import build_app, ready
from tests.ui.test_huge_message_formats import chat_json

cell_len = render.cell_len


def _old_narrow(text: str) -> bool:
    """True when every character of a shown text is one cell wide, checked at C speed: ASCII,
    or Latin-1 (whose controls and soft hyphen `clean` has already spelled out), or else
    each of its few distinct other characters one cell wide (`␛`, `…`, box drawing: a
    50 MB reply of such lines was wrapped grapheme by grapheme, 10 s for 10 MB)."""
    if text.isascii():
        return True
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        pass
    # Each distinct other character once, by a search that then skips it too (no list of
    # every occurrence: 600,000 `␛` in a 50 MB reply were 30 MB of strings).
    allowed, at = "", 0
    while (found := render._not_latin(allowed).search(text, at)) is not None:
        character = found.group()
        if not render._one_cell(character):
            return False
        allowed += character
        at = found.start()
    return True


class OldLongText:
    """(a93613b's `LongText`, verbatim but for its name.)

    A very long plain text drawn a screen at a time (`TurnLines` asks for rows).

    Rich would wrap the whole text into lines before the first is shown: a 50 MB message
    took minutes and gigabytes. Here rows are counted when the width is known (a line of
    ASCII is `len / width` rows, computed, not made), and a row is cut from its line only
    when drawn. Lines wrap at the width by cells (no word wrap).
    """

    def __init__(self, text: str, style: Style | None = None, indent: int = 1) -> None:
        safe = clean(text)
        if "\t" in safe:
            safe = safe.expandtabs(8)
        self._text = safe
        # Where each line starts (8 bytes a line), not a string each: a 50 MB message split
        # into 600,000 lines was 85 MB more.
        starts = array("q", [0])
        find, at = safe.find, safe.find("\n")
        while at >= 0:
            starts.append(at + 1)
            at = find("\n", at + 1)
        starts.append(len(safe) + 1)  # where a line after the last would start
        self._starts = starts
        self._narrow = _old_narrow(safe)
        self.style = style
        self.indent = indent
        self._width = -1
        self._line_of: array[int] = array("q")
        self._start_of: array[int] = array("q")

    def layout(self, width: int) -> int:
        """The number of rows at `width` columns (laid out once per width)."""
        if width != self._width:
            self._width = width
            room = max(1, width - self.indent)
            line_of: array[int] = array("q")
            start_of: array[int] = array("q")
            starts, lines = self._starts, self.line_count
            if self._narrow and max(map(int.__sub__, starts[1:], starts)) - 1 <= room:
                # Every line fits (most text at most widths): a row per line, made at once.
                self._line_of = array("q", range(lines))
                self._start_of = array("q", bytes(8 * lines))
                return lines
            for number in range(lines):
                length = starts[number + 1] - starts[number] - 1
                line = "" if self._narrow else self.line(number)
                if self._narrow or _old_narrow(line):
                    count = max(1, -(-length // room))
                    line_of.extend([number] * count)
                    start_of.extend(range(0, count * room, room))
                else:
                    start = 0
                    for piece in chop_cells(line, room) or [""]:
                        line_of.append(number)
                        start_of.append(start)
                        start += len(piece)
            self._line_of, self._start_of = line_of, start_of
        return len(self._line_of)

    @property
    def line_count(self) -> int:
        """Lines of the text."""
        return len(self._starts) - 1

    def line(self, number: int) -> str:
        """Line `number` of the text (without its line end)."""
        return self._text[self._starts[number]:self._starts[number + 1] - 1]

    def row(self, number: int) -> list[Segment]:
        """Row `number` at the laid-out width, padded to it."""
        line_number = self._line_of[number]
        line = self.line(line_number)
        start = self._start_of[number]
        last = number + 1 >= len(self._line_of) or self._line_of[number + 1] != line_number
        piece = line[start:] if last else line[start:self._start_of[number + 1]]
        pad = max(0, self._width - self.indent - cell_len(piece))
        return [Segment(" " * self.indent), Segment(piece, self.style), Segment(" " * pad)]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """Outside `TurnLines`: its first lines only (never the whole text)."""
        end = self._starts[min(FOLD_LINES, self.line_count)] - 1
        yield Text(self._text[:end], style=self.style or "")


PIECES = ["a", "b ", "word ", "[/]", "[link=x]", "list[int]", "\t", "\n", "\n\n", "日本",
          "é", "\x1b", "\x1b[2J", "\x1b]0;PWNED\x07", "\x07", "\x00", "\r", "\r\n",
          "\x9b", "\x9d", "\x85", "\x7f", "\u202e", "\u200b", "\u00ad", "\ufeff",
          "\udcff", "\ud800", "🦊", "a\u0301", "\ufe0f", "␛", "…", "─"]
"""What hostile transcripts hold: escapes, controls, bidi and zero-width marks, lone
surrogates (a file name's bytes), markup-looking text, tabs, wide and combining characters."""

hostile = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=8)), max_size=60) \
    .map("".join)


def _rows(long: LongText | OldLongText, width: int) -> list[str]:
    return ["".join(segment.text for segment in long.row(n)) for n in range(long.layout(width))]


@settings(max_examples=150, deadline=None)
@given(text=hostile, long_line=st.sampled_from([0, 0, 0, 1500, 3000]),
       width=st.sampled_from([3, 7, 12, 40, 81, 160]), indent=st.sampled_from([1, 3]))
def test_rows_are_exactly_those_of_the_whole_text_cleaned(
        text: str, long_line: int, width: int, indent: int) -> None:
    # A line longer than LongText's step is cleaned from its kept places: put one in.
    if long_line:
        text = text[:len(text) // 2] + ("x\t\x1b" * long_line)[:long_line] + text[len(text) // 2:]
    if not text:
        return
    new, old = LongText(text, indent=indent), OldLongText(text, indent=indent)
    rows = _rows(new, width)
    assert rows == _rows(old, width)
    assert _rows(new, width + 9) == _rows(old, width + 9)  # a second width, laid out again
    for row in rows:
        assert not has_controls(row.replace("\t", "")) and "\t" not in row
    assert list(new.__rich_console__(None, None))[0].plain == \
        list(old.__rich_console__(None, None))[0].plain  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(text=hostile)
def test_the_shape_and_the_checks_agree_with_the_escaping_itself(text: str) -> None:
    escaped = escape_controls(text)
    shape = escaped_shape(text)
    assert len(shape) == len(escaped)
    assert [len(line) for line in shape.expandtabs(8).split("\n")] == \
        [len(line) for line in escaped.expandtabs(8).split("\n")]
    assert has_controls(text) == (escaped != text)
    assert render._narrow(text, raw=True) == render._narrow(clean(text))
    for column in range(9):
        assert render.shown_piece(text, column) == \
            (" " * column + escaped).expandtabs(8)[column:] or "\n" in text


def test_markup_and_escapes_in_rows_stay_literal() -> None:
    line = "[/] [link=x]click[/link] list[int] [bold]b\x1b]0;PWNED\x07\x1b[2J\x9b\u202e"
    long = LongText((line + "\n") * 30_000 + "the end\n", indent=1)
    rows = _rows(long, 41)
    expected = chop_cells(clean(line), 40)
    assert rows[:len(expected)] == [" " + piece + " " * (40 - cell_len(piece))
                                    for piece in expected]
    assert "[link=x]click[/link]" in "".join(rows[:4])
    assert rows[-2].strip() == "the end" and rows[-1].strip() == ""
    for row in rows[-200:]:
        assert not has_controls(row)


def _held_by(make: object) -> tuple[int, int]:
    """(bytes held, peak bytes) of what `make()` allocates, by tracemalloc."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = make()  # type: ignore[operator]
        now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del kept
    return now - before, peak - before


HOSTILE_LINE = ("The fox [/] [link=x] list[int] \x1b[2J\x1b]0;PWNED\x07 café \x00 \x9b31m "
                "\r\x7f jumps\x1b[0m.\n")


def test_unfolding_holds_no_copy_of_the_text() -> None:
    """Laid out at two widths and drawn at its start and its end, a 4 MB text of escapes is
    held in its line starts, line lengths and rows only: a93613b held its cleaned copy (UCS-2, once
    `␛` is spelled out: 2.2x the text) and made it in a 7x peak."""
    text = HOSTILE_LINE * (4_000_000 // len(HOSTILE_LINE))
    size = len(text)

    def unfold() -> LongText:
        long = LongText(text)
        for width in (159, 79):
            rows = long.layout(width)
            for number in [*range(45), *range(rows - 45, rows)]:
                long.row(number)
        return long
    held, peak = _held_by(unfold)
    assert held < 0.5 * size, (held, size)  # line starts, lengths and rows: 0.3x
    assert peak < 0.6 * size, (peak, size)


def test_a_single_long_line_is_cleaned_a_piece_at_a_time() -> None:
    text = ("é\t\x1b[31m" * 400_000) + "end\x07"
    long = LongText(text)
    rows = long.layout(120)
    held, peak = _held_by(lambda: [long.row(n) for n in (0, rows // 2, rows - 1)])
    assert peak < 1_000_000, peak  # a row and its step, not the line (3 MB, 12 MB cleaned)
    old = OldLongText(text)
    assert old.layout(120) == rows
    for number in (0, 1, rows // 3, rows - 2, rows - 1):
        assert long.row(number) == old.row(number)


async def test_an_unfolded_message_of_escapes_holds_no_copy_and_ends_on_its_last_line(
        tmp_path: Path) -> None:
    text = HOSTILE_LINE * (3_000_000 // len(HOSTILE_LINE)) + "the last line [/] \x1b[1m\n"
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"id": "big", "messages": [
        {"role": "user", "content": "write [link=x] it"}, {"role": "assistant", "content": text},
        {"role": "user", "content": "thanks"}, {"role": "assistant", "content": "ok"}]}))
    app = build_app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        screen.go(1)
        await pilot.pause()
        current = screen.query_one("#current", TurnLines)
        assert "(click or o shows it all)" in current.plain_text
        await app.workers.wait_for_complete()  # (a worker reading the turn is not `o`'s)
        await pilot.pause()
        tracemalloc.start()
        try:
            await pilot.press("o")
            await pilot.pause()
            current.scroll_end(animate=False, immediate=True)
            await pilot.pause()
            held, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        # a93613b: the cleaned copy, 2.2x the text, held while unfolded (made in a 5x peak).
        assert held < 0.5 * len(text) and peak < 1.0 * len(text), (held, peak, len(text))
        (start, _, long), = current._long
        assert current.line_count > 50_000
        height = current.scrollable_content_region.height
        strips = [current.render_line(y) for y in range(height)]
        shown = ["".join(segment.text for segment in strip).rstrip() for strip in strips]
        assert any(row.strip() == "the last line [/] ␛[ESC][1m" for row in shown[-3:]), shown
        for strip in strips:
            for segment in strip:
                assert not has_controls(segment.text), segment
        assert "[link=x] list[int]" in "\n".join(shown)
        await pilot.press("o")  # folded again
        await pilot.pause()
        assert current.line_count < 1_000


@settings(max_examples=300, deadline=None)
@given(text=hostile, pad=st.sampled_from([0, 19_990, 20_000, 25_000]),
       lines=st.sampled_from([1, 12, 24]))
def test_a_tool_output_is_folded_as_its_whole_cleaned_text_was(
        text: str, pad: int, lines: int) -> None:
    text = ("\x1b\n" * (pad // 2))[:pad] + text if pad else text
    assert render.fold_clean(text, lines) == render.fold(clean(text), lines)


def test_folding_a_huge_tool_output_cleans_only_its_head() -> None:
    output = HOSTILE_LINE * (4_000_000 // len(HOSTILE_LINE))
    from replay.core.session.model import Kind, Part

    part = Part(kind=Kind.TOOL_CALL, name="bash", input="cat big.txt", output=output)
    held, peak = _held_by(lambda: render.tool_body(part).plain)
    assert peak < 0.2 * len(output), peak  # a93613b: its cleaned copy, 2.2x, and lines
    assert "more lines folded (v shows the raw record)" in render.tool_body(part).plain


@settings(max_examples=60, deadline=None)
@given(text=hostile, needle=st.sampled_from(["[esc]", "b", "[/]", "link=x", "日", "\\xff", "zz",
                                             "  ", "t[bel] ", "<u+202e>"]),
       long_line=st.sampled_from([0, 0, 3000]), width=st.sampled_from([12, 40, 160]))
def test_the_first_row_holding_a_needle_is_the_one_a_row_by_row_search_finds(
        text: str, needle: str, long_line: int, width: int) -> None:
    if long_line:
        text = text[:len(text) // 2] + ("x\t\x1bb" * long_line)[:long_line] + text[len(text) // 2:]
    if not text:
        return
    long = LongText(text)
    rows = _rows(long, width)
    expected = next((n for n, row in enumerate(rows) if needle in row.lower()), None)
    assert long.first_row_holding(needle) == expected


async def test_a_search_match_at_the_end_of_a_huge_message_is_scrolled_to_and_marked(
        tmp_path: Path) -> None:
    text = HOSTILE_LINE * (3_000_000 // len(HOSTILE_LINE)) + "the needle [/] \x1b[1m\n"
    await search_shows_the_needle(chat_json(tmp_path, text), tmp_path)


async def search_shows_the_needle(path: Path, tmp_path: Path, index: int = 1) -> None:
    """`/needle`: turn `index` (the second by default: a huge message ending with `the
    needle [/] ESC[1m`) is shown unfolded at its end, the one match marked."""
    from replay.ui.screens.search_prompt import SearchPrompt
    from replay.ui.widgets.turn_view import MATCH_STYLE
    from tests.ui.conftest import wait_until

    app = build_app(path, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        await pilot.press("slash", *"needle")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchPrompt))
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.searching.position() is not None)
        await pilot.pause()
        current = screen.query_one("#current", TurnLines)
        # The hit is near the end: shown once the rows up to it are counted (between frames).
        await wait_until(pilot, lambda: current.scroll_y > 0 and not current.jumping, 1500)
        await pilot.pause()
        assert screen.index == index and current._long  # unfolded: the match is in it
        height = current.scrollable_content_region.height
        strips = [current.render_line(y) for y in range(height)]
        marked = [segment.text for strip in strips for segment in strip
                  if segment.style and segment.style.reverse]
        assert MATCH_STYLE.reverse and marked == ["needle"], marked
        shown = ["".join(segment.text for segment in strip) for strip in strips]
        assert any("the needle [/] ␛[ESC][1m" in row for row in shown), shown


async def rewrite_shows_a_notice(path: Path, index: int) -> None:
    """Turn `index` holds a huge message with "jumps" in it, left in its file. The file is
    rewritten in place (same size, "JUMPS"), then `o`: the turn shows neither text, only a
    line saying the file was rewritten since it was read."""
    app = build_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        screen.go(index)
        await pilot.pause()
        data = path.read_bytes().replace(b"jumps", b"JUMPS")
        with open(path, "r+b") as handle:
            handle.write(data)
        os.utime(path, ns=(1, 1))
        await pilot.press("o")
        await pilot.pause()
        shown = screen.query_one("#current", TurnLines).plain_text
        assert "JUMPS" not in shown and "jumps" not in shown, shown[:3000]
        assert "not shown: the file was rewritten since it was read" in shown, shown[:3000]
