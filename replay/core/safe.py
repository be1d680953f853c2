"""Make untrusted text safe for a terminal, and paths safe for text and JSON.

One helper (`escape_controls`) for every line shown to a person: in the app, and every line
the CLI prints to a terminal. Data written to files and pipes (CSV, JSONL, `--json`) keeps
the text as it is; `json_line` only spells the dangerous characters as JSON `\\u` escapes,
which decode to the same text.
"""

from __future__ import annotations

import base64
import functools
import os
import re
from collections.abc import Sequence
from typing import Any

import orjson

INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
)
"""Characters that change how text reads without being seen (a regex class body): bidi marks,
embeddings, overrides and isolates that can disguise text; zero-width, filler and other
invisible format characters that hide in it; line and paragraph separators."""

_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{INVISIBLE}\ud800-\udfff]")
"""C0 (but tab and newline), DEL, C1; the invisible characters above; lone surrogates (bytes
of a file name that are not UTF-8, as Python decodes them)."""

_NAMES = {"\x1b": "ESC", "\x07": "BEL", "\x9b": "CSI", "\x9d": "OSC", "\r": "CR", "\x00": "NUL"}


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    name = _NAMES.get(char)
    if name:
        return f"␛[{name}]" if char == "\x1b" else f"[{name}]"
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        # surrogateescape's stand-in for one undecodable byte: show the byte itself.
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return f"\\x{code:02x}"
    # A character, not a byte: named the way Unicode names it, so a reader can look it up.
    return f"<U+{code:04X}>"


def escape_controls(text: str) -> str:
    """Replace every terminal control character and invisible character with a visible escape.

    The one rule for the CLI on a terminal and the app: ESC becomes `␛[ESC]`, BEL `[BEL]`,
    other C0/C1 characters `\\xNN`, U+202E `<U+202E>` (every bidi, zero-width or other
    invisible format character alike), an undecodable file-name byte `\\xNN`; tab and newline
    stay. Escaping twice changes nothing.
    """
    if len(text) > _LARGE and text.isascii() and not text.encode("ascii").translate(
            None, _ASCII_SHOWN):
        return text  # a large ASCII text without a control: checked at C speed (3x faster)
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(_visible, text)


_LARGE = 100_000
_ASCII_SHOWN = bytes(range(0x20, 0x7F)) + b"\t\n"
"""ASCII bytes `escape_controls` keeps as they are."""


def has_controls(text: str, start: int = 0, end: int | None = None) -> bool:
    """True when `escape_controls` would change `text[start:end]`; no copy of a large text
    is made to tell (its ASCII is checked a megabyte at a time)."""
    end = len(text) if end is None else min(end, len(text))
    for at in range(start, end, _CHUNK):
        piece = text[at:min(at + _CHUNK, end)]
        if piece.isascii():
            if piece.encode("ascii").translate(None, _ASCII_SHOWN):
                return True
        elif _CONTROL.search(piece):
            return True
    return False


_CHUNK = 1 << 20


def escaped_shape(text: str) -> str:
    """A stand-in for `escape_controls(text)` of exactly its length, line by line, with its
    tabs and line ends where the escaped text has them: each character that would be
    escaped is replaced by as many `.` as its escape is long. Made with constant
    replacements (no call per character), so the escaped text's line lengths are known
    without making it: `escape_controls` calls back once per character it escapes."""
    for pattern, dots in _shape_classes():
        text = pattern.sub(dots, text)
    return text


@functools.cache
def _shape_classes() -> list[tuple[re.Pattern[str], str]]:
    """(a class of the characters whose escape has one length, that many dots), every
    character `_CONTROL` matches (all in the BMP) in one of them."""
    by_length: dict[int, list[str]] = {}
    for code in range(0x10000):
        char = chr(code)
        if _CONTROL.match(char):
            by_length.setdefault(len(_visible(_CONTROL.match(char))), []).append(char)
    return [(re.compile("[" + "".join(re.escape(char) for char in chars) + "]"), "." * length)
            for length, chars in sorted(by_length.items())]


def one_line(text: str) -> str:
    """`escape_controls`, and a line feed shown as `[LF]` too: for text that must stay on its
    line (a file name, an error message, a table cell), where a newline would start a line
    that looks like the program's own (`a\nreplay: forged line`)."""
    escaped = escape_controls(text)
    return escaped.replace("\n", "[LF]") if "\n" in escaped else escaped


def path_text(path: str | bytes | os.PathLike[str]) -> str:
    """A path as valid Unicode text: bytes that are not UTF-8 become `\\xNN`, the rest is kept.

    Lossy only for names that are not UTF-8 (`json_path` keeps those exactly).
    """
    if isinstance(path, bytes):
        return path.decode("utf-8", "backslashreplace")
    return text_of(os.fspath(path))


def show_path(path: str | bytes | os.PathLike[str]) -> str:
    """A path for a person at a terminal: undecodable bytes, control characters and line
    feeds escaped (`one_line`)."""
    return one_line(path_text(path))


def json_path(path: str | bytes | os.PathLike[str] | None, key: str = "path") -> dict[str, Any]:
    """The JSON fields for a path: `key` as text, plus `key_base64` when the name is not UTF-8.

    `key` is the name decoded as UTF-8 with any other byte written `\\xNN`; `key_base64`
    (only then) is the exact bytes, base64-encoded: `base64 -d` gives the name back.
    """
    if path is None:
        return {key: None}
    try:
        raw = path if isinstance(path, bytes) else os.fsencode(path)
    except UnicodeEncodeError:
        return {key: text_of(os.fspath(path))}
    try:
        return {key: raw.decode("utf-8")}
    except UnicodeDecodeError:
        return {key: raw.decode("utf-8", "backslashreplace"),
                f"{key}_base64": base64.b64encode(raw).decode("ascii")}


_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{INVISIBLE}]")
"""The characters `escape_controls` escapes above ASCII (orjson already writes C0 as
`\\u00NN`)."""


@functools.cache
def _json_unsafe_bytes() -> re.Pattern[bytes]:
    """`_JSON_UNSAFE` as UTF-8 byte sequences (every character it matches is in the BMP)."""
    found = [chr(code) for code in range(0x7F, 0x10000)
             if not 0xD800 <= code < 0xE000 and _JSON_UNSAFE.match(chr(code))]
    return re.compile(b"|".join(re.escape(char.encode("utf-8")) for char in found))


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def json_line(value: Any) -> bytes:
    """One JSON line that is safe to show on a terminal and decodes to exactly `value`.

    C1 controls, bidi controls and zero-width characters are written as `\\uNNNN` escapes
    (JSON's own spelling, so any decoder gets the same text back). A text holding a lone
    surrogate (a file name that is not UTF-8, met where `json_path` was not used) is written
    with that byte as `\\xNN` rather than failing.
    """
    # The line end written by orjson: a big line is not copied to add it.
    return json_escaped(json_bytes(value, newline=True))


def json_bytes(value: Any, *, newline: bool = False) -> bytes:
    """`value` as `json_line` writes it before `json_escaped`: orjson's compact JSON, a text
    holding a lone surrogate written as `text_of` gives it, a sequence that is not a list
    (a `corpus.encoded.EncodedList`) as a list. With `newline`, the line end too."""
    option = orjson.OPT_APPEND_NEWLINE if newline else 0
    try:
        return orjson.dumps(value, default=_listed, option=option)
    except TypeError:
        return orjson.dumps(_valid(value), default=_listed, option=option)


def _listed(value: Any) -> list[Any]:
    """orjson's `default`: a sequence it does not know, as a list."""
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        return list(value)
    raise TypeError(f"cannot write a {type(value).__name__} as JSON")


def json_escaped(encoded: bytes) -> bytes:
    """JSON text (`json_bytes`) with every character `_JSON_UNSAFE` names escaped. A line
    written in pieces, each a whole JSON value or punctuation, gets the bytes it gets whole
    (no piece ends inside a character)."""
    if encoded.isascii() and b"\x7f" not in encoded:
        return encoded
    if not _json_unsafe_bytes().search(encoded):
        return encoded  # (a big line is not decoded to text for nothing)
    text = encoded.decode("utf-8")
    if _JSON_UNSAFE.search(text):
        encoded = _JSON_UNSAFE.sub(_json_escape, text).encode("utf-8")
    return encoded


def _valid(value: Any) -> Any:
    """`value` with every text made valid UTF-8 (see `text_of`), containers walked."""
    if isinstance(value, str):
        return text_of(value)
    if isinstance(value, dict):
        return {text_of(str(key)): _valid(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_valid(item) for item in value]
    return value


def text_of(value: str) -> str:
    """Text that encodes as UTF-8: a byte of a file name that is not UTF-8 becomes `\\xNN`."""
    try:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
