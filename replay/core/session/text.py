"""Text rules shared by readers and detection: blankness, empty wrappers, shortening.

The rules on a string are `text_rules`; the ones here judge a text left in its file
(`lifted`: a placeholder holding the text's head) on the whole of it (`whole_text`), so that
a huge text gives what the same text decoded would.
"""

from __future__ import annotations

from replay.core.session import lifted, text_rules, whole_text
from replay.core.session.text_rules import (
    PREVIEW_CHARS,
    plural,
    strip_empty_wrappers,
    wrappers_text,
)

__all__ = ["PREVIEW_CHARS", "empty_wrapper_names", "is_blank", "one_line", "plural", "shorten",
           "strip_empty_wrappers", "wrappers_text"]


def is_blank(text: str | None) -> bool:
    """True when the text shows nothing once empty wrapper tags are removed."""
    if lifted.holds(text):
        return whole_text.is_blank(text)  # type: ignore[arg-type]
    return text_rules.is_blank(text)


def empty_wrapper_names(text: str) -> list[str]:
    """Names of the empty tag pairs in a blank text, for evidence (`conversation_data`)."""
    if lifted.holds(text):
        return whole_text.empty_wrapper_names(text)
    return text_rules.empty_wrapper_names(text)


def shorten(text: str | None, limit: int = PREVIEW_CHARS) -> tuple[str | None, bool]:
    """Keep a text whole when short, else its head; blank text stays blank (its empty
    wrappers kept, see `text_rules.shorten`).

    Returns (text, shortened). A text left in its file is shortened as its decoded text
    would be: its head is decoded from the file, and no placeholder is kept.
    """
    if lifted.holds(text):
        return whole_text.shorten(text, limit)  # type: ignore[arg-type]
    return text_rules.shorten(text, limit)


def one_line(text: str, limit: int = 120) -> str:
    """Collapse white space into single spaces and cut to `limit` characters with an ellipsis."""
    if lifted.holds(text):
        return whole_text.one_line(text, limit)
    return text_rules.one_line(text, limit)
