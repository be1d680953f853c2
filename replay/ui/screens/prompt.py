"""A one-line question at the bottom of the screen (go to, search)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class PromptScreen(ModalScreen[str | None]):
    """Ask for one line of text; Enter answers, Escape cancels."""

    DEFAULT_CSS = """
    PromptScreen { align: center bottom; background: $background 30%; }
    PromptScreen > Vertical { height: auto; width: 100%; padding: 0 1; background: $panel;
                              border-top: tall $primary; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="cancel-prompt")]

    def __init__(self, question: str, value: str = "") -> None:
        super().__init__()
        self.question = question
        """What is asked."""
        self.value = value
        """Initial answer."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Content(self.question))
            # Compact: a bordered Input is three rows, and in one row its border hid the text.
            yield Input(value=self.value, id="prompt-input", compact=True)

    @on(Input.Submitted)
    def answer(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
