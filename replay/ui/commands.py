"""Command palette: the empty turns of the session, to jump to; typing searches every one."""

from __future__ import annotations

import bisect
import heapq
import re
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher

from replay.core.index.navigation import first_text
from replay.core.session.text import one_line
from replay.ui.literal import as_markup, shown

if TYPE_CHECKING:
    from replay.ui.screens.replay_screen import ReplayScreen


SHOWN = 100
"""Empty turns the palette lists at once: the ones from the current turn on (a list of
thousands takes Textual seconds to lay out); typing searches them all."""


class EmptyTurnProvider(Provider):
    """Lists the empty turns of the session on screen: `#9689 user · empty-wrapper · approval`."""

    def _screen(self) -> ReplayScreen | None:
        from replay.ui.screens.replay_screen import ReplayScreen

        screen = self.screen
        return screen if isinstance(screen, ReplayScreen) else None

    def _title(self, screen: ReplayScreen, index: int) -> str | None:
        """`✓ Empty #N role · reason · suggests label` (`#N+` for the missing reply after
        request #N); the suggestion only once worked out (a title never waits for the
        suggester, which reads many turns around each)."""
        from replay.core.detection.empty import NO_REPLY, reason_for

        if not screen.navigator.is_empty_at(index):
            return None
        placeholder = screen.navigator.is_placeholder(index)
        known = screen.reports.known(index)
        if known is not None:
            role, reason, suggestion = known.role, known.reason, known.suggestion
        elif placeholder:
            # A missing reply is the assistant's silence (as `describe_empty` names it).
            role, reason, suggestion = "assistant", NO_REPLY.code, None
        else:
            turn = screen.session.turns[index]
            role, reason, suggestion = turn.role, reason_for(turn).code, None
        mark = "✓ " if screen.stop_id(index) in screen.store.annotated_ids else ""
        name = f"#{index + 1}{'+' if placeholder else ''}"
        title = shown(f"{mark}Empty {name} {role} · {reason}")
        if suggestion:
            title += f" · suggests {shown(suggestion)}"
        return title

    def _help(self, screen: ReplayScreen, index: int) -> str:
        """The evidence and the turn before, as palette markup (escaped)."""
        empty = screen.reports.quick(index)
        help_text = " · ".join(empty.evidence) if empty is not None else ""
        # Before a missing reply comes its request.
        before_at = index if screen.navigator.is_placeholder(index) else index - 1
        if before_at >= 0:
            before = one_line(first_text(screen.session.turns[before_at]), 80)
            help_text += f" · before: {before}" if before else ""
        # The palette parses help as markup (and a transcript's `[/s]` crashed it).
        return as_markup(help_text)

    def _entries(self, limit: int | None = None) -> list[tuple[str, str, int]]:
        """(title, help, index) of the empty turns from the current one on, wrapping round
        (at most `limit`)."""
        screen = self._screen()
        if screen is None:
            return []
        order = screen.navigator.empty_indices
        here = bisect.bisect_left(order, screen.index)
        chosen = (order[here:] + order[:here])[:limit] if limit is not None else order
        entries = []
        for index in sorted(chosen):
            title = self._title(screen, index)
            if title is not None:
                entries.append((title, self._help(screen, index), index))
        return entries

    def _jump(self, index: int) -> None:
        screen = self._screen()
        if screen is not None:
            screen.go(index)

    async def discover(self) -> Hits:
        for title, help_text, index in self._entries(SHOWN):
            yield DiscoveryHit(Content(title), partial(self._jump, index), text=title,
                               help=help_text)

    async def search(self, query: str) -> Hits:
        screen = self._screen()
        if screen is None:
            return
        matcher = self.matcher(query)
        ranking = TurnRanking(query)
        scored = []
        # Titles are kept while the palette is open: it searches again on every key.
        titles: dict[int, str | None] = self.__dict__.setdefault("_titles", {})
        for index in screen.navigator.empty_indices:
            if index not in titles:
                titles[index] = self._title(screen, index)
            title = titles[index]
            score = (ranking.score(title, index + 1, matcher.match(title))
                     if title is not None else 0)
            if score > 0:
                scored.append((score, title, index))
        # The best SHOWN, with their evidence: laying out every match would take seconds.
        for score, title, index in heapq.nlargest(SHOWN, scored, key=lambda hit: hit[0]):
            yield Hit(score, highlight(matcher, title), partial(self._jump, index),
                      text=title, help=self._help(screen, index))


class TurnRanking:
    """Puts the empty turns that match what was typed before the built-in commands: the
    palette sorts every provider's hits by score alone, and a short command name (`Keys`,
    `Screenshot`) outscores a turn's longer title on a fuzzy match."""

    _NUMBER = re.compile(r"#?0*(\d+)\+?")

    def __init__(self, query: str) -> None:
        wanted = query.strip().lower()
        number = self._NUMBER.fullmatch(wanted)
        self.digits = number.group(1) if number else None
        """A turn number typed (`12`, `#12`): that turn first, then the numbers it starts."""
        self.words = wanted.split() if number is None and len(wanted) >= 2 else []
        """Words typed (two characters or more): turns holding each of them, in any order."""
        self.step = 8 * len(query) + 1
        """More than any fuzzy score of this query (at most 8 per character typed)."""

    def score(self, title: str, number: int, fuzzy: float) -> float:
        """The hit's score: its fuzzy score, raised a step for each rank it earns."""
        rank = 0
        if self.digits is not None:
            shown = str(number)
            rank = 3 if shown == self.digits else 2 if shown.startswith(self.digits) else 0
        elif self.words:
            lowered = title.lower()
            rank = 1 if all(word in lowered for word in self.words) else 0
        return fuzzy + rank * self.step if fuzzy > 0 or rank else 0.0


def highlight(matcher: Matcher, title: str) -> Content:
    """The title with the matched characters styled, never parsed as markup
    (`Matcher.highlight` parses its candidate)."""
    content = Content(title)
    _score, offsets = matcher.fuzzy_search.match(matcher.query, title)
    for offset in offsets:
        if not title[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content
