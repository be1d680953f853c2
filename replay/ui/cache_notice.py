"""The one notice of a scan cache set aside, told from a counting thread."""

from __future__ import annotations

from textual.app import App

from replay.ui.literal import shown


def cache_warning(app: App[None], line: str) -> None:
    """The scan cache was set aside (a broken file): said once, from the counting thread."""
    try:
        app.call_from_thread(app.notify, shown(line), title="Scan cache", severity="warning",
                             markup=False, timeout=8)
    except RuntimeError:
        pass  # the app is closing: nobody to tell
