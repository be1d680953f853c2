"""A list of sessions drawn a line at a time: only the rows on screen are ever rendered.

The table holds the numbers of the rows it shows (an `array`, 4 bytes a row) and asks for a
row's cells when the row is drawn, so a list of 144,510 chats costs what the 40 rows on
screen cost (the line API, as toolong draws a log's lines). It keeps the small part of
DataTable's interface a session list uses: a fixed header row whose click sorts, a row
cursor, zebra stripes, `row_count`, `get_row_at`, `get_column`, `move_cursor`.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

Cells = Callable[[int], Sequence[Text]]
"""A row's cells, by the row's number."""

PADDING = 1
"""Blank columns on each side of a cell (as DataTable's `cell_padding`)."""


@dataclass(slots=True)
class Column:
    """One column: its key, the label in the header and its content width."""

    key: str
    label: Text
    width: int


class SessionTable(ScrollView, can_focus=True):
    """Rows of cells drawn only when on screen; the header stays at the top."""

    BINDINGS = [
        Binding("up", "cursor_up", "Up", show=False, id="session-table-up"),
        Binding("down", "cursor_down", "Down", show=False, id="session-table-down"),
        Binding("pageup", "page_up", "Page up", show=False, id="session-table-page-up"),
        Binding("pagedown", "page_down", "Page down", show=False,
                id="session-table-page-down"),
        Binding("home,ctrl+home", "first", "First", show=False, id="session-table-first"),
        Binding("end,ctrl+end", "last", "Last", show=False, id="session-table-last"),
        Binding("left", "scroll_left", "Left", show=False, id="session-table-left"),
        Binding("right", "scroll_right", "Right", show=False, id="session-table-right"),
        Binding("enter", "select", "Open", show=False, id="session-table-open"),
    ]
    COMPONENT_CLASSES = {"session-table--header", "session-table--cursor",
                         "session-table--even-row", "session-table--odd-row"}
    DEFAULT_CSS = """
    SessionTable {
        background: $surface;
        color: $foreground;
        height: 1fr;
        &:focus {
            background-tint: $foreground 5%;
            & > .session-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .session-table--header { background-tint: $foreground 5%; }
        }
        &:dark > .session-table--even-row { background: $surface-darken-1 40%; }
        & > .session-table--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        &:ansi > .session-table--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
        & > .session-table--even-row { background: $surface-lighten-1 50%; }
        & > .session-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    """

    @dataclass
    class RowSelected(Message):
        """A row was chosen (enter or a click): `number` is the row's own number."""

        table: SessionTable
        row: int
        """Its place among the rows shown."""
        number: int

        @property
        def control(self) -> SessionTable:
            return self.table

    @dataclass
    class HeaderSelected(Message):
        """A column's header was clicked."""

        table: SessionTable
        column: str

        @property
        def control(self) -> SessionTable:
            return self.table

    cursor_row: reactive[int] = reactive(0, init=False, always_update=True, repaint=False)
    """The place of the row under the cursor among the rows shown."""

    def __init__(self, columns: Sequence[str], cells: Cells, *,
                 id: str | None = None) -> None:  # noqa: A002 - as every widget names it
        super().__init__(id=id)
        self.columns: dict[str, Column] = {
            key: Column(key, Text(key), len(key)) for key in columns}
        """The columns, in order, by key."""
        self._cells = cells
        self._order: Sequence[int] = array("l")
        self._styles: dict[str, Style] = {}

    # ------------------------------------------------------------ rows

    @property
    def row_count(self) -> int:
        """How many rows are shown."""
        return len(self._order)

    @property
    def order(self) -> Sequence[int]:
        """The numbers of the rows shown, in order."""
        return self._order

    def show_rows(self, order: Sequence[int]) -> None:
        """Show these rows (by number, in this order); the cursor goes to the first."""
        self._order = order
        self._resize()
        self.cursor_row = 0
        self.scroll_to(y=0, animate=False, immediate=True)
        self.refresh()

    def number_at(self, row: int) -> int:
        """The number of the row shown at this place."""
        return self._order[row]

    def get_row_at(self, row: int) -> list[Text]:
        """The cells of the row shown at this place."""
        return list(self._cells(self._order[row]))

    def get_column(self, key: str) -> Iterator[Text]:
        """The cells of one column, every row shown, in order."""
        place = list(self.columns).index(key)
        for number in self._order:
            yield self._cells(number)[place]

    def widen(self, widths: dict[str, int]) -> None:
        """Make columns at least this wide (never narrower: a column that shrinks and grows
        as counts come in would make the list jump)."""
        changed = False
        for key, width in widths.items():
            column = self.columns[key]
            if width > column.width:
                column.width = width
                changed = True
        if changed:
            self._resize()
        self.refresh()

    def refresh_row_numbers(self, numbers: set[int]) -> None:
        """Draw these rows again if they are on screen."""
        top = int(self.scroll_y)
        shown = self._order[top:top + self._height()]
        if any(number in numbers for number in shown):
            self.refresh()

    def _resize(self) -> None:
        width = sum(column.width + 2 * PADDING for column in self.columns.values())
        self.virtual_size = Size(width, len(self._order) + 1)

    # ------------------------------------------------------------ cursor

    def move_cursor(self, *, row: int) -> None:
        """Put the cursor on this row and scroll it into sight."""
        self.cursor_row = row

    def validate_cursor_row(self, row: int) -> int:
        return max(0, min(row, len(self._order) - 1))

    def watch_cursor_row(self, old: int, row: int) -> None:
        body = max(self._height() - 1, 1)
        top = int(self.scroll_y)
        if row < top:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row >= top + body:
            self.scroll_to(y=row - body + 1, animate=False, immediate=True)
        else:  # no scroll: only the two rows the cursor left and came to are drawn again
            for place in (old, row):
                y = place - top + 1
                if 1 <= y < self._height():
                    self.refresh(Region(0, y, self.size.width, 1))
            return
        self.refresh()

    def _page(self) -> int:
        return max(self._height() - 2, 1)

    def _height(self) -> int:
        """Lines shown, the header's included (not the horizontal scroll bar's)."""
        return self.scrollable_content_region.height

    def action_cursor_up(self) -> None:
        self.cursor_row -= 1

    def action_cursor_down(self) -> None:
        self.cursor_row += 1

    def action_page_up(self) -> None:
        self.cursor_row -= self._page()

    def action_page_down(self) -> None:
        self.cursor_row += self._page()

    def action_first(self) -> None:
        self.cursor_row = 0

    def action_last(self) -> None:
        self.cursor_row = len(self._order) - 1

    def action_select(self) -> None:
        if self._order:
            row = self.cursor_row
            self.post_message(self.RowSelected(self, row, self._order[row]))

    def on_click(self, event: events.Click) -> None:
        if event.y == 0:
            x = event.x + int(self.scroll_x)
            for column in self.columns.values():
                x -= column.width + 2 * PADDING
                if x < 0:
                    self.post_message(self.HeaderSelected(self, column.key))
                    return
            return
        row = int(self.scroll_y) + event.y - 1
        if 0 <= row < len(self._order):
            self.cursor_row = row
            self.post_message(self.RowSelected(self, row, self._order[row]))

    def on_resize(self) -> None:
        self.cursor_row = self.cursor_row  # still in sight

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # ------------------------------------------------------------ drawing

    def render_lines(self, crop: object) -> list[Strip]:
        # The styles walk every ancestor's CSS: once per repaint, not once per line.
        self._styles = {
            "base": self.rich_style,
            **{name: self.get_component_rich_style(f"session-table--{name}")
               for name in ("header", "cursor", "even-row", "odd-row")}}
        return super().render_lines(crop)  # type: ignore[arg-type]

    def _line(self, cells: Sequence[Text], style: Style, header: bool = False) -> list[Segment]:
        line = Text(no_wrap=True, end="")
        pad = " " * PADDING
        for column, cell in zip(self.columns.values(), cells, strict=False):
            text = cell.copy()
            text.truncate(column.width, overflow="ellipsis")
            room = column.width - text.cell_len
            line.append(pad)
            if cell.justify == "right" and not header:
                line.append(" " * room)
                line.append_text(text)
            else:
                line.append_text(text)
                line.append(" " * room)
            line.append(pad)
        return list(Segment.apply_style(line.render(self.app.console), style))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        styles = self._styles or {"base": self.rich_style}
        base = styles["base"]
        total = self.virtual_size.width
        if y == 0:
            style = base + styles.get("header", Style())
            segments = self._line([column.label for column in self.columns.values()], style,
                                  header=True)
        else:
            row = scroll_y + y - 1
            if not 0 <= row < len(self._order):
                return Strip.blank(width, base)
            if row == self.cursor_row:
                style = base + styles.get("cursor", Style())
            else:
                style = base + styles.get("even-row" if row % 2 == 0 else "odd-row", Style())
            segments = self._line(self._cells(self._order[row]), style)
        return Strip(segments, total).crop_extend(scroll_x, scroll_x + width, style)
