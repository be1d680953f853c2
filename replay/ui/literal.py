"""The one way untrusted text (transcripts, paths, journals, label files) enters Textual.

`shown` makes it safe to draw with core's `escape_controls`, the same rule the CLI uses on a
terminal: control sequences become visible escapes (`␛[ESC]`, `\\x85`) and characters that
change how text reads without being seen (bidi overrides and marks, zero-width characters)
become `<U+202E>` marks. `literal` wraps it as Content, which Textual never parses as markup;
`as_markup` is only for the few Textual APIs that parse every string they get (the command
palette's help line).
"""

from __future__ import annotations

from textual.content import Content

from replay.core.safe import escape_controls
from replay.core.session.lifted import visible


def shown(text: str | None) -> str:
    """Untrusted text as it may be drawn: no control sequence, no invisible character."""
    # A text left in its file shows as the head its placeholder holds (`lifted.visible`).
    return escape_controls(visible(text)) if text else ""


def literal(text: str | None) -> Content:
    """Untrusted text as Content: shown literally, never parsed as markup."""
    return Content(shown(text))


def as_markup(text: str | None) -> str:
    """Untrusted text for an API that parses markup: every bracket is escaped, so markup
    reads it back exactly as `shown` gives it."""
    return shown(text).replace("[", "\\[")
