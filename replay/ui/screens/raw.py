"""The source record(s) behind a turn, exactly as written, with control characters made visible.

A record small enough is pretty-printed whole. A bigger one (a tool output of megabytes) is
shown as written in the file, a page at a time, read from the file as the
reviewer pages: all of it can be read, and the line above says which bytes of how many are
on screen and where they are in the file (`raw.PAGE_BYTES` a page).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from replay.core.readers.raw import RecordBytes, is_big, raw_record_text
from replay.core.session.model import Session, Turn
from replay.ui.render import clean, highlight_json
from replay.ui.widgets.turn_view import theme_style


class RawScreen(ModalScreen[None]):
    """Shows the raw source record of a turn (paged when it is big)."""

    DEFAULT_CSS = """
    RawScreen { align: center middle; }
    RawScreen > Vertical { width: 90%; height: 90%; border: thick $primary;
                           background: $surface; padding: 0 1; }
    RawScreen #raw-where { color: $text-muted; height: auto; width: 100%; }
    RawScreen VerticalScroll { height: 1fr; }
    """
    BINDINGS = [
        Binding("escape,q,v", "dismiss", "Close", id="close-raw"),
        Binding("right_square_bracket", "page(1)", "Next page", id="raw-next-page"),
        Binding("left_square_bracket", "page(-1)", "Previous page", id="raw-previous-page"),
        Binding("g", "first_page", "First page", id="raw-first-page"),
        Binding("G", "last_page", "Last page", id="raw-last-page"),
    ]

    def __init__(self, session: Session, turn: Turn) -> None:
        super().__init__()
        self.session = session
        self.turn = turn
        source = turn.source
        self.records = RecordBytes(source.path, source.spans, source.line) \
            if source is not None and is_big(turn) else None
        """The records, read a page at a time (None: small enough to show whole)."""
        self.page_number = 0

    def compose(self) -> ComposeResult:
        with Vertical() as frame:
            frame.border_title = f"Source of #{self.turn.index + 1}"
            yield Label(Content(""), id="raw-where")
            with VerticalScroll():
                yield Static(id="raw-text", markup=False)

    def on_mount(self) -> None:
        if self.records is None:
            self.query_one("#raw-where", Label).display = False
            self._show(raw_record_text(self.turn))
        else:
            self._show_page()

    def _show(self, text: str) -> None:
        variables = self.app.theme_variables
        self.query_one("#raw-text", Static).update(
            highlight_json(text, lambda name: theme_style(variables, name)))

    def _show_page(self) -> None:
        records = self.records
        assert records is not None
        where = self.query_one("#raw-where", Label)
        try:
            text, start, end = records.page(self.page_number)
        except (OSError, ValueError) as error:
            where.update(Content(clean(f"could not read the record again: {error}")))
            self._show("")
            return
        where.update(Content(clean(self.where_words(start, end))))
        self._show(text)
        self.query_one(VerticalScroll).scroll_home(animate=False)

    def where_words(self, start: int, end: int) -> str:
        """What the page line says: which bytes of how many, and where they are."""
        records = self.records
        assert records is not None
        count = len(records.spans)
        number, offset = records.where(start)
        line = f", line {records.line:,}" if number == 1 and records.line is not None else ""
        which = f"record {number:,} of {count:,}" if count > 1 else "the record"
        return (f"{records.size:,} bytes of records, too big to pretty-print: shown as written, "
                f"page {self.page_number + 1:,} of {records.pages():,} (bytes "
                f"{start + 1:,}-{end:,}) · {which} at byte {offset:,} of {records.path}"
                f"{line} · ] next page, [ previous, g first, G last")

    def action_page(self, delta: int) -> None:
        if self.records is not None:
            self._go(self.page_number + delta)

    def action_first_page(self) -> None:
        if self.records is not None:
            self._go(0)

    def action_last_page(self) -> None:
        if self.records is not None:
            self._go(self.records.pages() - 1)

    def _go(self, number: int) -> None:
        assert self.records is not None
        number = min(max(number, 0), self.records.pages() - 1)
        if number != self.page_number:
            self.page_number = number
            self._show_page()

