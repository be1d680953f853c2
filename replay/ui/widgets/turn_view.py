"""One turn on screen: a header line, then its parts (prose, folded tools, reasoning, markers)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Collapsible, Static

from replay.core.detect import gap_before
from replay.core.model import Kind, Part, Session, Turn
from replay.ui.render import (
    clean,
    clock,
    fold,
    gap_text,
    marker_line,
    prose,
    summarize_tools,
    tool_body,
    tool_title,
)

COMPACT_TEXT_LINES = 14
"""Lines of prose a compact (Before/After) view shows before folding."""


def turn_heading(session: Session, turn: Turn, *, empty: bool = False) -> Text:
    """`#9686 user · 14:01:02 · +38 s · model` for the top of a turn."""
    heading = Text()
    heading.append(f"#{turn.index + 1} ", style="bold")
    heading.append(turn.role)
    details = [clock(turn), gap_text(gap_before(session, turn.index)) if turn.index > 0 else ""]
    if turn.model:
        details.append(clean(turn.model))
    if turn.agent:
        details.append(clean(turn.agent))
    if turn.is_summary:
        details.append("summary")
    if turn.is_meta:
        details.append("meta")
    for detail in details:
        if detail:
            heading.append(f" · {detail}", style="not bold")
    if empty:
        heading.append("  ∅ empty", style="bold reverse")
    return heading


class TurnView(Vertical):
    """A turn, either in full (the current turn) or compact (context panes)."""

    DEFAULT_CSS = """
    TurnView { height: auto; margin: 0 0 1 0; }
    TurnView > .turn-heading { height: 1; text-style: bold; }
    TurnView.role-user > .turn-heading { color: $turn-user; }
    TurnView.role-assistant > .turn-heading { color: $turn-assistant; }
    TurnView.role-system > .turn-heading { color: $turn-system; }
    TurnView.empty > .turn-heading { color: $turn-empty; }
    TurnView > .turn-text { height: auto; padding: 0 0 0 1; }
    TurnView > .turn-marker { height: auto; padding: 0 0 0 1; color: $text-muted; }
    TurnView > Collapsible { height: auto; padding: 0; margin: 0; border: none; }
    TurnView > Collapsible > Contents { padding: 0 0 0 2; }
    TurnView > .turn-empty-note { color: $turn-empty; padding: 0 0 0 1; text-style: italic; }
    """

    def __init__(self, session: Session, turn: Turn, *, compact: bool, empty: bool,
                 parts: list[Part] | None = None) -> None:
        classes = f"role-{turn.role}" + (" empty" if empty else "")
        super().__init__(classes=classes)
        self.session = session
        """Session the turn belongs to."""
        self.turn = turn
        """The turn shown."""
        self.compact = compact
        """Fold everything but prose, and shorten prose."""
        self.empty = empty
        """The turn has no visible content."""
        self.parts = parts if parts is not None else turn.parts
        """Parts to show (full parts for the current turn)."""

    def compose(self) -> ComposeResult:
        yield Static(turn_heading(self.session, self.turn, empty=self.empty),
                     classes="turn-heading", markup=False)
        if self.empty and not self.parts:
            yield Static("(no parts at all)", classes="turn-empty-note", markup=False)
        tools: list[Part] = []
        for part in self.parts:
            if self.compact and part.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT):
                tools.append(part)
                continue
            if tools:
                yield self._tool_summary(tools)
                tools = []
            yield from self._part(part)
        if tools:
            yield self._tool_summary(tools)

    def _tool_summary(self, tools: list[Part]) -> Static:
        return Static(Text(f"⚙ {summarize_tools(tools)} (folded)", style="italic"),
                      classes="turn-marker")

    def _part(self, part: Part) -> ComposeResult:
        if part.kind == Kind.TEXT:
            if not part.text.strip():
                yield Static(Text(f"(blank text: {clean(repr(part.text[:60]))})", style="italic"),
                             classes="turn-empty-note")
                return
            text = part.text
            if self.compact:
                text, hidden = fold(text, COMPACT_TEXT_LINES)
                if hidden:
                    text += f"\n\n… {hidden:,} more lines"
            if part.synthetic and not self.compact:
                yield Collapsible(Static(prose(text), markup=False),
                                  title=Content(f"attachment · {len(part.text):,} chars"))
            elif part.synthetic:
                yield Static(Text(f"◇ attachment · {part.text_length:,} chars", style="italic"),
                             classes="turn-marker")
            else:
                yield Static(prose(text), classes="turn-text", markup=False)
        elif part.kind == Kind.REASONING:
            title = f"reasoning · {part.text_length:,} chars" if part.text_length else \
                "reasoning (empty)"
            if self.compact or not part.text:
                yield Static(Text(f"⋯ {title}", style="italic dim"), classes="turn-marker")
            else:
                yield Collapsible(Static(Text(clean(part.text)), markup=False), title=Content(title))
        elif part.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT):
            yield Collapsible(Static(tool_body(part), markup=False),
                              title=Content(f"⚙ {tool_title(part)}"))
        else:
            yield Static(marker_line(part), classes="turn-marker", markup=False)
