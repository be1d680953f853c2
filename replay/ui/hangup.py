"""The app ended by a signal keeps the reviewer's work: SIGTERM (a `kill`, a system shutting
down) and SIGHUP (the terminal window closed, an ssh connection dropped) are handled on the
app's event loop like a quit that cannot ask. Drafts are kept beside their journals for the
next time each session is opened, annotations the journal could not take are written to a
file of their own (`QuitGuard.keep_everything`), then the app exits, restoring the terminal
when there still is one.

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

GRACE_SECONDS = 3.0
"""How long the app has to exit after its work is kept; a terminal that is gone can leave
its driver stuck writing, and a signal that ends a process must end it."""


def watch_signals(app: App[object]) -> None:
    """Handle `ENDING` on the running loop of `app` (from its mount). A loop that cannot
    (not the main thread) leaves the signals as they were."""
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
