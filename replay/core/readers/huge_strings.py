"""A line of megabytes read without holding it: its huge JSON strings stay in the file.

`lift_line` reads one line of a JSON-lines file from the file a mebibyte at a time and
returns its *skeleton*: the line with every JSON string longer than `LIFT_BYTES` replaced by
a placeholder (`replay.core.session.lifted`), a few kilobytes however long the line. Each
lifted string is decoded once, a piece at a time, to count its characters and lines and to
mark where its pieces start (so any run of it can be decoded alone later); no piece is
kept. The reader parses the skeleton as it would have the line.

Only the app lifts (`enable()`): a command that prints or writes texts reads them whole.
"""

from __future__ import annotations

import os
import re
import zlib
from array import array
from typing import Any

import orjson

from replay.core.session import lifted

HUGE_LINE_BYTES = 4 << 20
"""A line still being read past this is read by `lift_line` (no transcript line of ordinary
records is this long; stopping here keeps the line reader's buffer under 8 MiB)."""
WHOLE_BYTES = 8 << 20
"""A record whose whole length is known (a line read to its end, a document's element) is
lifted past this; below, holding its text costs less than the pieces' decoding."""
LIFT_BYTES = 1 << 20
"""JSON strings longer than this (in the file's bytes) are left in the file."""
PIECE_BYTES = 1 << 16
"""Bytes of a lifted string decoded at a time (and between two of its marks)."""
HEAD_CHARS = 2000
"""Characters of a lifted string its placeholder holds (what readers and previews see)."""
_READ = 1 << 20

_OUTSIDE = re.compile(rb'[^"\n]*+')
"""JSON outside strings, up to a string or the line's end."""
_OUTSIDE_SPAN = re.compile(rb'[^"]*+')
"""JSON outside strings, up to a string (a document's value may span lines)."""
_BODY = re.compile(rb'(?:[^"\\\n]++|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}'
                   rb'|\\u[0-9a-fA-F]{4}|\\[^u\n])*+')
"""A JSON string's body, a whole escape at a time (a surrogate pair as one)."""
_HIGH = re.compile(rb'\\u[dD][89abAB][0-9a-fA-F]{2}\Z')

_ENABLED = [False]


def enable(on: bool = True) -> None:
    """Let `lift_line` leave huge strings in their file (the app does, at start)."""
    _ENABLED[0] = on


def enabled() -> bool:
    """True when huge lines are lifted."""
    return _ENABLED[0]


def _stamp(fd: int) -> tuple[int, int, int]:
    status = os.fstat(fd)
    return status.st_ino, status.st_size, status.st_mtime_ns


class _Buffer:
    """The bytes of a file from `base` on (up to `limit`), read as they are asked for."""

    def __init__(self, fd: int, base: int, limit: int | None = None) -> None:
        self.fd, self.base, self.data, self.eof = fd, base, b"", False
        self.limit = limit

    def more(self) -> bool:
        """Read the next mebibyte; False at the end of the file (or of the limit)."""
        if self.eof:
            return False
        at = self.base + len(self.data)
        size = _READ if self.limit is None else min(_READ, self.limit - at)
        chunk = os.pread(self.fd, size, at) if size > 0 else b""
        if not chunk:
            self.eof = True
            return False
        self.data += chunk
        return True

    def drop(self, upto: int) -> int:
        """Forget the bytes before `upto` (an index into `data`); returns the new index."""
        self.data = self.data[upto:]
        self.base += upto
        return 0


def lift_line(fd: int, path: str, offset: int,
              limit: int | None = None) -> tuple[bytes, int, bool] | None:
    """The skeleton of the line that starts at byte `offset`, where it ends (the offset of
    its line end, or of the end of the file, or of `limit` when the file is read as if it
    ended there) and whether it has a line end; None when the line is not one of JSON
    strings this can read (then it is read as it is).

    A line lifted before from the file as it is now is not read again (a scan that reads a
    file twice, as the opencode run reader's does, lifts each huge line once)."""
    stamp = _stamp(fd)
    stop = stamp[1] if limit is None else min(limit, stamp[1])
    kept = _LINES.get((path, offset))
    if kept is not None and kept[0] == stamp:
        _, done = kept
        if (done[1] < stop) if done[2] else (done[1] == stop):
            return done  # (the same bytes up to the same end: the same skeleton)
    found = _skeleton(fd, path, offset, limit, line=True)
    if found is not None:
        _LINES[(path, offset)] = (stamp, found)
    return found


_LINES: dict[tuple[str, int], tuple[tuple[int, int, int], tuple[bytes, int, bool]]] = {}
"""Each line lifted (`lift_line`), by (path, offset): the file's stamp then, and what
`lift_line` gave (a few kilobytes: the skeleton, kept by `lifted` too)."""


def lift_span(fd: int, path: str, offset: int, length: int) -> bytes | None:
    """The skeleton of the JSON value at bytes [offset, offset + length) of a file (an
    element of a document's array), kept for the next time it is asked for while the file
    is as it was; None when it is not one this can read."""
    kept = lifted.kept_record(path, offset)
    if kept is not None and kept[0] == _stamp(fd):
        return kept[1]
    found = _skeleton(fd, path, offset, offset + length, line=False)
    return None if found is None else found[0]


def _skeleton(fd: int, path: str, offset: int, limit: int | None,
              line: bool) -> tuple[bytes, int, bool] | None:
    """`lift_line` (`line`: to the line's end, or `limit`) or `lift_span` (to `limit`)."""
    stamp = _stamp(fd)
    buffer = _Buffer(fd, offset, limit)
    outside = _OUTSIDE if line else _OUTSIDE_SPAN
    out = bytearray()
    at = 0
    ended = not line
    while True:
        match = outside.match(buffer.data, at)
        assert match is not None
        out += buffer.data[at:match.end()]
        at = match.end()
        if at == len(buffer.data):
            at = buffer.drop(at)
            if not buffer.more():
                break
            continue
        if buffer.data[at] == 0x0A:  # the line's end
            ended = True
            break
        found = _string(buffer, at, path, stamp)
        if found is None:
            return None
        piece, at = found
        out += piece
    end = buffer.base + at
    skeleton = bytes(out).rstrip(b"\r")
    lifted.keep_record(path, offset, stamp, skeleton, buffer.base + at - offset)
    return skeleton, end, ended


def _string(buffer: _Buffer, quote: int, path: str,
            stamp: tuple[int, int, int]) -> tuple[bytes, int] | None:
    """The string starting at `quote` as it goes into the skeleton (itself, or its
    placeholder) and the index just past it; None when it is not a JSON string."""
    at = quote + 1
    while True:
        match = _BODY.match(buffer.data, at)
        assert match is not None
        end = match.end()
        if end - quote - 1 > LIFT_BYTES:
            return _lift(buffer, quote, path, stamp)
        if end < len(buffer.data) and buffer.data[end] == 0x22:
            return buffer.data[quote:end + 1], end + 1  # a string of its own size
        if end + 12 < len(buffer.data) or not buffer.more():
            return None  # a raw line end, a bad escape, or the file ends in the string
        at = quote + 1  # matched again from the start: the buffer is immutable bytes


def _lift(buffer: _Buffer, quote: int, path: str,
          stamp: tuple[int, int, int]) -> tuple[bytes, int] | None:
    """A long string decoded a piece at a time: its placeholder and the index past it."""
    at = buffer.drop(quote) + 1
    start = buffer.base + at
    at_bytes, at_chars = array("q"), array("q")
    chars = lines = crc = 0
    head = ""
    blank = True
    while True:
        while len(buffer.data) - at < PIECE_BYTES + 16 and buffer.more():
            pass
        limit = min(len(buffer.data), at + PIECE_BYTES)
        match = _BODY.match(buffer.data, at, limit)
        assert match is not None
        end = match.end()
        closed = end < len(buffer.data) and buffer.data[end] == 0x22
        if not closed:
            if end == at:
                return None  # a raw line end, a bad escape, or the end of the file
            while end > at and end < len(buffer.data) and buffer.data[end] & 0xC0 == 0x80:
                end -= 1  # not inside a character
            high = _HIGH.search(buffer.data, max(at, end - 6), end)
            if high is not None and _escapes(buffer.data, high.start(), at):
                end = high.start()  # a surrogate pair stays in one piece
        raw = buffer.data[at:end]
        try:
            text = lifted.decode_piece(raw)
        except ValueError:
            return None
        at_bytes.append(buffer.base + at)
        at_chars.append(chars)
        chars += len(text)
        lines += text.count("\n")
        crc = zlib.crc32(raw, crc)
        if len(head) < HEAD_CHARS:
            head += text[:HEAD_CHARS - len(head)]
        blank = blank and (not text or text.isspace())
        at = end
        if closed:
            break
        if at > _READ:
            at = buffer.drop(at)
    stop = buffer.base + at
    if blank:
        # White space only: its first characters, as blank as it was and not empty (a
        # reader may drop an empty part where it kept a blank one: the turn's reason).
        return _dumps(head), at + 1
    text = lifted.FileText(path, stamp, start, stop, at_bytes, at_chars, chars, lines, crc)
    return _dumps(lifted.register(text, head)), at + 1


def _escapes(data: bytes, backslash: int, floor: int) -> bool:
    """True when the backslash at `backslash` starts an escape (an even number of
    backslashes before it, back to `floor`)."""
    count = 0
    while backslash - count - 1 >= floor and data[backslash - count - 1] == 0x5C:
        count += 1
    return count % 2 == 0


def _dumps(value: str) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:
        import json

        # A lone surrogate, written as the line had it: escaped, a lone high and a lone
        # low one side by side would read back as one pair (another character).
        return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def lift_at(handle: Any, offset: int) -> tuple[bytes, int, bool] | None:
    """`lift_line` on an open file object (None when it has no descriptor or path); a
    handle read as if the file ended at byte `handle.cap` is lifted no further."""
    name = getattr(handle, "name", None)
    try:
        fd = handle.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    if not isinstance(name, str):
        return None
    cap = getattr(handle, "cap", None)
    return lift_line(fd, os.path.abspath(name), offset, cap if isinstance(cap, int) else None)
