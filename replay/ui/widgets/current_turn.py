"""The current turn with its banner; owns which of its parts are unfolded."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from replay.core.detection.empty import EmptyTurn
from replay.core.index.navigation import Navigator, part_holds
from replay.core.session.model import Session, Turn
from replay.ui.repaint import update_static
from replay.ui.widgets.turn_view import TurnLines


@dataclass(frozen=True, slots=True)
class Shown:
    """What the current pane shows, kept so that unfolding redraws the same turn."""

    session: Session
    navigator: Navigator
    turn: Turn
    empty: bool
    """The view is at the turn's stop (an empty turn)."""
    placeholder: EmptyTurn | None
    """The missing reply after the turn, when the view is on it."""
    following: bool
    highlight: str


class CurrentTurn(Vertical):
    """The banner and the current turn in full; `o` and clicks fold and unfold its parts, and
    the keys below scroll it (the end of an unfolded 50 MB message is a key away, not a
    mouse's minute)."""

    BINDINGS = [
        Binding("o", "toggle_expanded", "Unfold", id="toggle-unfold", show=False,
                tooltip="Unfold or fold the tool calls, reasoning and attachments of the turn"),
        Binding("down,j", "scroll_turn(1)", "Scroll down", id="scroll-turn-down", show=False,
                tooltip="Scroll the current turn down a line"),
        Binding("up,k", "scroll_turn(-1)", "Scroll up", id="scroll-turn-up", show=False,
                tooltip="Scroll the current turn up a line"),
        Binding("pagedown,ctrl+f", "page_turn(1)", "Page down", id="page-turn-down",
                show=False, tooltip="Scroll the current turn down a page"),
        Binding("pageup,ctrl+b", "page_turn(-1)", "Page up", id="page-turn-up", show=False,
                tooltip="Scroll the current turn up a page"),
        Binding("ctrl+end,ctrl+down", "turn_end", "Turn end", id="turn-text-end", show=False,
                tooltip="Scroll to the end of the current turn"),
        Binding("ctrl+home,ctrl+up", "turn_top", "Turn top", id="turn-text-top", show=False,
                tooltip="Scroll to the top of the current turn"),
    ]

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.expanded = False
        """Tool calls, reasoning and attachments of the current turn are all unfolded."""
        self.unfolded: set[int] = set()
        """Parts of the current turn unfolded one by one (by clicking them)."""
        self._shown: Shown | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="banner", markup=False)
        yield TurnLines(id="current", classes="pane")

    def moved(self) -> None:
        """The view moved to another turn: parts unfolded one by one fold again."""
        self.unfolded.clear()

    def show_banner(self, text: Text, *, shown: bool, empty: bool) -> None:
        """Put `text` in the banner (hidden unless `shown`; styled as an alarm if `empty`)."""
        banner = self.query_one("#banner", Static)
        update_static(banner, text)
        banner.set_class(empty, "empty")
        banner.display = shown

    def show_turn(self, shown: Shown, *, keep_scroll: bool = False) -> None:
        """Draw the turn (or the placeholder of its missing reply) in full."""
        self._shown = shown
        pane = self.query_one("#current", TurnLines)
        if shown.placeholder is not None:
            from replay.ui.placeholder import placeholder_text

            pane.show_blocks([(None, placeholder_text(shown.session, shown.placeholder,
                                                      live=shown.following))])
            return
        index = shown.turn.index
        matched = self._matched_parts(shown)
        pane.show_turns(
            shown.session, [index], compact=False,
            is_empty=lambda _: shown.empty and shown.navigator.is_empty_turn_at(index),
            expanded=lambda part: (self.expanded or part in matched) != (part in self.unfolded),
            full=True, keep_scroll=keep_scroll, highlight=shown.highlight)
        if matched and not keep_scroll:
            # The match may sit in a part far down the turn: show it, once the rows up to it
            # are counted (between frames: a 50 MB message took 4 s in one go).
            pane.call_after_refresh(pane.jump_to_text, shown.highlight)

    def _matched_parts(self, shown: Shown) -> set[int]:
        """The parts of the turn holding the search match: they are shown unfolded (a match
        in a folded tool call was invisible)."""
        if not shown.highlight:
            return set()
        needle = shown.highlight.casefold()
        parts = shown.session.full_parts(shown.turn, in_file=True)
        return {at for at, part in enumerate(parts) if part_holds(part, needle)}

    def _redraw(self) -> None:
        if self._shown is not None:
            self.show_turn(self._shown, keep_scroll=True)

    @property
    def pane(self) -> TurnLines:
        """The pane the turn is drawn in (what the scrolling keys move)."""
        return self.query_one("#current", TurnLines)

    def action_scroll_turn(self, rows: int) -> None:
        self.pane.scroll_relative(y=rows, animate=False, immediate=True)

    def action_page_turn(self, pages: int) -> None:
        pane = self.pane
        height = max(1, pane.scrollable_content_region.height)
        pane.scroll_relative(y=pages * height, animate=False, immediate=True)

    def action_turn_end(self) -> None:
        # (rows not counted yet are counted between frames: keys answer meanwhile)
        self.pane.jump_end()

    def action_turn_top(self) -> None:
        self.pane.scroll_home(animate=False, immediate=True)

    def action_toggle_expanded(self) -> None:
        self.expanded = not self.expanded
        self.unfolded.clear()
        self._redraw()

    @on(TurnLines.BlockClicked, "#current")
    def toggle_clicked_part(self, event: TurnLines.BlockClicked) -> None:
        """Fold or unfold the one tool call, reasoning or attachment that was clicked."""
        self.unfolded ^= {event.key}
        self._redraw()

