"""The reports of a session's empty turns (evidence and suggestion), worked out once each."""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Iterable

from replay.core.detection.empty import DetectionRules, EmptyTurn, Suggester, describe_empty
from replay.core.index.navigation import Navigator
from replay.core.session.model import Session

ALL_AT_ONCE = 1_000
"""Up to this many empty turns, every report is worked out ahead as soon as the session is
read (the palette then shows every suggestion). Past it, only those near the reviewer: a
session of 100,000 empty turns would keep a thread busy for minutes (reading turns back
from a big file's index, holding the interpreter while the reviewer steps) and hold a
report per empty turn."""
AHEAD = 16
"""In a session with more empty turns: reports worked out ahead, from the reviewer's
position on (and `BEHIND` before it)."""
BEHIND = 4
REACH = 64
"""How far ahead a report reads: a changed turn can change the reports of the empty turns
up to this many before it (the suggester looks `signals.WINDOW` turns ahead, 40)."""
KEPT = 4_096
"""Reports kept at most (the least recently used go first; they are worked out again,
the same, when asked for)."""


class EmptyReports:
    """Caches `describe_empty` per turn index; forgets the turns that change."""

    def __init__(self, session: Session, navigator: Navigator, rules: DetectionRules,
                 suggester: Suggester | None) -> None:
        self.session = session
        """The session described."""
        self.navigator = navigator
        """Which turns are empty."""
        self.rules = rules
        """What counts as empty."""
        self.suggester = suggester
        """Suggests labels (reads many turns around each: the slow part of a report)."""
        self._cache: OrderedDict[int, EmptyTurn] = OrderedDict()
        self._asked: set[int] = set()
        """Turns handed to a thread (`ahead`) whose reports have not come back yet."""

    def renew(self, session: Session, navigator: Navigator) -> None:
        """Start over for a session read anew (or new rules)."""
        self.session, self.navigator = session, navigator
        self._cache.clear()
        self._asked.clear()

    def forget_from(self, index: int) -> None:
        """Forget the reports of turns from `index` on (they changed), and of those before
        it whose report read it (`REACH`: the next user message, a reaction, a repeat)."""
        index = max(0, index - REACH)
        for known in [i for i in self._cache if i >= index]:
            del self._cache[known]
        self._asked = {i for i in self._asked if i < index}

    def _put(self, index: int, empty: EmptyTurn) -> None:
        self._cache[index] = empty
        if len(self._cache) > KEPT:
            self._cache.popitem(last=False)

    def report(self, index: int) -> EmptyTurn | None:
        """The report of the empty turn at `index` (worked out now if need be), or None if
        it is not empty."""
        if not self.navigator.is_empty_at(index):
            return None
        found = self._cache.get(index)
        if found is None:
            found = describe_empty(self.session, self.session.turns[index], self.rules,
                                   self.suggester)
            self._put(index, found)
        else:
            self._cache.move_to_end(index)
        return found

    def known(self, index: int) -> EmptyTurn | None:
        """The report of the empty turn at `index` when it is worked out already."""
        return self._cache.get(index)

    def quick(self, index: int) -> EmptyTurn | None:
        """The cached report, else one made now without the suggester: for lists of every
        empty turn, where waiting for each suggestion would take seconds."""
        found = self._cache.get(index)
        if found is not None or not self.navigator.is_empty_at(index):
            return found
        return describe_empty(self.session, self.session.turns[index], self.rules)

    def missing(self) -> list[int]:
        """The empty turns with no report yet."""
        return [i for i in self.navigator.empty_indices if i not in self._cache]

    def ahead(self, index: int) -> list[int]:
        """The empty turns to work out in a thread now, seen from `index`: every one not
        known yet in a session of at most `ALL_AT_ONCE`; else those near `index` (`BEHIND`
        before it, `AHEAD` from it on), once one of the nearer half is missing (so a step
        does not start a thread for one more report). None already handed out; marks them
        handed out."""
        empties = self.navigator.empty_indices
        cache, asked = self._cache, self._asked

        def unknown(found: Iterable[int]) -> list[int]:
            return [i for i in found if i not in cache and i not in asked]

        if len(empties) <= ALL_AT_ONCE:
            wanted = unknown(empties)
        else:
            at = bisect.bisect_left(empties, index)
            start = max(0, at - BEHIND)
            wanted = unknown(empties[start:at + AHEAD]) \
                if unknown(empties[start:at + AHEAD // 2]) else []
        asked.update(wanted)
        return wanted

    def keep(self, described: dict[int, EmptyTurn], asked: Iterable[int] = ()) -> None:
        """Keep reports worked out elsewhere (a thread), without replacing newer ones;
        `asked` are the turns that thread was given (done or not)."""
        self._asked.difference_update(asked)
        self._asked.difference_update(described)
        for index, empty in described.items():
            if index not in self._cache:
                self._put(index, empty)
