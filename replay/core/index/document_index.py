"""A `TurnIndex` over a file whose records are not lines: the elements of a JSON document's
array (pretty-printed over many lines, or all on one), or the blocks of a markdown history.

What differs from a JSON-lines file is only the search: a record there starts a line; here
a record starts anywhere in a line and may run over many, so a turn may hold the needle
when a line holding it overlaps one of its records' spans (`TurnIndex.lines_with` asks
that of every record). That is still every turn that can match (a needle piece has no line
end, so an occurrence lies within one line and within one record), and the navigator reads
each candidate back to check it. Words a reader makes up rather than takes from the records
(a tool name it gives a fenced command) are named by the reader (`made_up`); no harness
command is looked for.
"""

from __future__ import annotations

from replay.core.index.turn_index import KIND_BITS, Rebuild, TurnIndex
from replay.core.index.turn_marks import mark


class DocumentTurnIndex(TurnIndex):
    """A `TurnIndex` whose records may start mid-line (see the module's docstring)."""

    SHOWS_HARNESS = False  # no harness commands in these formats

    def __init__(self, path: str, rebuild: Rebuild, *, made_up: dict[str, str] | None = None,
                 named: bool = False, **sizes: int) -> None:
        super().__init__(path, rebuild, named=named, **sizes)
        self._made_up = dict(made_up or {})
        """Words the reader writes into turns of a part kind (kind -> word): a needle piece
        inside one makes every turn with such a part a candidate."""

    def _mark_made_up(self, found: bytearray, piece: str) -> None:
        """Mark the turns with a part of a kind whose made-up word holds `piece`."""
        for kind, word in self._made_up.items():
            if piece in word:
                bit = KIND_BITS[kind]
                kinds = self._kinds
                mark(found, (index for index in range(min(self._base, len(found)))
                             if kinds[index] & bit))
