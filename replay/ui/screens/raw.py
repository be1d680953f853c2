"""The source record(s) behind a turn, exactly as written, with control characters made visible."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from replay.core.readers.raw import raw_record_text
from replay.core.session.model import Session, Turn
from replay.ui.render import highlight_json
from replay.ui.widgets.turn_view import theme_style


class RawScreen(ModalScreen[None]):
    """Shows the raw source record of a turn."""

    DEFAULT_CSS = """
    RawScreen { align: center middle; }
    RawScreen > VerticalScroll { width: 90%; height: 90%; border: thick $primary;
                                 background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q,v", "dismiss", "Close", id="close-raw")]

    def __init__(self, session: Session, turn: Turn) -> None:
        super().__init__()
        self.session = session
        self.turn = turn

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = f"Source of #{self.turn.index + 1}"
            variables = self.app.theme_variables
            yield Static(highlight_json(raw_record_text(self.turn),
                                        lambda name: theme_style(variables, name)),
                         markup=False)
