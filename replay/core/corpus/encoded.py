"""A JSON array held as its elements' encoded bytes, compressed a batch at a time, and the
`scan --json` line of a report written in pieces around it.

A session of 166,000 empty turns (a ShareGPT data set of blank replies) has a report of as
many `empty_turns` objects: as dicts they took 1.5 times the file, and the one JSON line
holding them all 26 MB more, again in the scan cache. An `EncodedList` keeps each element as
the JSON orjson writes for it, a batch of about `BATCH_BYTES` compressed together (reports
of neighbouring turns are much alike: a few dozen bytes each); the line is written a batch
at a time (`write_json_line`), the cache stores and gives back the batches as they are
(`corpus.cache`), and a worker sends them to the parent as they are (pickle).

Read as a sequence, each element is decoded anew: a fresh dict, never the one appended.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

import orjson

from replay.core.safe import json_bytes, json_escaped, json_line

BATCH_BYTES = 64 << 10
"""Encoded bytes of elements compressed together."""

LEVEL = 1
"""zlib's fastest level: a batch of near-identical reports shrinks tenfold at it already."""

RAW_PICKLE_BYTES = 4 << 10
"""An open batch smaller than this is pickled as it is, not compressed (a report per chat
of a history of many short chats: spilled, then written, it was compressed and
decompressed each time for a few hundred bytes)."""


class EncodedList(Sequence[Any]):
    """A list of JSON values (dicts, lists, scalars) held encoded and compressed; appended one
    at a time, read back in order as new objects."""

    __slots__ = ("_batches", "_count", "_open", "_open_bytes")

    def __init__(self, values: Iterable[Any] = ()) -> None:
        self._batches: list[bytes] = []
        """Closed batches: the elements' JSON joined by commas, compressed."""
        self._count = 0
        self._open: list[bytes] = []
        """The encoded elements of the batch being filled."""
        self._open_bytes = 0
        for value in values:
            self.append(value)

    @classmethod
    def from_batches(cls, batches: list[bytes], count: int) -> EncodedList:
        """The list whose `batches()` these are, holding `count` elements."""
        made = cls()
        made._batches = batches
        made._count = count
        return made

    def append(self, value: Any) -> None:
        """Add one element (anything `json_line` writes)."""
        self.append_encoded(json_bytes(value))

    def append_encoded(self, data: bytes) -> None:
        """Add one element given as its JSON (`safe.json_bytes`)."""
        if len(data) < BATCH_BYTES:
            # Held until the batch closes: copied to a bytes of its own size. orjson's
            # output keeps the buffer it was written into (4-7 KiB more, which
            # `sys.getsizeof` does not show), so a 30-byte element held as given cost 4 KiB,
            # and the reports of an Aider history of many chats (an open batch each, held
            # until spilled) 40 MB more than their JSON. (A longer one is compressed now.)
            data = memoryview(data).tobytes()
        self._open.append(data)
        self._open_bytes += len(data) + 1
        self._count += 1
        if self._open_bytes >= BATCH_BYTES:
            self._close()

    def _close(self) -> None:
        if self._open:
            self._batches.append(zlib.compress(b",".join(self._open), LEVEL))
            self._open = []
            self._open_bytes = 0

    def batches(self) -> list[bytes]:
        """The compressed batches (`from_batches` takes them back); the list's own, not a
        copy: do not change it."""
        self._close()
        return self._batches

    def encoded_size(self) -> int:
        """Bytes held, compressed."""
        return sum(map(len, self.batches()))

    def _texts(self) -> Iterator[bytes]:
        """Each batch's elements as JSON joined by commas, in order: the closed batches
        decompressed, the open one as it is (not compressed to be decompressed at once: a
        history of many short chats writes a report per chat, each fewer elements than a
        batch holds). What the list holds when it is called is what it gives."""
        closed, opened = list(self._batches), list(self._open)
        for batch in closed:
            yield zlib.decompress(batch)
        if opened:
            yield b",".join(opened)

    def pieces(self) -> Iterator[bytes]:
        """The array's JSON text in pieces (`[`, each batch's elements, `]`), unescaped, as
        `safe.json_bytes` writes the whole list."""
        yield b"["
        for number, text in enumerate(self._texts()):
            yield (b"," if number else b"") + text
        yield b"]"

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        for text in self._texts():
            yield from orjson.loads(b"[" + text + b"]")

    @overload
    def __getitem__(self, key: int) -> Any: ...

    @overload
    def __getitem__(self, key: slice) -> list[Any]: ...

    def __getitem__(self, key: int | slice) -> Any:
        # Rare (callers iterate): elements decoded in order until the wanted ones.
        if isinstance(key, slice):
            wanted = range(*key.indices(self._count))
            if not wanted:
                return []
            chosen = set(wanted)
            found = {number: value for number, value in enumerate(self)
                     if number in chosen}
            return [found[number] for number in wanted]
        position = key + self._count if key < 0 else key
        if not 0 <= position < self._count:
            raise IndexError(f"element {key} of {self._count}")
        for number, value in enumerate(self):
            if number == position:
                return value
        raise IndexError(f"element {key} of {self._count}")  # (never: the count is kept)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, EncodedList)):
            return len(self) == len(other) and all(
                mine == theirs for mine, theirs in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EncodedList({self._count} elements, {self.encoded_size():,} bytes)"

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (a worker's result for the parent, a spilled report) as the compressed
        # batches, a small open batch as its elements.
        if self._open_bytes >= RAW_PICKLE_BYTES:
            self._close()
        return (_unpickled, (list(self._batches), self._count, list(self._open)))


def _unpickled(batches: list[bytes], count: int, opened: list[bytes]) -> EncodedList:
    made = EncodedList.from_batches(batches, count)
    made._open = opened
    made._open_bytes = sum(len(data) + 1 for data in opened)
    return made


def json_line_pieces(value: Any) -> Iterator[bytes]:
    """`safe.json_line(value)` in pieces: an `EncodedList` among the values of a dict (a
    report's `empty_turns`) is written a batch at a time, never joined into one line. The
    pieces joined are exactly `json_line(value)`."""
    if not (isinstance(value, Mapping) and all(isinstance(key, str) for key in value)
            and any(isinstance(item, EncodedList) for item in value.values())):
        yield json_line(value)
        return
    yield b"{"
    for number, (key, item) in enumerate(value.items()):
        head = (b"," if number else b"") + json_bytes(key) + b":"
        if isinstance(item, EncodedList):
            yield json_escaped(head)
            for piece in item.pieces():
                yield json_escaped(piece)
        else:
            yield json_escaped(head + json_bytes(item))
    yield b"}\n"


def write_json_line(value: Any, write: Callable[[bytes], Any]) -> None:
    """Write `json_line(value)` through `write`, piece by piece (`json_line_pieces`)."""
    for piece in json_line_pieces(value):
        write(piece)


def encoded_list(values: Sequence[Any]) -> EncodedList:
    """`values` as an `EncodedList` (itself when it is one)."""
    return values if isinstance(values, EncodedList) else EncodedList(values)
