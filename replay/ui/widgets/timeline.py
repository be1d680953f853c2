"""The strip across the whole session: turn density, empty turns, annotations, the position."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual import events
from textual.color import Color, ColorParseError
from textual.message import Message
from textual.widget import Widget

from replay.core.model import Kind, Session

BARS = "▁▂▃▄▅▆▇"


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
        self.sizes: list[int] = []
        """Text length of each turn indexed so far."""
        self.empty: list[int] = []
        """Sorted indices of empty turns."""
        self.annotated: set[int] = set()
        """Indices of annotated empty turns."""
        self.current = 0
        """Index of the current turn."""
        self._cached_key = (-1, -1)
        self._cached: tuple[list[tuple[int, int, bool]], list[str]] = ([], [])

    def set_state(self, current: int, empty: list[int], annotated: set[int]) -> None:
        """Redraw for a new position, empty-turn list or annotation set."""
        self.current, self.empty, self.annotated = current, empty, annotated
        turns = self.session.turns
        for turn in turns[len(self.sizes):]:
            self.sizes.append(sum(p.text_length for p in turn.parts if p.kind == Kind.TEXT))
        self.refresh()

    def reset(self) -> None:
        """Forget cached sizes (the session was re-read)."""
        self.forget_from(0)

    def forget_from(self, index: int) -> None:
        """Forget cached sizes of turns that changed."""
        del self.sizes[index:]
        self._cached_key = (-1, -1)

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
            weights = [math.log1p(sum(self.sizes[start:end]) / (end - start))
                       for start, end, _ in buckets]
            peak = max(weights) or 1.0
            bars = [BARS[int(weight / peak * (len(BARS) - 1))] for weight in weights]
            self._cached_key, self._cached = key, (buckets, bars)
        return self._cached

    def render(self) -> Text:
        width = max(self.content_size.width, 1)
        text = Text(no_wrap=True, overflow="crop")
        if not self.sizes:
            return text
        buckets, bars = self._layout(width)
        empty_style = self._style("turn-empty", bold=True)
        done_style = self._style("annotation-mark", bold=True)
        bar_style = self._style("foreground-muted")
        empty_iter = iter(self.empty)
        next_empty = next(empty_iter, None)
        caret = 0
        for x, (start, end, first) in enumerate(buckets):
            marks = []
            if first:
                if start <= self.current < end:
                    caret = x
                while next_empty is not None and next_empty < end:
                    if next_empty >= start:
                        marks.append(next_empty)
                    next_empty = next(empty_iter, None)
            if marks:
                done = all(mark in self.annotated for mark in marks)
                text.append("◆" if done else "●", done_style if done else empty_style)
            else:
                text.append(bars[x], bar_style)
        text.append("\n")
        text.append(" " * caret)
        text.append("▲", self._style("primary", bold=True))
        return text

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
