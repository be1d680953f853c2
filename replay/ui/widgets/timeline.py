"""The strip across the whole session: turn density, empty turns, annotations, the position."""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.color import Color, ColorParseError
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from replay.core.session.model import Kind, Session, TurnColumns

BARS = "▁▂▃▄▅▆▇"

BLOCK = 256
"""Turns per kept running total of the sizes: a bucket's sum is two totals and at most two
partial blocks, whatever the session's length."""


@dataclass
class TimelineJump(Message):
    """The reviewer clicked the timeline at a turn."""

    index: int


class Timeline(Widget):
    """Two rows: density bars with empty-turn marks, and a caret under the current turn."""

    DEFAULT_CSS = """
    Timeline { height: 2; padding: 0 1; background: $surface; }
    """

    def __init__(self, session: Session, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.session = session
        """Session drawn."""
        self.sizes = array("I")
        """Text length of each turn indexed so far."""
        self._totals = array("Q", [0])
        """`_totals[k]`: the sum of the first `k * BLOCK` sizes (one per full block)."""
        self.empty: list[int] = []
        """Sorted indices of empty turns."""
        self.annotated: set[int] = set()
        """Indices of annotated empty turns."""
        self.current = 0
        """Index of the current turn."""
        self.silence = ""
        """Following: `silent for 12 min` at the live end while the session is stalled."""
        self._cached_key = (-1, -1)
        self._cached: tuple[list[tuple[int, int, bool]], list[str]] = ([], [])
        self._strips_key: tuple[object, ...] = ()
        self._strips: list[Strip] = []

    def set_state(self, current: int, empty: list[int], annotated: set[int]) -> None:
        """Redraw for a new position, empty-turn list or annotation set."""
        self.current, self.empty, self.annotated = current, empty, annotated
        turns = self.session.turns
        if isinstance(turns, TurnColumns):
            # A big session's index knows every size: no turn is read back for the bars.
            self.sizes.extend(turns.text_sizes(len(self.sizes), len(turns)))
        else:
            for turn in turns[len(self.sizes):]:
                self.sizes.append(min(sum(p.text_length for p in turn.parts
                                          if p.kind == Kind.TEXT), 0xFFFFFFFF))
        self.refresh()

    def set_silence(self, text: str) -> None:
        """Show (or, with "", clear) how long the followed session has been silent."""
        if text != self.silence:
            self.silence = text
            self.refresh()

    def reset(self) -> None:
        """Forget cached sizes (the session was re-read)."""
        self.forget_from(0)

    def forget_from(self, index: int) -> None:
        """Forget cached sizes of turns that changed."""
        del self.sizes[index:]
        del self._totals[index // BLOCK + 1:]
        self._cached_key = (-1, -1)

    def _sum(self, start: int, end: int) -> int:
        """The sum of `sizes[start:end]` from the block totals: at most two partial blocks
        are read, never every turn (each redraw while a big file was read summed all of
        them, the first screen of 834,000 turns growing as their square)."""
        totals, sizes = self._totals, self.sizes
        for block in range(len(totals), len(sizes) // BLOCK + 1):  # blocks filled since
            totals.append(totals[-1] + sum(sizes[(block - 1) * BLOCK:block * BLOCK]))
        return self._prefix(end) - self._prefix(start)

    def _prefix(self, index: int) -> int:
        """The sum of the first `index` sizes."""
        block = index // BLOCK
        return self._totals[block] + sum(self.sizes[block * BLOCK:index])

    def _bucket(self, width: int, x: int) -> tuple[int, int, bool]:
        """Turns [start, end) under column x, and whether x is the first column showing them.

        With fewer turns than columns a turn spans several columns; its marks and the caret
        go on the first of them.
        """
        total = len(self.sizes)
        start = x * total // width
        end = max((x + 1) * total // width, start + 1)
        first = x == 0 or (x - 1) * total // width != start or total >= width
        return start, min(end, total), first

    def _layout(self, width: int) -> tuple[list[tuple[int, int, bool]], list[str]]:
        """Buckets and bar characters for a width, kept until the session or width changes
        (each step redraws only the marks and the caret)."""
        key = (len(self.sizes), width)
        if self._cached_key != key:
            buckets = [self._bucket(width, x) for x in range(width)]
            # Log scale: one 40,000-character summary must not flatten every other turn.
            weights = [math.log1p(self._sum(start, end) / (end - start))
                       for start, end, _ in buckets]
            peak = max(weights) or 1.0
            bars = [BARS[int(weight / peak * (len(BARS) - 1))] for weight in weights]
            self._cached_key, self._cached = key, (buckets, bars)
        return self._cached

    def render_lines(self, crop: Region) -> list[Strip]:
        # Both rows come from one pass over the buckets; the styles cache asks for them one
        # at a time, so they are drawn once per state and kept.
        width = max(self.content_size.width, 1)
        key = (width, self.current, len(self.sizes), id(self.empty), len(self.empty),
               frozenset(self.annotated), self.app.theme, self.rich_style, self.silence)
        if key != self._strips_key:
            self._strips_key, self._strips = key, self._draw(width)
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width = max(self.content_size.width, 1)
        if 0 <= y < len(self._strips):
            return self._strips[y]
        return Strip.blank(width, self.rich_style)

    def _draw(self, width: int) -> list[Strip]:
        """The bars row (with empty-turn marks) and the caret row, as strips."""
        base = self.rich_style
        if not self.sizes:
            return [Strip.blank(width, base), Strip.blank(width, base)]
        buckets, bars = self._layout(width)
        empty_style = base + self._style("turn-empty", bold=True)
        done_style = base + self._style("annotation-mark", bold=True)
        bar_style = base + self._style("foreground-muted")
        segments: list[Segment] = []
        run: list[str] = []
        empty = self.empty
        caret = 0
        for x, (start, end, first) in enumerate(buckets):
            marks: list[int] = []
            if first:
                if start <= self.current < end:
                    caret = x
                # Found by bisection: a walk of every empty turn at each step was 170 ms
                # for 100,000 of them.
                marks = empty[bisect_left(empty, start):bisect_left(empty, end)]
            if marks:
                if run:
                    segments.append(Segment("".join(run), bar_style))
                    run = []
                done = all(mark in self.annotated for mark in marks)
                segments.append(Segment("◆" if done else "●", done_style if done else empty_style))
            else:
                run.append(bars[x])
        if run:
            segments.append(Segment("".join(run), bar_style))
        caret_row = [Segment(" " * caret, base),
                     Segment("▲", base + self._style("primary", bold=True))]
        caret_strip = Strip(caret_row).extend_cell_length(width, base)
        label = f" {self.silence} ▏" if self.silence else ""
        if label and len(label) < width - caret - 2:
            # The live end is the right edge: the silence is shown where the next turn would be.
            caret_strip = Strip.join([
                caret_strip.crop(0, width - len(label)),
                Strip([Segment(label, base + self._style("turn-empty", bold=True))])])
        return [Strip(segments).extend_cell_length(width, base), caret_strip]

    def _style(self, variable: str, bold: bool = False) -> Style:
        """A Rich style from a theme variable (alpha dropped: Rich colours have none)."""
        value = self.app.theme_variables.get(variable)
        try:
            color = Color.parse(value).rich_color if value else None
        except ColorParseError:
            color = None
        return Style(color=color, bold=bold)

    def on_click(self, event: events.Click) -> None:
        total = len(self.sizes)
        columns = max(self.content_size.width, 1)
        if not total:
            return
        x = max(0, min(columns - 1, event.x - 1))
        start, end, _ = self._bucket(columns, x)
        marks = [i for i in self.empty if start <= i < end]
        self.post_message(TimelineJump(marks[0] if marks else start))
