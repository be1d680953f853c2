"""A long Aider chat in the app: its first turns on screen at once, the rest read by the
loading worker while the reviewer reads.

The worker reads the chat into columns (`aider.ChatReading`, `aider_turns.ExchangeTurns`)
and posts what it has: `SessionStarted` once the first turns are in (then it waits for that
screen to be painted), `TurnsAdded` and `LoadProgress` a few times a second, and a last
`TurnsAdded(done=True)`. The screen owns what it shows; the worker only says how far it got.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.worker import get_current_worker

from replay.core.readers.base import ReaderError
from replay.ui.messages import LoadFailed, LoadProgress, SessionStarted, TurnsAdded

if TYPE_CHECKING:
    from replay.core.readers.aider import ChatReading
    from replay.core.session.model import Session
    from replay.ui.app import ReplayApp

FIRST_TURNS = 24
"""Turns read before the first screen is shown (as for a line-based session)..."""
FIRST_SECONDS = 0.3
"""... or fewer, once reading has taken this long (a chat whose third turn is a 50 MB reply
is on screen while that reply is read)."""
REPORT_SECONDS = 0.25
"""How often the worker says how far it got."""
PAINT_WAIT = 1.0
"""Longest the worker waits for the first screen to be painted before reading on."""


def load_chat(app: ReplayApp, reading: ChatReading, *, fatal: bool = True) -> None:
    """In a loading worker: read the chat, showing it from its first turns. A chat that
    cannot be read is one line (`fatal`: the app exits with it, else a notification)."""
    worker = get_current_worker()
    started = False
    reported = 0
    begun = last_report = time.monotonic()
    seen = False
    """The chat's screen was seen up: once it is gone, the reviewer went back to the list."""
    try:
        for done in reading.steps():
            if worker.is_cancelled:  # another chat opened
                return
            session = reading.session
            assert session is not None
            if started:
                up = _on_screen(app, session)
                if seen and not up:
                    return  # back to the list: nobody reads the rest
                seen = seen or up
            count = len(session.turns)
            if not started and (count >= FIRST_TURNS or (
                    count and time.monotonic() - begun > FIRST_SECONDS)):
                started = True
                app.post_message(SessionStarted(session))
                app.first_screen_painted.wait(PAINT_WAIT)
                last_report = time.monotonic()
            elif time.monotonic() - last_report > REPORT_SECONDS:
                if started:
                    # The newest turn may still grow: only the ones before it are settled.
                    app.post_message(TurnsAdded(session, max(reported - 1, 0)))
                    reported = count
                app.post_message(LoadProgress(done, reading.total))
                last_report = time.monotonic()
    except ReaderError as error:
        app.post_message(LoadFailed(str(error), fatal=fatal and not started))
        if started and reading.session is not None:  # what was read stays on screen
            app.post_message(TurnsAdded(reading.session, max(reported - 1, 0), done=True))
        return
    session = reading.session
    assert session is not None
    if not started:
        app.post_message(SessionStarted(session))
    app.post_message(LoadProgress(reading.total, reading.total))
    app.post_message(TurnsAdded(session, max(reported - 1, 0), done=True))


def _on_screen(app: ReplayApp, session: Session) -> bool:
    """True while the session's replay screen is on the app's stack."""
    screen = app.replay_screen
    return screen is not None and screen.session is session and screen in app.screen_stack
