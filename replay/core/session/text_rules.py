"""Text rules on a string as it is: blankness, empty wrappers, shortening (`text` applies them
to a text left in its file too, through `whole_text`)."""

from __future__ import annotations

import re

_EMPTY_WRAPPER = re.compile(r"<([A-Za-z][\w.:-]*)(?:\s[^<>]*)?>\s*</\1\s*>")
"""An XML-style tag pair with nothing but white space inside."""

_TAG = re.compile(r"<(?:/([A-Za-z][\w.:-]*)\s*|([A-Za-z][\w.:-]*)(\s[^<>]*)?(/)?)>")
"""A closing tag (group 1) or an opening one (group 2, attributes in 3); self-closing when
group 4 is set or the attributes end with a slash."""

PREVIEW_CHARS = 400
"""How much of a long text a shortened part keeps in memory."""


def plural(count: int, noun: str) -> str:
    """A count with its noun, singular for one: `1 turn`, `2 turns`, `1,204 turns`."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def strip_empty_wrappers(text: str) -> str:
    """Remove tag pairs that wrap nothing (innermost first, then the pairs left empty by
    that) and self-closing tags, in one pass over the text.

    `<conversation_data>\\n\\n</conversation_data>` becomes the empty string; a tag pair that
    wraps words is kept whole. Tags are those of the text as written: removing a pair never
    joins the characters around it into a new tag.
    """
    if "<" not in text:
        return text
    pieces: list[str] = []
    # Opening tags that could still turn out empty, innermost last: (name, index in pieces).
    # Everything in `pieces` after an open entry is white space, so a matching closing tag
    # removes the pair by cutting `pieces` back; a piece that shows something clears the stack.
    open_tags: list[tuple[str, int]] = []
    position = 0
    for match in _TAG.finditer(text):
        start, end = match.span()
        if start > position:
            between = text[position:start]
            pieces.append(between)
            if not between.isspace():
                open_tags.clear()
        position = end
        closing, name, attributes, slash = match.groups()
        if name is not None:
            if slash or (attributes is not None and attributes.endswith("/")):
                continue  # self-closing: removed
            open_tags.append((name, len(pieces)))
            pieces.append(text[start:end])
        elif open_tags and open_tags[-1][0] == closing:
            del pieces[open_tags.pop()[1]:]
        else:
            pieces.append(text[start:end])
            open_tags.clear()
    if position < len(text):
        pieces.append(text[position:])
    return "".join(pieces)


def is_blank(text: str | None) -> bool:
    """True when the text shows nothing once empty wrapper tags are removed."""
    if not text or text.isspace():
        return True
    if "<" not in text:
        return False
    if _TAG.sub("", text).strip():
        return False  # words outside every tag: the common case, decided at C speed
    # Only tags and white space: blank when every opening tag meets its closing tag, as
    # `strip_empty_wrappers` would pair them (self-closing tags count for nothing).
    opened: list[str] = []
    for closing, name, attributes, slash in _TAG.findall(text):
        if name:
            if not (slash or attributes.endswith("/")):
                opened.append(name)
        elif opened and opened[-1] == closing:
            opened.pop()
        else:
            return False
    return not opened


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
        return wrappers_text(empty_wrapper_names(text), limit), True
    head = text[:limit]
    if is_blank(head):
        # Leading white space or an empty wrapper before the words: keep words, so a
        # shortened part is never blank when the whole is not.
        head = text.lstrip()[:limit]
        if is_blank(head):
            head = strip_empty_wrappers(text).strip()[:limit]
    return head, True


def wrappers_text(names: list[str], limit: int = PREVIEW_CHARS) -> str:
    """A blank text made of the empty tag pairs `names` (each once, whole pairs within
    `limit` characters): what a shortened blank text keeps, so that it still names them."""
    out = ""
    for name in dict.fromkeys(names):
        pair = f"<{name}></{name}>"
        if len(out) + len(pair) > limit:
            break
        out += pair
    return out


def one_line(text: str, limit: int = 120) -> str:
    """Collapse white space into single spaces and cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        return flat[: max(limit - 1, 0)] + "…"
    return flat
