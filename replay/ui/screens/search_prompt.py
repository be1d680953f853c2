"""The search prompt: says how many turns match while the reviewer types."""

from __future__ import annotations

from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Input, Label

from replay.ui.screens.prompt import PromptScreen

QUICK_TURNS = 5_000
"""Sessions up to this many turns are counted at every key; longer ones once typing pauses."""
PAUSE_SECONDS = 0.25
"""How long typing must pause before a long session is counted."""


class SearchPrompt(PromptScreen):
    """Ask what to search for, with the count of matching turns under the answer."""

    DEFAULT_CSS = """
    SearchPrompt #search-count { color: $text-muted; }
    """

    def __init__(self, value: str, count: Callable[[str], int], turns: int) -> None:
        super().__init__("Search", value)
        self.count = count
        """How many turns match a query."""
        self.turns = turns
        """Turns in the session (a long one is counted only when typing pauses)."""
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Content(self.question))
            yield Input(value=self.value, id="prompt-input", compact=True)
            yield Label(Content(""), id="search-count")

    def on_mount(self) -> None:
        self._show_count()

    @on(Input.Changed, "#prompt-input")
    def count_while_typing(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.turns <= QUICK_TURNS:
            self._show_count()
        else:
            self.query_one("#search-count", Label).update(Content("counting…"))
            self._timer = self.set_timer(PAUSE_SECONDS, self._show_count)

    def _show_count(self) -> None:
        self._timer = None
        query = self.query_one("#prompt-input", Input).value.strip()
        label = self.query_one("#search-count", Label)
        if not query:
            label.update(Content(""))
            return
        found = self.count(query)
        said = "no turn matches" if not found else \
            f"{found:,} turn{'s' if found != 1 else ''} match · enter goes to the next"
        label.update(Content(said))
