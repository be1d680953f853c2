"""Live growth: a followed session's new turns, the live end, and the silence of a stall."""

from __future__ import annotations

import time

from textual.binding import Binding
from textual.timer import Timer

from replay.core.detection.empty import format_duration
from replay.core.session.text import plural
from replay.ui.controls.routing import Concern


class Following(Concern):
    """Keeps a followed session's view at the live end, or counts what arrived meanwhile."""

    OWNER = "following"
    BINDINGS = [
        Binding("f", "live", "Live end", id="live-end", show=False,
                tooltip="Jump to the newest turn and keep following"),
    ]

    def __init__(self, following: bool) -> None:
        super().__init__()
        self.following = following
        """The file is followed as it grows."""
        self.at_live_end = True
        """The reviewer is at the newest turn, so new turns advance the view."""
        self.new_turns = 0
        """Turns that arrived while the reviewer was elsewhere."""
        self.pending: int | None = None
        """The last turn while it is still being written (never stopped at)."""
        self.silent_since: float | None = None
        """Epoch seconds of the last write of a session stalled waiting for a reply."""
        self._silence_timer: Timer | None = None

    def moved_to(self, index: int, last: int) -> None:
        """The reviewer (or playback) moved: at the newest turn, following goes on."""
        if self.following:
            self.at_live_end = index >= last
            if self.at_live_end:
                self.new_turns = 0

    def grew(self, new_empty: list[int], last: int) -> None:
        """At the live end, advance (stopping at a new empty turn); elsewhere, count news.

        A stop lasts until the reviewer moves, whatever arrives after it; a stop whose turn
        showed content after all (taken back) goes on to the live end.
        """
        host = self.host
        if host.paused_at_empty and not host.navigator.is_empty_at(host.index):
            host.placeholder = False
            host.paused_at_empty = False
            self.at_live_end = True
            self.notify(f"#{host.index + 1} showed content after all: following again.",
                        timeout=4, markup=False)
        if not self.at_live_end:
            self.new_turns = max(0, last - host.index)
            return
        target = next((i for i in new_empty if i >= host.index), None)
        if target is None:
            host.index = last
            return
        host.placeholder = host.navigator.is_placeholder(target)
        host.index = target
        host.paused_at_empty = True
        # Stay here while more turns arrive: the reviewer decides when to go on (f).
        self.at_live_end = False
        self.new_turns = max(0, last - target)
        name = f"#{target + 1}{'+' if host.at_placeholder else ''}"
        self.notify(f"New empty turn {name}: paused here. f returns to the live end.",
                    timeout=5, markup=False)

    def action_live(self) -> None:
        folder = getattr(self.host.app, "folder_following", None)
        if folder is not None and folder.stay():
            return  # a move to a new session was offered: f stays on this one
        self.at_live_end = True
        self.new_turns = 0
        self.host.go(len(self.host.session.turns) - 1)

    # ---------------------------------------------------------------- silence

    def news_text(self) -> str:
        """`+3 new turns (f)` while turns arrived away from the live end, else empty."""
        return f"+{plural(self.new_turns, 'new turn')} (f)" if self.new_turns else ""

    def silence_text(self) -> str:
        """`silent for 12 min` while a followed session is stalled, else empty."""
        if self.silent_since is None:
            return ""
        return f"silent for {format_duration(max(0.0, time.time() - self.silent_since))}"

    def silence_changed(self, since: float | None) -> None:
        """The followed session stalled (the time of its last write) or spoke again (None).
        Before this owner is mounted (the follower's thread told it while the new screen
        was still being composed) it is only kept, and shown once mounted."""
        self.silent_since = since
        if self._silence_timer is not None:
            self._silence_timer.stop()
            self._silence_timer = None
        if not (self.is_mounted and self.is_running):  # not composed yet, or going
            return
        if since is not None:
            self._silence_timer = self.set_interval(1.0, self._show_silence)
        self._show_silence()

    def on_mount(self) -> None:
        """Show a silence told before the screen was composed (`silence_changed`)."""
        if self.silent_since is not None:
            self.silence_changed(self.silent_since)

    def _show_silence(self) -> None:
        self.host.show_silence(self.silence_text())
