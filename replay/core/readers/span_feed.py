"""Records fed to a builder by byte span, and turns read back from those spans.

A windowed scan (`corpus.scan.scan_records`) and the app's `TurnIndex` need a builder that
appends turns from records it is fed one at a time, each with its byte offset: the lines of
a JSON-lines file, or the elements of a JSON document's array, found by
`json_stream.stream_document` without holding the document. This module holds what such
readers share: the document streamed (or None when it cannot be), its array's records as a
`RecordFeed`, and the `Rebuild` a `TurnIndex` calls to make a turn again from its records.
Any format whose turns are made from records of one array (or of lines) can use it.
"""

from __future__ import annotations

import bisect
import os
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.core.readers.base import LineBuilder, RecordFeed, UnreadablePath
from replay.core.readers.json_stream import Elements, NotStreamable, stream_document
from replay.core.session.model import Turn

if TYPE_CHECKING:
    from replay.core.index.turn_index import Rebuild


def streamed(path: Path) -> Any | None:
    """The document at `path` with its top-level arrays streamed (`json_stream.Elements`),
    or None when it is not one clean JSON value (empty, cut off, text around it: the
    format's whole read says what it is). Raises UnreadablePath."""
    try:
        value, _start, _end = stream_document(path)
    except NotStreamable:
        return None
    except OSError as error:
        raise UnreadablePath.of(path, error) from None
    return value


def element_feed(path: Path, builder: LineBuilder, elements: Elements) -> RecordFeed:
    """The elements of a streamed array as records for `builder` (numbered from 1); a file
    cut shorter while they are read is an UnreadablePath naming it."""
    return RecordFeed(builder, _said(path, elements.records()), os.path.getsize(path))


def _said(path: Path, records: Iterator[tuple[memoryview, int, int]],
          ) -> Iterator[tuple[memoryview, int, int]]:
    try:
        yield from records
    except OSError as error:  # `FileChanged`, or the disk failing under the read
        raise UnreadablePath.of(path, error) from None


class ElementNumbers:
    """For `read_back`: the number (from 1) of the element starting at an offset. While the
    records are fed it asks the `Elements`; `compact` (once they are all fed) keeps only their
    starts, 8 bytes an element instead of the 16 of the (start, end) pairs."""

    __slots__ = ("_elements", "_starts")

    def __init__(self, elements: Elements) -> None:
        self._elements: Elements | None = elements
        self._starts: array[int] | None = None

    def compact(self) -> None:
        """Let go of the elements, keeping their starts."""
        if self._elements is not None:
            self._starts = self._elements.starts()
            self._elements = None

    def __call__(self, offset: int, _line: int | None) -> int:
        if self._elements is not None:
            index = self._elements.index_at(offset)
        else:
            assert self._starts is not None
            at = bisect.bisect_left(self._starts, offset)
            index = at if at < len(self._starts) and self._starts[at] == offset else None
        if index is None:
            raise ValueError(f"no record starts at byte {offset} any more")
        return index + 1


def element_number(elements: Elements) -> ElementNumbers:
    """For `read_back`: the number (from 1) of the element starting at an offset."""
    return ElementNumbers(elements)


def line_number(offset: int, line: int | None) -> int:
    """For `read_back` on JSON lines: the line number the turn's first record had."""
    return line or 0


def read_back(make: Callable[[str], LineBuilder],
              number: Callable[[int, int | None], int]) -> Rebuild:
    """A `TurnIndex` rebuild: a fresh builder from `make(path)` is fed the turn's records
    (each numbered by `number(offset, first line)`), and the turn they make (the first of
    that role) is the turn, with the id it had.

    The builder must make a turn from its own records alone; one that cannot tells the
    index to keep it whole (`TurnIndex.keep`).
    """
    def rebuild(path: str, spans: tuple[tuple[int, int], ...], records: list[bytes],
                line: int | None, turn_id: str, role: str) -> Turn:
        builder = make(path)
        for (offset, _length), data in zip(spans, records, strict=True):
            builder.feed(data, offset, number(offset, line))
        builder.finish()
        for turn in builder.session.turns:
            if turn.role == role:
                turn.id = turn_id
                return turn
        raise ValueError(f"{path}: turn {turn_id} is no longer at its recorded place")
    return rebuild
