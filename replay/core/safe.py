"""Make untrusted transcript text safe for a terminal: control characters become visible."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""C0 (but tab and newline), DEL, C1, and the bidi overrides that can disguise text."""

_NAMES = {"\x1b": "ESC", "\x07": "BEL", "\x9b": "CSI", "\x9d": "OSC", "\r": "CR", "\x00": "NUL"}


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    name = _NAMES.get(char)
    if name:
        return f"␛[{name}]" if char == "\x1b" else f"[{name}]"
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def escape_controls(text: str) -> str:
    """Replace every terminal control character with a visible escape.

    ESC becomes `␛[ESC]`, BEL `[BEL]`, other C0/C1 characters `\\xNN`; tab and newline stay.
    """
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(_visible, text)
