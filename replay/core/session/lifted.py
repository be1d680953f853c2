"""Huge texts left in their file: a message of 50 MB is a window on the file, not a string.

A reader that meets a JSON string of megabytes (`replay.core.readers.huge_strings`) does not
decode it: it records where the string's bytes are (`FileText`) and hands the reader a short
stand-in instead, a *placeholder*: a token naming the `FileText`, the text's first
characters, an end mark. Readers treat the placeholder as the text's head (it is not blank,
it starts as the text does), so they need no change; what shows the text asks `source()`
for the whole of it and gets a `Rope`, read from the file a piece at a time.

A token is `\\ue000` + a key drawn at random when the process starts + a number + `\\ue001`,
so no transcript can spell one that means anything (a private-use character in a transcript
is just a character). `visible()` turns a placeholder back into the head it stands for, the
text any preview may show; `materialise()` into the whole text, for what must have it all
(an export, a copy).

A `FileText` re-checks the file before each read from it: a file that was rewritten since
is a `TextMoved` error (the text it held is not shown wrongly); one that only grew (a session
being written) is checked once by the checksum of the string's bytes. The run it decoded
last is kept (256 K characters) and served as it was read.
"""

from __future__ import annotations

import os
import re
import threading
import zlib
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from itertools import count

import orjson

from replay.core.escaped_find import holds_folded

OPEN, CLOSE, END = "\ue000", "\ue001", "\ue002"
"""Around a placeholder's token; after its head."""
_KEY = os.urandom(8).hex()  # (not `secrets`: it imports hashlib, which a scan never needs)
_TOKEN = re.compile(f"{OPEN}{_KEY}([0-9a-f]+){CLOSE}")
_PLACEHOLDER = re.compile(f"{OPEN}{_KEY}([0-9a-f]+){CLOSE}([^{END}]*)({END}?)")
_NUMBERS = count(1)
_TEXTS: dict[int, FileText] = {}
"""Every `FileText` made in this process, by number (each a few kilobytes however long its
text: they are kept, as the placeholders naming them may be anywhere)."""
_RECORDS: dict[tuple[str, int], tuple[tuple[int, int, int], bytes]] = {}
"""Records (lines, elements) read as skeletons, by (path, offset): (the file's stamp then,
the skeleton), so that reading a turn's record back gives the same skeleton (the same
placeholders) without reading the record."""
_LENGTHS: dict[tuple[str, int], int] = {}
"""The file length of each record kept in `_RECORDS`."""
_CHECK_BYTES = 1 << 20
_KEPT_CHARS = 1 << 18


class TextMoved(OSError):
    """The file no longer holds a text where it was read (rewritten, replaced, cut):
    nothing is shown in its place. `str()` is one line."""


class FileText:
    """The text of one JSON string of a file, `chars` characters long, decoded on demand.

    `marks` are where the string's pieces start (file offset, character index): any run of
    characters is decoded from the pieces holding it (64 KiB of the file each), never the
    whole. `stamp` is the file's (inode, size, mtime) when it was read and `crc` the
    checksum of the string's bytes, to tell a file that changed under it.
    """

    __slots__ = ("_at_chars", "_at_bytes", "_kept", "chars", "crc", "end", "lines", "path",
                 "stamp", "start")

    def __init__(self, path: str, stamp: tuple[int, int, int], start: int, end: int,
                 at_bytes: array[int], at_chars: array[int], chars: int, lines: int,
                 crc: int) -> None:
        self.path, self.stamp, self.start, self.end = path, stamp, start, end
        self._at_bytes, self._at_chars = at_bytes, at_chars
        self.chars, self.lines, self.crc = chars, lines, crc
        self._kept: tuple[int, str] = (0, "")
        """The run last decoded (its first character's index, its text): what is drawn or
        measured next is mostly in it."""

    def __len__(self) -> int:
        return self.chars

    def _check(self) -> None:
        """Raise `TextMoved` unless the file still holds the string where it was."""
        status = os.stat(self.path)
        stamp = (status.st_ino, status.st_size, status.st_mtime_ns)
        if stamp == self.stamp:
            return
        if stamp[0] != self.stamp[0] or stamp[1] < self.end:
            raise TextMoved("the file was replaced or cut since it was read")
        crc = 0
        with open(self.path, "rb") as handle:
            handle.seek(self.start)
            left = self.end - self.start
            while left > 0:
                piece = handle.read(min(left, _CHECK_BYTES))
                if not piece:
                    break
                crc = zlib.crc32(piece, crc)
                left -= len(piece)
        if left or crc != self.crc:
            raise TextMoved("the file was rewritten since it was read")
        self.stamp = stamp  # it only grew: the string is where it was

    def read(self, start: int = 0, end: int | None = None) -> str:
        """Characters `start` to `end` of the text."""
        end = self.chars if end is None else min(end, self.chars)
        start = max(0, start)
        if start >= end:
            return ""
        kept_at, kept = self._kept
        if kept_at <= start and end <= kept_at + len(kept):
            # As the file held it when it was decoded (checked then): a row a line, a stat
            # each, cost more than the rows.
            return kept[start - kept_at:end - kept_at]
        self._check()
        first = bisect_right(self._at_chars, start) - 1
        # A run of 256 K characters is decoded and kept, so that the next reads nearby
        # (rows drawn, lines measured one after the other) decode nothing. (orjson peaks at
        # ~13x the bytes it decodes: 8 MB for a run of CJK spelt `\uXXXX`.)
        last = bisect_left(self._at_chars, max(end, start + _KEPT_CHARS), first + 1)
        begin = self._at_bytes[first]
        text = self._decode(begin, self._at_bytes[last] if last < len(self._at_bytes)
                            else self.end)
        skip = start - self._at_chars[first]
        if len(text) <= 2 * _KEPT_CHARS:
            self._kept = (self._at_chars[first], text)
        return text[skip:skip + end - start]

    def _decode(self, begin: int, stop: int) -> str:
        """The characters of the file's bytes `begin` to `stop`, a run of the string."""
        # Read between two quotes, so that the run is decoded as it was read (no copy).
        quoted = bytearray(stop - begin + 2)
        quoted[0] = quoted[-1] = 0x22
        fd = os.open(self.path, os.O_RDONLY)
        try:
            got = os.preadv(fd, [memoryview(quoted)[1:-1]], begin)
        finally:
            os.close(fd)
        if got != stop - begin:
            raise TextMoved("the file was cut since it was read")
        return decode_quoted(quoted)


def decode_piece(raw: bytes) -> str:
    """The characters of a run of a JSON string's bytes (whole escapes, whole characters).

    Raises ValueError when they are not a JSON string's."""
    return decode_quoted(b'"' + raw + b'"')


def decode_quoted(quoted: bytes | bytearray) -> str:
    """`decode_piece` of a run already between quotes."""
    try:
        return orjson.loads(quoted)  # type: ignore[no-any-return]
    except orjson.JSONDecodeError:
        import json

        # A lone surrogate escape, which orjson refuses and the standard library reads.
        value = json.loads(bytes(quoted))
        if not isinstance(value, str):
            raise ValueError("not a string") from None
        return value


def register(text: FileText, head: str) -> str:
    """The placeholder standing for `text`, whose first characters are `head`."""
    number = next(_NUMBERS)
    _TEXTS[number] = text
    return f"{OPEN}{_KEY}{number:x}{CLOSE}{head.partition(END)[0]}{END}"


class Rope:
    """A text made of strings and `FileText`s, read a run at a time (what `LongText` draws
    from when a message was left in its file)."""

    __slots__ = ("_items", "_starts", "lines")

    def __init__(self, items: list[str | FileText]) -> None:
        self._items = items
        starts = array("q", [0])
        for item in items:
            starts.append(starts[-1] + len(item))
        self._starts = starts
        self.lines = sum(item.count("\n") if isinstance(item, str) else item.lines
                         for item in items)
        """Line ends in the text."""

    def __len__(self) -> int:
        return self._starts[-1]

    def read(self, start: int = 0, end: int | None = None) -> str:
        """Characters `start` to `end`."""
        end = len(self) if end is None else min(end, len(self))
        start = max(0, start)
        if start >= end:
            return ""
        first = bisect_right(self._starts, start) - 1
        out: list[str] = []
        index = first
        while index < len(self._items) and self._starts[index] < end:
            item, base = self._items[index], self._starts[index]
            lo, hi = max(start - base, 0), min(end - base, len(item))
            out.append(item[lo:hi] if isinstance(item, str) else item.read(lo, hi))
            index += 1
        return out[0] if len(out) == 1 else "".join(out)

    def key(self) -> tuple[object, ...]:
        """What names the text whatever placeholders stand for it (a turn read back from
        its file again has new ones): its strings, and where in which file each of its
        texts left there is."""
        return tuple(item if isinstance(item, str) else (item.path, item.start, item.end)
                     for item in self._items)

    def check(self) -> None:
        """Raise `TextMoved` unless every file the text is read from still holds it."""
        for item in self._items:
            if isinstance(item, FileText):
                item._check()

    def pieces(self, size: int = 1 << 18) -> Iterator[tuple[int, str]]:
        """(character index, text) of successive runs of `size` characters (the last
        shorter)."""
        at, total = 0, len(self)
        while at < total:
            yield at, self.read(at, at + size)
            at += size


def holds(text: str | None) -> bool:
    """True when the text holds a placeholder (cheap: one character looked for)."""
    return bool(text) and OPEN in text  # type: ignore[operator]


def source(text: str | None) -> Rope | None:
    """The whole text a string with placeholders stands for; None for any other string.

    A placeholder cut before its end mark (a reader kept only a text's head) stands for its
    whole text, and what followed it is lost with the cut."""
    if not holds(text):
        return None
    assert text is not None
    items: list[str | FileText] = []
    at = 0
    for match in _PLACEHOLDER.finditer(text):
        found = _TEXTS.get(int(match.group(1), 16))
        if found is None:
            continue
        if match.start() > at:
            items.append(text[at:match.start()])
        items.append(found)
        at = match.end()
        if not match.group(3):
            at = len(text)
            break
    if not any(isinstance(item, FileText) for item in items):
        return None
    if at < len(text):
        items.append(text[at:])
    return Rope(items)


def is_cut(text: str | None) -> bool:
    """True when the text holds a placeholder cut before its end mark (a reader kept only the
    head of a text, as it shortens one held in memory)."""
    if not holds(text):
        return False
    assert text is not None
    return any(not match.group(3) and int(match.group(1), 16) in _TEXTS
               for match in _PLACEHOLDER.finditer(text))


def length(text: str) -> int:
    """The length of the whole text `text` stands for."""
    rope = source(text)
    return len(text) if rope is None else len(rope)


def visible(text: str) -> str:
    """The text with each placeholder turned into the head it holds (what a preview shows;
    tokens of no text of this process are removed alike)."""
    if OPEN not in text:
        return text
    return _TOKEN.sub("", _PLACEHOLDER.sub(_head, text))


def _head(match: re.Match[str]) -> str:
    return match.group(2)


def materialise(text: str) -> str:
    """The whole text, decoded from the file (an export, a copy: what needs every
    character). Raises OSError (`TextMoved`) when the file no longer holds it."""
    rope = source(text)
    return visible(text) if rope is None else rope.read()


def contains(text: str, needle: str, cancelled: Callable[[], bool] | None = None) -> bool:
    """True when the whole text `text` stands for holds `needle` (already casefolded), once
    casefolded: a text left in its file is looked through a run at a time (runs overlap by
    the needle's length, so a match across two is found), `cancelled` asked before each
    (False once it says so). The answer is kept: the prompt's count, `n`'s find, the
    match count and the screen's highlight ask the same of one 50 MB message in a row (a
    second each, casefolding it). Raises OSError (`TextMoved`)."""
    rope = source(text)
    if rope is None:
        return needle in text.casefold()
    key = (rope.key(), needle)
    # One search of a text at a time: the count and the find, started at once, ask the same
    # and the second waits for the first's answer rather than reading the text beside it.
    with _LOOKING:
        known = _HELD.get(key)
        if known is not None:
            rope.check()  # (a file rewritten since: no answer about a text no longer there)
            return known
        size, overlap = 1 << 16, len(needle)
        found = False
        for at in range(0, len(rope), size):
            if cancelled is not None and cancelled():
                return False
            if holds_folded(rope.read(at, at + size + overlap), needle):
                found = True
                break
        if len(_HELD) >= _HELD_KEPT:
            _HELD.clear()
        _HELD[key] = found
        return found


_HELD: dict[tuple[tuple[object, ...], str], bool] = {}
"""`contains`' answers for texts left in their file, by (`Rope.key`, needle)."""
_HELD_KEPT = 256
_LOOKING = threading.Lock()


def keep_record(path: str, offset: int, stamp: tuple[int, int, int], skeleton: bytes,
                length: int) -> None:
    """Remember the skeleton read for the record of `length` bytes at `offset` of `path` (an
    absolute path)."""
    _RECORDS[(path, offset)] = (stamp, skeleton)
    _LENGTHS[(path, offset)] = length


def file_spans(path: str, spans: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """The spans with each skeleton's length turned back into its record's in the file
    (the raw record view pages through the file's bytes)."""
    if not _RECORDS:
        return spans
    where = os.path.abspath(path)
    out = []
    for offset, length in spans:
        kept = _RECORDS.get((where, offset))
        out.append((offset, _LENGTHS[(where, offset)])
                   if kept is not None and len(kept[1]) == length else (offset, length))
    return tuple(out)


def kept_record(path: str, offset: int) -> tuple[tuple[int, int, int], bytes] | None:
    """(file stamp, skeleton) kept for the record at `offset` of `path`, if any."""
    return _RECORDS.get((path, offset))


def read_back(path: str, offset: int, length: int) -> bytes | None:
    """The skeleton of the record at (`offset`, `length`) when it was read as one (`length`
    is the skeleton's, or the record's own in the file) and the file is as it was then, or
    has only grown since (a session being written: the record is still where it was); else
    None (read the bytes)."""
    if not _RECORDS:
        return None  # (the common case: asked for every record read back)
    key = (os.path.abspath(path), offset)
    kept = _RECORDS.get(key)
    if kept is None or (len(kept[1]) != length and _LENGTHS[key] != length):
        return None  # (a streamed document's element is named by its length in the file)
    try:
        status = os.stat(path)
    except OSError:
        return None
    inode, size, _ = kept[0]
    if status.st_ino != inode or status.st_size < size:
        return None
    return kept[1]
