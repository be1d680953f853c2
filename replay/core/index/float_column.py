"""A column of floats that costs nothing while every value is NaN (`TurnIndex` times).

Many formats record no time at all (ShareGPT, most chat exports, trajectories): their
`time` and `completed` columns are all NaN, 16 bytes a turn of nothing (6.7 MB for a ShareGPT
file of 417,000 messages). `NanColumn` counts such values and becomes an `array("d")` at the
first real one.
"""

from __future__ import annotations

import math
from array import array


class NanColumn:
    """`array("d")`'s append, item get/set and length; no storage while all are NaN."""

    __slots__ = ("_count", "_values")

    def __init__(self) -> None:
        self._count = 0
        self._values: array[float] | None = None

    @property
    def itemsize(self) -> int:
        """Bytes held per value (0 while every value is NaN)."""
        return 0 if self._values is None else self._values.itemsize

    def __len__(self) -> int:
        return self._count if self._values is None else len(self._values)

    def _array(self) -> array[float]:
        if self._values is None:
            self._values = array("d", [math.nan]) * self._count
        return self._values

    def append(self, value: float) -> None:
        """Add a value at the end."""
        if self._values is None and math.isnan(value):
            self._count += 1
        else:
            self._array().append(value)

    def __getitem__(self, index: int) -> float:
        if self._values is not None:
            return self._values[index]
        if not -self._count <= index < self._count:
            raise IndexError("column index out of range")
        return math.nan

    def __setitem__(self, index: int, value: float) -> None:
        if self._values is None and math.isnan(value):
            if not -self._count <= index < self._count:
                raise IndexError("column index out of range")
            return
        self._array()[index] = value
