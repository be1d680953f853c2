"""The header line of the replay screen: where the reviewer is and what is going on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from replay.core.session.text import plural
from replay.ui.render import clean

if TYPE_CHECKING:
    from replay.ui.screens.replay_screen import ReplayScreen

APP_NAME = " replay · "


def status_text(screen: ReplayScreen, annotated: set[int], width: int) -> Text:
    """The header for the screen's state (`annotated`: indices of annotated empty turns) in
    `width` cells.

    On a narrow terminal the session name gives way first, then the format and the app's
    name: position, play state, speed and the annotated count stay.
    """
    # A prefix (the review queue's place) comes right after the app's name; the name and
    # format give way to it, so position, play state and counts stay in view.
    prefix = screen.status_prefix()
    state = _state(screen, annotated, width - prefix.cell_len - 2)
    room = width - state.cell_len - prefix.cell_len - 1
    name = clean(screen.session.label)
    if len(name) > 40:
        name = name[:39] + "…"
    fmt = f" · {screen.session.format} · "
    head = Text()
    if room >= len(APP_NAME) + len(fmt) + 8:
        if len(APP_NAME) + len(name) + len(fmt) > room:
            name = name[:room - len(APP_NAME) - len(fmt) - 1] + "…"
        head.append(" replay", style="bold")
        head.append_text(prefix)
        head.append(f" · {name}{fmt}")
    elif room >= len(fmt) + 6:
        cut = room - len(fmt) - 2
        if prefix:  # without the app's name, the prefix loses its leading " ·"
            head.append_text(prefix[2:])
            head.append(" ·")
        head.append(f" {name if len(name) <= cut else name[:cut] + '…'} · ")
    elif prefix:
        head.append_text(prefix[2:])
        head.append(" · ")
    else:
        head.append(" ")
    status = Text(no_wrap=True, overflow="ellipsis")
    status.append_text(head)
    status.append_text(state)
    return status


def _state(screen: ReplayScreen, annotated: set[int], width: int) -> Text:
    """Position, play state, speed, counts, search match, filter, loading and following, in
    `width` cells: when they do not fit, the least needed give way first (the speed, then
    `following`, ...), never the position or `+N new turns (f)`."""
    parts = _state_parts(screen, annotated)
    while sum(part.cell_len for _, part in parts) > width and len(parts) > 1:
        least = max(range(len(parts)), key=lambda at: (parts[at][0], at))
        if parts[least][0] == 0:
            break
        del parts[least]
    state = Text()
    for _priority, part in parts:
        state.append_text(part)
    return state


def _state_parts(screen: ReplayScreen, annotated: set[int]) -> list[tuple[int, Text]]:
    """The parts of the state in the order shown, each with how soon it gives way (0:
    never; the higher, the sooner)."""
    total = len(screen.session.turns)
    playback, live = screen.playback, screen.live
    parts: list[tuple[int, Text]] = []

    def add(priority: int, text: str, style: str = "") -> None:
        parts.append((priority, Text(text, style=style)))

    plus = "+" if screen.at_placeholder else ""
    add(0, f"turn {screen.index + 1:,}{plus} / {total:,}" if total else "no turns", "bold")
    if screen.paused_at_empty:
        add(2, " · paused at empty turn", "bold reverse")
    elif playback.playing:
        add(2, " · ▶ playing", "bold")
    else:
        add(2, " · paused")
    add(9, f" · {playback.speed:g}x")
    empties = len(screen.navigator.empty_indices)
    add(4, f" · {len(annotated)} / {empties} annotated")
    drafts = screen.annotation.draft_count()
    if drafts:
        add(3, f" · {plural(drafts, 'draft')} not saved", "bold reverse")
    match = screen.searching.position()
    if match is not None:
        add(3, f" · match {match[0]:,} / {match[1]:,}", "bold")
    if playback.role_filter:
        add(5, f" · {playback.role_filter} only")
    if screen.indexing:
        add(6, f" · indexing {screen.load_percent}%", "italic")
    if screen.following:
        add(7, " · following" if live.at_live_end else " · following (paused)")
        news = live.news_text()
        if news:
            add(1, f" · {news}", "bold reverse")
        silence = live.silence_text()
        if silence:
            add(1, f" · {silence}", "bold reverse")
    return parts
