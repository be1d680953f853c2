"""Command palette: every empty turn of the session, to jump to by typing."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from replay.core.navigation import first_text
from replay.core.safe import escape_controls
from replay.core.text import one_line


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
            mark = "✓ " if turns[index].id in annotated else ""
            title = f"{mark}Empty #{index + 1} {empty.role} · {empty.reason}"
            if empty.suggestion:
                title += f" · suggests {empty.suggestion}"
            neighbour = turns[index - 1] if index > 0 else None
            help_text = escape_controls(" · ".join(empty.evidence))
            if neighbour is not None:
                before = one_line(escape_controls(first_text(neighbour)), 80)
                help_text += f" · before: {before}" if before else ""
            entries.append((title, help_text, index))
        return entries

    def _jump(self, index: int) -> None:
        from replay.ui.screens.replay_screen import ReplayScreen

        if isinstance(self.screen, ReplayScreen):
            self.screen.go(index)

    async def discover(self) -> Hits:
        for title, help_text, index in self._entries():
            yield DiscoveryHit(Content(title), partial(self._jump, index), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, index in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self._jump, index),
                          help=help_text)
