"""The app with no PATH: the list of every session found on this machine, or, with none, the
bundled sample saying where replay looked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.events import Mount

from replay.core.discovery.found import FoundSession
from replay.ui.screens.replay_screen import ReplayScreen

if TYPE_CHECKING:
    from replay.ui.app import ReplayApp

SAMPLE_NOTE = "sample: no sessions found on this machine"
"""What the header says when the bundled sample stands in for the user's own sessions."""


def start(app: ReplayApp) -> None:
    """Begin as the options say: discover in a worker (no PATH), or show what was found."""
    options = app.options
    if options.discovered is not None:
        show_discovered(app, options.discovered, options.chosen)
        return
    # In a thread, so that the listing overlaps the app's own start instead of adding to it.
    app.run_worker(lambda: _discover(app), thread=True, group="load", exclusive=True,
                   exit_on_error=False, description="Looking for sessions")


def _discover(app: ReplayApp) -> None:
    from replay.core.discovery import discover

    found = discover()
    if found.sessions:
        app.call_from_thread(show_discovered, app, found.sessions, False)
    else:
        app.call_from_thread(_open_sample, app)


def _open_sample(app: ReplayApp) -> None:
    """No session anywhere: the bundled sample, its header saying so."""
    app.options.header_note = SAMPLE_NOTE
    app.set_timer(0.3, app.show_loading_screen)
    app.load_source(app.options.path, app.options.format)


def show_discovered(app: ReplayApp, sessions: list[FoundSession], chosen: bool) -> None:
    """Show the list of `sessions` (or, when `chosen`, open the one named by id at once)."""
    from replay.core.readers import folder
    from replay.ui.screens.picker import PickerRow, SessionPicker

    # Each entry names its own reader; the folder reader only stands for "any of them".
    reader = folder.READER
    if chosen and len(sessions) == 1:
        entry = sessions[0].entry
        # As a file is opened: the session replaces the loading screen once it is read.
        app.show_loading_screen()
        app.run_worker(lambda: app._load_entry(reader, entry), thread=True, group="load",
                       exclusive=True, exit_on_error=False, description="Reading the session")
        return
    rows = [PickerRow(entry=session.entry, found=session) for session in sessions]
    app.push_screen(SessionPicker("~", rows, app.options.rules, reader,
                                  heading="on this machine"))


class NotedReplayScreen(ReplayScreen):
    """The replay screen with a note after the app's name (the sample standing in)."""

    def __init__(self, *args: object, note: str, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.note = note

    @on(Mount)
    def say_where_looked(self) -> None:
        from replay.core.discovery import looked_in

        self.notify(f"Looked in {looked_in()}. This is the bundled sample session.",
                    title="No sessions found on this machine", markup=False, timeout=12)

    def status_prefix(self) -> Text:
        return Text(f" · {self.note}", style="italic")
