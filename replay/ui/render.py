"""Turning turns into safe Rich renderables: no transcript text is ever parsed as markup."""

from __future__ import annotations

import functools
import re
import time
from array import array
from bisect import bisect_right
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import accumulate, repeat

from rich.cells import cell_len, chop_cells, get_character_cell_size
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from replay.core.detection.empty import format_duration
from replay.core.escaped_find import find_steps, tabs_expanded
from replay.core.safe import INVISIBLE, escaped_shape, has_controls
from replay.core.session import lifted
from replay.core.session.lifted import Rope
from replay.core.session.model import Kind, Part, Turn
from replay.ui.literal import shown

FOLD_LINES = 24
"""Lines of a tool output shown before the rest is folded."""
FOLD_CHARS = 20_000
"""Characters of a folded text shown at most (however few its lines)."""
LONG_TEXT_CHARS = 100_000
"""Texts longer than this are shown unfolded as a `LongText`, a screen at a time."""


def clean(text: str | None) -> str:
    """Transcript text made safe for the terminal (see `replay.ui.literal.shown`)."""
    return shown(text)


def clock(turn: Turn) -> str:
    """The turn's local wall-clock time, `14:02:51`, or its raw timestamp."""
    if turn.time is None:
        return clean(turn.timestamp) if turn.timestamp else ""
    try:
        return datetime.fromtimestamp(turn.time).strftime("%H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return ""


def gap_text(seconds: float | None) -> str:
    """`+38 s` for the gap since the previous turn."""
    return f"+{format_duration(seconds)}" if seconds is not None and seconds >= 1 else ""


def prose(text: str) -> RenderableType:
    """Markdown for prose; plain text when it is large (rendering cost) or has no markdown."""
    safe = clean(text)
    if len(safe) > 20_000 or not any(mark in safe for mark in ("#", "*", "`", "- ", "1. ", "|")):
        return Text(safe)
    return _markdown(safe)


_PARSERS: list[object] = []
"""The Markdown parser, made on first use: importing it costs 30 ms at startup."""


def _markdown(text: str) -> RenderableType:
    """Markdown whose HTML (tags, comments) is text to show, not markup to drop: an agent's
    `<!-- rm -rf / -->` must stay on screen."""
    from markdown_it import MarkdownIt
    from rich.markdown import Markdown

    if not _PARSERS:
        _PARSERS.append(MarkdownIt("commonmark", {"html": False})
                        .enable("strikethrough").enable("table"))
    parser = _PARSERS[0]
    assert isinstance(parser, MarkdownIt)
    document = Markdown("", hyperlinks=False, code_theme="ansi_dark", inline_code_lexer=None)
    document.markup = text
    document.parsed = parser.parse(text)
    return document


def fold(text: str, lines: int = FOLD_LINES, chars: int = FOLD_CHARS) -> tuple[str, int]:
    """The first `lines` lines of a text, at most `chars` characters of it, and how many
    lines were hidden (at least 1 when the text was cut inside a line). Bounded however
    large the text: a 50 MB line is cut, not wrapped whole, and its lines are counted
    without splitting it."""
    if len(text) > chars:
        shown, hidden = fold(text[:chars], lines, chars)
        hidden += text.count("\n", chars)
        return shown, max(hidden, 1)
    all_lines = text.splitlines()
    if len(all_lines) <= lines:
        return text, 0
    return "\n".join(all_lines[:lines]), len(all_lines) - lines


def _narrow(text: str, raw: bool = False) -> bool:
    """True when every character of a shown text is one cell wide, checked at C speed: ASCII,
    or Latin-1 (whose controls and soft hyphen `clean` has already spelled out), or else
    each of its few distinct other characters one cell wide (`␛`, `…`, box drawing: a
    50 MB reply of such lines was wrapped grapheme by grapheme, 10 s for 10 MB). With `raw`,
    the same of `clean(text)`, told from `text` itself: the characters `clean` spells out
    are left out (their escapes are ASCII and `␛`, one cell each)."""
    if text.isascii():
        return True
    # Each distinct other character once, by a search that then skips it too (no list of
    # every occurrence: 600,000 `␛` in a 50 MB reply were 30 MB of strings).
    allowed, at = "", 0
    while (found := _not_latin(allowed, raw).search(text, at)) is not None:
        character = found.group()
        if not _one_cell(character):
            return False
        allowed += character
        at = found.start()
    return True


@functools.lru_cache(maxsize=256)
def _not_latin(allowed: str, raw: bool = False) -> re.Pattern[str]:
    """A character past Latin-1 that is not one of `allowed` (nor, with `raw`, one that
    `clean` spells out)."""
    escaped = f"{INVISIBLE}\ud800-\udfff" if raw else ""
    return re.compile(f"[^\\x00-\\xff{escaped}{re.escape(allowed)}]")


@functools.cache
def _one_cell(character: str) -> bool:
    """True when the character takes exactly one cell."""
    return get_character_cell_size(character) == 1


def shown_piece(text: str, column: int = 0) -> str:
    """A piece of a line as `LongText` shows it: `clean`, then tabs expanded to the next
    multiple of 8 as if the piece started at `column` of its line (what `expandtabs(8)`
    of the whole cleaned line gives there)."""
    return tabs_expanded(clean(text), column)


def shape_piece(text: str, column: int = 0) -> str:
    """A stand-in for `shown_piece(text, column)` of its length, each of its characters of
    the same cells: `escaped_shape` (an escape's characters are one cell each, as its dots
    are), tabs expanded alike. Made without a call per character escaped (a walk of a 50 MB
    line of escapes spent most of its time cleaning it)."""
    return tabs_expanded(escaped_shape(text) if has_controls(text) else text, column)


def _cell_table() -> Iterable[tuple[int, int, int]]:
    """Rich's table of the characters not one cell wide, (first, last, cells), the one
    `chop_cells` measures by."""
    try:
        from rich._unicode_data import load
    except ImportError:  # Rich before 14
        from rich._cell_widths import CELL_WIDTHS

        return CELL_WIDTHS
    return load("auto").widths


def _cell_classes() -> tuple[str, str]:
    """The characters of the BMP of two cells and those of none, as regex class bodies,
    among the characters a shown text holds: not those `clean` spells out (their escapes
    are one cell a character), nor tab (expanded) or line end. (Past the BMP, characters
    are few and told one by one: a class holding ranges past the BMP checks each of them
    for every character it meets, 200 ns a character of ASCII.)"""
    bodies: dict[int, list[str]] = {0: [], 2: []}
    for first, last, cells in _cell_table():
        if cells not in bodies or first > 0xFFFF:
            continue
        last, at = min(last, 0xFFFF), first
        # The characters `clean` spells out are all in the BMP: skip them one by one.
        for code in range(first, last + 1):
            if code in (9, 10) or has_controls(chr(code)):
                if at < code:
                    bodies[cells].append(_span(at, code - 1))
                at = code + 1
        if at <= last:
            bodies[cells].append(_span(at, last))
    return "".join(bodies[2]), "".join(bodies[0])


def _span(first: int, last: int) -> str:
    """Characters `first` to `last` as a regex class piece."""
    if first == last:
        return re.escape(chr(first))
    return f"{re.escape(chr(first))}-{re.escape(chr(last))}"


_PAST_BMP = "\U00010000-\U0010ffff"


@dataclass(frozen=True)
class _CellPatterns:
    """The regexes that tell characters' cells by Rich's table, made on the first text
    holding characters of other widths than one (50 ms)."""

    one: re.Pattern[str]
    """A run of characters of one cell in the BMP (no line end)."""
    not_zero: re.Pattern[str]
    """A run of characters of one or two cells in the BMP (no line end)."""
    zero: re.Pattern[str]
    """A character of no cell in the BMP."""
    bmp: re.Pattern[str]
    """A run of characters in the BMP."""
    past: re.Pattern[str]
    """A character past the BMP."""
    runs: re.Pattern[str]
    """A run of a line's characters of one width: two cells (group 1), none (group 2), a
    character past the BMP (group 3), one cell (none)."""


def _bmp_but(body: str) -> str:
    """A regex class body of the characters of the BMP not in class `body`, as ranges: a
    negated class (`[^...]` with a range past the BMP) is tested range by range at each
    character, one of the BMP alone by a table (1.1 ms against 0.57 ms for 64 K characters
    of CJK and escapes)."""
    left = re.compile(f"[{body}]")
    spans, first = [], None
    for code in range(0x10001):
        inside = code < 0x10000 and left.match(chr(code)) is None
        if inside and first is None:
            first = code
        elif not inside and first is not None:
            spans.append(_span(first, code - 1))
            first = None
    return "".join(spans)


@functools.cache
def _cell_patterns() -> _CellPatterns:
    """The regexes that tell characters' cells (made once)."""
    wide, zero = _cell_classes()
    return _CellPatterns(
        one=re.compile("[" + _bmp_but("\n" + wide + zero) + "]+"),
        not_zero=re.compile("[" + _bmp_but("\n" + zero) + "]+"),
        zero=re.compile(f"[{zero}]"),
        bmp=re.compile("[\\u0000-\\uffff]+"),
        past=re.compile(f"[{_PAST_BMP}]"),
        runs=re.compile(f"([{wide}]+)|([{zero}]+)|([{_PAST_BMP}])|[^{wide}{zero}{_PAST_BMP}]+"))


@functools.lru_cache(maxsize=64)
def _any_of(characters: str) -> re.Pattern[str]:
    """A run of the given characters."""
    return re.compile(f"[{re.escape(characters)}]+")


def _not_one_cell(text: str) -> tuple[str, str | None]:
    """(the characters of `text` of two cells or none, and those of none, or None when it
    has none of them), line ends kept. Characters past the BMP are told one by one, each
    distinct one once."""
    patterns = _cell_patterns()
    odd = patterns.one.sub("", text)
    by_cells: dict[int, str] = {}
    if patterns.past.search(odd) is not None:
        for character in sorted(set(patterns.bmp.sub("", odd))):
            cells = get_character_cell_size(character)
            by_cells[cells] = by_cells.get(cells, "") + character
        if 1 in by_cells:
            odd = _any_of(by_cells[1]).sub("", odd)
    if 0 not in by_cells and patterns.zero.search(odd) is None:
        return odd, None
    zero = patterns.not_zero.sub("", odd)
    return odd, _any_of(by_cells[2]).sub("", zero) if 2 in by_cells else zero


class _RowWalk:
    """Where the rows of a shown line start when it is cut at `room` cells (at least 2),
    found as its pieces are given in order: the cuts `chop_cells` makes, found a run of
    characters of one width at a time (a line of CJK was cut grapheme by grapheme: 20 s for
    50 MB). A character of no cell stays with the one before it (a shown text holds no
    joiner or variation selector: `clean` spells them out). A walk can start where a row
    starts (`at`, `fill` 0: the line before it of one cell a character)."""

    def __init__(self, room: int, at: int = 0) -> None:
        self.room = room
        self.starts = array("q", range(0, at + 1, room))
        """Where each row found starts: all but the last are whole."""
        self.walked = self.starts[-1]
        """Columns of the line walked."""
        self._fill = 0

    def feed(self, piece: str) -> None:
        """Walk on over `piece`, the line's next characters."""
        starts, fill, base, room = self.starts, self._fill, self.walked, self.room
        for run in _cell_patterns().runs.finditer(piece):
            kind = run.lastindex
            cells = (2 if kind == 1 else 0 if kind == 2 else 1 if kind is None
                     else get_character_cell_size(run.group()))
            if not cells:
                continue
            at, left = base + run.start(), run.end() - run.start()
            fit = (room - fill) // cells
            while left > fit:
                at += fit
                left -= fit
                starts.append(at)
                fill, fit = 0, room // cells
            fill += left * cells
        self._fill, self.walked = fill, base + len(piece)


def _row_starts(pieces: Iterable[str], room: int) -> Sequence[int]:
    """Where the rows of a shown line (given as pieces, in order) start when it is cut at
    `room` cells (at least 2): a `_RowWalk` over them all."""
    walk = _RowWalk(room)
    for piece in pieces:
        walk.feed(piece)
    return walk.starts


_TABLE_CELLS = 1 << 20
"""Lines of at most this many cells are counted in rows by a table of every count."""


def _rows_by_cells(cells: array[int], room: int, longest: int) -> array[int]:
    """The rows of each line of `cells` cells whose characters are of one cell (or of
    none): ceil(cells / room), at least one (by a table only when it is shorter than the
    lines: a block of a few long lines is laid out alone)."""
    if longest > min(_TABLE_CELLS, 64 * len(cells) + 4096):
        return array("q", map(max, repeat(1), map(int.__neg__, map(
            int.__floordiv__, map(int.__neg__, cells), repeat(room)))))
    table = array("q", [1])
    for rows in range(1, longest // room + 2):
        table.extend(repeat(rows, room))
    return array("q", map(table.__getitem__, cells))


def _doubtful_cells(room: int, longest: int) -> bytes | None:
    """For each count of cells up to `longest`, 1 when a line of that many cells holding
    a character of two cells may fill more rows than ceil(cells / room): from
    r * (room - 1) + 1 to r * room cells, r rows or r + 1 (None: too long for a table)."""
    if longest > _TABLE_CELLS:
        return None
    doubt = bytearray(longest + 1)
    for rows in range(2, longest // (room - 1) + 1):
        first, last = rows * (room - 1) + 1, min(rows * room, longest)
        if first <= last:
            doubt[first:last + 1] = b"\x01" * (last - first + 1)
    return bytes(doubt)


@dataclass
class _LongCount:
    """A line longer than a block being counted a piece at a time (`LongText`)."""

    begin: int
    """Where it starts in the text."""
    at: int
    """Where the part of it counted ends in the text."""
    raw: array[int]
    """Its kept places: offsets in the text's line..."""
    shown: array[int]
    """... and in the cleaned line."""
    length: int = 0
    """Characters of the part counted, cleaned."""
    narrow: int = 0
    """Characters of the cleaned line from its start known to be of one cell each."""
    odd: int = 0
    """Characters of the part counted not of one cell..."""
    zero: int = 0
    """... and of those, the characters of none."""
    walk: _RowWalk | None = None
    """Its rows at the laid-out width, found up to where it was walked (None until it holds
    a character not of one cell)."""


class _LineCounts:
    """A text's lines as they are counted, a block at a time (`LongText` counts them and lays
    them out in rows): where each starts, its cells and whether it holds characters not of
    one cell, a long line's length once cleaned and its kept places; and the text itself,
    read a piece at a time (from memory or from its file, which may change under it)."""

    def __init__(self, text: str | Rope) -> None:
        self._text = text
        self.moved: str | None = None
        """Why the text can no longer be read from its file (None while it can)."""
        self._size = len(text)
        self._line_total = (text.count("\n") if isinstance(text, str) else text.lines) + 1
        code = "I" if self._size < 2**32 - 2 else "q"
        self._starts = array(code, [0])
        """Where each line counted starts, and the line after them (past the text's end,
        `len + 1`, once every line is counted)."""
        self._cells = array(code)
        """The cells of each line counted, once shown."""
        self._odd = bytearray()
        """1 for each line counted holding characters not of one cell."""
        self._wide = bytearray()
        """1 for each line counted holding characters of two cells."""
        self._as_is = True
        """Every line counted is shown as it is (else rows are cleaned as drawn)."""
        self._long_lengths: dict[int, int] = {}
        """The length of each line longer than `_STEP`, cleaned."""
        self._places: dict[int, tuple[array[int], array[int]]] = {}
        """A long line's kept places: (offsets in the text's line, in the cleaned line)."""
        self._held: tuple[int, str] = (0, "")
        """The block read last (where it starts, its text): a line walked just after it
        is counted is not read again."""
        self._long: _LongCount | None = None
        """The line longer than a block being counted (the line after those counted)."""

    def _slice(self, start: int, end: int) -> str:
        """Characters `start` to `end` of the text as given. A text whose file changed under
        it reads as spaces (so rows keep their places) and says why (`moved`)."""
        text = self._text
        if isinstance(text, str):
            return text[start:end]
        base, held = self._held
        if base <= start and end <= base + len(held):
            return held[start - base:end - base]
        try:
            return text.read(start, end)
        except OSError as error:
            self.moved = str(error)
            return " " * max(0, min(end, len(text)) - start)

    def _read(self, start: int, end: int) -> str:
        """`_slice`, for counting: a text whose file changed before anything of it was
        counted is counted as empty (one row says why)."""
        if isinstance(self._text, str) or len(self._starts) > 1:
            return self._slice(start, end)
        try:
            return self._text.read(start, end)
        except OSError as error:  # its file changed: one row says so
            self.moved = str(error)
            self._text, self._size, self._line_total = "", 0, 1
            return ""

    @property
    def _counted(self) -> int:
        """Lines counted."""
        return len(self._starts) - 1

    @property
    def line_count(self) -> int:
        """Lines of the text."""
        return self._line_total

    def _is_long(self, number: int) -> bool:
        """Line `number` (counted) is longer than `_STEP` characters."""
        return number in self._long_lengths

    def _count_short(self, begin: int, chunk: str, lengths: list[int]) -> None:
        """Count the lines of `chunk` (at `begin`, none longer than `_STEP`, their lengths
        `lengths`): their shown lengths from a stand-in of the cleaned text, tabs expanded
        (a regex's replacement holds a string per piece: 9 bytes a character of text full
        of escapes), then their cells a run of characters of one width at a time."""
        self._starts.extend(accumulate(map((1).__add__, lengths), initial=begin))
        del self._starts[-len(lengths) - 1]  # (`begin`, already there)
        if "\t" not in chunk and not has_controls(chunk):  # shown as it is
            shown: Sequence[int] = lengths
        else:
            self._as_is = False
            shape = escaped_shape(chunk)
            if "\t" in shape:
                shape = shape.expandtabs(8)
            # (a line's length by `find`, one Python step a line, cost twice the split)
            shown = list(map(len, shape.split("\n")))
        if _narrow(chunk, raw=True):
            self._cells.extend(shown)
            self._odd.extend(bytes(len(lengths)))
            self._wide.extend(bytes(len(lengths)))
            return
        odd_characters, zero_characters = _not_one_cell(chunk)
        # Few characters left: their lines' lengths are those of the pieces of a split.
        odd = list(map(len, odd_characters.split("\n")))
        self._odd.extend(map(bool, odd))
        if zero_characters is None:
            self._cells.extend(map(int.__add__, shown, odd))
            self._wide.extend(map(bool, odd))
            return
        zero = list(map(len, zero_characters.split("\n")))
        # cells = length + wide - zero = length + odd - 2 zero
        self._cells.extend(map(int.__sub__, map(int.__add__, shown, odd),
                               map(int.__add__, zero, zero)))
        self._wide.extend(map(bool, map(int.__sub__, odd, zero)))


class LongText(_LineCounts):
    """A very long plain text drawn a screen at a time (`TurnLines` asks for rows).

    Rich would wrap the whole text into lines before the first is shown: a 50 MB message
    took minutes and gigabytes. Here rows are counted when the width is known (a line of
    ASCII is `len / width` rows, computed, not made), and a row is cut from its line only
    when drawn. Lines wrap at the width by cells (no word wrap).

    Rows are counted a block at a time (`_BLOCK` characters of whole lines, or a piece of
    a longer line: its rows counted so far are drawn while the rest is counted), each block
    read once: `layout` counts only as far as it is asked to (the first
    screen), `count_for` goes on between frames, and whatever needs a row past the part
    counted (a row drawn, the end, a search hit) counts up to it first. A 50 MB message
    counted whole before its first screen took 1-5 s.

    The text is held as given, never copied whole: each row is made safe (`clean`, tabs
    expanded) as it is drawn, from the piece of the text it shows. The rows are those of
    the whole text cleaned, cut at the same places: a row's place is counted in the
    cleaned text, whose line lengths are known without making it (`escaped_shape`), and a
    line longer than `_STEP` keeps where every `_STEP` characters of it fall in its
    cleaned form, so a row of a 50 MB line is cleaned from at most `_STEP` + a row.
    """

    _STEP = 1024
    """Characters of a long line between two of its kept places."""
    _BLOCK = 1 << 16
    """Characters of whole lines counted at a time (a longer line is a block of its own)."""

    def __init__(self, text: str | Rope, style: Style | None = None, indent: int = 1) -> None:
        super().__init__(text)
        self.style = style
        self.indent = indent
        self._width = -1
        self._room = 1
        self._first_row: array[int] | None = None
        """Each laid-out line's first row at the width, and the rows of them all; None
        while every line laid out fits in a row (row n is line n)."""
        self._laid = 0
        """Lines laid out at the width (of those counted)."""
        self._walked: dict[int, Sequence[int]] = {}
        """Where the rows of lines drawn lately start (columns of the shown line)."""
        self._walked_long: dict[int, Sequence[int]] = {}
        """The same of lines longer than `_STEP`, kept while the width stays."""

    @property
    def done(self) -> bool:
        """Every row is counted at the laid-out width."""
        return self._starts[-1] > self._size and self._laid == self._counted

    def _count_block(self) -> None:
        """Count the lines of the next block: where they start, their cells (or the next
        piece of a line longer than a block)."""
        if self._long is not None:
            self._count_piece()
            return
        begin, size = self._starts[-1], self._size
        end = min(begin + self._BLOCK, size)
        chunk = self._read(begin, end)
        size = self._size  # (none if the file changed)
        if end < size:
            cut = chunk.rfind("\n")
            if cut < 0:  # a line longer than a block: counted a piece at a time
                self._long = _LongCount(begin, begin, array("q"), array("q"))
                self._places[self._counted] = (self._long.raw, self._long.shown)
                self._count_long(chunk, whole=False)
                return
            chunk = chunk[:cut]
        self._held = (begin, chunk)
        # Whole lines (the text's last without a line end): lines longer than `_STEP` one
        # by one, the others together.
        lengths = list(map(len, chunk.split("\n")))
        number, at = 0, 0
        if max(lengths) > self._STEP:
            for long in [n for n, length in enumerate(lengths) if length > self._STEP]:
                if long > number:
                    stop = at + sum(lengths[number:long]) + long - number
                    self._count_short(begin + at, chunk[at:stop - 1], lengths[number:long])
                    at = stop
                self._long = _LongCount(begin + at, begin + at, array("q"), array("q"))
                self._count_long(chunk[at:at + lengths[long]], whole=True)
                number, at = long + 1, at + lengths[long] + 1
        if number < len(lengths):
            self._count_short(begin + at, chunk[at:], lengths[number:])

    def _count_long(self, piece: str, whole: bool) -> None:
        """Count `piece`, the next characters of the long line being counted (`_long`; all of
        the rest when `whole`): its length once cleaned, its kept places, its cells. The line
        is counted once its end is reached."""
        count = self._long
        assert count is not None
        cut = piece.find("\n")
        if cut >= 0:
            piece = piece[:cut]
        at, begin = count.at, count.begin
        last = whole or cut >= 0 or at + len(piece) >= self._size
        self._held = (at, piece)
        length = count.length
        # Its rows walked on over the stand-ins made here when the walk is caught up.
        walk = count.walk
        if walk is not None and (walk.room != self._room or walk.walked != length):
            walk = None
        if "\t" not in piece and not has_controls(piece):  # shown as it is
            count.raw.extend(range(at - begin, at - begin + len(piece), self._STEP))
            count.shown.extend(range(length, length + len(piece), self._STEP))
            length += len(piece)
            if walk is not None:
                walk.feed(piece)
        else:
            self._as_is = False
            for step in range(0, len(piece), self._STEP):
                count.raw.append(at + step - begin)
                count.shown.append(length)
                shape = shape_piece(piece[step:step + self._STEP], length)
                length += len(shape)
                if walk is not None:
                    walk.feed(shape)
        if not _narrow(piece, raw=True):
            odd_characters, zero_characters = _not_one_cell(piece)
            count.odd += len(odd_characters)
            count.zero += 0 if zero_characters is None else len(zero_characters)
        elif count.narrow == count.length:
            count.narrow = length
        count.length = length
        count.at = at + len(piece)
        if not last:
            return
        if not whole:
            self._walk_long(whole=True)
        number = self._counted
        laid = self._laid == number
        self._long = None
        self._starts.append(count.at + 1)
        self._places[number] = (count.raw, count.shown)
        self._long_lengths[number] = length
        self._cells.append(length + count.odd - 2 * count.zero)
        self._odd.append(count.odd > 0)
        self._wide.append(count.odd > count.zero)
        if count.walk is not None and count.walk.room == self._room:
            self._walked_long[number] = count.walk.starts
        if laid and not whole:  # (its rows drawn stay while it is laid out)
            self._lay(number + 1)

    def _count_piece(self) -> None:
        """Count on the long line being counted: walk its rows at the width up to where it
        is counted (a piece at a time, when far behind after a resize), then count its next
        piece."""
        count = self._long
        assert count is not None
        def next_piece() -> str:
            return self._slice(count.at, min(count.at + (self._STEP << 6), self._size))

        if self._room < 2:  # (Rich's own cuts: the line laid out whole)
            while self._long is not None:
                self._count_long(next_piece(), whole=False)
            return
        if self._walk_long(whole=False):
            return
        self._count_long(next_piece(), whole=False)
        self._walk_long(whole=True)

    def _walk_long(self, whole: bool) -> bool:
        """Walk the rows of the long line being counted at the width (when it holds
        characters not of one cell) up to where it is counted, or a piece of the way unless
        `whole`. True when it is still behind."""
        count = self._long
        if count is None or count.odd == 0 or self._room < 2:
            return False
        walk = count.walk
        if walk is None or walk.room != self._room:
            walk = count.walk = _RowWalk(self._room, count.narrow // self._room * self._room)
        number, piece = self._counted, self._STEP << 6
        while walk.walked < count.length:
            walk.feed(self.shown(number, walk.walked, min(count.length, walk.walked + piece),
                                 shape_piece))
            if not whole:
                return walk.walked < count.length
        return False

    def _long_starts(self) -> Sequence[int]:
        """Where the rows of the long line being counted start at the width, as far as they
        are known: all but the last are whole (none when its lines before are not laid out
        or at a width of one cell)."""
        count = self._long
        if count is None or self._laid < self._counted or self._room < 2:
            return ()
        if count.walk is not None and count.walk.room == self._room:
            return count.walk.starts
        room = self._room
        return range(0, count.narrow // room * room + 1, room)

    def layout(self, width: int, rows: int | None = None) -> int:
        """Lay the text out at `width` columns (again only when the width changes): its
        rows counted up to at least `rows` of them (every row when None), each line's rows
        from its cells, where its rows start found only when it is drawn. The rows counted."""
        if width != self._width:
            self._width = width
            self._room = max(1, width - self.indent)
            self._first_row, self._laid = None, 0
            self._walked, self._walked_long = {}, {}
        goal = rows if rows is not None else float("inf")
        while self.rows < goal and self._step():
            pass
        return self.rows

    @property
    def rows(self) -> int:
        """The rows counted at the laid-out width (all of them once `done`)."""
        return self._laid_rows + max(0, len(self._long_starts()) - 1)

    @property
    def _laid_rows(self) -> int:
        """The rows of the lines laid out."""
        return self._laid if self._first_row is None else self._first_row[-1]

    @property
    def lines_laid(self) -> int:
        """Lines whose rows are counted at the laid-out width (the first ones)."""
        return self._laid

    @property
    def share_counted(self) -> float:
        """The share of the text (by characters) whose rows are counted: 1.0 once `done`."""
        if self.done:
            return 1.0
        counted = self._starts[self._laid]
        if self._long is not None and self._laid == self._counted:
            counted = self._long.at
        return min(1.0, counted / (self._size + 1))

    def count_for(self, seconds: float) -> bool:
        """Count rows for about `seconds` (at least a block); True once every row is."""
        stop = time.perf_counter() + seconds
        while self._step():
            if time.perf_counter() >= stop:
                break
        return self.done

    def _step(self) -> bool:
        """Lay out more lines (counting a block first if every line counted is); False
        when every line is laid out."""
        if self._laid == self._counted:
            if self._long is None and self._starts[-1] > self._size:
                return False
            self._count_block()
        self._lay(min(self._counted, self._laid + self._BLOCK))
        return True

    def _to_row(self, row: int) -> None:
        """Lay out lines until row `row` is (or every line is)."""
        while self.rows <= row and self._step():
            pass

    def _to_line(self, line: int) -> None:
        """Lay out lines until line `line` is (or every line is)."""
        while self._laid <= line and self._step():
            pass

    def _lay(self, last: int) -> None:
        """Lay out the lines counted up to `last` (not included) at the width."""
        first, room = self._laid, self._room
        cells = self._cells[first:last]
        longest = max(cells, default=0)
        if self._first_row is None:
            if longest <= room:  # a row a line (most text at most widths): nothing kept
                self._laid = last
                return
            self._first_row = array(self._starts.typecode, range(first + 1))
        counts = _rows_by_cells(cells, room, longest)
        wide_lines = self._wide[first:last]
        if 1 in wide_lines:
            self._count_wide_rows(counts, cells, bytes(wide_lines), room, longest, first)
        self._first_row.extend(accumulate(counts, initial=self._first_row[-1]))
        del self._first_row[first]  # (its first row, already there)
        self._laid = last

    def _count_wide_rows(self, counts: array[int], cells: array[int], wide_lines: bytes,
                         room: int, longest: int, first: int) -> None:
        """Correct `counts` for the lines holding characters of two cells (of lines from
        `first`). Each row but the last of such a line leaves at most one cell empty (a wide
        character that would cross its end starts the next): a line of `c` cells fills
        between ceil(c / room) and (c - 1) // (room - 1) + 1 rows, and only a line where
        those differ is walked."""
        if room < 2:
            walk = wide_lines
        else:
            doubt = _doubtful_cells(room, longest)
            if doubt is None:
                most = map(int.__add__, map(int.__floordiv__, map(
                    int.__sub__, cells, repeat(1)), repeat(room - 1)), repeat(1))
                doubtful = map(int.__and__, map(int.__gt__, cells, repeat(room)),
                               map(int.__ne__, counts, most))
            elif 1 not in doubt:
                return
            else:
                doubtful = map(doubt.__getitem__, cells)
            walk = bytes(map(int.__and__, doubtful, wide_lines))
        number = walk.find(1)
        while number >= 0:
            starts = self._walked_long.get(first + number) or self._walk(first + number)
            counts[number] = len(starts)
            if self._is_long(first + number):
                self._walked_long[first + number] = starts
            number = walk.find(1, number + 1)

    def _walk(self, number: int) -> Sequence[int]:
        """Where the rows of line `number` start at the laid-out width (shown columns),
        found from its shown text (a long line a piece at a time)."""
        room = self._room
        if room < 2:  # a two-cell character is wider than a row: Rich's own cuts
            start, starts = 0, array("q")
            for piece in chop_cells(self._shown_line(number), room) or [""]:
                starts.append(start)
                start += len(piece)
            return starts
        if not self._is_long(number):
            return _row_starts((self._shown_line(number),), room)
        length = self._long_lengths[number]
        return _row_starts((self.shown(number, at, at + (1 << 16), shape_piece)
                            for at in range(0, length, 1 << 16)), room)

    def _line_starts(self, number: int) -> Sequence[int]:
        """Where the rows of line `number` (laid out) start at the width (shown columns)."""
        first = self._first_row
        assert first is not None
        count = first[number + 1] - first[number]
        if not self._odd[number]:
            return range(0, count * self._room, self._room)
        if count == 1:
            return (0,)
        found = self._walked_long.get(number) or self._walked.get(number)
        if found is None:
            found = self._walk(number)
            kept = self._walked_long if self._is_long(number) else self._walked
            if len(kept) >= 4096:
                kept.clear()
            kept[number] = found
        return found

    def place_of(self, row: int) -> tuple[int, int]:
        """(line, column) where row `row` at the laid-out width starts."""
        self._to_row(row)
        if row >= self._laid_rows and self._long_starts():
            return self._counted, self._long_starts()[row - self._laid_rows]
        if self._first_row is None:
            return row, 0
        line = bisect_right(self._first_row, row) - 1
        return line, self._line_starts(line)[row - self._first_row[line]]

    def row_of(self, line: int, column: int = 0) -> int:
        """The row at the laid-out width that shows column `column` of line `line` (a resize
        keeps the line on top, not the row number)."""
        while self._laid <= line and not self._long_holds(line, column) and self._step():
            pass
        if self._laid <= line and self._long_holds(line, column):
            starts = self._long_starts()
            return self._laid_rows + bisect_right(starts, column) - 1
        if self._first_row is None:
            return line
        starts = self._line_starts(line)
        return self._first_row[line] + max(0, bisect_right(starts, column) - 1)

    def knows_row(self, line: int, column: int = 0) -> bool:
        """The row showing column `column` of line `line` is counted: `row_of` answers it
        without counting more (in a line longer than a block, before the line's end is)."""
        return self._laid > line or self._long_holds(line, column)

    def _long_holds(self, line: int, column: int) -> bool:
        """Line `line` is the long one being counted, and the row showing its column
        `column` is known (whole)."""
        if line != self._counted:
            return False
        starts = self._long_starts()
        return len(starts) > 0 and starts[-1] > column

    def line(self, number: int) -> str:
        """Line `number` of the text as given (without its line end)."""
        while self._counted <= number and (self._long is not None
                                           or self._starts[-1] <= self._size):
            self._count_block()
        return self._slice(self._starts[number], self._starts[number + 1] - 1)

    def _shown_line(self, number: int) -> str:
        """Line `number` as shown (cleaned, tabs expanded), whole."""
        return self.line(number) if self._as_is else shown_piece(self.line(number))

    def shown(self, number: int, start: int, end: int | None = None,
              piece_of: Callable[[str, int], str] = shown_piece) -> str:
        """Characters `start` to `end` of line `number` (counted, or the long line being
        counted) as shown, cleaned from the piece of the text they come from (never the
        whole text, nor a long line whole); with `piece_of` `shape_piece`, a stand-in of
        the same cells (to walk their rows)."""
        begin = self._starts[number]
        if number < self._counted:
            stop = self._starts[number + 1] - 1
        else:  # (the long line being counted, as far as it is)
            assert self._long is not None
            stop = self._long.at
        if self._as_is:
            return self._slice(begin + start, stop if end is None else begin + end)
        raw_at, shown_at = 0, 0
        places = self._places.get(number)
        if places is not None:
            found = bisect_right(places[1], start) - 1
            raw_at, shown_at = places[0][found], places[1][found]
        # Every character is at least one once shown: `end - shown_at` of the text's are
        # enough (or the rest of the line).
        last = stop if end is None else min(stop, begin + raw_at + end - shown_at)
        piece = piece_of(self._slice(begin + raw_at, last), shown_at)
        return piece[start - shown_at:None if end is None else end - shown_at]

    def first_row_holding(self, needle: str) -> int | None:
        """The first row (at the laid-out width) whose text, lower-cased, holds `needle` as
        shown (escaped): the rows `TurnLines.scroll_to_text` would find one by one. Its
        occurrences are found by `escaped_find.find`, which cleans only the lines holding a
        piece of it that no escape can make (a 50 MB message was cleaned whole: 2.4 s), and
        only the row of each is made (the rows counted up to it), until one holds it."""
        steps = self.rows_holding(needle)
        try:
            while True:
                step = next(steps)
                if not isinstance(step, float):
                    self.row_of(*step)
        except StopIteration as found:
            return found.value  # type: ignore[no-any-return]

    def rows_holding(self, needle: str
                     ) -> Generator[tuple[int, int] | float, None, int | None]:
        """`first_row_holding` a step at a time: yields each place (line, shown column) whose
        row it needs next (an occurrence's: once `knows_row` says so, `row_of` answers it at
        once), or, once it has looked for `SEARCH_FOR` seconds without yielding, the share of
        the text looked through (a float: a pause, nothing needed), then returns the first
        row holding `needle`. Whoever drives it counts the rows up to each place as it likes
        (`TurnLines` between frames); a needle of white space alone counts its rows itself."""
        return _rows_holding(self, needle)

    SEARCH_FOR = 0.04
    """Seconds `rows_holding` looks through the text before it pauses."""

    def _row_text(self, number: int) -> str:
        """Row `number`'s text, lower-cased (its margin and padding too)."""
        return "".join(segment.text for segment in self.row(number)).lower()

    def row(self, number: int) -> list[Segment]:
        """Row `number` at the laid-out width, padded to it (counted up to it first)."""
        self._to_row(number)
        long = self._long_starts()
        if number >= self._laid_rows and long:
            at = number - self._laid_rows
            piece = self.shown(self._counted, long[at], long[at + 1])
        elif self._first_row is None:
            piece = self.shown(number, 0)
        else:
            line = bisect_right(self._first_row, number) - 1
            starts = self._line_starts(line)
            at = number - self._first_row[line]
            piece = self.shown(line, starts[at], starts[at + 1] if at + 1 < len(starts) else None)
        if self.moved is not None:
            piece = f"(not shown: {self.moved})"[:max(1, self._width - self.indent)]
        pad = max(0, self._width - self.indent - cell_len(piece))
        return [Segment(" " * self.indent), Segment(piece, self.style), Segment(" " * pad)]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """Outside `TurnLines`: its first lines only (never the whole text)."""
        lines = min(FOLD_LINES, self.line_count)
        while self._counted < lines and (self._long is not None
                                         or self._starts[-1] <= self._size):
            self._count_block()
        end = self._starts[min(lines, self._counted)] - 1
        yield Text(shown_piece(self._slice(0, end)), style=self.style or "")


def _rows_holding(long: LongText, needle: str
                  ) -> Generator[tuple[int, int] | float, None, int | None]:
    """`LongText.rows_holding`: the occurrences of `needle` found by `escaped_find`, the
    row of each made until one holds it."""
    wanted = shown(needle).lower()
    core = wanted.strip()  # (what is in the row's text, not its margin or padding)
    if not core:  # white space alone: row by row
        return next((row for row in _every_row(long) if wanted in long._row_text(row)),
                    None)
    since = time.perf_counter()
    for step in find_steps(long._slice, long._size, core):
        if isinstance(step, int):  # characters looked through
            if time.perf_counter() - since >= long.SEARCH_FOR:
                yield step / (long._size + 1)
                since = time.perf_counter()
            continue
        line, column = step
        yield step
        since = time.perf_counter()
        row = long.row_of(line, column)
        if wanted in long._row_text(row):
            return row
    return None


def _every_row(long: LongText) -> Iterator[int]:
    """Every row of `long` at its laid-out width, counted as they are reached."""
    row = 0
    while True:
        while row < long.rows:
            yield row
            row += 1
        if not long._step():
            return


def tool_title(part: Part) -> str:
    """`bash · completed · 2.1 s` for a tool call's fold line."""
    pieces = [clean(part.name or "tool")]
    if part.status:
        pieces.append(clean(part.status))
    if part.duration is not None:
        pieces.append(format_duration(part.duration) if part.duration >= 1 else
                      f"{part.duration * 1000:.0f} ms")
    return " · ".join(pieces)


def marker_line(part: Part) -> Text:
    """One dim line for markers, errors, files and other small parts."""
    if part.kind == Kind.ERROR:
        message = f" {clean(part.text)}" if part.text else ""
        return Text(f"error: {clean(part.name) or 'unknown'}{message}", style="bold red")
    if part.kind == Kind.COMPACTION:
        return Text(f"⟲ compaction{' (auto)' if part.name == 'auto' else ''}", style="bold")
    if part.kind == Kind.FILE:
        return Text(f"◇ {clean(part.name or part.text)}", style="italic")
    if part.kind == Kind.IMAGE:
        return Text(f"▣ image {clean(part.name or '')}".rstrip(), style="italic")
    if part.kind == Kind.PATCH:
        return Text(f"± patch {clean(part.text or part.name or '')}".rstrip(), style="italic")
    if part.kind == Kind.STEP:
        return Text(f"· step {clean(part.name or '')}".rstrip(), style="dim")
    if part.kind == Kind.SNAPSHOT:
        return Text("· snapshot", style="dim")
    if part.kind == Kind.AGENT:
        return Text(f"@{clean(part.name or part.text)}", style="bold")
    if part.kind == Kind.SUBTASK:
        return Text(f"↳ subtask {clean(part.name or '')}: {clean(part.text)}", style="italic")
    if part.kind == Kind.RETRY:
        return Text("· retry", style="dim")
    return Text(f"· {clean(part.name or part.kind)} {clean(part.text)[:200]}".rstrip(), style="dim")


def tool_body(part: Part, needle: str = "") -> Text:
    """Input and (folded) output of a tool call, as plain text; a line holding `needle`
    (a search, any case) that the fold would hide is shown with the lines around it."""
    body = Text()
    if part.input:
        body.append("input\n", style="bold dim")
        _append_folded(body, part.input, 12, needle, "more lines")
    output = part.output if part.kind == Kind.TOOL_CALL else part.text
    if output:
        if body:
            body.append("\n")
        body.append("output\n", style="bold dim")
        _append_folded(body, output, FOLD_LINES, needle,
                       "more lines folded (v shows the raw record)")
    if part.shortened:
        body.append("\n… shortened in memory; v shows the raw record", style="dim italic")
    return body


def fold_clean(text: str, lines: int = FOLD_LINES, chars: int = FOLD_CHARS) -> tuple[str, int]:
    """`fold(clean(text), lines, chars)`, with only the text's head cleaned: a 50 MB tool
    output was cleaned whole (and so copied, in two bytes a character once `␛` is spelled
    out) to show its first 24 lines."""
    if len(text) <= chars:
        return fold(clean(text), lines, chars)
    # Cleaning never shortens a text, nor moves a line end to another line: the head's
    # first `chars` characters are the whole text's, and the line ends after them are the
    # head's past `chars` and the rest's.
    head = clean(text[:chars])
    shown, hidden = fold(head[:chars], lines, chars)
    hidden += head.count("\n", chars) + text.count("\n", chars)
    return shown, max(hidden, 1)


def _append_folded(body: Text, raw: str, lines: int, needle: str, more: str) -> None:
    """The first `lines` lines of `raw` (cleaned), then the first hidden line holding
    `needle` with two lines either side, then how many lines are left out. A text left in
    its file (`lifted`) shows its first lines and how many are left out (not searched)."""
    rope = lifted.source(raw)
    if rope is not None:
        try:
            head = rope.read(0, FOLD_CHARS + 1)
        except OSError as error:
            body.append(f"(not shown: {error})", style="dim italic")
            return
        shown, hidden = fold_clean(head, lines)
        body.append(shown)
        if len(rope) > len(head):
            hidden = max(1, hidden + rope.lines - head.count("\n"))
        if hidden:
            body.append(f"\n… {hidden:,} {more}", style="dim italic")
        return
    shown, hidden = fold_clean(raw, lines)
    body.append(shown)
    if not hidden:
        return
    wanted = needle.lower()
    at = None
    if wanted and wanted not in shown.lower():
        text = clean(raw)
        all_lines = text.splitlines()
        at = next((i for i in range(lines, len(all_lines)) if wanted in all_lines[i].lower()),
                  None)
    if at is None:
        body.append(f"\n… {hidden:,} {more}", style="dim italic")
        return
    start, end = max(lines, at - 2), min(len(all_lines), at + 3)
    if start > lines:
        body.append(f"\n… {start - lines:,} lines", style="dim italic")
    body.append("\n" + "\n".join(line[:FOLD_CHARS] for line in all_lines[start:end]))
    if end < len(all_lines):
        body.append(f"\n… {len(all_lines) - end:,} {more}", style="dim italic")


def summarize_tools(parts: list[Part]) -> str:
    """`bash × 3, read` for a compact view of several tool calls."""
    counts: dict[str, int] = {}
    for part in parts:
        name = clean(part.name or "tool")
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{name} × {count}" if count > 1 else name for name, count in counts.items())


def turn_plain_text(parts: list[Part]) -> str:
    """The text of a turn for copying: prose, then tool calls with input and output."""
    pieces: list[str] = []
    for part in parts:
        if part.kind == Kind.TEXT:
            pieces.append(part.text)
        elif part.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT):
            pieces.append(f"[{part.name or 'tool'}] {part.input or ''}\n{part.output or part.text}")
        elif part.kind == Kind.REASONING and part.text:
            pieces.append(f"(reasoning) {part.text}")
    return "\n\n".join(piece.strip() for piece in pieces if piece.strip())


_JSON_TOKEN = re.compile(
    r'(?P<key>"(?:[^"\\\n]|\\.)*"(?=\s*:))'
    r'|(?P<string>"(?:[^"\\\n]|\\.)*")'
    r"|(?P<number>-?\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b)"
    r"|(?P<literal>\b(?:true|false|null)\b)"
)
"""JSON tokens, one pass: a quoted string followed by a colon is a key."""

JSON_TOKEN_VARIABLES = {"key": "text-primary", "string": "text-success",
                        "number": "text-warning", "literal": "text-secondary"}
"""The theme variable that colours each kind of JSON token."""


def highlight_json(text: str, style_of: Callable[[str], Style]) -> Text:
    """Raw records with JSON keys, strings, numbers and literals coloured.

    The text is made safe first (control characters shown as escapes) and is never parsed
    as markup: colours are spans laid over plain text. Text that is not JSON (a heading, a
    line that did not parse) only gets colour where a token happens to match.
    """
    safe = Text(clean(text))
    styles = {kind: style_of(variable) for kind, variable in JSON_TOKEN_VARIABLES.items()}
    for match in _JSON_TOKEN.finditer(safe.plain):
        kind = match.lastgroup
        if kind is not None:
            safe.stylize(styles[kind], match.start(), match.end())
    return safe
