"""Asked before leaving a replay screen (quitting, or back to the session list) while
labels picked or notes typed at some stops are not saved."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from replay.core.session.text import plural
from replay.ui.drafts import Draft, keep_screen_drafts
from replay.ui.literal import literal

if TYPE_CHECKING:
    from replay.ui.screens.replay_screen import ReplayScreen

SHOWN = 8
"""Drafts listed by name; more are counted."""


class DraftsScreen(ModalScreen[bool]):
    """Leave anyway (True: the drafts are kept for the next time the session is opened,
    `keep_screen_drafts`) or stay (False) to save them."""

    DEFAULT_CSS = """
    DraftsScreen { align: center middle; background: $background 50%; }
    DraftsScreen > Vertical { width: 72; max-width: 100%; height: auto; padding: 1 2;
                              border: thick $warning; background: $surface; }
    DraftsScreen #drafts-choices { margin-top: 1; text-style: bold; }
    """
    BINDINGS = [
        Binding("q", "answer(True)", "Leave anyway", id="drafts-leave",
                tooltip="Leave without saving the drafts"),
        Binding("escape", "answer(False)", "Stay", id="drafts-stay",
                tooltip="Stay, to save the drafts (enter at each)"),
    ]

    def __init__(self, drafts: list[Draft], leaving: str) -> None:
        super().__init__()
        self.drafts = drafts
        """The drafts that leaving would lose."""
        self.leaving = leaving
        """What the reviewer asked for: `quit`, or `go back to the session list`."""

    def compose(self) -> ComposeResult:
        listed = "\n".join(f"  {draft.describe()}" for draft in self.drafts[:SHOWN])
        more = len(self.drafts) - SHOWN
        if more > 0:
            listed += f"\n  … and {more} more"
        with Vertical() as box:
            box.border_title = "Drafts not saved"
            verb = "holds" if len(self.drafts) == 1 else "hold"
            yield Static(literal(
                f"{plural(len(self.drafts), 'stop')} {verb} a label or a note that is not saved:\n"
                f"{listed}"))
            fate = ("they are kept for the next run (not saved)" if self.leaving == "quit"
                    else "they are kept for when you open it again (not saved)")
            yield Static(literal(f"escape  stay (enter at a stop saves its draft)\n"
                                 f"q       {self.leaving} anyway: {fate}"),
                         id="drafts-choices")

    def action_answer(self, leave: bool) -> None:
        self.dismiss(leave)


def back_to_list(screen: ReplayScreen) -> None:
    """Back from a replay screen to the session list under it: asked first when the screen
    holds drafts, which are then kept for when its session is opened again (and what was
    kept for it before, since saved or discarded, is gone)."""
    drafts = screen.annotation.unsaved_drafts()

    def leave(answer: bool | None = True) -> None:
        if not answer:
            return
        said = keep_screen_drafts([screen], "for when you open it again")
        failed = any("could not" in line for line in said)
        for line in said:
            if failed:
                line += ": staying here (enter saves a draft, x discards it)"
            screen.app.notify(line.removeprefix("replay: "), title="Drafts", markup=False,
                              severity="error" if failed else "information",
                              timeout=10 if failed else 5)
        if not failed:  # (drafts that could not be kept are not left behind)
            screen.app.pop_screen()

    if drafts:
        screen.app.push_screen(DraftsScreen(drafts, "go back"), leave)
    else:
        leave()
