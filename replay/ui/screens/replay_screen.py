"""The main screen: one session, stepped or played, pausing at empty turns, with context panes."""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Static

from replay.core.annotate.annotations import CONFIDENCE, AnnotationStore
from replay.core.annotate.journal import JournalError
from replay.core.detection.empty import (
    REASON_BY_CODE,
    DetectionRules,
    EmptyTurn,
    Suggester,
    describe_empty,
    format_duration,
    gap_before,
)
from replay.core.index.navigation import Navigator, faster, slower
from replay.core.session.labels import LabelSet
from replay.core.session.model import Kind, Session, Turn, turn_id
from replay.core.session.text import plural
from replay.ui.messages import OpenSessionRequested
from replay.ui.outgrown import mark_outgrown, outgrown_label, outgrown_text
from replay.ui.read_warnings import warning_line
from replay.ui.render import clean, gap_text, turn_plain_text
from replay.ui.repaint import update_static
from replay.ui.widgets.annotation_bar import AnnotationBar
from replay.ui.widgets.timeline import Timeline, TimelineJump
from replay.ui.widgets.turn_view import TurnLines

if TYPE_CHECKING:
    from replay.ui.app import ReplayApp

ROLE_FILTERS: tuple[str | None, ...] = (None, "user", "assistant")
DESCRIBE_PAUSE = 0.005
"""Seconds the background description of empty turns sleeps after each one."""
NARROW_WIDTH = 110
SHORT_HEIGHT = 32


@dataclass
class EmptyTurnsDescribed(Message):
    """Evidence and suggestions worked out in a thread for the empty turns of a session."""

    generation: int
    described: dict[int, EmptyTurn]


class ReplayScreen(Screen[None]):
    """Step through one session; stop by itself at every empty turn."""

    AUTO_FOCUS = None

    BINDING_GROUP_TITLE = "Replay"
    BINDINGS = [
        Binding("space", "toggle_play", "Play/pause", id="toggle-play",
                tooltip="Play the session; playback pauses by itself at empty turns"),
        Binding("right,l", "step(1)", "Next", id="next-turn", tooltip="Next turn"),
        Binding("left,h", "step(-1)", "Prev", id="previous-turn", tooltip="Previous turn"),
        Binding("home,g", "first", "First", id="first-turn", show=False,
                tooltip="First turn"),
        Binding("end,G", "last", "Last", id="last-turn", show=False, tooltip="Last turn"),
        Binding("right_square_bracket", "next_empty", "Next empty", id="next-empty-turn",
                tooltip="Jump to the next empty turn"),
        Binding("left_square_bracket", "previous_empty", "Prev empty",
                id="previous-empty-turn", tooltip="Jump to the previous empty turn"),
        Binding("u", "next_unannotated", "Unannotated", id="next-unannotated",
                tooltip="Jump to the next empty turn without an annotation"),
        Binding("plus,equals_sign", "faster", "Faster", id="faster", show=False,
                tooltip="Play faster"),
        Binding("minus", "slower", "Slower", id="slower", show=False, tooltip="Play slower"),
        Binding("greater_than_sign", "context(1)", "More context", id="wider-context",
                show=False, tooltip="Show more turns before and after"),
        Binding("less_than_sign", "context(-1)", "Less context", id="narrower-context",
                show=False, tooltip="Show fewer turns before and after"),
        Binding("colon,ctrl+g", "goto", "Go to", id="goto-turn", show=False,
                tooltip="Go to a turn by number or id"),
        Binding("slash", "search", "Search", id="search", tooltip="Search turn text"),
        Binding("n", "search_next(True)", "Next match", id="search-next", show=False,
                tooltip="Next search match"),
        Binding("N", "search_next(False)", "Prev match", id="search-previous", show=False,
                tooltip="Previous search match"),
        Binding("r", "cycle_role", "Role filter", id="role-filter", show=False,
                tooltip="Step through all turns, only user turns, or only assistant turns"),
        Binding("v", "raw", "Raw", id="raw-record", show=False,
                tooltip="Show the source record of the turn"),
        Binding("y", "copy", "Copy", id="copy-turn", show=False,
                tooltip="Copy the turn's text to the clipboard (OSC 52)"),
        Binding("o", "toggle_expanded", "Unfold", id="toggle-unfold", show=False,
                tooltip="Unfold or fold the tool calls, reasoning and attachments of the turn"),
        Binding("s", "sidechain", "Subagent", id="open-sidechain", show=False,
                tooltip="Open a subagent started by this turn"),
        Binding("enter", "commit", "Save", id="commit-annotation",
                tooltip="Save the annotation (accepts the suggestion when none is picked)"),
        Binding("tab", "note", "Note", id="edit-note", show=False, tooltip="Write a note"),
        Binding("c", "cycle_confidence", "Confidence", id="cycle-confidence", show=False,
                tooltip="Cycle confidence: low, medium, high"),
        Binding("vertical_line", "switch_context", "Before/After", id="switch-context",
                show=False,
                tooltip="On a small terminal, show the After pane instead of Before, or back"),
        Binding("d", "cycle_overrule", "Why not", id="overrule-reason", show=False,
                tooltip="Say why the label differs from the suggestion (cycles the reasons)"),
        Binding("z,ctrl+z", "undo", "Undo", id="undo-annotation", show=False,
                tooltip="Undo the last annotation saved in this session"),
        Binding("e", "export", "Export", id="export-csv",
                tooltip="Export annotations to a CSV file in the current directory"),
        Binding("f", "live", "Live end", id="live-end", show=False,
                tooltip="Jump to the newest turn and keep following"),
        Binding("escape", "back", "Back", id="back", show=False,
                tooltip="Leave the note field, or go back to the session list"),
    ] + [
        Binding(key, f"pick_label('{key}')", f"Label {key}", id=f"pick-label-{key}", show=False,
                tooltip=f"Pick the label whose key is {key}")
        for key in "1234567890"
    ]

    index: reactive[int] = var(0, init=False)
    """Position of the current turn."""
    playing: reactive[bool] = var(False, init=False)
    """Playback is running."""
    speed: reactive[float] = var(1.0, init=False)
    """Playback speed factor."""
    context_turns: reactive[int] = var(3, init=False)
    """Turns shown in each context pane."""

    def __init__(self, session: Session, store: AnnotationStore, *, labels: LabelSet,
                 rules: DetectionRules, suggester: Suggester | None, following: bool,
                 indexing: bool) -> None:
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
        self.load_percent = 0
        """Bytes read so far, in percent."""
        self.at_live_end = True
        """Following: the reviewer is at the newest turn, so new turns advance the view."""
        self.new_turns = 0
        """Following: turns that arrived while the reviewer was elsewhere."""
        self.moved = False
        """The reviewer moved since the screen opened (so loading must not jump)."""
        self.paused_at_empty = False
        """Playback stopped by itself at the current empty turn."""
        self.placeholder = False
        """The view is on the missing reply after the request at `index` (see `at_placeholder`)."""
        self.role_filter: str | None = None
        """Only step through turns of this role."""
        self.pending_label: str | None = None
        """Label picked for the current empty turn but not saved yet."""
        self.confidence = "medium"
        """Confidence for the next save."""
        self.overrule = ""
        """Why the picked label differs from the suggestion (an `OVERRULE_REASONS` code)."""
        self.others: dict[str, dict[str, str]] = {}
        """Other reviewers' labels by turn id (label by reviewer), from the journal."""
        self.search_query = ""
        """Last search."""
        self.folded = False
        """Before and After are shown one at a time (a small terminal)."""
        self.context_shown = "before"
        """The context pane shown when they are folded."""
        self._search_key: tuple[str, int, int] = ("", 0, 0)
        self._search_hits: list[int] = []
        self.expanded = False
        """Tool calls, reasoning and attachments of the current turn are all unfolded."""
        self.unfolded: set[int] = set()
        """Parts of the current turn unfolded one by one (by clicking them)."""
        self.silent_since: float | None = None
        """Following: epoch seconds of the last write of a session stalled waiting for a reply."""
        self.pending: int | None = None
        """Following: the last turn while it is still being written (never stopped at)."""
        self._silence_timer: Timer | None = None
        self._timer: Timer | None = None
        self._empty_cache: dict[int, EmptyTurn] = {}
        self._opened_at = 0.0
        self._generation = 0
        """Bumped whenever turns change, so a late description of old turns is dropped."""

    @property
    def replay_app(self) -> ReplayApp:
        """The app, typed (imported for type checking only: the app imports this screen)."""
        return cast("ReplayApp", self.app)

    def compose(self) -> ComposeResult:
        yield Static(id="status", markup=False)
        yield Timeline(self.session, id="timeline")
        with Horizontal(id="context"):
            yield TurnLines(id="before", classes="pane")
            yield TurnLines(id="after", classes="pane")
        with Vertical(id="current-area"):
            yield Static(id="banner", markup=False)
            yield TurnLines(id="current", classes="pane")
        yield AnnotationBar(self.labels, id="annotation")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        settings = self.replay_app.settings
        self.set_reactive(ReplayScreen.speed, settings.speed)
        self.set_reactive(ReplayScreen.context_turns, settings.context_turns)
        self._opened_at = time.monotonic()
        self._apply_width(self.app.size.width)
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.show())
        if not self.indexing:
            self.resume_position()
        self.load_others()
        self.show()
        self.call_after_refresh(self.replay_app.first_screen_painted.set)

    @property
    def blind(self) -> bool:
        """Blind review: the suggestion and others' labels stay hidden until a save."""
        return self.replay_app.settings.blind

    def load_others(self) -> None:
        """Read the other reviewers' labels of this session from the journal."""
        from replay.core.annotate.agree import labels_of_others

        try:
            records = self.store.journal.load().records
        except JournalError:
            records = []  # the store reported it already when it loaded
        self.others = labels_of_others(records, self.store.session_id, self.store.reviewer)

    def on_resize(self) -> None:
        self._apply_width(self.app.size.width)
        if self.session.turns:
            update_static(self.query_one("#status", Static), self.status_text())
            self._fill_context()

    def on_screen_resume(self) -> None:
        # Back from a subagent's screen: this session is the one on screen again.
        self.replay_app.replay_screen = self

    def _apply_width(self, width: int) -> None:
        narrow, short = width < NARROW_WIDTH, self.app.size.height < SHORT_HEIGHT
        self.set_class(narrow, "narrow")
        self.set_class(short, "short")
        # Stacked on a small terminal, Before and After got two lines each: show one at a
        # time, full height, and let `|` switch.
        self.folded = narrow and short
        self.query_one("#before").display = not self.folded or self.context_shown == "before"
        self.query_one("#after").display = not self.folded or self.context_shown == "after"

    # ---------------------------------------------------------------- state shown

    def empty_turn(self, index: int) -> EmptyTurn | None:
        """The report of the empty turn at `index` (cached), or None if it is not empty."""
        if not self.navigator.is_empty_at(index):
            return None
        found = self._empty_cache.get(index)
        if found is None:
            found = describe_empty(self.session, self.session.turns[index], self.rules,
                                   self.suggester)
            self._empty_cache[index] = found
        return found

    def described(self, index: int) -> EmptyTurn | None:
        """The report of the empty turn at `index` when it is worked out already."""
        return self._empty_cache.get(index)

    def empty_turn_quick(self, index: int) -> EmptyTurn | None:
        """The cached report of the empty turn at `index`, else one made now without the
        suggester (which reads many turns around each): for lists of every empty turn."""
        found = self._empty_cache.get(index)
        if found is not None or not self.navigator.is_empty_at(index):
            return found
        return describe_empty(self.session, self.session.turns[index], self.rules)

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
        """Indices of the empty turns this reviewer has annotated."""
        ids = self.store.annotated_ids
        return {i for i in self.navigator.empty_indices if self.stop_id(i) in ids}

    def status_text(self, annotated: set[int] | None = None) -> Text:
        """The header line (`annotated`: indices of annotated empty turns, if known).

        On a narrow terminal the session name gives way first, then the format and the
        app's name: position, play state, speed and the annotated count stay.
        """
        session = self.session
        total = len(session.turns)
        state = Text()
        plus = "+" if self.at_placeholder else ""
        state.append(f"turn {self.index + 1:,}{plus} / {total:,}" if total else "no turns",
                     style="bold")
        if self.paused_at_empty:
            state.append(" · paused at empty turn", style="bold reverse")
        elif self.playing:
            state.append(" · ▶ playing", style="bold")
        else:
            state.append(" · paused")
        state.append(f" · {self.speed:g}x")
        empties = len(self.navigator.empty_indices)
        if annotated is None:
            annotated = self.annotated_indices()
        state.append(f" · {len(annotated)} / {empties} annotated")
        match = self.search_position()
        if match is not None:
            state.append(f" · match {match[0]:,} / {match[1]:,}", style="bold")
        if self.role_filter:
            state.append(f" · {self.role_filter} only")
        if self.indexing:
            state.append(f" · indexing {self.load_percent}%", style="italic")
        if self.following:
            state.append(" · following" if self.at_live_end else " · following (paused)")
            if self.new_turns:
                state.append(f" · +{plural(self.new_turns, 'new turn')} (f)", style="bold reverse")
            silence = self.silence_text()
            if silence:
                state.append(f" · {silence}", style="bold reverse")
        # A prefix (the review queue's place) comes right after the app's name; the name
        # and format give way to it, so position, play state and counts stay in view.
        prefix = self.status_prefix()
        room = ((self.app.size.width if self.is_mounted else 200) - state.cell_len
                - prefix.cell_len - 1)
        name = clean(session.label)
        if len(name) > 40:
            name = name[:39] + "…"
        fmt = f" · {session.format} · "
        head = Text()
        if room >= len(" replay · ") + len(fmt) + 8:
            if len(" replay · ") + len(name) + len(fmt) > room:
                name = name[:room - len(" replay · ") - len(fmt) - 1] + "…"
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

    def status_prefix(self) -> Text:
        """What the header shows after the app's name, before the session (none here)."""
        return Text()

    def search_hits(self) -> list[int]:
        """The turns matching the search, found once per query and session state (a search
        on a big session reads turns back from the file: `n` and the count share one pass)."""
        key = (self.search_query, len(self.session.turns), self._generation)
        if self._search_key != key:
            self._search_key, self._search_hits = key, self.navigator.matches(self.search_query)
        return self._search_hits

    def search_position(self) -> tuple[int, int] | None:
        """`(k, n)` when the current turn is the k-th of the n turns matching the search."""
        if not self.search_query or not self.session.turns:
            return None
        hits = self.search_hits()
        position = bisect.bisect_left(hits, self.index)
        if position < len(hits) and hits[position] == self.index:
            return position + 1, len(hits)
        return None

    def silence_text(self) -> str:
        """`silent for 12 min` while a followed session is stalled, else empty."""
        if self.silent_since is None:
            return ""
        return f"silent for {format_duration(max(0.0, time.time() - self.silent_since))}"

    def silence_changed(self, since: float | None) -> None:
        """The followed session stalled (the time of its last write) or spoke again (None)."""
        self.silent_since = since
        if self._silence_timer is not None:
            self._silence_timer.stop()
            self._silence_timer = None
        if since is not None:
            self._silence_timer = self.set_interval(1.0, self._show_silence)
        self._show_silence()

    def _show_silence(self) -> None:
        self.query_one(Timeline).set_silence(self.silence_text())
        update_static(self.query_one("#status", Static), self.status_text())

    def banner_text(self, turn: Turn, empty: EmptyTurn | None) -> Text:
        """The line above the current turn; an alarm at an empty turn."""
        banner = Text()
        gap = gap_text(gap_before(self.session, turn.index)) if turn.index else ""
        sidechains = self.sidechains_of(turn)
        if empty is not None and empty.is_placeholder:
            from replay.ui.placeholder import banner_text

            placed = banner_text(self.session, empty, self.navigator.empty_ordinal(turn.index)
                                 or 0, len(self.navigator.empty_indices))
            placed.append_text(self.next_message_text(turn.index))
            return placed
        if empty is None:
            banner.append(f" #{turn.index + 1} {turn.role}", style="bold")
            if gap:
                banner.append(f" · {gap}")
            if self.navigator.is_placeholder(turn.index):
                banner.append(f" · got no reply: → shows the placeholder #{turn.index + 1}+",
                              style="italic")
            if sidechains:
                banner.append(f" · ↳ {len(sidechains)} subagent session(s) started here: "
                              "s opens", style="italic")
            return banner
        reason = REASON_BY_CODE.get(empty.reason)
        ordinal = self.navigator.empty_ordinal(turn.index) or 0
        banner.append(f" EMPTY TURN {ordinal} / {len(self.navigator.empty_indices)}: ",
                      style="bold reverse")
        phrase = reason.phrase if reason else "sent nothing"
        if empty.reason == "compaction-request" and any(
                part.kind == Kind.COMPACTION and part.name == "auto" for part in turn.parts):
            phrase = "turn is an automatic compaction (nobody asked for it)"
        banner.append(f" the {turn.role} {phrase}",
                      style="bold")
        banner.append(f" ({empty.reason})")
        if gap:
            banner.append(f" · {gap}")
        if empty.evidence:
            banner.append("\n evidence: ", style="bold")
            banner.append(clean(" · ".join(empty.evidence)))
        banner.append_text(self.next_message_text(turn.index))
        return banner

    def next_message_text(self, index: int) -> Text:
        """What the person wrote next (how they reacted to the silence), on its own line."""
        from replay.core.detection.empty import format_duration
        from replay.core.suggest.signals import next_message

        found = next_message(self.session, index)
        line = Text()
        if found is None:
            return line
        line.append("\n next: ", style="bold")
        when = (f" · {format_duration(found.after)} later" if found.after is not None else "")
        line.append(f"#{found.index + 1} user{when}: ")
        from replay.core.session.text import one_line

        line.append(one_line(clean(found.text), 160) or "(nothing)", style="italic")
        return line

    def show(self) -> None:
        """Redraw everything for the current index (callers keep the index in range)."""
        self.replay_app.collect_when_idle()
        turns = self.session.turns
        annotated = self.annotated_indices()
        update_static(self.query_one("#status", Static), self.status_text(annotated))
        timeline = self.query_one(Timeline)
        timeline.set_state(self.index, self.navigator.empty_indices, annotated)
        annotation = self.query_one(AnnotationBar)
        banner = self.query_one("#banner", Static)
        if not turns:
            # An empty or cut-off file: say why there is nothing, as `scan` does.
            warning = warning_line(self.session)
            update_static(banner, Text(f" no turns · {warning}" if warning else " (no turns yet)",
                                       style="italic"))
            banner.display = True
            annotation.display = False
            return
        turn = turns[self.index]
        empty = self.empty_turn(self.index)
        if empty is not None and empty.is_placeholder != self.at_placeholder:
            empty = None  # on the request itself: its missing reply is the stop after it
        text = self.banner_text(turn, empty)
        # Labelled while it looked empty, content now: said on the turn, never silent.
        outgrown = outgrown_label(self, turn) if empty is None else None
        if outgrown is not None:
            text.append_text(outgrown_text(self, outgrown))
        update_static(banner, text)
        banner.set_class(empty is not None, "empty")
        banner.display = empty is not None or bool(self.sidechains_of(turn)) \
            or self.navigator.is_placeholder(turn.index) or outgrown is not None
        # On the container, not the screen: a class change restyles the whole subtree.
        self.query_one("#current-area").set_class(empty is not None, "at-empty")
        self._fill_current(turn, empty is not None)
        self._fill_context()
        annotation.display = empty is not None
        if empty is not None:
            saved = self.store.get(empty.id)
            offered = None if self.blind else empty.suggestion
            pending = self.pending_label or (saved.label if saved else offered)
            unsaved = any(item.turn_id == empty.id for item in self.store.unsaved)
            annotation.show(empty, pending, self.confidence, saved, unsaved, blind=self.blind,
                            others=self.others.get(turn.id), overrule=self.overrule)

    def _fill_current(self, turn: Turn, empty: bool, *, keep_scroll: bool = False) -> None:
        found = self.empty_turn(turn.index) if self.at_placeholder else None
        if found is not None:
            from replay.ui.placeholder import placeholder_text

            self.query_one("#current", TurnLines).show_blocks(
                [(None, placeholder_text(self.session, found, live=self.following))])
            return
        self.query_one("#current", TurnLines).show_turns(
            self.session, [turn.index], compact=False,
            is_empty=lambda _: empty and self.navigator.is_empty_turn_at(turn.index),
            expanded=lambda part: self.expanded != (part in self.unfolded), full=True,
            keep_scroll=keep_scroll,
            highlight=self.search_query if self.search_position() is not None else "")

    def sidechains_of(self, turn: Turn) -> list[Session]:
        """Subagent sessions started by a tool call of this turn."""
        if not self.session.sidechains:
            return []
        calls = {part.call_id for part in turn.parts if part.call_id}
        return [s for s in self.session.sidechains if s.parent_call in calls]

    def _fill_context(self) -> None:
        turns = self.session.turns
        count = self.context_turns
        # At a missing reply the request itself is the last turn before it.
        here = self.index + 1 if self.at_placeholder else self.index
        before_range = range(max(0, here - count), here)
        after_range = range(self.index + 1, min(len(turns), self.index + 1 + count))
        for pane_id, indices, title in (("before", before_range, "Before"),
                                        ("after", after_range, "After")):
            pane = self.query_one(f"#{pane_id}", TurnLines)
            count = len(indices)
            pane.border_title = f"{title} ({count} turn{'' if count == 1 else 's'})"
            if self.folded:
                other = "After" if pane_id == "before" else "Before"
                pane.border_title += f" · | shows {other}"
            pane.show_turns(self.session, indices, compact=True,
                            is_empty=self.navigator.is_empty_turn_at,
                            at_end=pane_id == "before")

    def watch_index(self) -> None:
        self.unfolded.clear()
        self.paused_at_empty = self.paused_at_empty and self.playing is False
        self._load_bar()
        if self.following:
            self.at_live_end = self.index >= len(self.session.turns) - 1
            if self.at_live_end:
                self.new_turns = 0
        self.show()

    def _load_bar(self) -> None:
        """Put the current turn's saved annotation (or nothing) into the bar: label, note,
        confidence and overrule reason, with nothing picked yet."""
        self.pending_label = None
        saved = self.store.get(self.stop_id(self.index)) if self.session.turns else None
        self.confidence = saved.confidence if saved is not None else "medium"
        self.overrule = saved.overrule if saved is not None else ""
        self.query_one(AnnotationBar).set_note(saved.note if saved is not None else "")

    def watch_speed(self) -> None:
        update_static(self.query_one("#status", Static), self.status_text())

    def watch_context_turns(self) -> None:
        self._fill_context()

    def watch_playing(self, playing: bool) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if playing:
            self.paused_at_empty = False
            self._schedule_next()
        update_static(self.query_one("#status", Static), self.status_text())

    # ---------------------------------------------------------------- moving

    def go(self, index: int | None, placeholder: bool | None = None) -> None:
        """Move to a turn (clamped); any move by the reviewer stops playback.

        `placeholder`: land on the missing reply after the turn rather than on the turn; by
        default a jump to a stop lands on the stop, which for a request is its missing reply.
        """
        if index is None or not self.session.turns:
            return
        self.moved = True
        self.playing = False
        self.paused_at_empty = False
        index = max(0, min(len(self.session.turns) - 1, index))
        was = self.at_placeholder
        self.placeholder = self.navigator.is_placeholder(index) if placeholder is None \
            else placeholder
        if index == self.index:
            if was != self.at_placeholder:
                self._load_bar()  # another stop: what was picked for the last one is not its
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

    def action_step(self, delta: int) -> None:
        # A missing reply sits between its request and the next turn: a step visits it,
        # unless only user turns are shown.
        visits = self.role_filter != "user"
        if delta > 0 and visits and not self.at_placeholder \
                and self.navigator.is_placeholder(self.index):
            self.go(self.index, placeholder=True)
            return
        if delta < 0 and self.at_placeholder:
            self.go(self.index, placeholder=False)
            return
        target = self.navigator.step(self.index, delta, self.role_filter)
        self.go(target, placeholder=delta < 0 and visits and target < self.index
                and self.navigator.is_placeholder(target))

    def action_first(self) -> None:
        self.go(0)

    def action_last(self) -> None:
        self.go(len(self.session.turns) - 1)

    def action_next_empty(self) -> None:
        if not self.at_placeholder and self.navigator.is_placeholder(self.index):
            self.go(self.index, placeholder=True)  # this request's missing reply comes next
            return
        target = self.navigator.next_empty(self.index)
        if target is None:
            self.notify(self._no_empty("after"), timeout=2, markup=False)
        self.go(target)

    def _no_empty(self, side: str) -> str:
        """Why `]` or `[` goes nowhere: none on that side, or none in the whole session."""
        if not self.navigator.empty_indices:
            return "This session has no empty turn."
        return f"No empty turn {side} this one."

    def action_previous_empty(self) -> None:
        target = self.navigator.previous_empty(self.index)
        if target is None:
            self.notify(self._no_empty("before"), timeout=2, markup=False)
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

    def action_faster(self) -> None:
        self.speed = faster(self.speed)

    def action_slower(self) -> None:
        self.speed = slower(self.speed)

    def action_context(self, delta: int) -> None:
        self.context_turns = max(1, min(20, self.context_turns + delta))

    def action_switch_context(self) -> None:
        if not self.folded:
            self.notify("Before and After are both on screen.", timeout=2)
            return
        self.context_shown = "after" if self.context_shown == "before" else "before"
        self._apply_width(self.app.size.width)
        self._fill_context()

    def action_cycle_role(self) -> None:
        position = ROLE_FILTERS.index(self.role_filter)
        self.role_filter = ROLE_FILTERS[(position + 1) % len(ROLE_FILTERS)]
        self.notify(f"Stepping through {self.role_filter or 'all'} turns.", timeout=2,
                    markup=False)
        self.show()

    @on(TimelineJump)
    def jump_from_timeline(self, event: TimelineJump) -> None:
        self.go(event.index)

    # ---------------------------------------------------------------- playing

    def action_toggle_play(self) -> None:
        if not self.playing and self.index >= len(self.session.turns) - 1 \
                and (self.at_placeholder or not self.navigator.is_placeholder(self.index)):
            self.notify("At the last turn.", timeout=2)
            return
        self.playing = not self.playing

    def _schedule_next(self) -> None:
        settings = self.replay_app.settings
        delay = self.navigator.delay_after(self.index, self.speed, settings.idle_cap)
        self._timer = self.set_timer(delay, self._advance)

    def _advance(self) -> None:
        self._timer = None
        if not self.playing:
            return
        if not self.at_placeholder and self.navigator.is_placeholder(self.index) \
                and self.stops_at(self.index) and self.role_filter != "user":
            # The request got no reply: stop at the placeholder where the reply should be.
            self.paused_at_empty = True
            self.set_reactive(ReplayScreen.playing, False)
            self.placeholder = True
            self._load_bar()
            self.show()
            return
        if self.index >= len(self.session.turns) - 1:
            self.playing = False
            self.played_to_end()
            return
        next_index = self.navigator.step(self.index, 1, self.role_filter)
        self.placeholder = False
        if self.stops_at(next_index) and not self.navigator.is_placeholder(next_index):
            self.paused_at_empty = True
            self.set_reactive(ReplayScreen.playing, False)
            self.index = next_index
            update_static(self.query_one("#status", Static), self.status_text())
            return
        self.index = next_index
        self._schedule_next()

    def stops_at(self, index: int) -> bool:
        """True when playback pauses by itself at this turn (a review queue narrows it)."""
        return self.navigator.is_empty_at(index)

    def played_to_end(self) -> None:
        """Playback reached the last turn (a review queue carries on into its next session)."""

    # ---------------------------------------------------------------- annotating

    def _current_empty(self) -> tuple[Turn, EmptyTurn] | None:
        if not self.session.turns:
            return None
        empty = self.empty_turn(self.index)
        if empty is None or empty.is_placeholder != self.at_placeholder:
            return None
        return self.session.turns[self.index], empty

    def on_key(self, event: events.Key) -> None:
        """Label keys that are not digits (a custom label set may use letters)."""
        if isinstance(self.focused, Input) or not event.character:
            return
        if event.character.isdigit() or event.character in self._bound_keys():
            return
        if self.labels.by_key(event.character) is not None:
            event.stop()
            self.action_pick_label(event.character)

    def _bound_keys(self) -> set[str]:
        keys: set[str] = set()
        for binding in self.BINDINGS:
            if isinstance(binding, Binding):
                keys.update(key.strip() for key in binding.key.split(","))
        return keys

    def action_pick_label(self, key: str) -> None:
        label = self.labels.by_key(key)
        if label is None:
            return
        if self._current_empty() is None:
            self.notify("Labels are for empty turns: press ] to go to the next one.", timeout=3)
            return
        self.pending_label = label.name
        self.show()

    def action_cycle_confidence(self) -> None:
        position = CONFIDENCE.index(self.confidence) if self.confidence in CONFIDENCE else 1
        self.confidence = CONFIDENCE[(position + 1) % len(CONFIDENCE)]
        self.show()

    def action_cycle_overrule(self) -> None:
        from replay.core.annotate.annotations import OVERRULE_REASONS

        current = self._current_empty()
        if current is None:
            return
        _turn, empty = current
        saved = self.store.get(empty.id)
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
            self.show()

    def action_note(self) -> None:
        if self._current_empty() is not None:
            note = self.query_one("#annotation-note", Input)
            note.can_focus = True
            note.focus()

    def action_back(self) -> None:
        if isinstance(self.focused, Input):
            self.set_focus(None)
        elif len(self.app.screen_stack) > 2:
            self.app.pop_screen()

    @on(Input.Submitted, "#annotation-note")
    def commit_from_note(self) -> None:
        self.action_commit()
        self.set_focus(None)

    def action_commit(self) -> None:
        current = self._current_empty()
        if current is None:
            return
        _turn, empty = current
        saved = self.store.get(empty.id)
        # Blind: Enter never accepts a suggestion the reviewer has not seen.
        offered = None if self.blind and saved is None else empty.suggestion
        label = self.pending_label or (saved.label if saved else None) or offered
        if not label:
            self.notify("Pick a label with its number key first.", severity="warning", timeout=3)
            return
        note = self.query_one(AnnotationBar).note
        try:
            annotation = self.store.commit(
                empty.id, empty.index, label, note, self.confidence,
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
            from replay.core.annotate.annotations import OVERRULE_REASONS

            name = f"#{empty.index + 1}{'+' if empty.is_placeholder else ''}"
            why = dict(OVERRULE_REASONS).get(annotation.overrule)
            said = f" Why not {clean(empty.suggestion or '')}: {why}." if why else ""
            self.notify(f"Saved {clean(annotation.label)} for {name}.{said}", timeout=3,
                        markup=False)
        self.pending_label = None
        self.show()

    def action_undo(self) -> None:
        try:
            restored = self.store.undo()
        except JournalError as error:
            self.notify(clean(str(error)), title="Undo not saved", severity="error", markup=False)
            restored = None
        if restored is None:
            self.notify("Nothing to undo.", timeout=2)
            return
        self.go(restored.turn_index if 0 <= restored.turn_index < len(self.session.turns)
                else self.index)
        # Already on that turn, `go` does not reload the bar: the removed note stayed in the
        # field, and enter saved it again.
        self._load_bar()
        self.show()
        what = f"restored {restored.label}" if restored.label else "annotation removed"
        self.notify(f"Undone: #{restored.turn_index + 1} {what}.", timeout=3, markup=False)

    # ---------------------------------------------------------------- other actions

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

    def action_search(self) -> None:
        from replay.ui.screens.prompt import PromptScreen

        def search(answer: str | None) -> None:
            if answer:
                self.search_query = answer
                self.action_search_next(True)

        self.app.push_screen(PromptScreen("Search", self.search_query), search)

    def action_search_next(self, forward: bool) -> None:
        if not self.search_query:
            self.action_search()
            return
        found = self.navigator.next_hit(self.search_hits(), self.index, forward)
        if found is None:
            self.notify(f"No match for {clean(repr(self.search_query))}.", severity="warning",
                        markup=False)
            return
        self.go(found, placeholder=False)
        position = self.search_position()
        if position is not None:
            self.notify(f"match {position[0]:,} / {position[1]:,}", timeout=2, markup=False)

    def action_raw(self) -> None:
        from replay.ui.screens.raw import RawScreen

        if self.at_placeholder:
            self.notify(f"#{self.index + 1}+ is not in the file: ← then v shows the record of "
                        f"the request #{self.index + 1}.", timeout=3, markup=False)
        elif self.session.turns:
            self.app.push_screen(RawScreen(self.session, self.session.turns[self.index]))

    def action_copy(self) -> None:
        if not self.session.turns:
            return
        turn = self.session.turns[self.index]
        if self.at_placeholder:
            from replay.ui.placeholder import headline

            # Not in the file: what is known about it, never the request's words.
            text = f"#{turn.index + 1}+ (not in the file) " \
                f"{headline(self.session, turn.index, live=self.following)}"
            name = f"#{turn.index + 1}+"
        else:
            text = turn_plain_text(self.session.full_parts(turn)) or f"(empty turn {turn.id})"
            name = f"#{turn.index + 1}"
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {len(text):,} characters of {name}.", timeout=2, markup=False)

    def action_toggle_expanded(self) -> None:
        self.expanded = not self.expanded
        self.unfolded.clear()
        self._refill_current()

    def _refill_current(self) -> None:
        if self.session.turns:
            self._fill_current(self.session.turns[self.index],
                               self.navigator.is_empty_at(self.index), keep_scroll=True)

    @on(TurnLines.BlockClicked, "#current")
    def toggle_clicked_part(self, event: TurnLines.BlockClicked) -> None:
        """Fold or unfold the one tool call, reasoning or attachment that was clicked."""
        self.unfolded ^= {event.key}
        self._refill_current()

    def action_sidechain(self) -> None:
        if not self.session.turns:
            return
        sidechains = self.sidechains_of(self.session.turns[self.index])
        if sidechains:
            self.post_message(OpenSessionRequested(sidechains[0]))
            return
        self.notify("No subagent was started from this turn.", timeout=2)

    def action_live(self) -> None:
        folder = self.replay_app.folder_following
        if folder is not None and folder.stay():
            return  # a move to a new session was offered: f stays on this one
        self.at_live_end = True
        self.new_turns = 0
        self.go(len(self.session.turns) - 1)

    def action_export(self) -> None:
        self.export_annotations(Path.cwd())

    @work(thread=True, exclusive=True, group="export", exit_on_error=False,
          description="Exporting annotations")
    def export_annotations(self, directory: Path) -> None:
        """Write this reviewer's annotations (and unannotated empty turns) to a new CSV file."""
        from replay.ui.export_file import export_name, export_session

        try:
            target, count = export_session(self.session, self.store, self.labels,
                                           self.suggester, directory, self.rules)
        except OSError as error:
            self.app.call_from_thread(
                self.notify, clean(f"Could not export to {directory}: {error.strerror or error}"),
                title="Export failed", severity="error", markup=False, timeout=10)
            return
        kept = "" if target.name == export_name(self.session) else \
            f"\n(an earlier {export_name(self.session)} is kept)"
        self.app.call_from_thread(
            self.notify, clean(f"Exported {plural(count, 'row')} to {target}{kept}"),
            title="Export", markup=False, timeout=8)

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
            self._empty_cache.clear()
            timeline.reset()
        else:
            for index in [i for i in self._empty_cache if i >= changed_from]:
                del self._empty_cache[index]
            timeline.forget_from(changed_from)
        self._generation += 1
        self.pending = pending if self.following else None
        new_empty = self.navigator.refresh(changed_from, upto=self.pending)
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
            self._follow_growth(new_empty, last)
        self.index = min(self.index, last)
        if self.following and not self.indexing:
            # A label saved while a reply was still being written: its turn grew content.
            mark_outgrown(self)
        self.show()
        if not self.indexing:
            missing = [i for i in self.navigator.empty_indices if i not in self._empty_cache]
            if missing:
                self.describe_empty_turns(missing, self._generation)

    @work(thread=True, exclusive=True, group="describe", exit_on_error=False,
          description="Describing empty turns")
    def describe_empty_turns(self, indices: list[int], generation: int) -> None:
        """Work out evidence and suggestions ahead, so jumping to an empty turn never waits
        for the session-wide statistics the suggester needs the first time."""
        turns = self.session.turns
        described: dict[int, EmptyTurn] = {}
        for index in indices:
            if index < len(turns):
                described[index] = describe_empty(self.session, turns[index], self.rules,
                                                  self.suggester)
                # A breath after each: with thousands of empty turns this runs for seconds,
                # and would otherwise hold the interpreter while the reviewer steps or opens
                # the palette.
                time.sleep(DESCRIBE_PAUSE)
        self.post_message(EmptyTurnsDescribed(generation, described))

    @on(EmptyTurnsDescribed)
    def keep_descriptions(self, event: EmptyTurnsDescribed) -> None:
        if event.generation == self._generation:
            for index, empty in event.described.items():
                self._empty_cache.setdefault(index, empty)

    def _follow_growth(self, new_empty: list[int], last: int) -> None:
        """At the live end, advance (stopping at a new empty turn); elsewhere, count news.

        A stop lasts until the reviewer moves, whatever arrives after it; a stop whose turn
        showed content after all (taken back) goes on to the live end.
        """
        if self.paused_at_empty and not self.navigator.is_empty_at(self.index):
            self.placeholder = False
            self.paused_at_empty = False
            self.at_live_end = True
            self.notify(f"#{self.index + 1} showed content after all: following again.",
                        timeout=4, markup=False)
        if not self.at_live_end:
            self.new_turns = max(0, last - self.index)
            return
        target = next((i for i in new_empty if i >= self.index), None)
        if target is None:
            self.index = last
            return
        self.placeholder = self.navigator.is_placeholder(target)
        self.index = target
        self.paused_at_empty = True
        # Stay here while more turns arrive: the reviewer decides when to go on (f).
        self.at_live_end = False
        self.new_turns = max(0, last - target)
        name = f"#{target + 1}{'+' if self.at_placeholder else ''}"
        self.notify(f"New empty turn {name}: paused here. f returns to the live end.",
                    timeout=5, markup=False)
