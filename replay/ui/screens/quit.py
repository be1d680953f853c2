"""Asked before quitting while annotations exist only in memory (the journal was not writable)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from replay.ui.literal import literal

CHOICES = {"s": "save", "e": "export", "q": "quit"}
"""Keys of the question and what they answer."""


class QuitScreen(ModalScreen[str | None]):
    """Save elsewhere, export, quit anyway, or stay; answers `save`, `export`, `quit` or None."""

    DEFAULT_CSS = """
    QuitScreen { align: center middle; background: $background 50%; }
    QuitScreen > Vertical { width: 72; max-width: 100%; height: auto; padding: 1 2;
                            border: thick $error; background: $surface; }
    QuitScreen #quit-choices { margin-top: 1; text-style: bold; }
    """
    BINDINGS = [
        Binding("s", "answer('save')", "Save elsewhere", id="quit-save-elsewhere"),
        Binding("e", "answer('export')", "Export CSV", id="quit-export"),
        Binding("q", "answer('quit')", "Quit anyway", id="quit-anyway"),
        Binding("escape", "answer('')", "Stay", id="quit-stay"),
    ]

    def __init__(self, unsaved: int, journal: str) -> None:
        super().__init__()
        self.unsaved = unsaved
        """Annotations held only in memory."""
        self.journal = journal
        """The journal that could not be written."""

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Annotations not on disk"
            yield Static(literal(
                f"{self.unsaved} annotation(s) could not be written to {self.journal} and "
                "exist only in memory. Quitting now loses them."))
            yield Static(literal("s  save them to another journal file\n"
                                 "e  export this session's annotations as CSV here\n"
                                 "q  quit anyway (they are lost)\n"
                                 "escape  stay"), id="quit-choices")

    def action_answer(self, choice: str) -> None:
        self.dismiss(choice or None)
