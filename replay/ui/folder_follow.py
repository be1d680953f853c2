"""`replay DIR --follow`: show the session the agent is writing now, and move to a new one.

The app follows every session of the folder (`FolderFollower`) but shows one: the one
written last when following began. When another session starts (a new file in the folder,
a new session in an opencode database), the app says so and moves to it after
`MOVE_SECONDS`, unless the reviewer presses `f` first to stay where they are. Only the shown
session's changes reach the replay screen; problems with the others (a file that vanished,
one that is not a transcript) are one notification each.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from replay.core.live.folder import FolderFollower, FolderPoll, SessionUpdate
from replay.core.session.model import Session
from replay.core.session.text import one_line

if TYPE_CHECKING:
    from textual.timer import Timer

    from replay.ui.app import ReplayApp

MOVE_SECONDS = 3.0
"""How long the reviewer has to press `f` (stay) before the app moves to a new session."""


@dataclass
class FolderNews(Message):
    """What one poll of the followed folder found (posted by the following worker)."""

    news: FolderPoll


NAME_CHARS = 60
"""Longest session name in a notification."""


def session_name(session: Session, key: str) -> str:
    """How a session is named in a notification: its title or first prompt (shortened),
    with its file name (or its id in a database)."""
    where = key.rsplit("#", 1)[1] if "#" in key else Path(key).name
    label = one_line(session.label, NAME_CHARS) if session.turns or session.title else ""
    return f"{label} ({where})" if label and label != where else where


class FolderFollowing:
    """The app's side of following a folder: which session is shown, and moving on."""

    def __init__(self, app: ReplayApp, folder: FolderFollower, shown: str) -> None:
        self.app = app
        self.folder = folder
        self.shown = shown
        """Key of the session on screen."""
        self.offered: str | None = None
        """Key of a new session the app is about to move to."""
        self._timer: Timer | None = None

    def take(self, news: FolderPoll) -> list[SessionUpdate]:
        """Say the problems, offer new sessions; returns the shown session's updates."""
        for problem in news.problems:
            self.app.notify(problem, title="Following the folder", severity="warning",
                            markup=False, timeout=6)
        mine: list[SessionUpdate] = []
        for item in news.updates:
            if item.key == self.shown:
                mine.append(item)
            elif item.started and item.update.session is not None:
                self.offer(item.key, item.update.session)
        return mine

    def offer(self, key: str, session: Session) -> None:
        """A new session started: move to it in `MOVE_SECONDS` unless `f` says stay."""
        if self._timer is not None:
            self._timer.stop()
        self.offered = key
        self.app.notify(f"New session started: {session_name(session, key)}. Moving to it in "
                        f"{MOVE_SECONDS:g} s; f stays on this one.", title="Following",
                        markup=False, timeout=MOVE_SECONDS + 1)
        self._timer = self.app.set_timer(MOVE_SECONDS, self._move)

    def stay(self) -> bool:
        """`f` while a move is offered: stay on the shown session. False when none is."""
        if self.offered is None:
            return False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.offered = None
        self.app.notify("Staying on this session; the new one is followed too.",
                        title="Following", markup=False, timeout=3)
        return True

    async def _move(self) -> None:
        key = self.offered
        if key is None:
            return
        from textual.widgets import Input

        if self.app.screen is not self.app.replay_screen or isinstance(self.app.focused, Input):
            # A dialog is open or a note is being typed: the move waits for it.
            self._timer = self.app.set_timer(1.0, self._move)
            return
        self.offered, self._timer = None, None
        follower = self.folder.follower_of(key)
        if follower is None or follower.session is None:
            return
        self.shown = key
        await self.app.show_followed_session(follower.session, follower.pending,
                                             follower.stalled)
        self.app.notify(f"Now following {session_name(follower.session, key)}.",
                        title="Following", markup=False, timeout=4)


__all__ = ["MOVE_SECONDS", "FolderFollowing", "FolderNews", "session_name"]
