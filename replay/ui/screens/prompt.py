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
    PromptScreen Input { border: none; height: 1; padding: 0; }
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
            yield Input(value=self.value, id="prompt-input")

    @on(Input.Submitted)
    def answer(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
