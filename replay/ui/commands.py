"""Command palette: every empty turn of the session, to jump to by typing."""

from __future__ import annotations

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
        for title, help_text, index in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, highlight(matcher, title), partial(self._jump, index),
                          text=title, help=help_text)


def highlight(matcher: Matcher, title: str) -> Content:
    """The title with the matched characters styled, never parsed as markup
    (`Matcher.highlight` parses its candidate)."""
    content = Content(title)
    _score, offsets = matcher.fuzzy_search.match(matcher.query, title)
    for offset in offsets:
        if not title[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content
