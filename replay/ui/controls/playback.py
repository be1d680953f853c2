"""Playback: stepping turn by turn, playing at a speed, and pausing by itself at a stop."""

from __future__ import annotations

from textual.binding import Binding
from textual.reactive import reactive, var
from textual.timer import Timer

from replay.core.index.navigation import faster, slower
from replay.ui.controls.routing import Concern

ROLE_FILTERS: tuple[str | None, ...] = (None, "user", "assistant")
"""What `r` cycles through: every turn, only user turns, only assistant turns."""


class Playback(Concern):
    """Steps, plays and pauses; owns the play state, the speed and the role filter."""

    OWNER = "playback"
    BINDINGS = [
        Binding("space", "toggle_play", "Play/pause", id="toggle-play",
                tooltip="Play the session; playback pauses by itself at empty turns"),
        Binding("right,l", "step(1)", "Next", id="next-turn", tooltip="Next turn"),
        Binding("left,h", "step(-1)", "Prev", id="previous-turn", tooltip="Previous turn"),
        Binding("home,g", "first", "First", id="first-turn", show=False,
                tooltip="First turn"),
        Binding("end,G", "last", "Last", id="last-turn", show=False, tooltip="Last turn"),
        Binding("plus,equals_sign", "faster", "Faster", id="faster", show=False,
                tooltip="Play faster"),
        Binding("minus", "slower", "Slower", id="slower", show=False, tooltip="Play slower"),
        Binding("r", "cycle_role", "Role filter", id="role-filter", show=False,
                tooltip="Step through all turns, only user turns, or only assistant turns"),
    ]

    playing: reactive[bool] = var(False, init=False)
    """Playback is running."""
    speed: reactive[float] = var(1.0, init=False)
    """Playback speed factor."""

    def __init__(self, speed: float = 1.0, idle_cap: float = 5.0) -> None:
        super().__init__()
        self.set_reactive(Playback.speed, speed)
        self.idle_cap = idle_cap
        """Longest pause between two turns while playing, in seconds at 1x."""
        self.role_filter: str | None = None
        """Only step through turns of this role."""
        self._timer: Timer | None = None

    def watch_playing(self, playing: bool) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if playing:
            self.host.paused_at_empty = False
            self._schedule_next()
        self.host.show_status()

    def watch_speed(self) -> None:
        self.host.show_status()

    def pause_here(self) -> None:
        """Stop playing without the redraw a change of `playing` makes (a stop redraws)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.set_reactive(Playback.playing, False)

    # ---------------------------------------------------------------- actions

    def action_toggle_play(self) -> None:
        host = self.host
        if not self.playing and host.refuses_to_play():
            return
        self.playing = not self.playing

    def action_step(self, delta: int) -> None:
        # A missing reply sits between its request and the next turn: a step visits it,
        # unless only user turns are shown.
        host = self.host
        navigator = host.navigator
        visits = self.role_filter != "user"
        if delta > 0 and visits and not host.at_placeholder \
                and navigator.is_placeholder(host.index):
            host.go(host.index, placeholder=True)
            return
        if delta < 0 and host.at_placeholder:
            host.go(host.index, placeholder=False)
            return
        target = navigator.step(host.index, delta, self.role_filter)
        host.go(target, placeholder=delta < 0 and visits and target < host.index
                and navigator.is_placeholder(target))

    def action_first(self) -> None:
        self.host.go(0)

    def action_last(self) -> None:
        self.host.go(len(self.host.session.turns) - 1)

    def action_faster(self) -> None:
        self.speed = faster(self.speed)

    def action_slower(self) -> None:
        self.speed = slower(self.speed)

    def action_cycle_role(self) -> None:
        position = ROLE_FILTERS.index(self.role_filter)
        self.role_filter = ROLE_FILTERS[(position + 1) % len(ROLE_FILTERS)]
        self.notify(f"Stepping through {self.role_filter or 'all'} turns.", timeout=2,
                    markup=False)
        self.host.show()

    # ---------------------------------------------------------------- the clock

    def _schedule_next(self) -> None:
        delay = self.host.navigator.delay_after(self.host.index, self.speed, self.idle_cap)
        self._timer = self.set_timer(delay, self._advance)

    def _advance(self) -> None:
        self._timer = None
        if not self.playing:
            return
        host = self.host
        navigator = host.navigator
        if not host.at_placeholder and navigator.is_placeholder(host.index) \
                and host.stops_at(host.index) and self.role_filter != "user":
            # The request got no reply: stop at the placeholder where the reply should be.
            host.paused_at_empty = True
            self.set_reactive(Playback.playing, False)
            host.placeholder = True
            host.load_bar()
            host.show()
            return
        if host.index >= len(host.session.turns) - 1:
            self.playing = False
            host.played_to_end()
            return
        next_index = navigator.step(host.index, 1, self.role_filter)
        host.placeholder = False
        if host.stops_at(next_index) and not navigator.is_placeholder(next_index):
            host.paused_at_empty = True
            self.set_reactive(Playback.playing, False)
            host.index = next_index
            host.show_status()
            return
        host.index = next_index
        self._schedule_next()
