"""A task's `scan --json` objects kept on disk past a size: a file of many sessions (an Aider
history of thousands of chats) gives reports about as big as the file, and held as Python
dicts they cost four times that."""

from __future__ import annotations

import struct
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any, overload

MEMORY_BYTES = 4 << 20
"""Reports kept in memory up to about this size (pickled); past it they go to a temporary
file."""

_LENGTH = struct.Struct("<Q")


class SpilledReports(Sequence[dict[str, Any]]):
    """Reports pickled one after another into a temporary file (deleted when let go), each
    read back as a fresh dict when iterated. Pickled itself (to travel from a worker), it is
    a plain list."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle
        self._count = 0

    def add(self, data: bytes) -> None:
        """Keep one more report, given pickled."""
        self._handle.write(_LENGTH.pack(len(data)))
        self._handle.write(data)
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        import pickle

        handle = self._handle
        handle.flush()
        with open(handle.fileno(), "rb", closefd=False) as reading:
            reading.seek(0)
            for _ in range(self._count):
                (length,) = _LENGTH.unpack(reading.read(_LENGTH.size))
                yield pickle.loads(reading.read(length))

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        # Rare (callers iterate): every report read back, the wanted ones kept.
        return list(self)[index]

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))

    def close(self) -> None:
        """Delete the file now (else when let go)."""
        self._handle.close()


def spill(reports: Iterable[dict[str, Any]]) -> list[dict[str, Any]] | SpilledReports:
    """The reports in the order given: a list while they are small, else kept on disk
    (`SpilledReports`). Each report is taken as soon as it is made, so past the size only
    the one being written is whole in memory."""
    import pickle  # here, not at import: a scan of one session never spills

    kept: list[dict[str, Any]] = []
    size = 0
    spilled: SpilledReports | None = None
    for report in reports:
        data = pickle.dumps(report, protocol=pickle.HIGHEST_PROTOCOL)
        if spilled is not None:
            spilled.add(data)
            continue
        kept.append(report)
        size += len(data)
        if size > MEMORY_BYTES:
            spilled = SpilledReports(tempfile.TemporaryFile(prefix="replay-reports-"))
            for earlier in kept:
                spilled.add(pickle.dumps(earlier, protocol=pickle.HIGHEST_PROTOCOL))
            kept = []
    return spilled if spilled is not None else kept
