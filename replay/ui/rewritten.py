"""A session file rewritten in place under the app is read again, and the reviewer told.

The replay screen reads most turns back from the file by their byte offsets
(`TurnIndex`). A file rewritten in place with records of the same shape at the same
offsets would read back as valid, other text: the index's stamp of the file tells it
(`replay.core.index.file_stamp`), each such turn says so instead of showing other text,
and the app reads the file again, saying why in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.message import Message

from replay.core.index.turn_index import TurnIndex
from replay.core.session.model import Session
from replay.ui.literal import shown


@dataclass
class SourceRewritten(Message):
    """The file of the session on screen is not the one its turns were read from."""

    path: str
    why: str


class RereadRewritten:
    """Mixed into the app: it watches each session it shows, and reads a rewritten file
    again (when it is the file the app was started on) in place of the session shown."""

    rereading: bool = False
    """The next session shown replaces the one on screen (it is the same file read again)."""

    def watch_rewrites(self, session: Session) -> None:
        """Be told when the file of `session`'s turns turns out rewritten."""
        turns = session.turns
        if isinstance(turns, TurnIndex):
            post = self.post_message  # type: ignore[attr-defined]
            turns.on_rewritten = lambda why, path=turns.path: post(SourceRewritten(path, why))

    def on_source_rewritten(self, event: SourceRewritten) -> None:
        """Say it in one line; read the file again when it is the one the app was started
        on (a session picked from a list is opened again from there)."""
        options = self.options  # type: ignore[attr-defined]
        started_on = Path(event.path) == Path(options.path) and not options.follow
        what = "reading it again" if started_on else "open it again from the list to read it"
        self.notify(shown(f"{event.path}: {event.why}; {what}."),  # type: ignore[attr-defined]
                    title="File changed", severity="warning", markup=False, timeout=10)
        if started_on:
            self.rereading = True
            self.load_source(options.path, options.format)  # type: ignore[attr-defined]
