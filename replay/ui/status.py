"""The header line of the replay screen: where the reviewer is and what is going on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text

from replay.core.session.text import plural
from replay.ui.render import clean

if TYPE_CHECKING:
    from replay.ui.screens.replay_screen import ReplayScreen

APP_NAME = "replay"

SEPARATOR = " · "

NAME_CELLS = 40
"""The session name's cells at most (a longer one is cut with `…`)."""

SHORTENED_WITH = 2
"""A part that never gives way but has a short form takes it along with the play state."""


@dataclass(slots=True)
class HeaderPart:
    """One piece of the header and how it gives way on a narrow terminal."""

    text: Text
    """What it shows."""
    priority: int
    """How soon it gives way: 0 never (it may still take its short form), the higher the
    sooner."""
    short: Text | None = None
    """A shorter way to say it, taken before it gives way."""
    state: bool = False
    """A part of the state: its separator is drawn with it (` · paused at empty turn`
    reversed)."""


def name_floor(priority: int, dropping: bool) -> int:
    """How far the session name is cut before a part of `priority` shortens (or, when
    `dropping`, goes): the speed, app name, format, indexing and filter go before it is cut
    at all; the counts before it is cut below 24 cells; the play state is shortened before
    it is cut below 12; the play and following state go only once it has."""
    if priority >= 6:
        return NAME_CELLS
    if priority >= 3:
        return 24
    if priority >= 2 and not dropping:
        return 12
    return 0


def status_text(screen: ReplayScreen, annotated: set[int], width: int) -> Text:
    """The header for the screen's state (`annotated`: indices of annotated empty turns) in
    `width` cells.

    What matters most stays on a narrow terminal (80 columns): the session, the position,
    the play and following state and `+N new turns (f)`. The speed gives way first, then the
    app's name, the format, indexing and filter; then the name is cut (to 24 cells) before
    the counts go, and (to 12) before the play state is shortened; last the name goes, then
    the play and following state.
    """
    head, format_part = _header_parts(screen)
    parts = head + [format_part] + _state_parts(screen, annotated)
    name = clean(screen.session.label) or "(unnamed session)"
    if len(name) > NAME_CELLS:
        name = name[:NAME_CELLS - 1] + "…"

    def needed() -> int:
        shown = sum(part.text.cell_len for part in parts) + (len(name) if name else 0)
        pieces = len(parts) + (1 if name else 0)
        return 1 + shown + len(SEPARATOR) * (pieces - 1)

    while needed() > width:
        giving = [(part.priority or SHORTENED_WITH, at) for at, part in enumerate(parts)
                  if part.priority > 0 or part.short is not None]
        if not giving:
            name = _cut(name, max(0, len(name) - (needed() - width)))
            break  # only what never gives way is left: the line ends in `…`
        least = parts[max(giving)[1]]
        shorten = least.short is not None
        floor = name_floor(least.priority or SHORTENED_WITH, dropping=not shorten)
        if len(name) > floor:
            name = _cut(name, max(floor, len(name) - (needed() - width)))
        elif shorten:
            least.text, least.short = least.short or least.text, None
        else:
            parts.remove(least)  # (by identity: no two parts are alike)
    kept = sum(1 for part in parts if any(part is mine for mine in head))
    shown = parts[:kept] + ([HeaderPart(Text(name), 0)] if name else []) + parts[kept:]
    status = Text(no_wrap=True, overflow="ellipsis")
    for at, part in enumerate(shown):
        before = SEPARATOR if at else " "
        text = part.text
        if (not at or part.state) and not text.spans:
            # Drawn with the part (` replay` bold, ` · paused at empty turn` reversed).
            status.append(before + text.plain, style=text.style)
        else:
            status.append(before)
            status.append_text(text)
    return status


def _cut(name: str, cells: int) -> str:
    """`name` in `cells` cells, its end replaced by `…` when cut ("" for none)."""
    if len(name) <= cells:
        return name
    return name[:cells - 1] + "…" if cells > 1 else ""


def _header_parts(screen: ReplayScreen) -> tuple[list[HeaderPart], HeaderPart]:
    """The app's name and the review queue's place (`status_prefix`), then the session's
    format (the session's name goes between them)."""
    parts = [HeaderPart(Text(APP_NAME, style="bold"), 8)]
    prefix = screen.status_prefix()
    if prefix:
        # The prefix comes written as " · place": the separator is the header's.
        parts.append(HeaderPart(prefix[len(SEPARATOR):] if prefix.plain.startswith(SEPARATOR)
                                else prefix, 0))
    return parts, HeaderPart(Text(screen.session.format), 7)


def _state_parts(screen: ReplayScreen, annotated: set[int]) -> list[HeaderPart]:
    """The parts of the state in the order shown, each with how soon it gives way (0:
    never: the position, `+N new turns (f)`, a silence; the higher, the sooner)."""
    total = len(screen.session.turns)
    playback, live = screen.playback, screen.live
    parts: list[HeaderPart] = []

    def add(priority: int, text: str, style: str = "", short: str | None = None) -> None:
        parts.append(HeaderPart(Text(text, style=style), priority,
                                Text(short, style=style) if short else None, state=True))

    plus = "+" if screen.at_placeholder else ""
    add(0, f"turn {screen.index + 1:,}{plus} / {total:,}" if total else "no turns", "bold")
    parts[0].state = False  # (its separator ends the session's part of the line)
    if screen.paused_at_empty:
        add(2, "paused at empty turn", "bold reverse", short="at empty turn")
    elif playback.playing:
        add(2, "▶ playing", "bold")
    else:
        add(2, "paused")
    add(9, f"{playback.speed:g}x")
    empties = len(screen.navigator.empty_indices)
    add(4, f"{len(annotated)} / {empties} annotated")
    drafts = screen.annotation.draft_count()
    if drafts:
        add(3, f"{plural(drafts, 'draft')} not saved", "bold reverse")
    match = screen.searching.position()
    if match is not None:
        add(3, f"match {match[0]:,} / {match[1]:,}", "bold")
    if playback.role_filter:
        add(5, f"{playback.role_filter} only")
    if screen.indexing:
        add(6, f"indexing {screen.load_percent}%", "italic")
    if screen.following:
        add(1, "following" if live.at_live_end else "following (paused)")
        news = live.news_text()
        if news:
            add(0, news, "bold reverse", short=f"+{live.new_turns:,} new (f)")
        silence = live.silence_text()
        if silence:
            add(0, silence, "bold reverse")
    return parts
