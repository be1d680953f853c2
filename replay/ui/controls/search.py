"""Search: the query, the turns that match it, the reviewer's place among them."""

from __future__ import annotations

import bisect

from textual.binding import Binding

from replay.ui.controls.routing import Concern
from replay.ui.render import clean


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
        self._key: tuple[str, int, int] = ("", 0, 0)
        self._hits: list[int] = []

    def hits(self, query: str | None = None) -> list[int]:
        """The turns matching the search (or `query`), found once per query and session
        state (a search on a big session reads turns back from the file: the count while
        typing, `n` and the header's count share one pass)."""
        host = self.host
        query = self.query_text if query is None else query
        key = (query, len(host.session.turns), host.generation)
        if self._key != key:
            self._key, self._hits = key, host.navigator.matches(query)
        return self._hits

    def position(self) -> tuple[int, int] | None:
        """`(k, n)` when the current turn is the k-th of the n turns matching the search."""
        if not self.query_text or not self.host.session.turns:
            return None
        hits = self.hits()
        index = self.host.index
        position = bisect.bisect_left(hits, index)
        if position < len(hits) and hits[position] == index:
            return position + 1, len(hits)
        return None

    def marked(self) -> str:
        """What the current turn highlights: the query, when the turn is one of its matches."""
        return self.query_text if self.position() is not None else ""

    def action_search(self) -> None:
        from replay.ui.screens.search_prompt import SearchPrompt

        def search(answer: str | None) -> None:
            if answer:
                self.query_text = answer
                self.action_search_next(True)

        self.app.push_screen(SearchPrompt(self.query_text, lambda query: len(self.hits(query)),
                                          len(self.host.session.turns)), search)

    def action_search_next(self, forward: bool) -> None:
        if not self.query_text:
            self.action_search()
            return
        host = self.host
        found = host.navigator.next_hit(self.hits(), host.index, forward)
        if found is None:
            self.notify(f"No match for {clean(repr(self.query_text))}.", severity="warning",
                        markup=False)
            return
        host.go(found, placeholder=False)
        position = self.position()
        if position is not None:
            self.notify(f"match {position[0]:,} / {position[1]:,}", timeout=2, markup=False)
