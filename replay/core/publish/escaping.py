"""Untrusted text written into the pages and documents replay shares: HTML and Markdown.

One place for the rules every published output follows (case studies, the report, `share`):
control and invisible characters are made visible first (`escape_controls`), then markup is
escaped for the medium, so no transcript text is ever read as HTML or Markdown.
"""

from __future__ import annotations

import html
import re

from replay.core.safe import escape_controls


def html_text(text: object) -> str:
    """Untrusted text as HTML text or attribute value: markup escaped, controls made visible."""
    return html.escape(escape_controls(str(text)), quote=True)


def md_fence(text: str, info: str = "text") -> str:
    """A fenced block longer than any run of backticks in the text, so it cannot be closed."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def md_inline(text: str) -> str:
    """Untrusted text on one Markdown line: controls visible, markup characters escaped (an
    ampersand too, so `&lt;script&gt;` stays those characters)."""
    flat = " ".join(escape_controls(text).split())
    return re.sub(r"([\\`*_{}\[\]<>#+!|~&])", r"\\\1", flat)
