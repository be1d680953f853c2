"""Turns on screen: each pane is one widget holding one renderable, so a step costs three
updates instead of mounting dozens of widgets (stepping must stay under 50 ms)."""

from __future__ import annotations

import re
import time
from bisect import bisect_right
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.color import Color, ColorParseError
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from replay.core.detection.empty import describe_reasoning, gap_before
from replay.core.session import lifted
from replay.core.session.harness import as_shown
from replay.core.session.model import MARKER_KINDS, Kind, Part, Session, Turn
from replay.ui.render import (
    LONG_TEXT_CHARS,
    LongText,
    clean,
    clock,
    fold,
    gap_text,
    marker_line,
    prose,
    summarize_tools,
    tool_body,
    tool_title,
)

COMPACT_TEXT_LINES = 14
"""Lines of prose a compact (Before/After) view shows before folding."""
CURRENT_TEXT_LINES = 400
"""Lines of one prose part the current turn shows before folding the rest."""
CURRENT_TEXT_CHARS = 40_000
"""Characters of one prose part the current turn shows before folding the rest."""

ROLE_VARIABLES = {"user": "turn-user", "assistant": "turn-assistant", "system": "turn-system"}


def theme_style(variables: Mapping[str, str], name: str, **attributes: bool) -> Style:
    """A Rich style from a theme variable (Rich colours have no alpha, so it is dropped)."""
    value = variables.get(name)
    try:
        color = Color.parse(value).rich_color if value else None
    except ColorParseError:
        color = None
    return Style(color=color, **attributes)


def turn_heading(session: Session, turn: Turn, *, empty: bool, style: Style) -> Text:
    """`#9686 user · 14:01:02 · +38 s · model` for the top of a turn."""
    heading = Text(no_wrap=True, overflow="ellipsis")
    heading.append(f"#{turn.index + 1} {turn.role}", style=style + Style(bold=True))
    details = [clock(turn), gap_text(gap_before(session, turn.index)) if turn.index > 0 else ""]
    if turn.model:
        details.append(clean(turn.model))
    if turn.agent:
        details.append(clean(turn.agent))
    if turn.is_summary:
        details.append("summary")
    if turn.is_meta:
        details.append("meta")
    for detail in details:
        if detail:
            heading.append(f" · {detail}", style=style)
    if empty:
        heading.append("  ∅ empty ", style=style + Style(bold=True, reverse=True))
    return heading


def _indent(renderable: RenderableType, left: int = 1) -> Padding:
    return Padding(renderable, (0, 0, 0, left))


Block = tuple[int | None, RenderableType]
"""A piece of a turn on screen, keyed by the index of the part it shows (None: not a part)."""


def turn_blocks(session: Session, turn: Turn, *, compact: bool, empty: bool,
                parts: Sequence[Part], expanded: bool | Callable[[int], bool],
                variables: Mapping[str, str], needle: str = "") -> list[Block]:
    """One turn as blocks: heading, then its parts; compact folds tools into one line.

    `expanded` unfolds tool calls, reasoning and attachments: all of them, or those whose
    part index it accepts; an unfolded tool call shows the lines holding `needle`.
    """
    role_style = theme_style(variables, "turn-empty" if empty else
                             ROLE_VARIABLES.get(turn.role, "turn-system"))
    muted = theme_style(variables, "foreground-muted", italic=True)
    blocks: list[Block] = [(None, turn_heading(session, turn, empty=empty, style=role_style))]
    if empty and not parts:
        blocks.append((None, _indent(Text("(no parts at all)", style=muted))))
    tools: list[Part] = []

    def flush_tools() -> None:
        if tools:
            line = Text(f"⚙ {summarize_tools(tools)} (folded)", style=muted)
            blocks.append((None, _indent(line)))
            tools.clear()

    for index, part in enumerate(parts):
        if compact and part.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT):
            tools.append(part)
            continue
        if compact and part.kind in MARKER_KINDS:
            continue
        flush_tools()
        unfold = expanded(index) if callable(expanded) else expanded
        shown = _part(part, compact=compact, expanded=unfold, muted=muted, needle=needle)
        if any(isinstance(piece, LongText) for piece in shown):
            # Drawn a screen at a time by `TurnLines`: a block of its own, never in a Group.
            blocks.extend((index, piece) for piece in shown)
        else:
            blocks.append((index, Group(*shown) if len(shown) > 1 else shown[0]))
    flush_tools()
    return blocks


def _long_prose(text: str, muted: Style) -> list[RenderableType]:
    """Prose of the current turn, its start only when it is very long: drawing 20,000 lines
    took a second a step. A click (or `o`) shows it whole."""
    # Lines counted, not split: a 50 MB text must not be copied to be measured.
    total = text.count("\n") + (0 if text.endswith("\n") else 1)
    if total > CURRENT_TEXT_LINES:
        shown, _ = fold(text, CURRENT_TEXT_LINES, CURRENT_TEXT_CHARS)
        hidden = total - CURRENT_TEXT_LINES
    else:
        shown, hidden = text, 0
    cut = len(shown) - CURRENT_TEXT_CHARS
    if cut > 0:
        shown = shown[:CURRENT_TEXT_CHARS]
    if not hidden and cut <= 0:
        return [_indent(prose(text))]
    more = f"{hidden:,} more lines" if hidden else f"{cut:,} more characters"
    return [_indent(prose(shown)),
            _indent(Text(f"… {more} (click or o shows it all)", style=muted))]


def _long_in_file(rope: lifted.Rope, muted: Style) -> list[RenderableType]:
    """`_long_prose` of a text left in its file: its first lines, read from the file."""
    try:
        head = rope.read(0, CURRENT_TEXT_CHARS)
        ends_a_line = rope.read(len(rope) - 1) == "\n"
    except OSError as error:
        return [_indent(Text(f"(not shown: {error})", style=muted))]
    shown, _ = fold(head, CURRENT_TEXT_LINES, CURRENT_TEXT_CHARS)
    total = rope.lines + (0 if ends_a_line else 1)
    hidden = total - shown.count("\n") - 1
    more = (f"{hidden:,} more lines" if hidden > 0
            else f"{len(rope) - len(shown):,} more characters")
    return [_indent(prose(shown)),
            _indent(Text(f"… {more} (click or o shows it all)", style=muted))]


_TAG_FIRST = re.compile(r"\s*<")
"""A text whose first character but white space is `<`: only such can be a harness's
command wrappers (`as_shown`, which strips a copy of the text to tell)."""


def _part(part: Part, *, compact: bool, expanded: bool, muted: Style,
          needle: str = "") -> list[RenderableType]:
    if part.kind == Kind.TEXT:
        # Told without a stripped copy of the text (a 50 MB message was copied twice here).
        if not part.text or part.text.isspace():
            return [_indent(Text(f"(blank text: {clean(repr(part.text[:60]))})", style=muted))]
        harness = as_shown(part.text) if _TAG_FIRST.match(part.text) else None
        if harness is not None:
            # A /command or its output, as the harness shows it (never the raw tags).
            return [_indent(Text(clean(harness), style=Style(bold=True)
                                 if not harness.startswith("⎿") else muted))]
        if part.synthetic and (compact or not expanded):
            label = f"◇ attachment · {part.text_length:,} chars (click or o opens)"
            return [_indent(Text(label, style=muted))]
        rope = lifted.source(part.text)
        if not compact:
            if expanded:
                if rope is not None or len(part.text) > LONG_TEXT_CHARS:
                    return [LongText(rope or part.text)]
                return [_indent(prose(part.text))]
            return _long_prose(part.text, muted) if rope is None else _long_in_file(rope, muted)
        text, hidden = fold(lifted.visible(part.text), COMPACT_TEXT_LINES)
        folded = [_indent(prose(text))]
        if hidden:
            folded.append(_indent(Text(f"… {hidden:,} more lines", style=muted)))
        elif part.shortened or rope is not None:
            more = part.text_length - len(text)
            folded.append(_indent(Text(f"… {more:,} more characters", style=muted)))
        return folded
    if part.kind == Kind.REASONING:
        # The evidence's words, so one block reads the same in the turn and beside it.
        title = describe_reasoning(part.text_length, part.hidden)
        if compact or not expanded or not part.text:
            hint = "" if compact or not part.text else " (click or o opens)"
            return [_indent(Text(f"⋯ {title}{hint}", style=muted))]
        rope = lifted.source(part.text)
        body: RenderableType = (LongText(rope or part.text, indent=3)
                                if rope is not None or len(part.text) > LONG_TEXT_CHARS
                                else _indent(Text(clean(part.text)), 3))
        return [_indent(Text(f"▼ {title}", style=muted)), body]
    if part.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT):
        if not expanded:
            return [_indent(Text(f"▶ ⚙ {tool_title(part)}", style=Style(bold=True)))]
        return [_indent(Text(f"▼ ⚙ {tool_title(part)}", style=Style(bold=True))),
                _indent(tool_body(part, needle), 3)]
    return [_indent(marker_line(part))]


MATCH_STYLE = Style(reverse=True, bold=True)
"""How a search match is marked in the current turn."""


def mark_matches(line: list[Segment], needle: str, style: Style = MATCH_STYLE) -> list[Segment]:
    """The line with every case-insensitive occurrence of `needle` restyled."""
    text = "".join(segment.text for segment in line)
    lowered = text.lower()
    if not needle or len(lowered) != len(text):
        return line
    ranges = []
    start = lowered.find(needle)
    while start >= 0:
        ranges.append((start, start + len(needle)))
        start = lowered.find(needle, start + len(needle))
    if not ranges:
        return line
    marked: list[Segment] = []
    position = 0
    for segment in line:
        end = position + len(segment.text)
        cuts = sorted({position, end, *(edge for match in ranges for edge in match
                                        if position < edge < end)})
        for cut_start, cut_end in zip(cuts, cuts[1:], strict=False):
            piece = segment.text[cut_start - position:cut_end - position]
            inside = any(a <= cut_start and cut_end <= b for a, b in ranges)
            seg_style = segment.style or Style()
            marked.append(Segment(piece, seg_style + style if inside else segment.style))
        position = end
    return marked


NOTICE_STYLE = Style(reverse=True, italic=True)
"""How the pane says a jump waits for rows being counted."""

Steps = Generator[float, None, "Callable[[], None] | None"]
"""A jump's steps: the share done while it waits (rows counted, text looked through), then
how it lands."""


@dataclass
class Jump:
    """A scroll waiting for rows being counted."""

    make: Callable[[], Steps]
    """Its steps from the start (again after a resize)."""
    steps: Steps
    said: float = 0.0
    """The share the notice said last: it never goes back (looking for a search hit, then
    counting the rows up to it, are two shares of two things)."""


class TurnLines(ScrollView, can_focus=False):
    @dataclass
    class BlockClicked(Message):
        """A block (a part of the turn shown) was clicked."""

        lines: TurnLines
        key: int

        @property
        def control(self) -> TurnLines:
            return self.lines

    """Several turns rendered once into lines and drawn with the line API (as toolong does),
    so a step re-renders text but never re-lays out widgets."""

    DEFAULT_CSS = """
    TurnLines { height: 1fr; scrollbar-gutter: stable; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.indices: list[int] = []
        """Indices of the turns shown, in order."""
        self._blocks: list[Block] = []
        self._lines: list[list[Segment]] = []
        """Rendered lines, each exactly the content width; strips are made when drawn."""
        self._keys: list[int | None] = []
        self._long: list[tuple[int, int | None, LongText]] = []
        """Very long texts drawn a row at a time: (first row, key, text), in row order; their
        rows hold no place in `_lines` (whose rows are those of every other block)."""
        self._long_starts: list[int] = []
        self._long_lines: list[int] = []
        """Rows of `_lines` before each long text."""
        self._height = 0
        self._rendered_width = -1
        self._line_style = Style()
        self._highlight = ""
        self._counting: Timer | None = None
        """Counts the rows of long texts between frames until each is counted."""
        self._jump: Jump | None = None
        """A scroll waiting for rows not counted yet (the end, a search hit): counted
        between frames like the others, never in one go while keys wait."""
        self._jumping: Timer | None = None
        """Counts for the jump waiting, with only short breaks (for keys and frames)."""
        self._notice: Text | None = None
        """What the pane's last row says meanwhile (once it takes more than a frame)."""

    def show_turns(self, session: Session, indices: Sequence[int], *, compact: bool,
                   is_empty: Callable[[int], bool],
                   expanded: bool | Callable[[int], bool] = False,
                   full: bool = False, at_end: bool = False, keep_scroll: bool = False,
                   highlight: str = "") -> None:
        """Draw the turns at `indices` (with full parts when `full`), scrolled to the top or end,
        with the occurrences of `highlight` marked."""
        self.indices = list(indices)
        self._highlight = highlight.lower()
        variables = self.app.theme_variables
        blocks: list[Block] = []
        for index in indices:
            turn = session.turns[index]
            parts = session.full_parts(turn, in_file=True) if full else turn.parts
            if blocks:
                blocks.append((None, Text("")))
            blocks.extend(turn_blocks(session, turn, compact=compact, empty=is_empty(index),
                                      parts=parts, expanded=expanded, variables=variables,
                                      needle=self._highlight))
        if compact:
            # Nothing to click in a compact pane: one renderable renders faster than many.
            blocks = [(None, Group(*(renderable for _, renderable in blocks)))]
        self.show_blocks(blocks, at_end=at_end, keep_scroll=keep_scroll)

    def show_blocks(self, blocks: list[Block], *, at_end: bool = False,
                    keep_scroll: bool = False) -> None:
        """Replace the content with blocks whose clicks are reported by key."""
        self._blocks = blocks
        self._rendered_width = -1
        self._cancel_jump()  # (a jump into the text shown before)
        scroll_y = self.scroll_y
        laid_out = self._render_lines()
        if at_end:
            self._count_all()  # the end is that of every row
        if keep_scroll:
            self.scroll_to(y=scroll_y, animate=False, immediate=True)
        elif at_end and laid_out:
            # The new height is known only after the layout pass.
            self.call_after_refresh(self.scroll_end, animate=False, immediate=True)
        elif at_end:
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True)
        else:
            self.scroll_home(animate=False, immediate=True)

    def scroll_to_text(self, needle: str) -> None:
        """Scroll so that the first line holding `needle` (any case) is in view, the rows up
        to it counted first, in one go (`jump_to_text` counts them between frames)."""
        self._cancel_jump()
        self._in_one_go(self._text_jump(needle.lower()))

    def jump_to_text(self, needle: str) -> None:
        """`scroll_to_text`, at once if the rows up to the line are counted, else once they
        are: counted between frames (keys answered, another scroll replacing this one)."""
        wanted = needle.lower()
        self._start_jump(lambda: self._text_jump(wanted))

    def jump_end(self) -> None:
        """`scroll_end` (what a key asks for), at once if every row is counted, else once it
        is: counted between frames, keys answered (a 50 MB message took 2-4.6 s in one go),
        and another scroll (ctrl+home, j) replaces this one."""
        self._start_jump(lambda: self._end_jump({"animate": False, "immediate": True}))

    @property
    def jumping(self) -> bool:
        """A jump (the end, a search hit) waits for rows still being counted."""
        return self._jump is not None

    def _in_one_go(self, steps: Steps) -> None:
        """Take a jump's steps, counting the rows each waits for at once."""
        try:
            while True:
                next(steps)
                long = next((long for _, _, long in self._long if not long.done), None)
                if long is not None:
                    long.count_for(0.0)  # (a block)
                    self._restack()
        except StopIteration as stop:
            if stop.value is not None:
                stop.value()

    def _text_jump(self, wanted: str) -> Steps:
        """`scroll_to_text`'s steps: the rows before the first line holding `wanted`,
        waited for (yielding the share counted) while they are not counted."""
        height = self.scrollable_content_region.height
        at = 0
        while at < self._height:
            place, _, long = self._place(at) if self._long else (at, None, None)
            if long is not None:
                # A long text's rows are searched by the text itself, a chunk at a time:
                # it tells each place whose row it needs, counted first (between frames).
                # (a float: the share of the text looked through so far, a pause)
                steps = long.rows_holding(wanted)
                try:
                    step = next(steps)
                    while True:
                        if isinstance(step, float):
                            yield step
                        else:
                            line, column = step
                            while not long.knows_row(line, column):
                                yield (long.share_counted if long.lines_laid >= line
                                       else long.lines_laid / (line + 1))
                        step = steps.send(None)
                except StopIteration as stop:
                    found: int | None = stop.value
                self._restack()
                start = at - place
                if found is None:
                    while not long.done:
                        yield long.share_counted
                    self._restack()
                    at = start + long.rows
                    continue
                at = start + found
            elif wanted not in "".join(segment.text for segment in self._row(at)).lower():
                at += 1
                continue
            if not self.scroll_y <= at < self.scroll_y + height:
                row = at
                return lambda: self.scroll_to(y=max(0, row - 1), animate=False,
                                              immediate=True, force=True)
            return None
        return None

    def _end_jump(self, kwargs: dict[str, Any]) -> Steps:
        """`scroll_end`'s steps: every row of the long texts counted (yielding the share
        counted), then the end."""
        while not all(long.done for _, _, long in self._long):
            yield sum(long.share_counted for _, _, long in self._long) / len(self._long)
        return lambda: super(TurnLines, self).scroll_end(**kwargs)

    def _start_jump(self, make: Callable[[], Steps]) -> None:
        """Go on with a jump (replacing any still waiting) as far as the rows counted allow."""
        self._cancel_jump()
        self._jump = Jump(make, make())
        self._advance_jump(early=True)
        if self._jump is not None:
            self._jumping = self.set_interval(self.JUMP_EVERY,
                                              lambda: self._count_more(self.JUMP_FOR))

    def _advance_jump(self, early: bool = False) -> None:
        """Take the waiting jump's next steps: it lands once the rows it needs are counted
        (else the notice says how far the counting is, unless `early`)."""
        jump = self._jump
        if jump is None:
            return
        try:
            share = next(jump.steps)
        except StopIteration as stop:
            self._cancel_jump()
            land: Callable[[], None] | None = stop.value
            if land is not None:
                land()
            return
        if not early:
            jump.said = max(jump.said, share)
            self._notice = Text(f" counting rows… {int(jump.said * 100)}% ", style=NOTICE_STYLE)
            self.refresh()

    def _cancel_jump(self) -> None:
        """Forget the jump waiting (another key was pressed, or the content changed)."""
        self._jump = None
        if self._jumping is not None:
            self._jumping.stop()
            self._jumping = None
        if self._notice is not None:
            self._notice = None
            self.refresh()

    @property
    def plain_text(self) -> str:
        """The text shown, for tests and copying."""
        self._count_all()
        return "\n".join("".join(segment.text for segment in self._row(index)).rstrip()
                         for index in range(self._height))

    @property
    def line_count(self) -> int:
        """Rows of the content at the rendered width (long texts counted whole first)."""
        self._count_all()
        return self._height

    def _render_lines(self) -> bool:
        """Render the blocks at the current width; True if that asked for a layout pass."""
        width = self.scrollable_content_region.width or self.size.width
        if width <= 0 or width == self._rendered_width:
            return False
        console = self.app.console
        options = console.options.update(width=width, height=None)
        self._lines, self._keys, self._long, self._long_starts = [], [], [], []
        self._long_lines = []
        height = 0
        for key, renderable in self._blocks:
            if isinstance(renderable, LongText):
                self._long.append((height, key, renderable))
                self._long_starts.append(height)
                self._long_lines.append(len(self._lines))
                # Rows counted up to the screen's (and those above it): the rest between
                # frames (`_count_more`), or first when a row past them is asked for.
                wanted = int(self.scroll_y) + 2 * max(self.size.height, 50) - height
                height += renderable.layout(width, rows=max(1, wanted))
                continue
            rendered = console.render_lines(renderable, options, pad=True)
            if self._highlight:
                rendered = [mark_matches(line, self._highlight) for line in rendered]
            self._lines.extend(rendered)
            self._keys.extend([key] * len(rendered))
            height += len(rendered)
        self._height = height
        self._rendered_width = width
        if self._counting is None and not all(long.done for _, _, long in self._long):
            self._counting = self.set_interval(self.COUNT_EVERY, self._count_more)
        return self._resize_content(Size(width, height))

    COUNT_EVERY = 0.05
    """Seconds between two pieces of counting the rows of long texts."""
    COUNT_FOR = 0.04
    """Seconds of counting at a time: keys are still answered in between."""
    JUMP_EVERY = 0.01
    """Seconds between two pieces of counting while a jump waits."""
    JUMP_FOR = 0.08
    """Seconds of counting at a time while a jump waits (a key waits at most that long)."""

    def _count_more(self, seconds: float | None = None) -> None:
        """Count more rows of the long texts not counted whole (the scroll bar grows), for
        `COUNT_FOR` seconds unless told."""
        stop = time.perf_counter() + (self.COUNT_FOR if seconds is None else seconds)
        for _, _, long in self._long:
            if not long.done:
                long.count_for(max(0.0, stop - time.perf_counter()))
        self._restack()
        self._advance_jump()

    def _count_all(self) -> None:
        """Count every row of the long texts (the end is then the true last row)."""
        if self._long and self._rendered_width > 0:
            for _, _, long in self._long:
                long.layout(self._rendered_width)
            self._restack()

    def _restack(self) -> None:
        """Place the long texts' rows counted so far (and the rows after them) again; stop
        counting once every row is."""
        if self._long:
            placed, height = [], len(self._lines)
            for (_, key, long), lines in zip(self._long, self._long_lines, strict=True):
                placed.append((lines + height - len(self._lines), key, long))
                height += long.rows
            self._long = placed
            self._long_starts = [start for start, _, _ in placed]
            if height != self._height:
                self._height = height
                self._resize_content(Size(self._rendered_width, height))
        if self._counting is not None and all(long.done for _, _, long in self._long):
            self._counting.stop()
            self._counting = None

    def scroll_to(self, x: float | None = None, y: float | None = None,
                  **kwargs: Any) -> None:
        """Scroll to row `y`, the long texts' rows counted up to a screen past it first
        (any jump still waiting is dropped: this one replaces it)."""
        self._cancel_jump()
        if y is not None and self._counting is not None:
            self._count_to(int(y) + self.scrollable_content_region.height)
        super().scroll_to(x, y, **kwargs)

    def _count_to(self, rows: int) -> None:
        """Count rows of the long texts until `rows` rows are placed (or every one is)."""
        while self._height < rows and not all(long.done for _, _, long in self._long):
            long = next(long for _, _, long in self._long if not long.done)
            long.layout(self._rendered_width, rows=long.rows + rows - self._height)
            self._restack()

    def scroll_end(self, *args: object, **kwargs: object) -> None:
        """Scroll to the end, every row of the long texts counted first, in one go
        (`jump_end` counts them between frames)."""
        self._cancel_jump()
        self._count_all()
        super().scroll_end(*args, **kwargs)  # type: ignore[arg-type]

    def _place(self, index: int) -> tuple[int, int | None, LongText | None]:
        """Where row `index` is: (its row in `_lines`, or in the long text; its key; the long
        text holding it, or None)."""
        found = bisect_right(self._long_starts, index) - 1
        before = 0  # rows of long texts before this row
        for start, key, long in self._long[:found + 1]:
            rows = long.rows
            if index < start + rows:
                return index - start, key, long
            before += rows
        return index - before, None, None

    def _row(self, index: int) -> list[Segment]:
        if not self._long:
            return self._lines[index]
        at, _, long = self._place(index)
        if long is None:
            return self._lines[at]
        line = long.row(at)
        return mark_matches(line, self._highlight) if self._highlight else line

    def _key(self, index: int) -> int | None:
        if not self._long:
            return self._keys[index]
        at, key, long = self._place(index)
        return key if long is not None else self._keys[at]

    def _resize_content(self, size: Size) -> bool:
        """Take the new content size, with a layout pass only when the screen needs one.

        Setting `virtual_size` always asks for a layout, and after a layout Textual repaints
        every widget on the screen: that was two thirds of a step. Only a scroll bar that
        appears or goes, or a height that follows the content, needs one; otherwise the
        scroll bar is told the new length and only this pane is repainted.
        """
        old = self.virtual_size
        scrolls = size.height > self.container_size.height - self.scrollbar_size_horizontal
        auto_height = self.styles.height is not None and self.styles.height.is_auto
        if (not self.container_size or scrolls != self.show_vertical_scrollbar
                or size.width != old.width or (auto_height and size.height != old.height)):
            self.virtual_size = size
            self.refresh()
            return True
        self.set_reactive(ScrollView.virtual_size, size)
        if scrolls:
            self.vertical_scrollbar.window_virtual_size = size.height
        self.refresh()
        return False

    def on_resize(self) -> None:
        jump = self._jump
        try:
            self._resized()
        finally:
            if jump is not None:  # (taken again at the new width, from its start)
                self._start_jump(jump.make)

    def _resized(self) -> None:
        width, top = self._rendered_width, self._long_place(int(self.scroll_y))
        self._render_lines()
        if top is None or self._rendered_width == width:
            return
        # Rows of a long text are laid out again: keep the line that was on top there.
        long, line, column = top
        row = long.row_of(line, column)  # (counted up to it first)
        self._restack()
        for start, _, candidate in self._long:
            if candidate is long:
                self.scroll_to(y=start + row, animate=False, immediate=True, force=True)
                break

    def _long_place(self, index: int) -> tuple[LongText, int, int] | None:
        """(the long text, line, column) shown at row `index`; None off a long text."""
        if not self._long or not 0 < index < self._height or self._rendered_width <= 0:
            return None
        at, _, long = self._place(index)
        return None if long is None else (long, *long.place_of(at))

    def on_click(self, event: events.Click) -> None:
        line = event.y + int(self.scroll_y)
        key = self._key(line) if 0 <= line < self._height else None
        if key is not None:
            self.post_message(self.BlockClicked(self, key))

    def render_lines(self, crop: Region) -> list[Strip]:
        # The pane's style walks every ancestor's CSS: once per repaint, not once per line.
        self._line_style = self.rich_style
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        index = y + scroll_y
        style = self._line_style
        if self._notice is not None and y == self.scrollable_content_region.height - 1:
            notice = Strip(self._notice.render(self.app.console), self._notice.cell_len)
            return notice.crop_extend(0, width, style).apply_style(style)
        if not 0 <= index < self._height:
            return Strip.blank(width, style)
        line = self._row(index)
        if scroll_x == 0 and width == self._rendered_width:
            # A fresh strip: Strip.crop_extend keeps a strip in its own cache when nothing
            # is cropped, and every such cycle waits for a full garbage collection.
            return Strip(Segment.apply_style(line, style), width)
        return Strip(line, self._rendered_width) \
            .crop_extend(scroll_x, scroll_x + width, style).apply_style(style)
