"""Choose one session of a multi-session source, newest first, with turn and empty counts."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from replay.core.detect import DetectionRules, is_empty
from replay.core.model import Session
from replay.core.safe import escape_controls


def session_row(session: Session, rules: DetectionRules) -> tuple[Text, ...]:
    """Started, title, turns, empty turns, format."""
    started = session.started
    when = datetime.fromtimestamp(started).strftime("%Y-%m-%d %H:%M") if started else "?"
    empties = sum(1 for turn in session.turns if is_empty(turn, rules))
    return (Text(when), Text(escape_controls(session.label)[:70]),
            Text(f"{len(session.turns):,}", justify="right"),
            Text(str(empties), justify="right", style="bold" if empties else "dim"),
            Text(f"{len(session.sidechains)}" if session.sidechains else "", justify="right"),
            Text(session.format))


class SessionPicker(Screen[None]):
    """The list of sessions in a directory or database."""

    BINDINGS = [Binding("escape", "app.quit", "Quit", id="picker-quit")]
    DEFAULT_CSS = """
    SessionPicker > #picker-title { height: 1; padding: 0 1; background: $panel; }
    SessionPicker > DataTable { height: 1fr; }
    """

    def __init__(self, path: str, sessions: list[Session], rules: DetectionRules) -> None:
        super().__init__()
        self.sessions = sorted(sessions, key=lambda s: s.started or 0.0, reverse=True)
        self.path = path
        self.rules = rules

    def compose(self) -> ComposeResult:
        yield Static(Text(f" {len(self.sessions)} sessions in {escape_controls(self.path)}"
                          " · enter opens one"), id="picker-title", markup=False)
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("started", "session", "turns", "empty", "subagents", "format")
        for number, session in enumerate(self.sessions):
            table.add_row(*session_row(session, self.rules), key=str(number))
        table.focus()

    @on(DataTable.RowSelected)
    def open_selected(self, event: DataTable.RowSelected) -> None:
        from replay.ui.app import ReplayApp

        assert isinstance(self.app, ReplayApp)
        self.app.open_session(self.sessions[int(str(event.row_key.value))])
