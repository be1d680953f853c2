"""Command palette: every empty turn of the session, to jump to by typing."""

from __future__ import annotations

import re
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher

from replay.core.navigation import first_text
from replay.core.text import one_line
from replay.ui.literal import as_markup, shown


class EmptyTurnProvider(Provider):
    """Lists the empty turns of the session on screen: `#9689 user · empty-wrapper · approval`."""

    def _entries(self) -> list[tuple[str, str, int]]:
        from replay.ui.screens.replay_screen import ReplayScreen

        screen = self.screen
        if not isinstance(screen, ReplayScreen):
            return []
        entries = []
        turns = screen.session.turns
        annotated = screen.store.annotated_ids
        for index in screen.navigator.empty_indices:
            empty = screen.empty_turn(index)
            if empty is None:
                continue
            mark = "✓ " if screen.stop_id(index) in annotated else ""
            name = f"#{index + 1}{'+' if empty.is_placeholder else ''}"
            title = shown(f"{mark}Empty {name} {empty.role} · {empty.reason}")
            if empty.suggestion:
                title += f" · suggests {shown(empty.suggestion)}"
            # Before a missing reply comes its request.
            before_at = index if empty.is_placeholder else index - 1
            neighbour = turns[before_at] if before_at >= 0 else None
            help_text = " · ".join(empty.evidence)
            if neighbour is not None:
                before = one_line(first_text(neighbour), 80)
                help_text += f" · before: {before}" if before else ""
            # The palette parses help as markup (and a transcript's `[/s]` crashed it).
            entries.append((title, as_markup(help_text), index))
        return entries

    def _jump(self, index: int) -> None:
        from replay.ui.screens.replay_screen import ReplayScreen

        if isinstance(self.screen, ReplayScreen):
            self.screen.go(index)

    async def discover(self) -> Hits:
        for title, help_text, index in self._entries():
            yield DiscoveryHit(Content(title), partial(self._jump, index), text=title,
                               help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        ranking = TurnRanking(query)
        for title, help_text, index in self._entries():
            score = ranking.score(title, index + 1, matcher.match(title))
            if score > 0:
                yield Hit(score, highlight(matcher, title), partial(self._jump, index),
                          text=title, help=help_text)


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
