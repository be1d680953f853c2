"""A large JSON document read one element of its arrays at a time.

Whole-document formats (chat JSON, ShareGPT, Gemini JSON, opencode export, SWE-agent and
mini-swe-agent trajectories) keep a session's records in one array. Parsing the whole
document first holds every record as Python objects at once (4 to 16 times the file), and
then the turns built from them. Here the file is read a window at a time
(`file_window.WindowFile`), the byte span of each element of the top-level arrays is found
by a scan that only tracks strings and brackets (regular expressions do the byte-level
work), and an element is parsed (orjson) only when a reader asks for it: memory holds a
window and one element at a time, plus 16 bytes per element for its span.

The file is not mapped: a mapped file cut shorter by another process while it is read kills
the process with SIGBUS. Read by windows, the same thing is a `FileChanged` error (an
OSError) naming the size expected and the size found, raised by whatever read the missing
bytes: the first scan, a record of `Elements.records`, an element parsed.

The spans also let a reader read one record back later (`read_span`) instead of parsing the
whole document again (the opencode export's full parts of one turn).

Only a document that is a JSON object or array from its first byte (after a BOM and white
space) to its last is streamed; anything else (text around it, cut off, invalid) is left to
`parse_document`, whose tolerant reading and messages are the format's contract.
"""

from __future__ import annotations

import bisect
import os
import re
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import orjson

from replay.core.readers import file_window, huge_strings
from replay.core.readers.file_window import FileChanged, WindowFile

_RUN = re.compile(rb'(?:[^"{}\[\]]++|"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|(?P<open>\\?\Z)))*+',
                  re.DOTALL)
"""Everything up to the next bracket outside a string (strings skipped whole). A string the
window does not hold to its end runs to the window's end: the group `open` then says where
to go on reading it (its backslash at the end, if any, or the end). Possessive: nothing is
given back, so a string cut by the window's end costs no backtracking."""
_IN_STRING = re.compile(rb'[^"\\]*+(?:\\.[^"\\]*+)*+', re.DOTALL)
"""The inside of a string, up to its closing quote (or a window's end, or a backslash that
ends the window: its escaped character is in the next)."""
_SCALAR = re.compile(rb'[^,}\]\s]*')
_SPACE = re.compile(rb'[ \t\r\n]*')
_OPEN, _CLOSE = frozenset(b"{["), frozenset(b"}]")
_FIRST = frozenset(b'{["-0123456789tfn')
"""Bytes a JSON value can start with."""
_CLOSING = {0x7B: 0x7D, 0x5B: 0x5D, 0x22: 0x22}
"""The byte a value that starts with `{`, `[` or `"` ends with."""

BOM = b"\xef\xbb\xbf"


class NotStreamable(ValueError):
    """The document is not one clean JSON value: read it whole (with its tolerance)."""


class _Scan:
    """The document's bytes seen through a window that only moves forward.

    `data` holds bytes [base, base + len(data)) of the file; `slide(pos)` moves the window
    to start at `pos`, keeping what it already holds from there on. Every scan below can
    stop at the window's end and go on from where it stopped, so the window never holds
    more than `file_window.WINDOW_BYTES`, whatever the size of a value.
    """

    __slots__ = ("base", "data", "file", "window")

    def __init__(self, file: WindowFile) -> None:
        self.file = file
        self.window = max(2, file_window.WINDOW_BYTES)
        self.base = 0
        self.data = file.read(0, self.window)

    def slide(self, pos: int) -> bool:
        """Make the window start at `pos` and hold as much after it as a window does; False
        when `pos` is at the end of the file (or past it)."""
        size = self.file.size
        if pos >= size:
            return False
        base = self.base
        end = base + len(self.data)
        if base <= pos < end:
            kept = self.data[pos - base:]
            self.data = b""  # let the old window go before the new one is made
            self.data = kept + self.file.read(end, self.window - len(kept))
        else:
            self.data = b""
            self.data = self.file.read(pos, self.window)
        self.base = pos
        return True

    def byte(self, pos: int) -> int:
        """The byte at `pos`; -1 at the end of the file."""
        at = pos - self.base
        if 0 <= at < len(self.data):
            return self.data[at]
        if not self.slide(pos):
            return -1
        return self.data[0]

    def bytes_of(self, start: int, end: int) -> Any:
        """Bytes [start, end) of the file: a view of the window when it holds them, else
        read (a value larger than a window is read once, to be parsed)."""
        base = self.base
        if start >= base and end <= base + len(self.data):
            return memoryview(self.data)[start - base:end - base]
        return self.file.read(start, end - start)

    def space(self, pos: int) -> int:
        """Where the white space from `pos` ends."""
        while True:
            data, base = self.data, self.base
            at = pos - base
            if not 0 <= at < len(data):
                if not self.slide(pos):
                    return pos
                continue
            end = _SPACE.match(data, at).end()  # type: ignore[union-attr]
            if end < len(data):
                return base + end
            pos = base + end
            if not self.slide(pos):
                return pos


def _past_string(scan: _Scan, quote: int, pos: int | None = None) -> int:
    """Where the string whose opening quote is at `quote` ends (after its closing quote),
    read on from `pos` inside it (just after the quote by default)."""
    pos = quote + 1 if pos is None else pos
    while True:
        data, base = scan.data, scan.base
        at = pos - base
        if 0 <= at < len(data):
            end = _IN_STRING.match(data, at).end()  # type: ignore[union-attr]
            if end < len(data) and data[end] == 0x22:
                return base + end + 1
            pos = base + end  # the window's end, or a backslash at it
        reached = base + len(data)
        # Read on from there; a window that ends where this one did is the file's end.
        if not scan.slide(pos) or scan.base + len(scan.data) <= reached:
            raise NotStreamable(f"unterminated string at byte {quote}")


def _end_of_value(scan: _Scan, pos: int) -> int:
    """Where the JSON value starting at `pos` ends (exclusive). Brackets are counted, strings
    skipped; the value's bytes are checked by orjson when it is parsed."""
    data, base = scan.data, scan.base
    at = pos - base
    size = len(data)
    if not 0 <= at < size:
        if not scan.slide(pos):
            raise NotStreamable("the document ends where a value should be")
        data, base, at = scan.data, scan.base, 0
        size = len(data)
    first = data[at]
    if first == 0x22:  # '"'
        return _past_string(scan, pos)
    if first not in _OPEN:
        return _end_of_scalar(scan, pos)
    depth = 0
    match_run = _RUN.match
    while True:
        match = match_run(data, at)
        at = match.end()  # type: ignore[union-attr]
        if at >= size:
            inside = match.start("open")  # type: ignore[union-attr]
            if inside >= 0:
                # A string that runs past the window's end: read on to its closing quote.
                after = _past_string(scan, pos, base + inside)
                data, base = scan.data, scan.base
                at, size = after - base, len(data)
                continue
            if not scan.slide(base + at):
                raise NotStreamable("the document ends inside a value")
            data, base, at = scan.data, scan.base, 0
            size = len(data)
            continue
        char = data[at]
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth == 0:
                return base + at + 1
        else:  # pragma: no cover - a string either closes or runs to the window's end
            raise NotStreamable(f"unterminated string at byte {base + at}")
        at += 1


def _end_of_scalar(scan: _Scan, pos: int) -> int:
    """Where the number, `true`, `false` or `null` (or what stands for one) at `pos` ends."""
    at = pos
    while True:
        data, base = scan.data, scan.base
        end = _SCALAR.match(data, at - base).end()  # type: ignore[union-attr]
        at = base + end
        if end < len(data) or not scan.slide(at):
            break
    if at == pos:
        raise NotStreamable(f"no value at byte {pos}")
    return at


def _array_spans(scan: _Scan, pos: int) -> tuple[array[int], int]:
    """The (start, end) of each element of the array opening at `pos`, flat; and its end."""
    spans: array[int] = array("q")
    pos = scan.space(pos + 1)
    if scan.byte(pos) == 0x5D:  # ']'
        return spans, pos + 1
    loads, append, match_space = orjson.loads, spans.append, _SPACE.match
    while True:
        end = _end_of_value(scan, pos)
        data, base = scan.data, scan.base
        # Checked now, so a bad element makes the whole document unstreamable (it is then
        # read whole, and said to be invalid exactly as before); the value is let go.
        # (A huge element as its skeleton, its huge strings checked a piece at a time.)
        loads(memoryview(data)[pos - base:end - base] if pos >= base
              else _lifted(scan.file.path, pos, end) or scan.bytes_of(pos, end))
        append(pos)
        append(end)
        # White space, then ',' or ']': within the window but for the odd element.
        at = match_space(data, end - base).end()  # type: ignore[union-attr]
        if at < len(data):
            pos, char = base + at, data[at]
        else:
            pos = scan.space(base + at)
            char = scan.byte(pos)
            data, base = scan.data, scan.base
        if char == 0x2C:  # ','
            at = match_space(data, pos + 1 - base).end()  # type: ignore[union-attr]
            pos = base + at if at < len(data) else scan.space(base + at)
        elif char == 0x5D:  # ']'
            return spans, pos + 1
        elif char < 0:
            raise NotStreamable("the document ends inside an array")
        else:
            raise NotStreamable(f"expected ',' or ']' at byte {pos}")


class Elements(Sequence[Any]):
    """The elements of one array of a document, each read from the file and parsed when
    asked for (not kept). Reading raises `FileChanged` when the file no longer holds them."""

    def __init__(self, file: WindowFile, spans: array[int]) -> None:
        self._file = file
        self._spans = spans

    def __len__(self) -> int:
        return len(self._spans) // 2

    def span(self, index: int) -> tuple[int, int]:
        """(offset, length) of element `index` in the file."""
        start, end = self._spans[2 * index], self._spans[2 * index + 1]
        return start, end - start

    def records(self) -> Iterator[tuple[memoryview, int, int]]:
        """(bytes, offset, number) of each element, unparsed, numbered from 1: the records
        a builder is fed (`base.RecordFeed`). A view is valid until the next is taken (the
        elements are read a window at a time)."""
        return self._views(0, len(self))

    def _views(self, first: int, stop: int) -> Iterator[tuple[memoryview, int, int]]:
        """(bytes, offset, number) of elements [first, stop), read a window at a time: as
        many consecutive elements as fit in one (an element larger than a window alone)."""
        spans, read, window = self._spans, self._file.read, file_window.WINDOW_BYTES
        index = first
        while index < stop:
            start = spans[2 * index]
            # The elements that end within a window from here (spans is sorted, flat).
            fit = (bisect.bisect_right(spans, start + window, 2 * index, 2 * stop)
                   - 2 * index) // 2
            after = index + max(1, fit)
            if not fit and (lifted := _lifted(self._file.path, start, spans[2 * index + 1])):
                yield memoryview(lifted), start, index + 1  # its huge strings left in the file
                index = after
                continue
            view = memoryview(read(start, spans[2 * after - 1] - start))
            for number in range(index + 1, after + 1):
                begin = spans[2 * number - 2]
                record = view[begin - start:spans[2 * number - 1] - start]
                first = record[0]
                if first not in _FIRST or _CLOSING.get(first, record[-1]) != record[-1]:
                    # Not a value any more: rewritten in place since it was scanned.
                    raise FileChanged(f"the record at byte {begin:,} is no longer the one read")
                yield record, begin, number
            index = after

    def starts(self) -> array[int]:
        """Where each element starts, in order (a copy)."""
        return self._spans[0::2]

    def index_at(self, offset: int) -> int | None:
        """The index of the element starting at byte `offset`, None when none does."""
        spans = self._spans
        index = bisect.bisect_left(range(len(self)), offset, key=lambda i: spans[2 * i])
        return index if index < len(self) and spans[2 * index] == offset else None

    def _parse(self, index: int) -> Any:
        start, end = self._spans[2 * index], self._spans[2 * index + 1]
        lifted = _lifted(self._file.path, start, end)
        return _loads(lifted or self._file.read(start, end - start), start)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:
                return [_loads(view, offset) for view, offset, _ in self._views(start, stop)]
            return [self._parse(i) for i in range(start, stop, step)]
        count = len(self)
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError("element index out of range")
        return self._parse(index)

    def __iter__(self) -> Iterator[Any]:
        for view, offset, _ in self._views(0, len(self)):
            yield _loads(view, offset)


def _lifted(path: str, start: int, end: int) -> bytes | None:
    """The skeleton of a huge element (over `huge_strings.WHOLE_BYTES`) when the app leaves
    huge strings in their file (`huge_strings.lift_span`), else None."""
    if end - start <= huge_strings.WHOLE_BYTES or not huge_strings.enabled():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        return huge_strings.lift_span(fd, os.path.abspath(path), start, end - start)
    finally:
        os.close(fd)


def _loads(data: Any, offset: int) -> Any:
    """An element parsed; every element was valid JSON when the document was first read, so
    one that is not any more was changed in place under the reader (FileChanged)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        raise FileChanged(f"the record at byte {offset:,} is no longer the one read") from None


ARRAYS = (list, Elements)
"""What a reader accepts as a document's array: a parsed list or streamed elements."""


EVERY_ARRAY = frozenset({"*"})
"""`stream_document`'s `arrays` for "every top-level array"."""


def stream_document(path: Path, arrays: frozenset[str] = EVERY_ARRAY) -> tuple[Any, int, int]:
    """The document at `path` as a dict (or, for a top-level array, `Elements`) whose arrays
    named in `arrays` (every top-level array for `EVERY_ARRAY`) are `Elements`; the other values are
    parsed. Returns (value, start, end): where the document starts in the file (after a BOM
    and white space), and the file's size (when it was opened: what is read of it).

    Raises:
        NotStreamable: not one clean JSON object or array (read it whole instead).
        FileChanged: the file was cut shorter while it was read (an OSError).
        OSError: the file cannot be read.
    """
    file = WindowFile(path)
    try:
        if file.size == 0:
            raise NotStreamable("empty")
        scan = _Scan(file)
        base = len(BOM) if scan.data[:3] == BOM else 0
        start = scan.space(base)
        first = scan.byte(start)
        if first not in _OPEN:
            raise NotStreamable("not a JSON object or array")
        try:
            if first == 0x5B:
                spans, end = _array_spans(scan, start)
                value: Any = Elements(file, spans)
            else:
                value, end = _object(scan, start, arrays)
        except orjson.JSONDecodeError as error:
            raise NotStreamable(str(error)) from None
        if scan.space(end) != file.size:
            raise NotStreamable("more after the document")
    except BaseException:
        file.close()
        raise
    return value, start, file.size


def _object(scan: _Scan, pos: int, arrays: frozenset[str]) -> tuple[dict[str, Any], int]:
    """A top-level object: its chosen arrays streamed, every other value parsed."""
    found: dict[str, Any] = {}
    pos = scan.space(pos + 1)
    if scan.byte(pos) == 0x7D:  # '}'
        return found, pos + 1
    every = "*" in arrays
    while True:
        if scan.byte(pos) != 0x22:
            raise NotStreamable(f"expected a key at byte {pos}")
        key_end = _end_of_value(scan, pos)
        key = orjson.loads(scan.bytes_of(pos, key_end))
        pos = scan.space(key_end)
        if scan.byte(pos) != 0x3A:  # ':'
            raise NotStreamable(f"expected ':' at byte {pos}")
        pos = scan.space(pos + 1)
        first = scan.byte(pos)
        if first < 0:
            raise NotStreamable("the document ends after a key")
        if first == 0x5B and (every or key in arrays):
            spans, end = _array_spans(scan, pos)
            found[key] = Elements(scan.file, spans)
        else:
            end = _end_of_value(scan, pos)
            found[key] = orjson.loads(scan.bytes_of(pos, end))
        pos = scan.space(end)
        char = scan.byte(pos)
        if char == 0x2C:
            pos = scan.space(pos + 1)
        elif char == 0x7D:
            return found, pos + 1
        elif char < 0:
            raise NotStreamable("the document ends inside the object")
        else:
            raise NotStreamable(f"expected ',' or '}}' at byte {pos}")


def read_span(path: str | Path, offset: int, length: int) -> Any:
    """The JSON value at bytes [offset, offset + length) of a file.

    Raises:
        OSError: the file cannot be read (FileChanged: it is shorter than when it was read).
        ValueError: those bytes are no longer one JSON value (the file changed).
    """
    with WindowFile(path) as file:
        if file.size < offset + length:
            raise FileChanged(f"{offset + length:,} bytes expected, {file.size:,} found")
        data = _lifted(str(path), offset, offset + length) or file.read(offset, length)
    return orjson.loads(data)
