"""The one way untrusted text (transcripts, paths, journals, label files) enters Textual.

`shown` makes it safe to draw: terminal controls become visible escapes (core's
`escape_controls`) and characters that change how text reads without being seen (bidi
overrides and marks, zero-width characters) become `<U+202E>` marks. `literal` wraps it as
Content, which Textual never parses as markup; `as_markup` is only for the few Textual APIs
that parse every string they get (the command palette's help line).
"""

from __future__ import annotations

import re

from textual.content import Content

from replay.core.safe import escape_controls

_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]"
)
"""Bidi overrides, isolates and marks, zero-width and other invisible format characters."""


def _mark(match: re.Match[str]) -> str:
    return f"<U+{ord(match.group(0)):04X}>"


def shown(text: str | None) -> str:
    """Untrusted text as it may be drawn: no control sequence, no invisible character."""
    if not text:
        return ""
    if _INVISIBLE.search(text):
        text = _INVISIBLE.sub(_mark, text)
    return escape_controls(text)


def literal(text: str | None) -> Content:
    """Untrusted text as Content: shown literally, never parsed as markup."""
    return Content(shown(text))


def as_markup(text: str | None) -> str:
    """Untrusted text for an API that parses markup: every bracket is escaped, so markup
    reads it back exactly as `shown` gives it."""
    return shown(text).replace("[", "\\[")
