"""The header line of the replay screen: where the reviewer is and what is going on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

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
    state = _state(screen, annotated)
    # A prefix (the review queue's place) comes right after the app's name; the name and
    # format give way to it, so position, play state and counts stay in view.
    prefix = screen.status_prefix()
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


def _state(screen: ReplayScreen, annotated: set[int]) -> Text:
    """Position, play state, speed, counts, search match, filter, loading and following."""
    total = len(screen.session.turns)
    playback, live = screen.playback, screen.live
    state = Text()
    plus = "+" if screen.at_placeholder else ""
    state.append(f"turn {screen.index + 1:,}{plus} / {total:,}" if total else "no turns",
                 style="bold")
    if screen.paused_at_empty:
        state.append(" · paused at empty turn", style="bold reverse")
    elif playback.playing:
        state.append(" · ▶ playing", style="bold")
    else:
        state.append(" · paused")
    state.append(f" · {playback.speed:g}x")
    empties = len(screen.navigator.empty_indices)
    state.append(f" · {len(annotated)} / {empties} annotated")
    match = screen.searching.position()
    if match is not None:
        state.append(f" · match {match[0]:,} / {match[1]:,}", style="bold")
    if playback.role_filter:
        state.append(f" · {playback.role_filter} only")
    if screen.indexing:
        state.append(f" · indexing {screen.load_percent}%", style="italic")
    if screen.following:
        state.append(" · following" if live.at_live_end else " · following (paused)")
        news = live.news_text()
        if news:
            state.append(f" · {news}", style="bold reverse")
        silence = live.silence_text()
        if silence:
            state.append(f" · {silence}", style="bold reverse")
    return state
