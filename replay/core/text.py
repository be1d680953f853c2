"""Text rules shared by readers and detection: blankness, empty wrappers, shortening."""

from __future__ import annotations

import re

_EMPTY_WRAPPER = re.compile(r"<([A-Za-z][\w.:-]*)(?:\s[^<>]*)?>\s*</\1\s*>")
"""An XML-style tag pair with nothing but white space inside."""

_SELF_CLOSING = re.compile(r"<[A-Za-z][\w.:-]*(?:\s[^<>]*)?/>")

PREVIEW_CHARS = 400
"""How much of a long text a shortened part keeps in memory."""


def strip_empty_wrappers(text: str) -> str:
    """Remove tag pairs that wrap nothing, innermost first, until none is left.

    `<conversation_data>\\n\\n</conversation_data>` becomes the empty string; a tag pair that
    wraps words is kept whole.
    """
    if "<" not in text:
        return text
    previous = None
    while previous != text:
        previous = text
        text = _EMPTY_WRAPPER.sub("", text)
        text = _SELF_CLOSING.sub("", text)
    return text


def is_blank(text: str | None) -> bool:
    """True when the text shows nothing once empty wrapper tags are removed."""
    if not text or text.isspace():
        return True
    if "<" not in text:
        return False
    return not strip_empty_wrappers(text).strip()


def empty_wrapper_names(text: str) -> list[str]:
    """Names of the empty tag pairs in a blank text, for evidence (`conversation_data`)."""
    return [match.group(1) for match in _EMPTY_WRAPPER.finditer(text or "")]


def shorten(text: str | None, limit: int = PREVIEW_CHARS) -> tuple[str | None, bool]:
    """Keep a text whole when short, else its head; blank text stays blank.

    Returns (text, shortened).
    """
    if text is None or len(text) <= limit:
        return text, False
    if is_blank(text):
        return "", True
    head = text[:limit]
    if is_blank(head):
        # Leading white space or an empty wrapper before the words: keep words, so a
        # shortened part is never blank when the whole is not.
        head = text.lstrip()[:limit]
        if is_blank(head):
            head = strip_empty_wrappers(text).strip()[:limit]
    return head, True


def one_line(text: str, limit: int = 120) -> str:
    """Collapse white space into single spaces and cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        return flat[: max(limit - 1, 0)] + "…"
    return flat
