"""App-level messages: what the loading and following workers report to the handlers, and
what screens tell the app (a screen never calls the app's methods)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message
from textual.screen import Screen

from replay.core.readers.base import Reader, SessionEntry
from replay.core.session.model import Session

if TYPE_CHECKING:
    # Only the session list's counts: the scan module (and the suggester it brings) is
    # not imported on the way to the first screen.
    from replay.core.discovery.counts import Counted


@dataclass
class SessionStarted(Message):
    """A single session is being read; its first turns are already in it."""

    session: Session


@dataclass
class SessionsLoaded(Message):
    """Every session at the path has been read (more than one: show the picker)."""

    sessions: list[Session]


@dataclass
class SessionsListed(Message):
    """The sessions of a multi-session source, none read yet (show the picker at once)."""

    reader: Reader
    entries: list[SessionEntry]


@dataclass
class SessionsSummarized(Message):
    """Listed sessions' rows of counts for the picker: every one the scan cache kept
    unchanged at once, then each other one as it was read (and let go)."""

    counted: list[Counted]


@dataclass
class TurnsAdded(Message):
    """The session grew (or turns from `changed_from` changed) while loading or following."""

    session: Session
    changed_from: int
    done: bool = False
    reset: bool = False
    pending: int | None = None
    """Following: the index of the last turn while it is still being written."""


@dataclass
class SilenceChanged(Message):
    """Following: the session went silent while a reply was due (`since`), or spoke again."""

    since: float | None
    """Epoch seconds of the last write, or None once writing resumed."""


@dataclass
class LoadProgress(Message):
    """Bytes read so far; only the latest matters."""

    done: int
    total: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LoadProgress)


@dataclass
class OpenSessionRequested(Message):
    """A screen asks for a session already read to be shown (a picked row, a subagent)."""

    session: Session


@dataclass
class OpenEntryRequested(Message):
    """The picker asks for a listed session to be read and shown."""

    reader: Reader
    entry: SessionEntry


@dataclass
class OpenChatRequested(Message):
    """The picker asks for a chat of a compact list (an Aider history's) to be read and
    shown."""

    read: Callable[[], Session]


@dataclass
class HistoryCounted(Message):
    """A history's chats were counted on: `waiting` are still to count (0: all done, or
    counting stopped: `error` says why)."""

    waiting: int
    error: str | None = None

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, HistoryCounted) and message.error is None


@dataclass
class CountRequested(Message):
    """The picker asks for listed sessions to be read one by one for their counts."""

    reader: Reader
    entries: list[SessionEntry]


@dataclass
class LoadFailed(Message):
    """The path could not be read; one clear line."""

    error: str
    fatal: bool = True
    """True when nothing is on screen yet (the app exits); False for a session picked from
    the list (the list stays)."""


@dataclass
class ScreenPainted(Message):
    """A session's screen was painted for the first time: the loading worker may read on."""


@dataclass
class ViewChanged(Message):
    """The reviewer's view was redrawn (a step, a save): the app tidies up once they pause."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ViewChanged)


@dataclass
class ReplayScreenShown(Message):
    """A session's replay screen is on top again (back from a subagent's)."""

    screen: Screen[None]
