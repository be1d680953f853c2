"""The palette's Screenshot: an SVG of the screen saved where the user will look for it.

Textual saves it to `~/Downloads`, and on a machine without that folder (a server, a
container) says only "Failed to save screenshot". replay saves it in the current directory,
beside what `e` exports, or in replay's data directory when that cannot be written, and
names the file it wrote.
"""

from __future__ import annotations

import os
from pathlib import Path

from textual.app import App, SystemCommand

from replay.core.paths import data_dir
from replay.ui.literal import shown


def screenshot_places(path: str | None = None) -> list[Path]:
    """Where to try saving, in order: the folder asked for, else the current directory, then
    the data directory."""
    places: list[Path] = []
    if path:
        places.append(Path(path).expanduser())
    else:
        try:
            places.append(Path.cwd())
        except OSError:
            pass  # the current directory was removed: only the data directory is left
    places.append(data_dir() / "screenshots")
    return places


def save_screenshot(app: App[object], filename: str | None = None, path: str | None = None,
                    time_format: str | None = None) -> Path | None:
    """Save an SVG of the screen in the first place that takes it and say where (or, when
    none does, say why); returns the file written."""
    from textual.app import generate_datetime_filename

    name = filename or generate_datetime_filename(app.title, ".svg", time_format)
    svg = app.export_screenshot()
    problems: list[str] = []
    for place in screenshot_places(path):
        target = place / name
        try:
            place.mkdir(parents=True, exist_ok=True)
            # Never over an existing file: the name carries the time, so this is a clash.
            with open(target, "x", encoding="utf-8") as stream:
                stream.write(svg)
        except OSError as error:
            problems.append(f"{place}: {error.strerror or error}")
            continue
        app.notify(shown(f"Saved screenshot to {os.fspath(target)}"),
                   title="Screenshot", markup=False, timeout=8)
        return target
    app.notify(shown("Could not save the screenshot: " + "; ".join(problems)),
               title="Screenshot", severity="error", markup=False, timeout=10)
    return None


def screenshot_command(app: App[object]) -> SystemCommand:
    """The palette's Screenshot, saved by `save_screenshot` once the palette has closed."""
    return SystemCommand("Screenshot",
                         "Save an SVG of the screen in the current directory",
                         lambda: app.set_timer(0.1, lambda: save_screenshot(app)))
