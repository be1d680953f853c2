"""The main screen: one session, stepped or played, pausing at empty turns, with context panes.

The screen holds the position (which turn, or the missing reply after it) and what every
part of it needs to know about the session; each concern is owned elsewhere, with its own
state, bindings and actions:

- playback (step, play, speed, auto-pause): `replay.ui.controls.playback.Playback`
- annotation (label, note, confidence, overrule, save, undo):
  `replay.ui.widgets.annotation_bar.AnnotationBar`
- search (matches, count, highlight): `replay.ui.controls.search.Search`
- live growth (new turns, live end, silence): `replay.ui.controls.following.Following`
- the turn's tools (raw record, copy, subagents, export): `replay.ui.controls.turn_tools`
- Before and After: `replay.ui.widgets.context_panes.ContextPanes`
- the current turn and its folds: `replay.ui.widgets.current_turn.CurrentTurn`

The screen lists their bindings as its own (keys reach the screen when nothing is focused)
and routes each to its owner; it owns the stops (`]`, `[`, `u`, `:`), which a review queue
redefines. It tells the app what happened by messages (`replay.ui.messages`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Static
from textual.worker import get_current_worker

from replay.core.annotate.annotations import AnnotationStore
from replay.core.annotate.journal import JournalError
from replay.core.detection.empty import (
    DetectionRules,
    EmptyTurn,
    Suggester,
    describe_empty,
    records_completion,
)
from replay.core.index.navigation import Navigator
from replay.core.session.labels import LabelSet
from replay.core.session.model import Session, Turn, no_conversation, turn_id
from replay.ui.banner import banner_text
from replay.ui.controls.following import Following
from replay.ui.controls.playback import Playback
from replay.ui.controls.routing import ROUTE, routed
from replay.ui.controls.search import Search
from replay.ui.controls.turn_tools import TurnTools
from replay.ui.empty_reports import EmptyReports
from replay.ui.messages import ReplayScreenShown, ScreenPainted, ViewChanged
from replay.ui.outgrown import mark_outgrown, outgrown_label, outgrown_text
from replay.ui.read_warnings import warning_line
from replay.ui.render import clean
from replay.ui.repaint import update_static
from replay.ui.status import status_text
from replay.ui.widgets.annotation_bar import AnnotationBar
from replay.ui.widgets.context_panes import ContextPanes
from replay.ui.widgets.current_turn import CurrentTurn, Shown
from replay.ui.widgets.timeline import Timeline, TimelineJump

if TYPE_CHECKING:
    from replay.config import Settings

DESCRIBE_PAUSE = 0.005
"""Seconds the background description of empty turns sleeps after each one."""
NARROW_WIDTH = 110
SHORT_HEIGHT = 32

STOP_BINDINGS: list[BindingType] = [
    Binding("right_square_bracket", "next_empty", "Next empty", id="next-empty-turn",
            tooltip="Jump to the next empty turn"),
    Binding("left_square_bracket", "previous_empty", "Prev empty", id="previous-empty-turn",
            tooltip="Jump to the previous empty turn"),
    Binding("u", "next_unannotated", "Unannotated", id="next-unannotated",
            tooltip="Jump to the next empty turn without an annotation"),
    Binding("colon,ctrl+g", "goto", "Go to", id="goto-turn", show=False,
            tooltip="Go to a turn by number or id"),
    Binding("escape", "back", "Back", id="back",
            tooltip="Leave the note field, or go back to the session list"),
]
"""The screen's own keys: the stops it moves between, and back."""
SCREEN_ACTIONS = frozenset({ROUTE, "next_empty", "previous_empty", "next_unannotated", "goto",
                            "back"})
"""Every action the screen's bindings run (its own and, routed, its owners')."""

OWNERS: dict[str, type[Widget]] = {
    "playback": Playback, "search": Search, "following": Following, "tools": TurnTools,
    "annotation": AnnotationBar, "context": ContextPanes, "current-area": CurrentTurn,
}
"""Each concern owner by the widget id its bindings are routed to."""

KEY_ORDER = (
    "toggle-play", "next-turn", "previous-turn", "first-turn", "last-turn",
    "next-empty-turn", "previous-empty-turn", "next-unannotated", "faster", "slower",
    "wider-context", "narrower-context", "goto-turn", "search", "search-next",
    "search-previous", "role-filter", "raw-record", "copy-turn", "toggle-unfold",
    "scroll-turn-down", "scroll-turn-up", "page-turn-down", "page-turn-up", "turn-text-end",
    "turn-text-top", "open-sidechain", "commit-annotation", "edit-note", "cycle-confidence",
    "switch-context", "overrule-reason", "undo-annotation", "discard-draft", "export-csv",
    "live-end", "back",
)
"""The order the footer and the help list the keys in (the label keys come last)."""


def screen_bindings() -> list[BindingType]:
    """The screen's own bindings and every owner's, routed to it, in `KEY_ORDER`."""
    by_id: dict[str, BindingType] = {
        binding.id: binding for binding in STOP_BINDINGS
        if isinstance(binding, Binding) and binding.id}
    labels: list[BindingType] = []
    for owner, widget in OWNERS.items():
        for binding in routed(owner, widget.BINDINGS):
            if binding.id and binding.id.startswith("pick-label-"):
                labels.append(binding)
            elif binding.id:
                by_id[binding.id] = binding
    missing = set(by_id) - set(KEY_ORDER)
    if missing:
        raise RuntimeError(f"bindings missing from KEY_ORDER: {sorted(missing)}")
    return [by_id[key] for key in KEY_ORDER] + labels


def no_empty(navigator: Navigator, side: str) -> str:
    """Why `]` or `[` goes nowhere: none on that side, or none in the whole session."""
    if not navigator.empty_indices:
        return "This session has no empty turn."
    return f"No empty turn {side} this one."


def bound_keys(bindings: list[BindingType]) -> set[str]:
    """Every key of the bindings (a label key that is one of them is left to it)."""
    keys: set[str] = set()
    for binding in bindings:
        if isinstance(binding, Binding):
            keys.update(key.strip() for key in binding.key.split(","))
    return keys


@dataclass
class EmptyTurnsDescribed(Message):
    """Evidence and suggestions worked out in a thread for the empty turns of a session."""

    generation: int
    described: dict[int, EmptyTurn]
    asked: list[int]
    """The turns the thread was given (it may stop before the last, when replaced)."""


class ReplayScreen(Screen[None]):
    """Step through one session; stop by itself at every empty turn."""

    AUTO_FOCUS = None

    BINDING_GROUP_TITLE = "Replay"
    BINDINGS = screen_bindings()

    index: reactive[int] = var(0, init=False)
    """Position of the current turn."""

    def __init__(self, session: Session, store: AnnotationStore, *, labels: LabelSet,
                 rules: DetectionRules, suggester: Suggester | None, following: bool,
                 indexing: bool, settings: Settings | None = None) -> None:
        super().__init__()
        self.session = session
        """The session on screen."""
        self.navigator = Navigator(session, rules, live=following)
        """Empty-turn index and moves."""
        self.store = store
        """This reviewer's annotations, saved on commit."""
        self.labels = labels
        """Active label set."""
        self.rules = rules
        """What counts as empty."""
        self.suggester = suggester
        """Suggests labels for empty turns."""
        self.following = following
        """The file is followed as it grows."""
        self.indexing = indexing
        """Turns are still being read."""
        self.settings = settings
        """User settings (the app's when not given)."""
        self.load_percent = 0
        """Bytes read so far, in percent."""
        self.moved = False
        """The reviewer moved since the screen opened (so loading must not jump)."""
        self.paused_at_empty = False
        """The view stopped by itself at the current stop (playback or following)."""
        self.placeholder = False
        """The view is on the missing reply after the request at `index` (see `at_placeholder`)."""
        self.others: dict[str, dict[str, str]] = {}
        """Other reviewers' labels by turn id (label by reviewer), from the journal."""
        self.reports = EmptyReports(session, self.navigator, rules, suggester)
        """Evidence and suggestion of each empty turn, worked out once."""
        self.generation = 0
        """Bumped whenever turns change, so a late description of old turns is dropped."""
        self._annotated: tuple[object, frozenset[int]] = ((), frozenset())
        """`annotated_indices`, with what it was worked out from."""
        self.playback = Playback()
        self.searching = Search()
        self.live = Following(following)
        self.tools = TurnTools()
        self.annotation = AnnotationBar(labels, id="annotation")
        self.panes = ContextPanes(id="context")
        self.current_turn = CurrentTurn(id="current-area")
        self._opened_at = 0.0
        self._resumed = False

    def compose(self) -> ComposeResult:
        yield Static(id="status", markup=False)
        yield Timeline(self.session, id="timeline")
        yield self.panes
        yield self.current_turn
        yield self.annotation
        yield Footer(compact=True)
        yield from (self.playback, self.searching, self.live, self.tools)

    def on_mount(self) -> None:
        if self.settings is None:
            self.settings = cast("Settings", self.app.settings)
        self.playback.set_reactive(Playback.speed, self.settings.speed)
        self.playback.idle_cap = self.settings.idle_cap
        self.panes.set_reactive(ContextPanes.context_turns, self.settings.context_turns)
        self._opened_at = time.monotonic()
        self._apply_size()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.show())
        if not self.indexing:
            self.resume_position()
        self.load_others()
        self.show()
        self.call_after_refresh(self.app.post_message, ScreenPainted())

    @property
    def blind(self) -> bool:
        """Blind review: the suggestion and others' labels stay hidden until a save."""
        return self.settings is not None and self.settings.blind

    def load_others(self) -> None:
        """Read the other reviewers' labels of this session from the journal."""
        try:
            records = self.store.journal.load().records
        except JournalError:
            records = []  # the store reported it already when it loaded
        if not records:
            self.others = {}  # no journal yet: the agreement module is not needed to say so
            return
        from replay.core.annotate.agree import labels_of_others

        self.others = labels_of_others(records, self.store.session_id, self.store.reviewer)

    def on_resize(self) -> None:
        self._apply_size()
        if self.session.turns:
            self.show_status()
            self.panes.show_around(self.session, self.navigator, self.index,
                                   self.at_placeholder)

    @on(events.ScreenResume)
    def shown_again(self, event: events.ScreenResume) -> None:
        """This session is the one on screen (again, back from a subagent's screen).

        The first time, every widget was styled as it mounted a moment ago: Textual would
        style the whole screen once more, a tenth of the work of the first screen. Later
        resumes restyle it as Textual does.
        """
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False
        self.app.post_message(ReplayScreenShown(self))

    def _apply_size(self) -> None:
        width, height = self.app.size
        narrow, short = width < NARROW_WIDTH, height < SHORT_HEIGHT
        self.set_class(narrow, "narrow")
        self.set_class(short, "short")
        # Stacked on a small terminal, Before and After got two lines each: show one at a
        # time, full height, and let `|` switch.
        self.panes.fold(narrow and short)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Typing a note, a key either goes into the note or would act behind the reviewer's
        # back: only saving and leaving the field are offered (the footer offered `/ Search`
        # while `/` went into the note).
        if isinstance(self.focused, Input):
            return (action == ROUTE and parameters == ("annotation", "commit")) \
                or action == "back" or action not in SCREEN_ACTIONS
        if action == "back":
            # Offered (in the footer too) only when a screen below this one is where escape
            # goes back to (the session list, or the session that started this subagent).
            stack = self.app.screen_stack
            return self in stack and stack.index(self) > 1
        return True

    async def action_route(self, owner: str, action: str) -> None:
        """Run a routed binding's action on its owner (see `replay.ui.controls.routing`)."""
        await self.app.run_action(action, self.query_one(f"#{owner}"))

    # ---------------------------------------------------------------- state shown

    def empty_turn(self, index: int) -> EmptyTurn | None:
        """The report of the empty turn at `index` (cached), or None if it is not empty."""
        return self.reports.report(index)

    @property
    def at_placeholder(self) -> bool:
        """True when the view is on the placeholder of a missing reply (after `index`)."""
        return self.placeholder and self.navigator.is_placeholder(self.index)

    def stop_id(self, index: int) -> str:
        """The journal key of the stop at `index`: the turn's id, or its missing reply's."""
        from replay.core.session.turn_ref import placeholder_id

        found = turn_id(self.session.turns, index)
        return placeholder_id(found) if self.navigator.is_placeholder(index) else found

    def annotated_indices(self) -> set[int]:
        """Indices of the empty turns this reviewer has annotated (kept until the annotations
        or stops change: every step asks, and a big session has 7,000 stops)."""
        ids = self.store.annotated_ids
        if not ids:
            return set()
        key = (ids, self.generation, len(self.navigator.empty_indices), id(self.navigator))
        if self._annotated[0] != key:
            self._annotated = (key, frozenset(i for i in self.navigator.empty_indices
                                              if self.stop_id(i) in ids))
        return set(self._annotated[1])

    def status_text(self, annotated: set[int] | None = None) -> Text:
        """The header line (`annotated`: indices of annotated empty turns, if known)."""
        if annotated is None:
            annotated = self.annotated_indices()
        return status_text(self, annotated, self.app.size.width if self.is_mounted else 200)

    def status_prefix(self) -> Text:
        """What the header shows after the app's name, before the session (none here)."""
        return Text()

    def show_status(self, annotated: set[int] | None = None) -> None:
        """Redraw the header line only."""
        update_static(self.query_one("#status", Static), self.status_text(annotated))

    def show_silence(self, silence: str) -> None:
        """Show how long the followed session has been silent ("" once it speaks again)."""
        self.query_one(Timeline).set_silence(silence)
        self.show_status()

    def banner_text(self, turn: Turn, empty: EmptyTurn | None) -> Text:
        """The line above the current turn; an alarm at an empty turn."""
        return banner_text(self.session, self.navigator, turn, empty,
                           len(self.sidechains_of(turn)))

    def sidechains_of(self, turn: Turn) -> list[Session]:
        """Subagent sessions started by a tool call of this turn."""
        if not self.session.sidechains:
            return []
        calls = {part.call_id for part in turn.parts if part.call_id}
        return [s for s in self.session.sidechains if s.parent_call in calls]

    def show(self) -> None:
        """Redraw everything for the current index (callers keep the index in range)."""
        self.app.post_message(ViewChanged())
        turns = self.session.turns
        annotated = self.annotated_indices()
        self.show_status(annotated)
        self.query_one(Timeline).set_state(self.index, self.navigator.empty_indices, annotated)
        if not turns:
            # An empty or cut-off file, or one of bookkeeping alone: say why there is
            # nothing, as `scan` does (following, the turns may still come).
            warning = warning_line(self.session) or (
                None if self.following else no_conversation(self.session))
            self.current_turn.show_banner(
                Text(f" no turns · {warning}" if warning else " (no turns yet)",
                     style="italic"), shown=True, empty=False)
            self.annotation.at_stop(None, None, self.store, any_stop=False)
            return
        turn = turns[self.index]
        empty = self.empty_turn(self.index)
        if ahead := self.reports.ahead(self.index) if not self.indexing else None:
            self.describe_empty_turns(ahead, self.generation)  # (big: near the reviewer)
        if empty is not None and empty.is_placeholder != self.at_placeholder:
            empty = None  # on the request itself: its missing reply is the stop after it
        text = self.banner_text(turn, empty)
        # Labelled while it looked empty, content now: said on the turn, never silent.
        outgrown = outgrown_label(self, turn) if empty is None else None
        if outgrown is not None:
            text.append_text(outgrown_text(self, outgrown))
        self.current_turn.show_banner(
            text, empty=empty is not None,
            shown=empty is not None or bool(self.sidechains_of(turn))
            or self.navigator.is_placeholder(turn.index) or outgrown is not None)
        # On the container, not the screen: a class change restyles the whole subtree.
        self.current_turn.set_class(empty is not None, "at-empty")
        self.current_turn.show_turn(Shown(
            self.session, self.navigator, turn, empty is not None,
            self.empty_turn(turn.index) if self.at_placeholder else None, self.following,
            self.searching.marked()))
        self.panes.show_around(self.session, self.navigator, self.index, self.at_placeholder)
        # The stop as the annotation bar keeps its draft.
        stop = (self.store.session_id, self.stop_id(self.index))
        self.annotation.at_stop(stop, empty, self.store, blind=self.blind,
                                others=self.others.get(turn.id),
                                any_stop=bool(self.navigator.empty_indices))

    def watch_index(self) -> None:
        self.current_turn.moved()
        self.paused_at_empty = self.paused_at_empty and self.playback.playing is False
        self.load_bar()
        self.live.moved_to(self.index, len(self.session.turns) - 1)
        self.show()

    def load_bar(self, *, keep: bool = True) -> None:
        """Put the current stop's draft, or its saved annotation (or nothing), into the
        annotation bar; the last stop's draft is kept unless not `keep`."""
        if not self.session.turns:
            self.annotation.load(None, None, keep=keep)
            return
        stop = self.stop_id(self.index)
        self.annotation.load((self.store.session_id, stop), self.store.get(stop), keep=keep)

    @on(AnnotationBar.Saved)
    @on(AnnotationBar.DraftsCounted)
    def show_annotation_news(self, event: AnnotationBar.Saved | AnnotationBar.DraftsCounted
                             ) -> None:
        """A save redraws everything (the count, the timeline's marks); a draft made or
        dropped, the header's count."""
        event.stop()
        if isinstance(event, AnnotationBar.Saved):
            self.show()
        else:
            self.show_status()

    @on(AnnotationBar.Undone)
    def show_undone(self, event: AnnotationBar.Undone) -> None:
        event.stop()
        index = event.restored.turn_index
        self.go(index if 0 <= index < len(self.session.turns) else self.index)
        # Already on that turn, `go` does not reload the bar: the removed note stayed in the
        # field, and enter saved it again.
        self.load_bar(keep=False)
        self.show()

    # ---------------------------------------------------------------- moving

    def go(self, index: int | None, placeholder: bool | None = None) -> None:
        """Move to a turn (clamped); any move by the reviewer stops playback.

        `placeholder`: land on the missing reply after the turn rather than on the turn; by
        default a jump to a stop lands on the stop, which for a request is its missing reply.
        """
        if index is None or not self.session.turns:
            return
        self.moved = True
        self.playback.playing = False
        self.paused_at_empty = False
        index = max(0, min(len(self.session.turns) - 1, index))
        was = self.at_placeholder
        self.placeholder = self.navigator.is_placeholder(index) if placeholder is None \
            else placeholder
        if index == self.index:
            if was != self.at_placeholder:
                self.load_bar()  # another stop: what was picked for the last one is not its
            self.show()
        else:
            self.index = index

    def resume_position(self) -> None:
        """Land on the first unannotated empty turn (or stay at the start if there is none)."""
        ids = self.store.annotated_ids
        for index in self.navigator.empty_indices:
            if self.stop_id(index) not in ids:
                self.placeholder = self.navigator.is_placeholder(index)
                self.set_reactive(ReplayScreen.index, index)
                return

    @on(TimelineJump)
    def jump_from_timeline(self, event: TimelineJump) -> None:
        self.go(event.index)

    def action_next_empty(self) -> None:
        if not self.at_placeholder and self.navigator.is_placeholder(self.index):
            self.go(self.index, placeholder=True)  # this request's missing reply comes next
            return
        target = self.navigator.next_empty(self.index)
        if target is None:
            self.notify(no_empty(self.navigator, "after"), timeout=2, markup=False)
        self.go(target)

    def action_previous_empty(self) -> None:
        target = self.navigator.previous_empty(self.index)
        if target is None:
            self.notify(no_empty(self.navigator, "before"), timeout=2, markup=False)
        self.go(target)

    def action_next_unannotated(self) -> None:
        ids = self.store.annotated_ids
        order = self.navigator.empty_indices
        # On a request, its missing reply is still ahead.
        ahead = self.index - (0 if self.at_placeholder else 1)
        candidates = [i for i in order if i > ahead] + [i for i in order if i <= ahead]
        for index in candidates:
            if self.stop_id(index) not in ids:
                self.go(index)
                return
        self.notify("Every empty turn is annotated.", timeout=3)

    def action_goto(self) -> None:
        from replay.core.session.turn_ref import TurnReferenceError, resolve_stop
        from replay.ui.screens.prompt import PromptScreen

        def go_to(answer: str | None) -> None:
            if not answer:
                return
            try:
                # A bare number is the #N the header shows: going there is visible and harmless.
                found = resolve_stop(self.session.turns, answer, self.navigator.is_placeholder,
                                     bare_numbers=True, prefixes=True)
            except TurnReferenceError as error:
                self.notify(clean(str(error)), severity="warning", markup=False)
                return
            self.go(found.index, placeholder=found.placeholder)

        self.app.push_screen(PromptScreen("Go to turn (number or id)"), go_to)

    def action_back(self) -> None:
        if isinstance(self.focused, Input):
            self.set_focus(None)
        elif len(self.app.screen_stack) > 2:
            from replay.ui.screens.drafts import back_to_list

            back_to_list(self)

    def on_key(self, event: events.Key) -> None:
        """Label keys that are not digits (a custom label set may use letters)."""
        if isinstance(self.focused, Input) or not event.character:
            return
        if event.character.isdigit() or event.character in bound_keys(self.BINDINGS):
            return
        if self.labels.by_key(event.character) is not None:
            event.stop()
            self.annotation.action_pick_label(event.character)

    # ---------------------------------------------------------------- playing

    def stops_at(self, index: int) -> bool:
        """True when playback pauses by itself at this turn (a review queue narrows it)."""
        return self.navigator.is_empty_at(index)

    def refuses_to_play(self) -> bool:
        """Play was pressed: True (and said why) when there is nothing left to play."""
        if self.index >= len(self.session.turns) - 1 \
                and (self.at_placeholder or not self.navigator.is_placeholder(self.index)):
            self.notify("At the last turn.", timeout=2)
            return True
        return False

    def played_to_end(self) -> None:
        """Playback reached the last turn (a review queue carries on into its next session)."""

    # ---------------------------------------------------------------- growth

    def turns_added(self, changed_from: int, *, done: bool, reset: bool,
                    session: Session | None = None, pending: int | None = None) -> None:
        """The session grew or changed (loading or following); index it and redraw.

        Args:
            changed_from: first turn index that is new or changed.
            done: the initial read is complete.
            reset: forget everything known about the turns (the source was rewritten).
            session: a new session object replacing the current one (whole-document formats
                are read anew on each change).
            pending: following: the last turn, still being written; not indexed as empty yet.
        """
        if session is not None and session is not self.session:
            self.session = session
            self.query_one(Timeline).session = session
            reset = True
        timeline = self.query_one(Timeline)
        if reset:
            changed_from = 0
            self.navigator = Navigator(self.session, self.rules, live=self.following)
            self.reports.renew(self.session, self.navigator)
            self.reports.rules = self.rules
            timeline.reset()
        else:
            self.reports.forget_from(changed_from)
            timeline.forget_from(changed_from)
        self.generation += 1
        self.live.pending = pending if self.following else None
        new_empty = self.navigator.refresh(changed_from, upto=self.live.pending)
        first_load = done and self.indexing
        if first_load:
            self.indexing = False
            warning = warning_line(self.session)
            if warning and self.session.turns:
                self.notify(warning, title="Read with warnings", severity="warning", timeout=8,
                            markup=False)
        last = max(len(self.session.turns) - 1, 0)
        if first_load and self.following:
            self.index = last
        elif first_load and not self.moved:
            before = self.index
            self.resume_position()
            if self.index != before and time.monotonic() - self._opened_at > 0.5:
                # The reviewer has been looking at turn 1 while the file was read: say why
                # the view moves.
                empties = len(self.navigator.empty_indices)
                self.notify(f"{len(self.session.turns):,} turns, {empties:,} empty: here is the "
                            "first one not annotated yet.", timeout=4, markup=False)
        elif self.following and not self.indexing:
            self.live.grew(new_empty, last)
        self.index = min(self.index, last)
        if self.following and not self.indexing:
            # A label saved while a reply was still being written: its turn grew content.
            mark_outgrown(self)
        self.show()

    @work(thread=True, exclusive=True, group="describe", exit_on_error=False,
          description="Describing empty turns")
    def describe_empty_turns(self, indices: list[int], generation: int) -> None:
        """Work out evidence and suggestions ahead, so jumping to an empty turn never waits
        for the session-wide statistics the suggester needs the first time."""
        turns = self.session.turns
        described: dict[int, EmptyTurn] = {}
        # Once for all of them: asked per empty turn, it walked every turn each time (a
        # session with no completion times: 17,000 empty turns of 188,000 took minutes).
        records = records_completion(self.session)
        worker = get_current_worker()
        for index in indices:
            if worker.is_cancelled:
                break  # a newer call (the reviewer moved on) has its own list
            if index < len(turns):
                described[index] = describe_empty(self.session, turns[index], self.rules,
                                                  self.suggester, records)
                # A breath after each: thousands of empty turns would otherwise hold the
                # interpreter for seconds while the reviewer steps or opens the palette.
                time.sleep(DESCRIBE_PAUSE)
        self.post_message(EmptyTurnsDescribed(generation, described, indices))

    @on(EmptyTurnsDescribed)
    def keep_descriptions(self, event: EmptyTurnsDescribed) -> None:
        if event.generation == self.generation:
            self.reports.keep(event.described, event.asked)

