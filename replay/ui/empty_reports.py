"""The reports of a session's empty turns (evidence and suggestion), worked out once each."""

from __future__ import annotations

from replay.core.detection.empty import DetectionRules, EmptyTurn, Suggester, describe_empty
from replay.core.index.navigation import Navigator
from replay.core.session.model import Session


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
        self._cache: dict[int, EmptyTurn] = {}

    def renew(self, session: Session, navigator: Navigator) -> None:
        """Start over for a session read anew (or new rules)."""
        self.session, self.navigator = session, navigator
        self._cache.clear()

    def forget_from(self, index: int) -> None:
        """Forget the reports of turns from `index` on (they changed)."""
        for known in [i for i in self._cache if i >= index]:
            del self._cache[known]

    def report(self, index: int) -> EmptyTurn | None:
        """The report of the empty turn at `index` (worked out now if need be), or None if
        it is not empty."""
        if not self.navigator.is_empty_at(index):
            return None
        found = self._cache.get(index)
        if found is None:
            found = describe_empty(self.session, self.session.turns[index], self.rules,
                                   self.suggester)
            self._cache[index] = found
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

    def keep(self, described: dict[int, EmptyTurn]) -> None:
        """Keep reports worked out elsewhere (a thread), without replacing newer ones."""
        for index, empty in described.items():
            self._cache.setdefault(index, empty)
