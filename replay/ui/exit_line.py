"""The app's last words on stderr (an unreadable file, the annotations kept at exit): each
message one line, whatever the width.

Textual prints an app's exit message with its own error console, which wraps text at the
terminal's width, and at 80 columns when stderr is not a terminal (a log, a pipe, a test
harness): a long path then came out as two or three lines, the first cut mid-word. Soft
wrapping leaves each line whole (a terminal folds it on screen; a log keeps one line).
"""

from __future__ import annotations

from typing import TypeVar

from rich.console import Console
from textual.app import App

AppType = TypeVar("AppType", bound=App)  # type: ignore[type-arg]


def unwrapped_exit(app: AppType) -> AppType:
    """`app`, its exit message printed with lines left whole (never markup, as before)."""
    app.error_console = Console(markup=False, highlight=False, stderr=True, soft_wrap=True)
    return app
