"""A large JSON document read one element of its arrays at a time.

Whole-document formats (chat JSON, ShareGPT, Gemini JSON, opencode export, SWE-agent and
mini-swe-agent trajectories) keep a session's records in one array. Parsing the whole
document first holds every record as Python objects at once (4 to 16 times the file), and
then the turns built from them. Here the file is mapped, the byte span of each element of
the top-level arrays is found by a scan that only tracks strings and brackets (regular
expressions do the byte-level work), and an element is parsed (orjson) only when a reader
asks for it: memory holds one element at a time plus 16 bytes per element for its span.

The spans also let a reader read one record back later (`read_span`) instead of parsing the
whole document again (the opencode export's full parts of one turn).

Only a document that is a JSON object or array from its first byte (after a BOM and white
space) to its last is streamed; anything else (text around it, cut off, invalid) is left to
`parse_document`, whose tolerant reading and messages are the format's contract.
"""

from __future__ import annotations

import bisect
import mmap
import os
import re
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import orjson

_RUN = re.compile(rb'(?:[^"{}\[\]]+|"[^"\\]*(?:\\.[^"\\]*)*")*', re.DOTALL)
"""Everything up to the next bracket outside a string (strings skipped whole)."""
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SCALAR = re.compile(rb'[^,}\]\s]*')
_SPACE = re.compile(rb'[ \t\r\n]*')
_OPEN, _CLOSE = frozenset(b"{["), frozenset(b"}]")

RELEASE_BYTES = 8 << 20
"""After this many bytes scanned, the pages behind are given back (`MADV_DONTNEED`): a
mapped file's pages count in the process's memory while they stay mapped."""

BOM = b"\xef\xbb\xbf"


class NotStreamable(ValueError):
    """The document is not one clean JSON value: read it whole (with its tolerance)."""


def _end_of_value(data: Any, pos: int) -> int:
    """Where the JSON value starting at `pos` ends (exclusive). Brackets are counted, strings
    skipped; the value's bytes are checked by orjson when it is parsed."""
    if pos >= len(data):
        raise NotStreamable("the document ends where a value should be")
    first = data[pos]
    if first == 0x22:  # '"'
        match = _STRING.match(data, pos)
        if match is None:
            raise NotStreamable(f"unterminated string at byte {pos}")
        return match.end()
    if first not in _OPEN:
        end = _SCALAR.match(data, pos).end()  # type: ignore[union-attr]
        if end == pos:
            raise NotStreamable(f"no value at byte {pos}")
        return end
    depth = 0
    size = len(data)
    match_run = _RUN.match
    while True:
        pos = match_run(data, pos).end()  # type: ignore[union-attr]
        if pos >= size:
            raise NotStreamable("the document ends inside a value")
        char = data[pos]
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth == 0:
                return pos + 1
        else:
            raise NotStreamable(f"unterminated string at byte {pos}")
        pos += 1


def _space(data: Any, pos: int) -> int:
    return _SPACE.match(data, pos).end()  # type: ignore[union-attr]


class _Releaser:
    """Gives back the mapped pages every RELEASE_BYTES of the file read (they fault back in
    from the page cache when read again)."""

    def __init__(self, mapped: mmap.mmap) -> None:
        self.mapped = mapped
        self.read = 0

    def passed(self, count: int) -> None:
        """`count` more bytes were read."""
        self.read += count
        if self.read >= RELEASE_BYTES:
            self.read = 0
            if hasattr(self.mapped, "madvise"):
                self.mapped.madvise(mmap.MADV_DONTNEED)


def _array_spans(data: Any, pos: int, releaser: _Releaser) -> tuple[array[int], int]:
    """The (start, end) of each element of the array opening at `pos`, flat; and its end."""
    spans: array[int] = array("q")
    pos = _space(data, pos + 1)
    if data[pos:pos + 1] == b"]":
        return spans, pos + 1
    size = len(data)
    while True:
        end = _end_of_value(data, pos)
        # Checked now, so a bad element makes the whole document unstreamable (it is then
        # read whole, and said to be invalid exactly as before); the value is let go.
        orjson.loads(memoryview(data)[pos:end])
        spans.append(pos)
        spans.append(end)
        releaser.passed(end - pos)
        pos = _space(data, end)
        if pos >= size:
            raise NotStreamable("the document ends inside an array")
        char = data[pos]
        if char == 0x2C:  # ','
            pos = _space(data, pos + 1)
        elif char == 0x5D:  # ']'
            return spans, pos + 1
        else:
            raise NotStreamable(f"expected ',' or ']' at byte {pos}")


class Elements(Sequence[Any]):
    """The elements of one array of a mapped document, each parsed when read (not kept)."""

    def __init__(self, data: Any, spans: array[int], releaser: _Releaser) -> None:
        self._data = data
        self._spans = spans
        self._releaser = releaser

    def __len__(self) -> int:
        return len(self._spans) // 2

    def span(self, index: int) -> tuple[int, int]:
        """(offset, length) of element `index` in the file."""
        start, end = self._spans[2 * index], self._spans[2 * index + 1]
        return start, end - start

    def records(self) -> Iterator[tuple[memoryview, int, int]]:
        """(bytes, offset, number) of each element, unparsed, numbered from 1: the records
        a builder is fed (`base.RecordFeed`). A view is valid while the document is."""
        view = memoryview(self._data)
        spans, passed = self._spans, self._releaser.passed
        for number in range(1, len(self) + 1):
            start, end = spans[2 * number - 2], spans[2 * number - 1]
            passed(end - start)
            yield view[start:end], start, number

    def index_at(self, offset: int) -> int | None:
        """The index of the element starting at byte `offset`, None when none does."""
        spans = self._spans
        index = bisect.bisect_left(range(len(self)), offset, key=lambda i: spans[2 * i])
        return index if index < len(self) and spans[2 * index] == offset else None

    def _parse(self, index: int) -> Any:
        start, end = self._spans[2 * index], self._spans[2 * index + 1]
        self._releaser.passed(end - start)
        return orjson.loads(memoryview(self._data)[start:end])

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self._parse(i) for i in range(*index.indices(len(self)))]
        count = len(self)
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError("element index out of range")
        return self._parse(index)

    def __iter__(self) -> Iterator[Any]:
        for index in range(len(self)):
            yield self._parse(index)


ARRAYS = (list, Elements)
"""What a reader accepts as a document's array: a parsed list or streamed elements."""


EVERY_ARRAY = frozenset({"*"})
"""`stream_document`'s `arrays` for "every top-level array"."""


def stream_document(path: Path, arrays: frozenset[str] = EVERY_ARRAY) -> tuple[Any, int, int]:
    """The document at `path` as a dict (or, for a top-level array, `Elements`) whose arrays
    named in `arrays` (every top-level array for `EVERY_ARRAY`) are `Elements`; the other values are
    parsed. Returns (value, start, end): where the document starts in the file (after a BOM
    and white space), and the file's size.

    Raises:
        NotStreamable: not one clean JSON object or array (read it whole instead).
        OSError: the file cannot be read.
    """
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            raise NotStreamable("empty")
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    releaser = _Releaser(data)
    base = len(BOM) if data[:3] == BOM else 0
    start = _space(data, base)
    size = len(data)
    if start >= size or data[start] not in _OPEN:
        raise NotStreamable("not a JSON object or array")
    try:
        if data[start] == 0x5B:
            spans, end = _array_spans(data, start, releaser)
            value: Any = Elements(data, spans, releaser)
        else:
            value, end = _object(data, start, arrays, releaser)
    except orjson.JSONDecodeError as error:
        raise NotStreamable(str(error)) from None
    if _space(data, end) != size:
        raise NotStreamable("more after the document")
    return value, start, size


def _object(data: Any, pos: int, arrays: frozenset[str],
            releaser: _Releaser) -> tuple[dict[str, Any], int]:
    """A top-level object: its chosen arrays streamed, every other value parsed."""
    found: dict[str, Any] = {}
    pos = _space(data, pos + 1)
    if data[pos:pos + 1] == b"}":
        return found, pos + 1
    size = len(data)
    while True:
        key_end = _end_of_value(data, pos)
        if data[pos] != 0x22:
            raise NotStreamable(f"expected a key at byte {pos}")
        key = orjson.loads(memoryview(data)[pos:key_end])
        pos = _space(data, key_end)
        if data[pos:pos + 1] != b":":
            raise NotStreamable(f"expected ':' at byte {pos}")
        pos = _space(data, pos + 1)
        if pos >= size:
            raise NotStreamable("the document ends after a key")
        if data[pos] == 0x5B and (key in arrays or "*" in arrays):
            spans, end = _array_spans(data, pos, releaser)
            found[key] = Elements(data, spans, releaser)
        else:
            end = _end_of_value(data, pos)
            found[key] = orjson.loads(memoryview(data)[pos:end])
            releaser.passed(end - pos)
        pos = _space(data, end)
        if pos >= size:
            raise NotStreamable("the document ends inside the object")
        char = data[pos]
        if char == 0x2C:
            pos = _space(data, pos + 1)
        elif char == 0x7D:
            return found, pos + 1
        else:
            raise NotStreamable(f"expected ',' or '}}' at byte {pos}")


def read_span(path: str | Path, offset: int, length: int) -> Any:
    """The JSON value at bytes [offset, offset + length) of a file.

    Raises:
        OSError: the file cannot be read.
        ValueError: those bytes are no longer one JSON value (the file changed).
    """
    with open(path, "rb") as handle:
        data = os.pread(handle.fileno(), length, offset)
    if len(data) != length:
        raise ValueError(f"{path}: shorter than when it was read")
    return orjson.loads(data)
