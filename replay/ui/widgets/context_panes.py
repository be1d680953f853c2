"""Before and After: the turns around the current one, side by side, stacked, or one at a
time on a small terminal."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import reactive, var

from replay.core.index.navigation import Navigator
from replay.core.session.model import Session
from replay.ui.widgets.turn_view import TurnLines


class ContextPanes(Horizontal):
    """The Before and After panes; owns how many turns they show and which one is shown."""

    BINDINGS = [
        Binding("greater_than_sign", "context(1)", "More context", id="wider-context",
                show=False, tooltip="Show more turns before and after"),
        Binding("less_than_sign", "context(-1)", "Less context", id="narrower-context",
                show=False, tooltip="Show fewer turns before and after"),
        Binding("vertical_line", "switch_context", "Before/After", id="switch-context",
                show=False,
                tooltip="On a small terminal, show the After pane instead of Before, or back"),
    ]

    context_turns: reactive[int] = var(3, init=False)
    """Turns shown in each pane."""

    def __init__(self, context_turns: int = 3, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.set_reactive(ContextPanes.context_turns, context_turns)
        self.folded = False
        """Before and After are shown one at a time (a small terminal)."""
        self.shown = "before"
        """The pane shown when they are folded."""
        self._what: tuple[Session, Navigator, int, bool] | None = None

    def compose(self) -> ComposeResult:
        yield TurnLines(id="before", classes="pane")
        yield TurnLines(id="after", classes="pane")

    def fold(self, folded: bool) -> None:
        """Show Before and After one at a time (`folded`) or both."""
        self.folded = folded
        self.query_one("#before").display = not folded or self.shown == "before"
        self.query_one("#after").display = not folded or self.shown == "after"

    def show_around(self, session: Session, navigator: Navigator, index: int,
                    at_placeholder: bool) -> None:
        """Fill both panes for the turn at `index` (or the missing reply after it)."""
        self._what = (session, navigator, index, at_placeholder)
        self._fill()

    def _fill(self) -> None:
        if self._what is None:
            return
        session, navigator, index, at_placeholder = self._what
        turns = session.turns
        count = self.context_turns
        # At a missing reply the request itself is the last turn before it.
        here = index + 1 if at_placeholder else index
        before_range = range(max(0, here - count), here)
        after_range = range(index + 1, min(len(turns), index + 1 + count))
        for pane_id, indices, title in (("before", before_range, "Before"),
                                        ("after", after_range, "After")):
            pane = self.query_one(f"#{pane_id}", TurnLines)
            shown = len(indices)
            pane.border_title = f"{title} ({shown} turn{'' if shown == 1 else 's'})"
            if self.folded:
                other = "After" if pane_id == "before" else "Before"
                pane.border_title += f" · | shows {other}"
            pane.show_turns(session, indices, compact=True,
                            is_empty=navigator.is_empty_turn_at, at_end=pane_id == "before")

    def watch_context_turns(self) -> None:
        self._fill()

    def action_context(self, delta: int) -> None:
        self.context_turns = max(1, min(20, self.context_turns + delta))

    def action_switch_context(self) -> None:
        if not self.folded:
            self.notify("Before and After are both on screen.", timeout=2)
            return
        self.shown = "after" if self.shown == "before" else "before"
        self.fold(self.folded)
        self._fill()
