"""What the reader warned about a session (an empty or cut-off file, a bad line), said in the
app in the words `replay scan` prints, so the app never shows an empty screen without why."""

from __future__ import annotations

from replay.core.session.model import Session
from replay.ui.literal import shown


def warning_line(session: Session) -> str | None:
    """One line: the first warning as `scan` prints it, the records skipped, how many more
    warnings; None when the read raised none."""
    if not session.warnings:
        return None
    parts = [f"warning: {session.warnings[0]}"]
    if session.skipped:
        parts.append(f"{session.skipped:,} record{'' if session.skipped == 1 else 's'} skipped")
    more = len(session.warnings) - 1
    if more:
        parts.append(f"{more:,} more warning{'' if more == 1 else 's'} (replay scan lists them)")
    return shown(" · ".join(parts))
