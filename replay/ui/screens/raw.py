"""The source record(s) behind a turn, exactly as written, with control characters made visible."""

from __future__ import annotations

import orjson
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from replay.core.model import Session, Turn
from replay.core.readers.base import read_spans
from replay.core.safe import escape_controls

RAW_LIMIT = 200_000
"""Characters of raw record shown at most."""


def raw_record_text(session: Session, turn: Turn) -> str:
    """The raw lines of a line-based turn, pretty-printed; else a description of its origin."""
    source = turn.source
    if source is None:
        return "(the reader kept no source for this turn)"
    heading = f"{source.path}"
    if source.line is not None:
        heading += f", line {source.line}"
    if source.record:
        heading += f", {source.record}"
    if not source.spans:
        return heading + "\n\n(this format is a whole document; the turn is " \
            f"{source.record or 'not addressable'} in it)"
    try:
        records = read_spans(source.path, source.spans)
    except OSError as error:
        return heading + f"\n\n(could not read the file again: {error.strerror or error})"
    pieces = [heading]
    for record in records:
        try:
            pieces.append(orjson.dumps(orjson.loads(record), option=orjson.OPT_INDENT_2).decode())
        except orjson.JSONDecodeError:
            pieces.append(record.decode("utf-8", "replace"))
    text = "\n\n".join(pieces)
    return text if len(text) <= RAW_LIMIT else text[:RAW_LIMIT] + "\n… cut"


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
            yield Static(Text(escape_controls(raw_record_text(self.session, self.turn))),
                         markup=False)
