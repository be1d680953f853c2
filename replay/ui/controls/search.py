"""Search: the query, the turns that match it, the reviewer's place among them.

A small session is searched at once. A big one (over `QUICK_TURNS` turns, or turns held in
a compact index past `QUICK_INDEXED`: each candidate is read back from the file; or a file
over `QUICK_BYTES`) is
counted in a thread worker that a newer query cancels, and `n` finds the next match on
its own (reading on from the reviewer's place, stopping at the first), never waiting for
the count: the header shows `match k / n` once the count is in.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Iterator, Sequence

from textual import work
from textual.binding import Binding
from textual.message import Message
from textual.worker import get_current_worker

from replay.core.index.navigation import Navigator, turn_holds
from replay.core.session.model import TurnColumns
from replay.ui.controls.routing import Concern
from replay.ui.render import clean

QUICK_TURNS = 5_000
"""Sessions up to this many turns are searched at once, in the UI thread."""
QUICK_INDEXED = 500
"""The same for a session whose turns are read back from the file (a `TurnIndex`)."""
QUICK_BYTES = 16 * 1024 * 1024
"""A session file bigger than this is searched in the background whatever its turns (a
few thousand turns of a 50 MB export hold a lot of text)."""

Key = tuple[str, int, int]
"""(query, turns, generation): what a list of matches is good for."""


class HitsCounted(Message):
    """A worker counted every match of a query (for the session as it was then)."""

    def __init__(self, key: Key, hits: Sequence[int]) -> None:
        super().__init__()
        self.key = key
        self.hits = hits


class HitFound(Message):
    """A worker looked for the next match of a query: `found` (None: there is none)."""

    def __init__(self, query: str, found: int | None) -> None:
        super().__init__()
        self.query = query
        self.found = found


class Search(Concern):
    """Finds turns by their text; `n` and `N` go through the matches, the header counts them."""

    OWNER = "search"
    BINDINGS = [
        Binding("slash", "search", "Search", id="search", tooltip="Search turn text"),
        Binding("n", "search_next(True)", "Next match", id="search-next", show=False,
                tooltip="Next search match"),
        Binding("N", "search_next(False)", "Prev match", id="search-previous", show=False,
                tooltip="Previous search match"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.query_text = ""
        """The last search."""
        self._key: Key = ("", 0, 0)
        self._hits: Sequence[int] | None = None
        """Every match for `_key`, once known."""
        self._counting: Key | None = None
        """The key a worker is counting the matches of."""
        self._finding: str | None = None
        """The query a worker is looking for the next match of."""
        self._queued: list[bool] = []
        """`n`/`N` pressed while that worker looked (forward or not), taken in turn after."""

    def _key_of(self, query: str) -> Key:
        host = self.host
        return (query, len(host.session.turns), host.generation)

    def quick(self) -> bool:
        """True when the session is small enough to search in the UI thread."""
        session = self.host.session
        turns = session.turns
        if len(turns) > (QUICK_INDEXED if isinstance(turns, TurnColumns) else QUICK_TURNS):
            return False
        try:
            return os.path.getsize(session.path) <= QUICK_BYTES
        except (OSError, TypeError, ValueError):
            return True  # no file of its own to judge by: by its turns alone

    def hits(self, query: str | None = None) -> Sequence[int]:
        """The turns matching the search (or `query`), found now, once per query and
        session state (the count, `n` and the header share it)."""
        query = self.query_text if query is None else query
        key = self._key_of(query)
        if self._key != key or self._hits is None:
            self._key, self._hits = key, self.host.navigator.matches(query)
        return self._hits

    def known_hits(self) -> Sequence[int] | None:
        """The search's matches when known for the session as it is; on a big session,
        None until a worker (started here) has counted them."""
        key = self._key_of(self.query_text)
        if self._key == key and self._hits is not None:
            return self._hits
        if self.quick():
            return self.hits()
        if self._counting != key:
            self._counting = key
            self._count(key, self.host.navigator)
        return None

    def remember(self, query: str, hits: Sequence[int]) -> None:
        """Keep matches counted elsewhere (the prompt, while the reviewer typed)."""
        self._key, self._hits = self._key_of(query), hits

    def matcher(self) -> Callable[[str, Callable[[], bool]], Iterator[int]]:
        """Matches of a query one at a time, stopping when told (for the prompt's worker)."""
        return self.host.navigator.iter_matches

    @work(thread=True, exclusive=True, group="search-count", exit_on_error=False,
          description="Counting search matches")
    def _count(self, key: Key, navigator: Navigator) -> None:
        worker = get_current_worker()
        found = navigator.matches(key[0], lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.post_message(HitsCounted(key, found))

    def on_hits_counted(self, message: HitsCounted) -> None:
        if self._counting == message.key:
            self._counting = None
        if message.key == self._key_of(message.key[0]):
            self._key, self._hits = message.key, message.hits
            self.host.show_status()

    def position(self) -> tuple[int, int] | None:
        """`(k, n)` when the current turn is the k-th of the n turns matching the search
        (None too while a big session's matches are being counted)."""
        if not self.query_text or not self.host.session.turns:
            return None
        hits = self.known_hits()
        if hits is None:
            return None
        index = self.host.index
        position = bisect.bisect_left(hits, index)
        if position < len(hits) and hits[position] == index:
            return position + 1, len(hits)
        return None

    def marked(self) -> str:
        """What the current turn highlights: the query, when the turn holds it (told by the
        matches when they are counted: a 50 MB message is not looked through again in the
        UI thread)."""
        query, host = self.query_text, self.host
        index = host.index
        if not query or not 0 <= index < len(host.session.turns):
            return ""
        hits = self._hits if self._key == self._key_of(query) else None
        if hits is not None:
            at = bisect.bisect_left(hits, index)
            return query if at < len(hits) and hits[at] == index else ""
        return query if turn_holds(host.session.turns[index], query.casefold()) else ""

    def action_search(self) -> None:
        from replay.ui.screens.search_prompt import SearchPrompt

        def search(answer: str | None) -> None:
            if answer:
                self.query_text = answer
                self.action_search_next(True)

        self.app.push_screen(SearchPrompt(self.query_text, self.matcher(), self.remember,
                                          quick=self.quick()), search)

    def action_search_next(self, forward: bool) -> None:
        if not self.query_text:
            self.action_search()
            return
        host = self.host
        hits = self.known_hits()
        if hits is not None:
            self._land(host.navigator.next_hit(hits, host.index, forward))
            return
        if self._finding == self.query_text:
            self._queued.append(forward)  # a match is on its way: this press goes on from it
            return
        self._queued.clear()
        self._start_find(forward)

    @property
    def finding(self) -> bool:
        """True while a worker looks for the next match (presses may wait their turn)."""
        return self._finding is not None

    def _start_find(self, forward: bool) -> None:
        host = self.host
        self._finding = self.query_text
        self._find(self.query_text, host.index, forward, host.navigator)

    @work(thread=True, exclusive=True, group="search-find", exit_on_error=False,
          description="Finding the next search match")
    def _find(self, query: str, start: int, forward: bool, navigator: Navigator) -> None:
        worker = get_current_worker()
        found = None
        try:
            found = navigator.search(query, start, forward, lambda: worker.is_cancelled)
        finally:  # said even when the search failed (a file gone): `n` must not stay dead
            self.post_message(HitFound(query, None if worker.is_cancelled else found))

    def on_hit_found(self, message: HitFound) -> None:
        if self._finding == message.query:
            self._finding = None
        if message.query != self.query_text:
            return
        self._land(message.found)
        while self._queued and message.found is not None:
            forward = self._queued.pop(0)
            hits = self.known_hits()
            if hits is None:
                self._start_find(forward)  # from the match just reached
                return
            self._land(self.host.navigator.next_hit(hits, self.host.index, forward))

    def _land(self, found: int | None) -> None:
        if found is None:
            self.notify(f"No match for {clean(repr(self.query_text))}.", severity="warning",
                        markup=False)
            return
        self.host.go(found, placeholder=False)
        position = self.position()
        if position is not None:
            self.notify(f"match {position[0]:,} / {position[1]:,}", timeout=2, markup=False)
