"""Every key, what it does and its binding id (for remapping in config.toml), plus the labels."""

from __future__ import annotations

from collections.abc import Callable

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from replay.core.session.labels import LabelSet
from replay.ui.keymap import effective_keys
from replay.ui.literal import shown

INTRO = (
    "replay steps through a transcript turn by turn and stops by itself at every empty turn. "
    "Before and After show the turns around the current one. At an empty turn, pick a label "
    "with its number, add a note (tab) and a confidence (c), and press enter to save it: "
    "it is on disk when the notification says so. A label or note not saved yet is kept as a "
    "draft of its turn while you look elsewhere.\n"
)
"""One paragraph, wrapped to the width of the help (lines cut by hand broke mid-sentence
on a narrow terminal)."""


def bindings_table(bindings: list[Binding], keymap: dict[str, str],
                   display: Callable[[Binding], str]) -> Table:
    """A table of keys (as the footer shows them), descriptions and ids."""
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("keys")
    table.add_column("does")
    table.add_column("id (config keymap)", style="dim")
    effective = effective_keys(bindings, keymap)
    for binding in bindings:
        if binding.id and binding.id.startswith("pick-label-"):
            continue
        keys = effective.get(binding.id or "", binding.key.split(","))
        key_text = "  ".join(display(Binding(key.strip(), "")) for key in keys) or "(no key)"
        table.add_row(Text(key_text), Text(binding.tooltip or binding.description),
                      Text(binding.id or ""))
    table.add_row(Text("1 … 9, 0"), Text("pick the label with that key"),
                  Text("pick-label-N"))
    table.add_row(Text("ctrl+p"), Text("command palette: every empty turn, export, themes"),
                  Text(""))
    table.add_row(Text("ctrl+q"), Text("quit"), Text(""))
    return table


def labels_table(labels: LabelSet) -> Table:
    """The active label set."""
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("key")
    table.add_column("label")
    table.add_column("meaning")
    for label in labels:
        table.add_row(Text(shown(label.key)), Text(shown(label.name), style="bold"),
                      Text(shown(label.description)))
    return table


class HelpScreen(ModalScreen[None]):
    """Keys and labels."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 100; max-width: 95%; height: 90%;
                                  border: thick $primary; background: $surface; padding: 0 1; }
    HelpScreen .help-heading { text-style: bold; color: $accent; margin: 1 0 0 0; }
    """
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="close-help")]

    def __init__(self, bindings: list[Binding], labels: LabelSet, keymap: dict[str, str]) -> None:
        super().__init__()
        self.bindings = bindings
        self.labels = labels
        self.keymap = keymap

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "Help"
            yield Static(INTRO, markup=False)
            yield Static("Keys", classes="help-heading", markup=False)
            yield Static(bindings_table(self.bindings, self.keymap, self.app.get_key_display))
            yield Static("Labels", classes="help-heading", markup=False)
            yield Static(labels_table(self.labels))
