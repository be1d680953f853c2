"""The panel under an empty turn: suggestion, label keys, note, confidence, save state; it owns
what the reviewer is about to record and saves it."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Input, Static

from replay.core.annotate.annotations import (
    CONFIDENCE,
    OVERRULE_REASONS,
    Annotation,
    AnnotationStore,
)
from replay.core.annotate.journal import JournalError
from replay.core.detection.empty import EmptyTurn
from replay.core.session.labels import LabelSet
from replay.ui.drafts import Draft, DraftKey, Drafts
from replay.ui.literal import shown
from replay.ui.render import clean
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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._keys_taken: deque[int] = deque(maxlen=16)
        """The keys this field took while focused (their ids, while they bubble on)."""

    def on_mount(self) -> None:
        self.can_focus = False

    def on_blur(self) -> None:
        self.can_focus = False

    def on_focus(self) -> None:
        # Writing goes on at the end of the note, wherever the cursor was left last time.
        self.cursor_position = len(self.value)

    def took(self, event: events.Key) -> bool:
        """True when this key came through the field (it bubbles on from here)."""
        return id(event) in self._keys_taken

    async def _on_key(self, event: events.Key) -> None:
        # Keys come here in the order they were typed, but a key typed right after enter
        # or escape was handed here before focus left: it goes back to the replayer, in its
        # turn. So enter and escape let go of focus at once, not once a binding runs.
        if event.key in ("enter", "escape") and self.screen.focused is self:
            self.screen.set_focus(None)
            if event.key == "escape":  # leaves the field, and nothing else
                event.stop()
                event.prevent_default()
                return
        if self.screen.focused is not self:  # (`has_focus` changes only once blurred)
            # Enter, to the bar's binding: it saves with this note.
            event.stop()
            event.prevent_default()  # Input's own handler would type it
            self.screen.post_message(events.Key(event.key, event.character))
            return
        self._keys_taken.append(id(event))

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
    """What the reviewer is about to record for the current empty turn, and its keys: pick a
    label, write a note, say how sure, say why not the suggestion, save, undo."""

    DEFAULT_CSS = """
    AnnotationBar { height: auto; padding: 0 1; background: $panel; }
    AnnotationBar > #annotation-suggestion { height: auto; }
    AnnotationBar > #annotation-labels { height: auto; }
    AnnotationBar > #annotation-help { height: auto; color: $text-muted; text-style: italic; }
    AnnotationBar > #annotation-state { height: 1; color: $text-muted; }
    AnnotationBar > NoteInput.-textual-compact { padding: 0 1; background: $surface; }
    AnnotationBar > NoteInput:focus { background: $boost; }
    """
    BINDINGS = [
        Binding("enter", "commit", "Save", id="commit-annotation",
                tooltip="Save the annotation (accepts the suggestion when none is picked)"),
        Binding("tab", "note", "Note", id="edit-note", show=False, tooltip="Write a note"),
        Binding("c", "cycle_confidence", "Confidence", id="cycle-confidence", show=False,
                tooltip="Cycle confidence: low, medium, high"),
        Binding("d", "cycle_overrule", "Why not", id="overrule-reason", show=False,
                tooltip="Say why the label differs from the suggestion (cycles the reasons)"),
        Binding("z,ctrl+z", "undo", "Undo", id="undo-annotation", show=False,
                tooltip="Undo the last annotation saved in this session"),
        Binding("x", "discard_draft", "Discard draft", id="discard-draft", show=False,
                tooltip="Forget the label picked and the note typed here since the last save"),
    ] + [
        Binding(key, f"pick_label('{key}')", f"Label {key}", id=f"pick-label-{key}", show=False,
                tooltip=f"Pick the label whose key is {key}")
        for key in "1234567890"
    ]

    @dataclass
    class Saved(Message):
        """An annotation was saved (or kept in memory when the journal could not be written)."""

        annotation: Annotation | None
        """What was saved; None when the journal refused it."""

    @dataclass
    class DraftsCounted(Message):
        """How many stops hold a draft changed (the header counts them)."""

        count: int

    @dataclass
    class Undone(Message):
        """The last annotation saved was undone; `restored` is what the turn holds again."""

        restored: Annotation

    def __init__(self, labels: LabelSet, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.labels = labels
        """The active label set."""
        self.pending_label: str | None = None
        """Label picked for the current empty turn but not saved yet."""
        self.confidence = "medium"
        """Confidence for the next save."""
        self.overrule = ""
        """Why the picked label differs from the suggestion (an `OVERRULE_REASONS` code)."""
        self.empty: EmptyTurn | None = None
        """The empty turn the bar is for; None away from a stop."""
        self.store: AnnotationStore | None = None
        """Where annotations are saved (the screen's store, given with each turn)."""
        self.blind = False
        """Blind review: the suggestion and others' labels stay hidden until a save."""
        self.others: dict[str, str] = {}
        """Other reviewers' labels of this turn (label by reviewer)."""
        self.any_stop = True
        """Whether the session has an empty turn at all (else a label key says so)."""
        self.drafts = Drafts()
        """What was picked or typed at other stops and not saved, kept until saved or
        discarded."""
        self._key: DraftKey | None = None
        """The stop the bar holds the label, note and confidence of."""
        self._state_text = Text()
        self._drafts_counted = 0
        self._note = ""
        """The note, while there is no note field yet."""
        self._note_field: NoteInput | None = None
        """The note field once the parts are mounted (`_build`), held by reference: it is
        read even while the screen is being taken down (a draft kept at a hangup or autosave
        tick after going back to the list), when a query would find nothing."""

    def compose(self) -> ComposeResult:
        # Nothing until the bar is first shown (`_build`): the first screen of a long session
        # is seldom an empty turn, and styling these parts (the note field's stylesheet
        # among them) was a tenth of composing it.
        yield from ()

    def _build(self) -> None:
        """Mount the bar's parts, the first time it is shown."""
        if self._note_field is not None:
            return
        self._note_field = NoteInput(
            self._note, placeholder="note: tab to write, enter to save, escape to leave",
            id="annotation-note", compact=True, select_on_focus=False)
        self.mount(
            Static(id="annotation-suggestion", markup=False),
            Static(id="annotation-labels", markup=False),
            Static(id="annotation-help", markup=False),
            # Compact: one row with no border; a bordered Input at one row hid what was
            # typed. Not selected on focus: tab then typing adds to a note read back, never
            # replaces it.
            self._note_field,
            Static(id="annotation-state", markup=False),
        )

    # ---------------------------------------------------------------- state

    def load(self, key: DraftKey | None, saved: Annotation | None, *,
             keep: bool = True) -> None:
        """Start over for another stop (`key`): its draft if it has one, else its saved
        annotation (or nothing), with nothing picked. What the last stop held unsaved is
        kept as its draft (`keep`), or dropped (an undo puts back what was saved)."""
        if keep:
            self._keep_draft()
        else:
            self.drafts.drop(key)
        self._key = key
        draft = self.drafts.get(key)
        if draft is not None:
            self.pending_label, self.confidence = draft.label, draft.confidence
            self.overrule = draft.overrule
            self.set_note(draft.note)
            return
        self.pending_label = None
        self.confidence = saved.confidence if saved is not None else "medium"
        self.overrule = saved.overrule if saved is not None else ""
        self.set_note(saved.note if saved is not None else "")

    def _draft_here(self) -> Draft | None:
        """What the bar holds for its stop now, as a draft (None away from a stop)."""
        if self.empty is None or self._key is None:
            return None
        name = f"#{self.empty.index + 1}{'+' if self.empty.is_placeholder else ''}"
        return Draft(name, self.pending_label, self.note, self.confidence, self.overrule)

    def _keep_draft(self) -> None:
        draft = self._draft_here()
        if draft is not None and self._key is not None:
            self.drafts.keep(self._key, draft, self._saved())

    def draft_count(self) -> int:
        """How many stops hold a draft, this one counted as it is now."""
        keys = {key for key, _draft in self.drafts.items()}
        here = self._draft_here()
        if here is not None and self._key is not None:
            if here.differs_from(self._saved()):
                keys.add(self._key)
            else:
                keys.discard(self._key)
        return len(keys)

    def unsaved_drafts(self) -> list[Draft]:
        """Every stop's draft, this one's as it is now: what leaving the screen would lose."""
        self._keep_draft()
        return [draft for _key, draft in self.drafts.items()]

    def at_stop(self, key: DraftKey | None, empty: EmptyTurn | None, store: AnnotationStore,
                *, blind: bool = False, others: dict[str, str] | None = None,
                any_stop: bool = True) -> None:
        """Show the bar for the empty turn at stop `key`, or hide it (`empty` None) away from
        a stop; a stop the bar does not hold yet is loaded first (see `load`). `any_stop`:
        whether the session has an empty turn at all (what a label key away from one says)."""
        self.any_stop = any_stop
        if key is not None and self.drafts.restore(store.journal.path, key[0], store.get):
            self.notify("Drafts kept when this session was last left are back at their "
                        "stops (enter saves one, x discards it).", title="Drafts", timeout=8)
        if key != self._key:
            self.load(key, store.get(empty.id) if empty is not None else None)
        self.empty, self.store, self.blind = empty, store, blind
        self.others = others or {}
        self.display = empty is not None
        if empty is not None:
            self._build()
            self._draw()

    def _saved(self) -> Annotation | None:
        if self.empty is None or self.store is None:
            return None
        return self.store.get(self.empty.id)

    def _draw(self) -> None:
        if self.empty is None or self.store is None:
            return
        empty, saved = self.empty, self._saved()
        offered = None if self.blind else empty.suggestion
        pending = self.pending_label or (saved.label if saved else offered)
        unsaved = any(item.turn_id == empty.id for item in self.store.unsaved)
        self.show(empty, pending, self.confidence, saved, unsaved, blind=self.blind,
                  others=self.others, overrule=self.overrule)
        self._show_draft_state()

    def _show_draft_state(self) -> None:
        """Say on the state line when what is picked or typed here is not saved (and tell
        the screen when the count of drafts changed)."""
        count = self.draft_count()
        if count != self._drafts_counted:
            self._drafts_counted = count
            self.post_message(self.DraftsCounted(count))
        draft = self._draft_here()
        if draft is None or not draft.differs_from(self._saved()):
            return
        state = self.query_one("#annotation-state", Static)
        line = Text()
        line.append("draft", style="bold reverse")
        line.append(" enter saves, x discards · ", style="bold")
        line.append_text(self._state_text)
        update_static(state, line)

    @on(Input.Changed, "#annotation-note")
    def note_typed(self, event: Input.Changed) -> None:
        self._note = event.value  # kept here too: the field goes before the bar at exit
        if self.empty is not None:
            self._draw()

    def show(self, empty: EmptyTurn, pending: str | None, confidence: str,
             saved: Annotation | None, unsaved: bool, *, blind: bool = False,
             others: dict[str, str] | None = None, overrule: str = "") -> None:
        """Redraw for an empty turn, the label picked so far and what is saved.

        Blind (`blind` and nothing saved yet): the suggestion and the other reviewers'
        labels (`others`, label by reviewer) stay hidden until this reviewer saves.
        """
        self._build()
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
        self._state_text = state
        update_static(self.query_one("#annotation-state", Static), state)

    def set_note(self, note: str) -> None:
        """Put a saved note back into the field."""
        if self._note_field is None:
            self._note = note
            return
        self._note_field.value = note

    @property
    def note(self) -> str:
        """The note typed so far."""
        if self._note_field is None:
            return self._note
        return self._note_field.value

    # ---------------------------------------------------------------- actions

    def action_pick_label(self, key: str) -> None:
        label = self.labels.by_key(key)
        if label is None:
            return
        if self.empty is None:
            self.notify("Labels are for empty turns: press ] to go to the next one."
                        if self.any_stop else
                        "This session has no empty turn to label.", timeout=3, markup=False)
            return
        self.pending_label = label.name
        self._draw()

    def action_cycle_confidence(self) -> None:
        position = CONFIDENCE.index(self.confidence) if self.confidence in CONFIDENCE else 1
        self.confidence = CONFIDENCE[(position + 1) % len(CONFIDENCE)]
        self._draw()

    def action_cycle_overrule(self) -> None:
        empty = self.empty
        if empty is None:
            return
        saved = self._saved()
        if not empty.suggestion:
            self.notify("No suggestion to disagree with here.", timeout=2)
            return
        if self.blind and saved is None:
            self.notify("Blind review: save your label first (enter); then d says why it "
                        "differs from the suggestion, saved at once.", timeout=4)
            return
        label = self.pending_label or (saved.label if saved is not None else None)
        if label == empty.suggestion:
            self.notify(f"{clean(label)} is the suggestion: nothing to overrule.", timeout=2,
                        markup=False)
            return
        codes = [code for code, _ in OVERRULE_REASONS]
        position = codes.index(self.overrule) + 1 if self.overrule in codes else 0
        self.overrule = codes[position % len(codes)]
        if saved is not None and saved.label and self.pending_label in (None, saved.label):
            # The label is saved already (a blind reviewer saw the suggestion only then):
            # the reason is saved at once, with no second save to forget.
            self.action_commit()
        else:
            self._draw()

    def action_note(self) -> None:
        if self.empty is not None:
            note = self.query_one("#annotation-note", Input)
            note.can_focus = True
            # At once, not `focus()` (which waits for the message queue): the keys typed
            # right after tab are already on their way to the screen, which hands each on
            # to the field once it has focus (`ReplayScreen.on_key`).
            self.screen.set_focus(note)

    @on(Input.Submitted, "#annotation-note")
    def commit_from_note(self) -> None:
        self.action_commit()
        self.screen.set_focus(None)

    def action_commit(self) -> None:
        empty, store = self.empty, self.store
        if empty is None or store is None:
            return
        saved = store.get(empty.id)
        # Blind: Enter never accepts a suggestion the reviewer has not seen.
        offered = None if self.blind and saved is None else empty.suggestion
        label = self.pending_label or (saved.label if saved else None) or offered
        if not label:
            self.notify("Pick a label with its number key first.", severity="warning", timeout=3)
            return
        annotation: Annotation | None = None
        try:
            annotation = store.commit(
                empty.id, empty.index, label, self.note, self.confidence,
                suggestion=empty.suggestion or "", rule=empty.suggestion_rule or "",
                overrule=self.overrule,
                # Saying why after the reveal keeps a blind label blind; changing it does not.
                blind=self.blind and (saved is None or (saved.blind and label == saved.label)))
        except JournalError as error:
            self.notify(f"{clean(str(error))}\nKept in memory; export or fix the directory to "
                        "save it.",
                        title="Annotation not saved", severity="error", markup=False,
                        timeout=10)
        else:
            name = f"#{empty.index + 1}{'+' if empty.is_placeholder else ''}"
            why = dict(OVERRULE_REASONS).get(annotation.overrule)
            said = f" Why not {clean(empty.suggestion or '')}: {why}." if why else ""
            self.notify(f"Saved {clean(annotation.label)} for {name}.{said}", timeout=3,
                        markup=False)
        self.pending_label = None
        self.drafts.drop(self._key)
        self.post_message(self.Saved(annotation))

    def action_discard_draft(self) -> None:
        if self.empty is None:
            return
        draft = self._draft_here()
        saved = self._saved()
        if draft is None or not draft.differs_from(saved):
            self.notify("Nothing unsaved here to discard.", timeout=2)
            return
        self.load(self._key, saved, keep=False)
        self._draw()
        self.notify(f"Draft of {draft.name} discarded.", timeout=2, markup=False)

    def action_undo(self) -> None:
        if self.store is None:
            return
        try:
            restored = self.store.undo()
        except JournalError as error:
            self.notify(clean(str(error)), title="Undo not saved", severity="error", markup=False)
            restored = None
        if restored is None:
            self.notify("Nothing to undo.", timeout=2)
            return
        what = f"restored {restored.label}" if restored.label else "annotation removed"
        self.notify(f"Undone: #{restored.turn_index + 1} {what}.", timeout=3, markup=False)
        self.post_message(self.Undone(restored))
