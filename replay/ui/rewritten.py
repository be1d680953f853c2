"""A session file rewritten in place under the app is read again, and the reviewer told.

The replay screen reads most turns back from the file by their byte offsets
(`TurnIndex`). A file rewritten in place with records of the same shape at the same
offsets would read back as valid, other text: the index's stamp of the file tells it
(`replay.core.index.file_stamp`), each such turn says so instead of showing other text,
and the app reads the file again, saying why in one line, and goes back to the turn the
reviewer was on (the same turn by id if it is still there, else the nearest by position),
not to the first stop.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.message import Message

from replay.core.index.turn_index import TurnIndex
from replay.core.session.model import Session
from replay.ui.literal import shown
from replay.ui.messages import SessionStarted, TurnsAdded

SEARCH_TURNS = 100_000
"""How far from its old position a turn is looked for by id in the file read again."""


@dataclass(frozen=True)
class Place:
    """Where the reviewer was in a session: a turn's position and id."""

    index: int
    turn_id: str
    placeholder: bool
    """On the missing reply after the turn, not the turn itself."""

    def found_in(self, session: Session) -> int | None:
        """The position of this turn in `session` (its id near the old position, looked for
        outwards), or None when it is not there."""
        count = len(session.turns)
        for distance in range(min(max(count, 1), SEARCH_TURNS)):
            for index in {self.index - distance, self.index + distance}:
                if 0 <= index < count and _turn_id(session, index) == self.turn_id:
                    return index
        return None

    def nearest_in(self, session: Session) -> int:
        """The position to go back to in `session`: the same turn, else the nearest."""
        found = self.found_in(session)
        return found if found is not None else max(0, min(len(session.turns) - 1, self.index))


def _turn_id(session: Session, index: int) -> str:
    turns = session.turns
    return turns.id_at(index) if isinstance(turns, TurnIndex) else turns[index].id


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

    reread_place: Place | None = None
    """Where the reviewer was when the file was read again: gone back to once it is read."""

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
            screen = self.replay_screen  # type: ignore[attr-defined]
            if screen is not None and screen.session.turns and self.reread_place is None:
                index = min(screen.index, len(screen.session.turns) - 1)
                self.reread_place = Place(index, _turn_id(screen.session, index),
                                          screen.at_placeholder)
            self.load_source(options.path, options.format)  # type: ignore[attr-defined]

    def on_session_started(self, event: SessionStarted) -> None:
        """After the app's own handler has made the new screen: when it is the file read
        again, the first stop is not to take the view (`moved`), the old place will."""
        screen = self.replay_screen  # type: ignore[attr-defined]
        if self.reread_place is not None and screen is not None \
                and screen.session is event.session:
            screen.moved = True

    def on_turns_added(self, event: TurnsAdded) -> None:
        """Go back to the place of the reviewer once the file read again is read (or as soon
        as that very turn is there); after the app's own handler, when the screen is up."""
        place, screen = self.reread_place, self.replay_screen  # type: ignore[attr-defined]
        if place is None or screen is None or screen.session is not event.session:
            return
        if not (screen.is_mounted and screen.is_running):  # not composed yet, or gone
            screen.call_after_refresh(self.on_turns_added, event)
            return
        session = event.session
        early = place.index < len(session.turns) and \
            _turn_id(session, place.index) == place.turn_id
        if not (event.done or early):
            return
        self.reread_place = None
        index = place.index if early else place.nearest_in(session)
        screen.go(index, placeholder=place.placeholder and index == place.index)
