"""`replay DIR --follow`: show the session the agent is writing now, and move to a new one.

The app follows every session of the folder (`FolderFollower`) but shows one: the one
written last when following began. When another session starts (a new file in the folder,
a new session in an opencode database), the app says so and moves to it after
`MOVE_SECONDS`, unless the reviewer presses `f` first to stay where they are. Only the shown
session's changes reach the replay screen; problems with the others (a file that vanished,
one that is not a transcript) are one notification each.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from replay.core.live.folder import FolderFollower, FolderPoll, SessionUpdate
from replay.core.live.follow import FollowUpdate
from replay.core.session.model import Session
from replay.core.session.text import one_line
from replay.ui.literal import shown
from replay.ui.messages import SessionStarted, SilenceChanged, TurnsAdded

if TYPE_CHECKING:
    from textual.timer import Timer

    from replay.ui.app import ReplayApp

MOVE_SECONDS = 3.0
"""How long the reviewer has to press `f` (stay) before the app moves to a new session."""

NAME_CHARS = 60
"""Longest session name in a notification."""

WAIT_SECONDS = 0.25
"""How often a folder with no session yet is looked at again."""


def post_update(app: ReplayApp, update: FollowUpdate) -> None:
    """Pass a followed session's update on to the app as messages."""
    session = update.session
    if session is None:
        return
    if update.resumed is not None:
        app.post_message(SilenceChanged(None))
    known = len(session.turns) - len(update.new_turns)
    # A turn that just stopped being written is judged again.
    first = min([known, *update.changed, *([known - 1] if update.completed else [])])
    app.post_message(TurnsAdded(session, max(first, 0), done=True, reset=update.reset,
                                pending=update.pending))
    if update.stalled is not None:
        app.post_message(SilenceChanged(update.stalled.since))


def session_name(session: Session, key: str) -> str:
    """How a session is named in a notification: its title or first prompt (shortened),
    with its file name (or its id in a database)."""
    where = key.rsplit("#", 1)[1] if "#" in key else Path(key).name
    label = one_line(session.label, NAME_CHARS) if session.turns or session.title else ""
    # Transcript text and file names: drawn without any control sequence they may hold.
    return shown(f"{label} ({where})" if label and label != where else where)


class FolderFollowing:
    """The app's side of following a folder: which session is shown, and moving on."""

    def __init__(self, app: ReplayApp, folder: FolderFollower, key: str) -> None:
        self.app = app
        self.folder = folder
        self.shown = key
        """Key of the session on screen."""
        self.offered: str | None = None
        """Key of a new session the app is about to move to."""
        self._timer: Timer | None = None

    @classmethod
    def start(cls, app: ReplayApp, roots: list[Path]) -> FolderFollowing | None:
        """In the loading worker's thread: open the session written last (waiting for one
        if there is none yet), show it, and start following the folder. None when the
        worker was cancelled first."""
        from textual.worker import get_current_worker

        options = app.options
        folder = FolderFollower(roots, rules=options.rules, settle=options.settle,
                                stall=options.stall)
        worker = get_current_worker()
        folder.poll()
        opened = folder.open_newest()
        if opened is None:
            where = ", ".join(str(root) for root in roots)
            app.call_from_thread(app.notify, shown(f"No session in {where} yet: waiting for one."),
                                 title="Following", markup=False, timeout=6)
        while opened is None:
            if worker.is_cancelled:
                return None
            time.sleep(WAIT_SECONDS)
            folder.poll()
            opened = folder.open_newest()
        update = opened.update
        assert update.session is not None
        following = cls(app, folder, opened.key)
        app.post_message(SessionStarted(update.session))
        app.post_message(TurnsAdded(update.session, 0, done=True, pending=update.pending))
        if update.stalled is not None:
            app.post_message(SilenceChanged(update.stalled.since))
        app.call_from_thread(following.follow)
        return following

    def follow(self) -> None:
        """Wake on changes anywhere in the folder (a worker of the app; polls in a thread)."""
        from replay.watching import follow_folder_async

        self.app.run_worker(follow_folder_async(self.folder, self.take), exclusive=True,
                            group="follow", exit_on_error=False, description="Following")

    def take(self, news: FolderPoll) -> None:
        """Say the problems, offer new sessions, pass the shown session's news on."""
        for problem in news.problems:
            self.app.notify(shown(problem), title="Following the folder", severity="warning",
                            markup=False, timeout=6)
        for item in news.updates:
            if item.key == self.shown:
                post_update(self.app, item.update)
            elif item.started and item.update.session is not None:
                self.offer(item)

    def offer(self, item: SessionUpdate) -> None:
        """A new session started: move to it in `MOVE_SECONDS` unless `f` says stay."""
        assert item.update.session is not None
        if self._timer is not None:
            self._timer.stop()
        self.offered = item.key
        self.app.notify(f"New session started: {session_name(item.update.session, item.key)}. "
                        f"Moving to it in {MOVE_SECONDS:g} s; f stays on this one.",
                        title="Following", markup=False, timeout=MOVE_SECONDS + 1)
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
        from textual.widgets import Input

        app = self.app
        key = self.offered
        if key is None:
            return
        if app.screen is not app.replay_screen or isinstance(app.focused, Input):
            # A dialog is open or a note is being typed: the move waits for it.
            self._timer = app.set_timer(1.0, self._move)
            return
        self.offered, self._timer = None, None
        follower = self.folder.follower_of(key)
        if follower is None or follower.session is None:
            return
        self.shown = key
        session = follower.session
        if app.replay_screen is not None:
            app.left_screens.append(app.replay_screen)
        await app.open_session(session, loading=True, replace=True)
        app.post_message(TurnsAdded(session, 0, done=True, pending=follower.pending))
        stalled = follower.stalled
        app.post_message(SilenceChanged(stalled.since if stalled is not None else None))
        app.notify(f"Now following {session_name(session, key)}.", title="Following",
                   markup=False, timeout=4)


__all__ = ["MOVE_SECONDS", "FolderFollowing", "post_update", "session_name"]
