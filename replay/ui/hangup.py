"""The app ended from outside keeps the reviewer's work.

SIGTERM (a `kill`, a system shutting down) and SIGHUP (the terminal window closed, an ssh
connection dropped) are handled on the app's event loop like a quit that cannot ask: drafts
are kept beside their journals for the next time each session is opened, annotations the
journal could not take are written to a file of their own (`QuitGuard.keep_everything`),
then the app exits, restoring the terminal when there still is one. What no handler sees
(`kill -9`, a crash, the power going) loses at most the last `AUTOSAVE_SECONDS` of a note
being typed: changed drafts are kept that often (`DraftAutosave`).

Annotations already in the journal need nothing: each is written the moment it is entered.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.app import App

ENDING = (signal.SIGTERM, signal.SIGHUP)
"""The signals that end the app after keeping its work."""

AUTOSAVE_SECONDS = 2.0
"""How often changed drafts are kept beside their journals while the app runs."""

GRACE_SECONDS = 3.0
"""How long the app has to exit after its work is kept; a terminal that is gone can leave
its driver stuck writing, and a signal that ends a process must end it."""


def keep_work(app: App[object]) -> None:
    """From the app's mount: handle `ENDING` on its running loop (a loop that cannot, not
    the main thread, leaves the signals as they were), and keep changed drafts every
    `AUTOSAVE_SECONDS`."""
    app.set_interval(AUTOSAVE_SECONDS, DraftAutosave(app), name="draft autosave")
    loop = asyncio.get_running_loop()
    for number in ENDING:
        try:
            loop.add_signal_handler(number, ended_by, app, number)
        except (NotImplementedError, RuntimeError, ValueError):
            return


def ended_by(app: App[object], number: int) -> None:
    """Keep what would be lost, then exit with 128 + the signal's number (as a shell says a
    process ended by it); said on the terminal when it is still there."""
    from rich.text import Text

    from replay.ui.quitting import QuitGuard

    if not app.is_running:  # (a loop that outlived its app): the signal does what it did
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        return

    code = 128 + number
    try:
        said = QuitGuard(app).keep_everything()  # type: ignore[arg-type]
    finally:
        if not app.is_headless:
            # The process ends whatever happens to the terminal: the driver of a closed one
            # may never finish restoring it. (Not headless: a test's process goes on.)
            timer = threading.Timer(GRACE_SECONDS, os._exit, (code,))
            timer.daemon = True
            timer.start()
    gone = number == signal.SIGHUP  # no terminal to say it on
    app.exit(return_code=code, message=None if gone or not said else Text("\n".join(said)))


class DraftAutosave:
    """Keeps each replay screen's drafts beside its journal when they changed since last
    kept (a tick with nothing changed writes nothing).

    Nothing is written for a screen until it has held a draft: a session's drafts kept by
    an earlier run are still in the file, waiting to be offered at its first stop, and must
    not be replaced by the nothing the screen holds before then."""

    def __init__(self, app: App[object]) -> None:
        self.app = app
        self.kept: dict[int, tuple[object, ...]] = {}
        """By screen: the drafts last kept (absent: none held yet)."""

    def __call__(self) -> None:
        from replay.ui.drafts import keep_screen_drafts
        from replay.ui.screens.replay_screen import ReplayScreen

        app = self.app
        screens = {id(screen): screen for screen in
                   [*getattr(app, "left_screens", []), *app.screen_stack,
                    getattr(app, "replay_screen", None)]
                   if isinstance(screen, ReplayScreen)}
        for key, screen in screens.items():
            screen.annotation.unsaved_drafts()  # (the stop's own, as it is now, counts too)
            now = tuple(sorted(screen.annotation.drafts.items(), key=lambda item: item[0]))
            if self.kept.get(key, ()) == now:
                continue
            said = keep_screen_drafts([screen])
            if any("could not" in line for line in said):
                continue  # (tried again next tick; the quit says it)
            self.kept[key] = now
