"""The source record(s) behind a turn, read back from disk exactly as the tool wrote them."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from bisect import bisect_right
from pathlib import Path
from typing import Any

import orjson

from replay.core.readers.base import parse_document, read_spans
from replay.core.session import lifted
from replay.core.session.model import Source, Turn

RAW_LIMIT = 200_000
"""Characters of raw record returned at most."""

_INDEX = re.compile(r"^(\w+)\[(\d+)\]$")


def _pretty(value: Any) -> str:
    """The value indented. orjson writes at most 255 levels (a record may hold up to 1,024,
    as orjson reads them): deeper, the standard library's encoder, indented then on one
    line; deeper than it goes, a line saying so (never a traceback in the raw view)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # orjson.JSONEncodeError: nested too deeply to write
        pass
    for indent in (2, None):
        try:
            return json.dumps(value, indent=indent, ensure_ascii=False, default=str)
        except (RecursionError, ValueError, TypeError):
            continue
    return "(this record is nested too deeply to show indented)"


def _pointer_parts(record: str) -> list[str] | None:
    """`/messages/3` or `messages[3]` as path steps; None for other locators."""
    match = _INDEX.match(record)
    if match:
        return [match.group(1), match.group(2)]
    if record.startswith("/"):
        return [step.replace("~1", "/").replace("~0", "~") for step in record[1:].split("/")]
    return None


def _resolve(document: Any, steps: list[str]) -> Any:
    value = document
    for step in steps:
        if isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        elif isinstance(value, dict) and step in value:
            value = value[step]
        else:
            raise KeyError(step)
    return value


def _from_spans(source: Source, steps: list[str] | None) -> list[str]:
    pieces = []
    for record in read_spans(source.path, source.spans):
        try:
            value = orjson.loads(record)
        except orjson.JSONDecodeError:
            pieces.append(record.decode("utf-8", "replace"))
            continue
        if steps is not None:
            try:
                value = _resolve(value, steps)
            except KeyError:
                pass
        pieces.append(_pretty(value))
    return pieces


def _from_document(source: Source, steps: list[str]) -> list[str]:
    document = parse_document(Path(source.path).read_bytes()).value
    return [_pretty(_resolve(document, steps))]


def _from_database(source: Source, message_id: str) -> list[str]:
    uri = f"file:{Path(source.path).resolve()}?mode=ro"
    with sqlite3.connect(uri, uri=True, timeout=1.0) as connection:
        rows = connection.execute("SELECT data FROM message WHERE id = ?", (message_id,))
        pieces = [_pretty(orjson.loads(data)) for (data,) in rows]
        parts = connection.execute(
            "SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (message_id,))
        pieces.extend(f"part {part_id}\n{_pretty(orjson.loads(data))}" for part_id, data in parts)
    return pieces


def _from_storage(source: Source, message_file: Path) -> list[str]:
    pieces = [_pretty(orjson.loads(message_file.read_bytes()))]
    storage = message_file.parent.parent.parent
    part_dir = storage / "part" / message_file.stem
    if part_dir.is_dir():
        for part_file in sorted(part_dir.glob("*.json")):
            pieces.append(f"{part_file.name}\n{_pretty(orjson.loads(part_file.read_bytes()))}")
    return pieces


def raw_record_text(turn: Turn) -> str:
    """The turn's source record(s), pretty-printed JSON where they are JSON, with a heading.

    Never raises for a missing or changed file: it says what went wrong instead.
    """
    source = turn.source
    if source is None:
        return "(the reader kept no source for this turn)"
    heading = source.path
    if source.line is not None:
        heading += f", line {source.line}"
    if source.record:
        heading += f", {source.record}"
    record = source.record or ""
    steps = _pointer_parts(record)
    try:
        if source.spans:
            pieces = _from_spans(source, steps)
        elif record.startswith("message:"):
            pieces = _from_database(source, record.removeprefix("message:"))
        elif record.startswith("message/"):
            pieces = _from_storage(source, Path(source.path))
        elif steps is not None:
            pieces = _from_document(source, steps)
        else:
            pieces = ["(this source has no addressable record)"]
    except (OSError, ValueError, KeyError, sqlite3.Error) as error:
        pieces = [f"(could not read the record again: {error})"]
    text = "\n\n".join([heading, *pieces])
    return text if len(text) <= RAW_LIMIT else text[:RAW_LIMIT] + "\n… cut"


PAGE_BYTES = 64 * 1024
"""Bytes of a big record shown at a time (a page of the paged raw view)."""
EDGE_BYTES = 256
"""How far past a page's nominal edge a break (space, newline, comma) is looked for."""


def is_big(turn: Turn) -> bool:
    """True when the turn's records are too big to pretty-print whole (`raw_record_text`
    would cut them): the raw view then pages through their bytes as written."""
    source = turn.source
    return source is not None and bool(source.spans) and \
        sum(length for _, length in lifted.file_spans(source.path, source.spans)) \
        > RAW_LIMIT // 2


class RecordBytes:
    """A turn's records as one text (one record a line, as in a JSON-lines file), read
    from the file a page at a time: the paged raw view of a record of megabytes."""

    def __init__(self, path: str, spans: tuple[tuple[int, int], ...], line: int | None) -> None:
        self.path = path
        self.spans = lifted.file_spans(path, spans)  # (a huge record's own length)
        spans = self.spans
        self.line = line
        """The file's line number of the first record, when the reader kept it."""
        self._starts: list[int] = []
        position = 0
        for _, length in spans:
            self._starts.append(position)
            position += length + 1
        self.size = max(position - 1, 0)
        """Bytes of the records, with a newline between two."""

    def pages(self, page: int = PAGE_BYTES) -> int:
        """How many pages of `page` bytes the records fill."""
        return max(1, -(-self.size // page))

    def where(self, position: int) -> tuple[int, int]:
        """(record number from 1, byte offset in the file) of a position in the records."""
        number = max(bisect_right(self._starts, position) - 1, 0)
        offset, length = self.spans[number]
        return number + 1, offset + min(max(position - self._starts[number], 0), length)

    def read(self, start: int, size: int) -> bytes:
        """The bytes [start, start + size) of the records (newlines between records).

        Raises:
            OSError: the file cannot be read.
            ValueError: the file is shorter than the records (it changed).
        """
        end = min(start + size, self.size)
        pieces = []
        fd = os.open(self.path, os.O_RDONLY)
        try:
            number = max(bisect_right(self._starts, start) - 1, 0)
            while number < len(self.spans) and self._starts[number] < end:
                offset, length = self.spans[number]
                first = self._starts[number]
                lo, hi = max(start - first, 0), min(end - first, length)
                if lo < hi:
                    data = os.pread(fd, hi - lo, offset + lo)
                    if len(data) != hi - lo:
                        raise ValueError("the file is shorter than when it was read")
                    pieces.append(data)
                newline = first + length  # the newline after this record, if one follows
                if newline < self.size and start <= newline < end:
                    pieces.append(b"\n")
                number += 1
        finally:
            os.close(fd)
        return b"".join(pieces)

    def page(self, number: int, page: int = PAGE_BYTES) -> tuple[str, int, int]:
        """(text, first byte, end byte) of page `number` (from 0): the bytes decoded as
        UTF-8. A page ends after a space, newline or comma near its edge when there is one
        (a word is not cut in two), else at the edge, a character cut by it left whole to
        the page it starts in."""
        number = min(max(number, 0), self.pages(page) - 1)
        start, end = self._edge(number, page), self._edge(number + 1, page)
        # Three bytes more: the last character may run past the edge.
        data = self.read(start, end - start + 3)
        skip = 0
        while start and skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:
            skip += 1  # continuation bytes of the previous page's last character
        text = _utf8_prefix(data[skip:], end - start - skip)
        return text, start, end

    def _edge(self, number: int, page: int) -> int:
        """Where page `number` starts: just after the first break at or after its nominal
        start, looked for in the next EDGE_BYTES (the nominal start when none)."""
        nominal = number * page
        if number <= 0 or nominal >= self.size:
            return min(max(nominal, 0), self.size)
        ahead = self.read(nominal, EDGE_BYTES)
        found = [at for at in (ahead.find(b" "), ahead.find(b"\n"), ahead.find(b","))
                 if at >= 0]
        return min(nominal + min(found) + 1, self.size) if found else nominal


def _utf8_prefix(data: bytes, size: int) -> str:
    """The first `size` bytes decoded, extended to the end of a character cut at `size`."""
    cut = min(size, len(data))
    while cut < len(data) and cut < size + 3 and data[cut] & 0xC0 == 0x80:
        cut += 1
    return data[:cut].decode("utf-8", "replace")
