"""The search prompt: says how many turns match while the reviewer types.

A small session is counted at every key. A big one is counted once typing pauses, in a
thread worker that the next key cancels; while it counts, the line says how many it has
found so far, and enter goes to the next match without waiting for the count.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, Label
from textual.worker import get_current_worker

from replay.core.index.turn_marks import Indices
from replay.ui.screens.prompt import PromptScreen

PAUSE_SECONDS = 0.25
"""How long typing must pause before a big session is counted."""
PROGRESS_SECONDS = 0.2
"""How often a count in progress says how far it got."""

Matches = Callable[[str, Callable[[], bool]], Iterator[int]]
"""The matches of a query, one at a time, stopping when the callable says so."""


class CountProgress(Message):
    """How many turns match `query` so far (`done`: all of them, listed in `hits`)."""

    def __init__(self, query: str, found: int, hits: Sequence[int] | None = None) -> None:
        super().__init__()
        self.query = query
        self.found = found
        self.hits = hits


def count_words(found: int, done: bool) -> str:
    """The count line: `3 turns match`, or `≥ 3 turns match so far, counting…`."""
    if done:
        return "no turn matches" if not found else \
            f"{found:,} turn{'s' if found != 1 else ''} match · enter goes to the next"
    return f"≥ {found:,} turn{'s' if found != 1 else ''} match so far, counting… · " \
        "enter goes to the next"


class SearchPrompt(PromptScreen):
    """Ask what to search for, with the count of matching turns under the answer."""

    DEFAULT_CSS = """
    SearchPrompt #search-count { color: $text-muted; }
    """

    def __init__(self, value: str, matches: Matches,
                 counted: Callable[[str, Sequence[int]], None] | None = None, *,
                 quick: bool = True) -> None:
        """`matches` finds a query's matches; `counted` is told of every complete count;
        `quick`: count at every key, in the UI thread (a small session)."""
        super().__init__("Search", value)
        self.matches = matches
        self.counted = counted
        self.quick = quick
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Content(self.question))
            yield Input(value=self.value, id="prompt-input", compact=True)
            yield Label(Content(""), id="search-count")

    def on_mount(self) -> None:
        self.count_while_typing()

    @on(Input.Changed, "#prompt-input")
    def count_while_typing(self) -> None:
        """Count what is typed now; a count still running for an older text stops."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.workers.cancel_group(self, "count")
        query = self._query()
        label = self.query_one("#search-count", Label)
        if not query:
            label.update(Content(""))
        elif self.quick:
            hits = list(self.matches(query, lambda: False))
            self._said(CountProgress(query, len(hits), hits))
        else:
            label.update(Content("counting…"))
            self._timer = self.set_timer(PAUSE_SECONDS, lambda: self._count(query))

    def _query(self) -> str:
        return self.query_one("#prompt-input", Input).value.strip()

    @work(thread=True, exclusive=True, group="count", exit_on_error=False,
          description="Counting search matches")
    def _count(self, query: str) -> None:
        worker = get_current_worker()
        hits = Indices()  # four bytes a match (`e` is in most of a million turns)
        said = time.monotonic()
        for index in self.matches(query, lambda: worker.is_cancelled):
            hits.append(index)
            now = time.monotonic()
            if now - said >= PROGRESS_SECONDS:
                said = now
                self.post_message(CountProgress(query, len(hits)))
        if not worker.is_cancelled:
            self.post_message(CountProgress(query, len(hits), hits))

    def on_count_progress(self, message: CountProgress) -> None:
        if message.query != self._query():
            return  # a count of what was typed before
        self._said(message)

    def _said(self, message: CountProgress) -> None:
        done = message.hits is not None
        self.query_one("#search-count", Label).update(
            Content(count_words(message.found, done)))
        if done and self.counted is not None:
            assert message.hits is not None
            self.counted(message.query, message.hits)
