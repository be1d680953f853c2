"""A `TurnIndex` over a file whose records are not lines: the elements of a JSON document's
array (pretty-printed over many lines, or all on one), or the blocks of a markdown history.

What differs from a JSON-lines file is only the search: a record there starts a line, so
the lines holding a needle name their turns by offset; here a record starts anywhere in a
line and may run over many, so a turn may hold the needle when a line holding it overlaps
one of its records' spans. That is still every turn that can match (a needle piece has no
line end, so an occurrence lies within one line and within one record), and the navigator
reads each candidate back to check it. Words a reader makes up rather than takes from the
records (a tool name it gives a fenced command) are named by the reader (`made_up`).
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Sequence

from replay.core.index.needle_bytes import line_end, lines_holding, search_start
from replay.core.index.turn_index import KIND_BITS, ROLES, Rebuild, TurnIndex


class DocumentTurnIndex(TurnIndex):
    """A `TurnIndex` whose records may start mid-line (see the module's docstring)."""

    def __init__(self, path: str, rebuild: Rebuild, *, made_up: dict[str, str] | None = None,
                 named: bool = False, **sizes: int) -> None:
        super().__init__(path, rebuild, named=named, **sizes)
        self._made_up = dict(made_up or {})
        """Words the reader writes into turns of a part kind (kind -> word): a needle piece
        inside one makes every turn with such a part a candidate."""

    def lines_with(self, needle: str) -> Sequence[int] | None:
        """Indices of the turns that may hold `needle` (see `TurnIndex.lines_with`)."""
        start = search_start(self.path, needle, self._found, len(self))
        if start is None:
            return None
        if start.kept is not None:
            return start.kept
        piece = start.piece
        try:
            starts = lines_holding(self.path, piece)  # sorted
            found_turns = self._overlapping(starts) if starts else []
        except (OSError, ValueError):
            return None
        found_turns.extend((*self._kept, *self._tail))  # whole already
        found_turns.extend(self._ids_holding(piece))
        for code, role in enumerate(ROLES):
            if piece in role:
                found_turns.extend(index for index in range(self._base)
                                   if self._role[index] == code)
        for kind, word in self._made_up.items():
            if piece in word:
                bit = KIND_BITS[kind]
                found_turns.extend(index for index in range(self._base)
                                   if self._kinds[index] & bit)
        result = sorted(set(found_turns))
        self._found = (start.key, result)
        return result

    def _overlapping(self, starts: Sequence[int]) -> list[int]:
        """The columned turns one of whose spans a line starting at one of `starts` (sorted)
        overlaps."""
        found: list[int] = []
        # Where a holding line ends is read when asked, once each: the file is not mapped
        # (its pages would count in the app's memory for the whole search).
        ends: dict[int, int] = {}
        fd = os.open(self.path, os.O_RDONLY)
        try:
            for index in range(self._base):
                if index in self._kept:
                    continue
                for offset, length in self.spans_at(index):
                    last = bisect.bisect_right(starts, offset + length - 1) - 1
                    if last < 0:
                        continue
                    start = starts[last]
                    if start < offset:
                        end = ends.get(last)
                        if end is None:
                            end = ends[last] = line_end(fd, start)
                    # A holding line starts inside the span, or runs into it.
                    if start >= offset or end >= offset:
                        found.append(index)
                        break
        finally:
            os.close(fd)
        return found
