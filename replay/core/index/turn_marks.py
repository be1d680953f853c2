"""Sets of turns as one byte a turn: what a search over a million turns collects its
candidates in (a set or a list of a million ints is 30-60 MB; a byte a turn is 1 MB), and
the sorted array of indices it hands on (four bytes a turn)."""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterable

_ONES = b"\x01" * 4096


def mark(found: bytearray, indices: Iterable[int]) -> None:
    """Mark the turns at `indices` (each below `len(found)`)."""
    for index in indices:
        found[index] = 1


def mark_range(found: bytearray, first: int, after: int) -> None:
    """Mark the turns [first, after)."""
    if after > first:
        found[first:after] = _ONES[:after - first] if after - first <= len(_ONES) \
            else b"\x01" * (after - first)


def mark_where(found: bytearray, column: bytes, value: int) -> None:
    """Mark every turn whose byte in `column` (one byte a turn, from the first) is `value`."""
    wanted = bytes([value])
    at = column.find(wanted)
    while at >= 0:
        found[at] = 1
        at = column.find(wanted, at + 1)


def marked(found: bytearray) -> Indices:
    """The indices of the marked turns, in order, four bytes each."""
    return Indices(itertools.compress(range(len(found)), found))


class Indices(array):  # type: ignore[type-arg]
    """Turn indices four bytes each (a list of ints costs 36: the 164,000 stops of a long
    Aider chat were 6 MB), equal to a list of the same ints, as the list it stands for."""

    def __new__(cls, values: Iterable[int] = ()) -> Indices:
        return super().__new__(cls, "i", values)  # type: ignore[call-arg]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list):
            return len(self) == len(other) and all(
                mine == theirs for mine, theirs in zip(self, other, strict=True))
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]
