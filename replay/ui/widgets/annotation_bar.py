"""The panel under an empty turn: suggestion, label keys, note, confidence, save state."""

from __future__ import annotations

from itertools import accumulate

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.strip import Strip
from textual.widgets import Input, Static

from replay.core.annotate.annotations import OVERRULE_REASONS, Annotation
from replay.core.detection.empty import EmptyTurn
from replay.core.session.labels import LabelSet
from replay.ui.literal import shown
from replay.ui.repaint import update_static

ONE_LINE = {"\n": "↵", "\t": "⇥"}
"""How the one-row note field shows a line break or a tab of a note read from a journal."""


class NoteInput(Input):
    """The note field; it takes focus only when asked (tab), so keys drive the replayer.

    The value stays exactly the note (saved back unchanged); only the drawing differs: each
    character is drawn as `shown` draws it, so a note from a journal holding ESC or a bidi
    override shows `␛[ESC]` or `<U+202E>`, and the cursor steps over such a mark as over the
    one character it stands for.
    """

    def on_mount(self) -> None:
        self.can_focus = False

    def on_blur(self) -> None:
        self.can_focus = False

    def on_focus(self) -> None:
        # Writing goes on at the end of the note, wherever the cursor was left last time.
        self.cursor_position = len(self.value)

    def _pieces(self) -> list[str]:
        """What each character of the value is drawn as."""
        return [ONE_LINE.get(char) or shown(char) for char in self.value]

    @property
    def _value(self) -> Text:
        return Text("".join(self._pieces()), no_wrap=True, overflow="ignore", end="")

    def _position_to_cell(self, position: int) -> int:
        return cell_len("".join(self._pieces()[:position]))

    def _cell_offset_to_index(self, offset: int) -> int:
        scroll_x, _ = self.scroll_offset
        offset += scroll_x
        cell = 0
        for index, piece in enumerate(self._pieces()):
            width = cell_len(piece)
            if cell <= offset < cell + width:
                return index
            cell += width
        return len(self.value)

    def render_line(self, y: int) -> Strip:
        if y != 0 or not self.value:
            return super().render_line(y)  # the placeholder is ours, not a note
        pieces = self._pieces()
        starts = list(accumulate(map(len, pieces), initial=0))
        text = Text("".join(pieces), no_wrap=True, overflow="ignore", end="")
        if self.has_focus:
            if not self.selection.is_empty:
                start, end = sorted(self.selection)
                text.stylize_before(self.get_component_rich_style("input--selection"),
                                    starts[start], starts[end])
            if self._cursor_visible:
                cursor = self.cursor_position
                if self.cursor_at_end:
                    text.pad_right(1)
                    span = (starts[-1], starts[-1] + 1)
                else:
                    span = (starts[cursor], starts[cursor + 1])
                text.stylize(self.get_component_rich_style("input--cursor"), *span)
        console = self.app.console
        rendered = console.render(text, self.app.console_options.update_width(self.content_width))
        width = self.scrollable_content_region.width
        scroll_x, _ = self.scroll_offset
        strip = Strip(list(rendered)).crop(scroll_x, scroll_x + width + 1)
        return strip.extend_cell_length(width + 1).apply_style(self.rich_style)


class AnnotationBar(Vertical):
    """Shows what the reviewer is about to record for the current empty turn."""

    DEFAULT_CSS = """
    AnnotationBar { height: auto; padding: 0 1; background: $panel; }
    AnnotationBar > #annotation-suggestion { height: auto; }
    AnnotationBar > #annotation-labels { height: auto; }
    AnnotationBar > #annotation-help { height: auto; color: $text-muted; text-style: italic; }
    AnnotationBar > #annotation-state { height: 1; color: $text-muted; }
    AnnotationBar > NoteInput.-textual-compact { padding: 0 1; background: $surface; }
    AnnotationBar > NoteInput:focus { background: $boost; }
    """

    def __init__(self, labels: LabelSet, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.labels = labels
        """The active label set."""

    def compose(self) -> ComposeResult:
        yield Static(id="annotation-suggestion", markup=False)
        yield Static(id="annotation-labels", markup=False)
        yield Static(id="annotation-help", markup=False)
        # Compact: one row with no border; a bordered Input at one row hid what was typed.
        # Not selected on focus: tab then typing adds to a note read back, never replaces it.
        yield NoteInput(placeholder="note: tab to write, enter to save, escape to leave",
                        id="annotation-note", compact=True, select_on_focus=False)
        yield Static(id="annotation-state", markup=False)

    def show(self, empty: EmptyTurn, pending: str | None, confidence: str,
             saved: Annotation | None, unsaved: bool, *, blind: bool = False,
             others: dict[str, str] | None = None, overrule: str = "") -> None:
        """Redraw for an empty turn, the label picked so far and what is saved.

        Blind (`blind` and nothing saved yet): the suggestion and the other reviewers'
        labels (`others`, label by reviewer) stay hidden until this reviewer saves.
        """
        suggestion = Text()
        hidden = blind and (saved is None or not saved.label)
        if hidden:
            suggestion.append("blind review: ", style="bold")
            suggestion.append("the suggestion and other reviewers' labels show after you save; "
                              "pick a label with its number key", style="dim")
        elif empty.suggestion:
            label = self.labels.get(empty.suggestion)
            title = label.title if label else empty.suggestion
            suggestion.append("suggested: ", style="bold")
            suggestion.append(shown(empty.suggestion), style="bold reverse")
            suggestion.append(f" ({shown(title)}, {empty.suggestion_confidence or 'low'} "
                              "confidence)")
            if empty.suggestion_reasons:
                suggestion.append(" · " + shown("; ".join(empty.suggestion_reasons)),
                                  style="italic")
            if not saved or not saved.label:
                suggestion.append("  · enter accepts", style="dim")
        else:
            suggestion.append("no suggestion: pick a label with its number key", style="dim")
        if others and not hidden:
            suggestion.append("\nother reviewers: ", style="bold")
            suggestion.append(shown(" · ".join(
                f"{name or '(unnamed)'} {label}" for name, label in sorted(others.items()))))
        disagreeing = (not hidden and empty.suggestion and pending
                       and pending != empty.suggestion)
        if disagreeing:
            why = dict(OVERRULE_REASONS).get(overrule)
            suggestion.append(f"\nwhy not {empty.suggestion}? ", style="bold")
            suggestion.append(why if why else "(d says why, saved with the label)",
                              style="" if why else "dim")
            if why:
                suggestion.append("  · d for another reason", style="dim")
        update_static(self.query_one("#annotation-suggestion", Static), suggestion)
        keys = Text()
        for label in self.labels:
            chosen = label.name == pending
            committed = saved is not None and saved.label == label.name
            style = "bold reverse" if chosen else ("bold underline" if committed else "")
            keys.append(f"{shown(label.key)} ", style="bold")
            keys.append(shown(label.name), style=style)
            keys.append("  ")
        update_static(self.query_one("#annotation-labels", Static), keys)
        chosen_label = self.labels.get(pending) if pending else None
        update_static(self.query_one("#annotation-help", Static), 
            Text(shown(chosen_label.description) if chosen_label else ""))
        state = Text()
        state.append(f"confidence: {confidence} (c cycles)  ")
        if saved is not None and saved.label:
            state.append(f"saved: {shown(saved.label)}", style="bold")
            state.append(f" by {shown(saved.reviewer)}", style="dim")
            if unsaved:
                state.append("  NOT WRITTEN TO DISK: see notification", style="bold red")
        else:
            state.append("not annotated yet", style="dim")
        update_static(self.query_one("#annotation-state", Static), state)

    def set_note(self, note: str) -> None:
        """Put a saved note back into the field."""
        self.query_one("#annotation-note", Input).value = note

    @property
    def note(self) -> str:
        """The note typed so far."""
        return self.query_one("#annotation-note", Input).value
