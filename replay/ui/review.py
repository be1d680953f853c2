"""The review queue in the app: the replay screen over one queued session at a time, with
`]`, `[` and `u` crossing into the next session and sessions read ahead in the background."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.message import Message
from textual.widgets import ProgressBar, Static

from replay.config import Settings
from replay.core.annotate.annotations import AnnotationStore, default_reviewer
from replay.core.annotate.journal import JournalError
from replay.core.annotate.queue_position import (
    QueueDefinition,
    QueuePosition,
    forget_position,
    load_position,
    save_position,
)
from replay.core.annotate.queue_sources import SourceProblem, read_ref
from replay.core.annotate.review_queue import (
    AnnotatedReader,
    QueueEntry,
    QueueFilters,
    QueueSession,
    ReviewQueue,
    build_queue,
    index_corpus,
    load_annotated,
    resolve_position,
)
from replay.core.corpus.queue_cache import queue_memo
from replay.core.detection.empty import DetectionRules, Suggester
from replay.core.readers import ReaderError
from replay.core.session.labels import DEFAULT_LABELS, LabelSet
from replay.core.session.model import Session
from replay.core.session.text import plural
from replay.ui.app import (
    LaunchOptions,
    LoadingScreen,
    ReplayApp,
    lazy_suggester,
    settings_and_rules,
)
from replay.ui.repaint import update_static
from replay.ui.screens.replay_screen import ReplayScreen

KEEP_AROUND = 1
"""Sessions kept read on each side of the one on screen: memory stays that of a few."""
WAIT_NOTICE_SECONDS = 0.2
"""A move into a session not read yet says so when the read takes longer than this."""


@dataclass(slots=True)
class ReviewOptions:
    """What `replay review` asked for."""

    paths: list[Path]
    """Files, directories or databases to take sessions from."""
    definition: QueueDefinition
    """The queue's identity, for its saved position."""
    filters: QueueFilters = field(default_factory=QueueFilters)
    """Which empty turns, how many."""
    restart: bool = False
    """Forget the saved position and start at the first unannotated turn."""
    prefetch: bool = True
    """Read the next session ahead of the reviewer (off only to measure what it saves)."""
    cache: bool = True
    """Take the queue entries of unchanged session files from the scan cache."""


@dataclass
class QueueIndexing(Message):
    """The indexing worker's progress."""

    sessions: int
    empty: int


@dataclass
class QueueBuilt(Message):
    """Every session was read once and let go: the queue is known (a sample: drawn)."""

    queue: ReviewQueue
    annotated: dict[int, set[str]]
    sessions_read: int
    problems: list[str]


@dataclass
class QueueGrew(Message):
    """The next session with turns to review was read: its place in a growing queue."""

    session: QueueSession
    entries: list[QueueEntry]
    annotated: set[str]


@dataclass
class QueueDone(Message):
    """The last session of a growing queue was read."""

    sessions_read: int
    problems: list[str]


@dataclass
class QueueSessionRead(Message):
    """A queued session was read (ahead of the reviewer, or because they reached it)."""

    number: int
    session: Session | None
    error: str | None = None


@dataclass(slots=True)
class Crossing:
    """One move into another session, for the bench and the wait notice."""

    number: int
    """The session moved to."""
    asked: float
    """When the move was asked for (monotonic seconds)."""
    ready: bool
    """The session was already read when asked for."""
    shown: float | None = None
    """When its screen was first painted."""


class IndexingScreen(LoadingScreen):
    """Shown while the queue's sessions are read once to find their empty turns."""

    def compose(self) -> ComposeResult:
        yield Static(f"Reading the sessions under {self.path} to build the review queue",
                     markup=False)
        yield ProgressBar(total=None, show_eta=False)
        yield Static("", id="indexing-count", markup=False)


class QueueScreen(ReplayScreen):
    """The replay screen over one session of the queue; moves past its ends cross sessions."""

    def __init__(self, session: Session, store: AnnotationStore, *, number: int, target: int,
                 play: bool, labels: LabelSet, rules: DetectionRules,
                 suggester: Suggester | None) -> None:
        super().__init__(session, store, labels=labels, rules=rules, suggester=suggester,
                         following=False, indexing=False)
        self.number = number
        """Position of this session in the queue."""
        self.target = target
        """The turn to open at."""
        self.play_on_open = play
        """Keep playing: playback carried on from the previous session."""

    @property
    def review_app(self) -> ReviewApp:
        """The app, typed."""
        assert isinstance(self.app, ReviewApp)
        return self.app

    def on_mount(self) -> None:
        super().on_mount()
        self.call_after_refresh(self.review_app.session_painted, self.number)
        if self.play_on_open:
            self.playback.playing = True

    def take_session(self, session: Session, store: AnnotationStore, *, number: int,
                     target: int, play: bool) -> None:
        """Show another queued session on this screen: a crossing costs about a step, where
        composing a new screen cost several frames."""
        self.playback.playing = False
        self.store = store
        self.number = number
        self.target = target
        self.moved = False
        self.paused_at_empty = False
        self.load_others()
        self.set_reactive(ReplayScreen.index,
                          max(0, min(len(session.turns) - 1, target)) if session.turns else 0)
        self.turns_added(0, done=True, reset=True, session=session)
        # A queued missing reply is shown as its placeholder, after its request.
        self.placeholder = self.navigator.is_placeholder(self.index)
        self.watch_index()  # what a move resets: picked label, note, confidence
        self.call_after_refresh(self.review_app.session_painted, number)
        if play:
            self.playback.playing = True

    def resume_position(self) -> None:
        if self.session.turns:
            self.set_reactive(ReplayScreen.index,
                              max(0, min(len(self.session.turns) - 1, self.target)))
            self.placeholder = self.navigator.is_placeholder(self.index)

    # ------------------------------------------------------------ queue state

    def queue_place(self) -> tuple[int | None, bool]:
        """The queue position here (the entry at this turn, else the last one before it,
        else this session's first) and whether the reviewer is exactly at it."""
        queue = self.review_app.queue
        assert queue is not None
        exact = queue.position_of(self.number, self.index)
        if exact is not None:
            return exact, True
        before = queue.last_at_or_before(self.number, self.index)
        if before is None or queue.entries[before].session != self.number:
            own = queue.entries_of(self.number)
            return (own.start if own else before), False
        return before, False

    def status_prefix(self) -> Text:
        app = self.review_app
        queue = app.queue
        status = Text()
        if queue is None:
            return status
        position, exact = self.queue_place()
        # While sessions are still being read the totals are those so far: "7+".
        more = "" if queue.complete else "+"
        total = f"{len(queue):,}{more}"
        if position is None:
            where = f" · empty turn – / {total}"
        elif exact:
            where = f" · empty turn {position + 1:,} / {total}"
        elif queue.entries[position].index > self.index:
            where = f" · before empty turn {position + 1:,} / {total}"
        else:
            where = f" · after empty turn {position + 1:,} / {total}"
        status.append(where, style="bold")
        status.append(f" · session {self.number + 1:,} / {len(queue.sessions):,}{more}",
                      style="bold")
        narrow = self.is_mounted and self.app.size.width < 120
        if queue.complete:
            status.append(f" · {app.annotated_count():,} / {total} labelled")
        elif narrow:
            # Room for the place and the play state: the count comes back once all is read.
            status.append(" · reading…", style="italic")
        else:
            status.append(f" · {app.annotated_count():,} / {total} labelled")
            status.append(f" · reading sessions ({app.sessions_read:,} read)", style="italic")
        return status

    def queue_changed(self) -> None:
        """The queue grew or is now complete: the header's totals follow."""
        if self.is_mounted:
            update_static(self.query_one("#status", Static), self.status_text())

    def show(self) -> None:
        self.review_app.sync_annotated(self.number, self.store.annotated_ids)
        super().show()
        if self.review_app.queue is not None:
            position, _exact = self.queue_place()
            if position is not None:
                self.review_app.remember_position(position)

    def stops_at(self, index: int) -> bool:
        queue = self.review_app.queue
        return queue is not None and queue.position_of(self.number, index) is not None

    # ------------------------------------------------------------ moves

    def _go_entry(self, position: int, *, play: bool = False, at: int | None = None) -> None:
        queue = self.review_app.queue
        assert queue is not None
        entry = queue.entries[position]
        if entry.session == self.number and not play:
            self.go(entry.index)
        else:
            self.review_app.open_position(position, play=play, at=at)

    def action_next_empty(self) -> None:
        queue = self.review_app.queue
        if queue is None:
            return
        position = queue.next_after(self.number, self.index)
        if position is None:
            self.notify("This is the last empty turn of the queue." if queue.complete else
                        "This is the last empty turn read so far; more sessions are still "
                        "being read.", timeout=2, markup=False)
            return
        self._go_entry(position)

    def action_previous_empty(self) -> None:
        queue = self.review_app.queue
        if queue is None:
            return
        position = queue.previous_before(self.number, self.index)
        if position is None:
            self.notify("This is the first empty turn of the queue.", timeout=2)
            return
        self._go_entry(position)

    def action_next_unannotated(self) -> None:
        app = self.review_app
        queue = app.queue
        if queue is None:
            return
        app.sync_annotated(self.number, self.store.annotated_ids)
        here, exact = self.queue_place()
        after = -1 if here is None else (here if exact or queue.entries[here].index <= self.index
                                         else here - 1)
        position = queue.next_unannotated(after, app.is_annotated)
        if position is None:
            self.notify("Every empty turn in the queue is annotated.", timeout=3)
            return
        self._go_entry(position)

    def refuses_to_play(self) -> bool:
        if self.index >= len(self.session.turns) - 1:
            self.played_to_end()
            return True
        return super().refuses_to_play()

    def played_to_end(self) -> None:
        queue = self.review_app.queue
        if queue is None:
            return
        following = queue.entries_of(self.number + 1)
        if not following:
            self.notify("End of the review queue." if queue.complete else
                        "End of the sessions read so far; more are still being read.",
                        timeout=3, markup=False)
            return
        entry = queue.entries[following.start]
        # Start a few turns before the empty turn: the lead-up plays, then it pauses there.
        self._go_entry(following.start, play=True,
                       at=max(0, entry.index - self.panes.context_turns))


class ReviewApp(ReplayApp):
    """replay over a review queue: the empty turns of many sessions as one stream."""

    def __init__(self, options: LaunchOptions, review: ReviewOptions,
                 settings: Settings | None = None) -> None:
        super().__init__(options, settings, lazy_suggester(options.labels))
        self.review = review
        """What to queue."""
        self.queue: ReviewQueue | None = None
        """The queue, once every session has been indexed."""
        self.annotated: dict[int, set[str]] = {}
        """This reviewer's annotated turn ids by queue session."""
        self.cache: dict[int, Session] = {}
        """Sessions read, by queue session: the one on screen and its neighbours."""
        self.crossings: list[Crossing] = []
        """Every move into a session, with how long it waited (read by the bench)."""
        self.current: int | None = None
        """The queue session on screen."""
        self.read_at: dict[int, float] = {}
        """When each queued session was last read (monotonic seconds; for the bench)."""
        self.sessions_read = 0
        """Sessions of the corpus read so far to build the queue."""
        self._reading: set[int] = set()
        self._pending: tuple[int, int, bool] | None = None
        self._saved: int | None = None
        self._backwards = False
        self._started = False
        self._looked_up = False
        self._resume: QueuePosition | None = None

    @property
    def reviewer(self) -> str:
        """Whose annotations these are."""
        return default_reviewer(self.options.reviewer or self.settings.reviewer)

    def show_loading_screen(self) -> None:
        if self.replay_screen is None and len(self.screen_stack) == 1:
            self.push_screen(IndexingScreen(self._paths_text()))

    def _paths_text(self) -> Path:
        paths = self.review.paths
        return paths[0] if len(paths) == 1 else Path(f"{paths[0]} and {len(paths) - 1} more")

    # ------------------------------------------------------------ indexing

    @work(thread=True, exclusive=True, group="load", exit_on_error=False,
          description="Building the review queue")
    def load_source(self, path: Path, format: str | None) -> None:
        """Read every session once, keeping only its empty turns. Without a sample each
        session's turns join the queue as soon as it is read, so the first screen does not
        wait for the rest of the corpus; a sample is drawn once every session is known."""
        from replay.core.suggest import suggester_for

        problems: list[str] = []

        def problem(found: SourceProblem) -> None:
            problems.append(found.message)

        filters = self.review.filters
        journal = str(self.options.annotations) if self.options.annotations else None
        growing = filters.sample is None
        annotated = AnnotatedReader(self.reviewer, journal)
        indexed = []
        read = empty = 0
        last = time.monotonic()
        with queue_memo(self.review.cache, self.options.rules, self.options.labels,
                        problems.append, roots=self.review.paths) as memo:
            for summary, entries in index_corpus(self.review.paths, filters.format,
                                                 self.options.rules,
                                                 suggester_for(self.options.labels), problem,
                                                 memo):
                read += 1
                empty += len(entries)
                if growing:
                    kept = [entry for entry in entries if filters.keeps(entry, summary)]
                    if kept:
                        self.post_message(QueueGrew(summary, kept, annotated.of(summary)))
                else:
                    indexed.append((summary, entries))
                if time.monotonic() - last > 0.1 or (growing and read == 1):
                    self.post_message(QueueIndexing(read, empty))
                    last = time.monotonic()
        if growing:
            self.post_message(QueueIndexing(read, empty))
            self.post_message(QueueDone(read, problems + annotated.problems))
            return
        queue = build_queue(indexed, filters)
        found, journal_problems = load_annotated(queue, self.reviewer, journal)
        self.post_message(QueueBuilt(queue, found, read, problems + journal_problems))

    @on(QueueIndexing)
    def show_indexing(self, event: QueueIndexing) -> None:
        self.sessions_read = event.sessions
        if isinstance(self.screen, IndexingScreen):
            self.screen.query_one("#indexing-count", Static).update(
                f"{event.sessions:,} sessions read, {event.empty:,} empty turns so far")
        elif isinstance(self.screen, QueueScreen):
            self.screen.queue_changed()

    @on(QueueBuilt)
    def start_queue(self, event: QueueBuilt) -> None:
        self._say_problems(event.problems)
        if not event.queue.entries:
            self._exit_empty(event.sessions_read, event.problems)
            return
        self.queue = event.queue
        self.annotated = event.annotated
        self._start()

    @on(QueueGrew)
    def grow_queue(self, event: QueueGrew) -> None:
        if self.queue is None:
            self.queue = ReviewQueue([], [], complete=False)
        number = self.queue.extend(event.session, event.entries)
        self.annotated[number] = event.annotated
        if not self._started:
            self._start()
            return
        if isinstance(self.screen, QueueScreen):
            self.screen.queue_changed()
        if self.review.prefetch and self.current is not None and number == self.current + 1 \
                and number not in self.cache and number not in self._reading:
            self._read(number)  # the session after the one on screen: read it ahead now

    @on(QueueDone)
    def finish_queue(self, event: QueueDone) -> None:
        self.sessions_read = event.sessions_read
        self._say_problems(event.problems)
        if self.queue is None or not self.queue.entries:
            self._exit_empty(event.sessions_read, event.problems)
            return
        self.queue.complete = True
        if not self._started:
            self._start()
        queued = next((s for s in self.screen_stack if isinstance(s, QueueScreen)), None)
        if queued is not None:
            queued.queue_changed()

    def _say_problems(self, problems: list[str]) -> None:
        for problem in problems[:5]:
            self.notify(problem, title="Not read", severity="warning", markup=False, timeout=8)

    def _exit_empty(self, sessions_read: int, problems: list[str]) -> None:
        status = 2 if sessions_read == 0 else 0
        what = "no session could be read" if sessions_read == 0 else \
            f"no empty turn to review in {plural(sessions_read, 'session')}"
        detail = f" ({problems[0]})" if sessions_read == 0 and problems \
            else " with these filters" if self._filtered() else ""
        self.exit(return_code=status, message=f"replay: {what}{detail}")

    def _start(self) -> None:
        """Open the queue at the saved place, else at the first turn not annotated, as soon
        as the queue read so far holds it (a growing queue may have to wait for more)."""
        queue = self.queue
        assert queue is not None
        if not self._looked_up:
            self._looked_up = True
            if self.review.restart:
                forget_position(self.review.definition)
            else:
                self._resume = load_position(self.review.definition)
        position: int | None = None
        saved = self._resume
        if saved is not None:
            known = next((number for number, session in enumerate(queue.sessions)
                          if session.ref.name == saved.session), None)
            found = None if known is None else queue.position_of_turn(known, saved.turn_id)
            if found is None and not queue.complete:
                return  # its session may not be read yet
            position = found if found is not None else resolve_position(
                queue, saved.session, saved.turn_id, saved.ordinal)
            if position is not None:
                self.notify(f"Resumed at empty turn {position + 1:,} / {len(queue):,}"
                            f"{'' if queue.complete else '+'}, where you stopped. u goes to "
                            "the next one not annotated.", timeout=5, markup=False)
        if position is None:
            position = queue.first_unannotated(self.is_annotated)
            if position is None and not queue.complete:
                return  # every turn so far is annotated: wait for the next sessions
        self._started = True
        self.open_position(position or 0)

    def _filtered(self) -> bool:
        filters = self.review.filters
        return bool(filters.reasons or filters.suggestion or filters.format)

    # ------------------------------------------------------------ annotations and position

    def sync_annotated(self, number: int, ids: frozenset[str]) -> None:
        """Take the on-screen session's annotated ids from its store (the source of truth)."""
        self.annotated[number] = set(ids)

    def is_annotated(self, entry: object) -> bool:
        """True when this reviewer has annotated the queue entry."""
        from replay.core.annotate.review_queue import QueueEntry

        assert isinstance(entry, QueueEntry)
        return entry.turn_id in self.annotated.get(entry.session, ())

    def annotated_count(self) -> int:
        """Queue entries annotated by this reviewer."""
        queue = self.queue
        return 0 if queue is None else sum(1 for entry in queue.entries if self.is_annotated(entry))

    def remember_position(self, position: int) -> None:
        """Save the queue position when it changes, so the queue reopens here."""
        if position == self._saved or self.queue is None:
            return
        self._saved = position
        entry = self.queue.entries[position]
        problem = save_position(self.review.definition, QueuePosition(
            self.queue.sessions[entry.session].ref.name, entry.turn_id, position))
        if problem:
            self.notify(problem, severity="warning", markup=False)

    # ------------------------------------------------------------ sessions

    def open_position(self, position: int, *, play: bool = False, at: int | None = None) -> None:
        """Show the queue entry at `position` (turn `at` instead, when given), reading its
        session first unless it was read ahead."""
        assert self.queue is not None
        entry = self.queue.entries[position]
        number = entry.session
        if self.current is not None and number != self.current:
            self._backwards = number < self.current
        index = entry.index if at is None else at
        self._pending = (number, index, play)
        ready = number in self.cache
        self.crossings.append(Crossing(number, time.monotonic(), ready))
        if ready:
            self._show_pending()
            return
        if number not in self._reading:
            self._read(number)
        self.set_timer(WAIT_NOTICE_SECONDS, lambda: self._say_waiting(number))

    def _say_waiting(self, number: int) -> None:
        """Say why nothing moved yet, only when the read takes long enough to notice."""
        if self._pending is not None and self._pending[0] == number and self.queue is not None \
                and not isinstance(self.screen, LoadingScreen):
            self.notify(f"Reading session {number + 1:,} / {len(self.queue.sessions):,}…",
                        timeout=2, markup=False)

    def _read(self, number: int) -> None:
        self._reading.add(number)
        self.read_session(number)

    @work(thread=True, group="queue-read", exit_on_error=False,
          description="Reading a queued session")
    def read_session(self, number: int) -> None:
        """Read one queued session in the background."""
        assert self.queue is not None
        ref = self.queue.sessions[number].ref
        try:
            session = read_ref(ref)
        except ReaderError as error:
            self.post_message(QueueSessionRead(number, None, str(error)))
            return
        self.post_message(QueueSessionRead(number, session))

    @on(QueueSessionRead)
    def keep_session(self, event: QueueSessionRead) -> None:
        self._reading.discard(event.number)
        pending = self._pending
        if event.session is None:
            if pending is not None and pending[0] == event.number:
                self._skip_unreadable(event.number, event.error or "could not be read")
            return
        self.cache[event.number] = event.session
        self.read_at[event.number] = time.monotonic()
        if pending is not None and pending[0] == event.number:
            self._show_pending()
        else:
            self._evict()

    def _skip_unreadable(self, number: int, error: str) -> None:
        assert self.queue is not None
        self.notify(f"Session {number + 1} skipped: {error}", title="Not read",
                    severity="error", markup=False, timeout=8)
        step = -1 if self._backwards else 1
        neighbour = self.queue.entries_of(number + step)
        if neighbour and not isinstance(self.screen, QueueScreen):
            self.open_position(neighbour.start if step > 0 else neighbour.stop - 1)
        elif not isinstance(self.screen, QueueScreen):
            self.exit(return_code=2, message=f"replay: {error}")

    def _show_pending(self) -> None:
        assert self.queue is not None and self._pending is not None
        number, index, play = self._pending
        self._pending = None
        session = self.cache[number]
        store = AnnotationStore.for_session(session, self.reviewer, self.options.annotations)
        try:
            for warning in store.load()[:3]:
                self.notify(warning, title="Journal", severity="warning", markup=False)
        except JournalError as error:
            self.notify(str(error), title="Annotations not loaded", severity="error",
                        markup=False, timeout=10)
        self.current = number
        # The queue's screen may be under help, a prompt or a subagent's screen when
        # playback crosses: it takes the session there, and shows it once uncovered.
        queued = next((s for s in self.screen_stack if isinstance(s, QueueScreen)), None)
        if queued is not None:
            queued.take_session(session, store, number=number, target=index, play=play)
            self._evict()
            return
        screen = QueueScreen(session, store, number=number, target=index, play=play,
                             labels=self.options.labels, rules=self.options.rules,
                             suggester=self.suggester)
        self.replay_screen = screen
        if isinstance(self.screen, LoadingScreen):
            self.switch_screen(screen)
        else:
            self.push_screen(screen)
        self._evict()

    def session_painted(self, number: int) -> None:
        """The screen of a queued session is on screen: note the wait, then read ahead."""
        for crossing in reversed(self.crossings):
            if crossing.number == number and crossing.shown is None:
                crossing.shown = time.monotonic()
                break
        if self.queue is None or not self.review.prefetch:
            return
        for neighbour in ((number - 1, number + 1) if self._backwards else (number + 1,)):
            if 0 <= neighbour < len(self.queue.sessions) and neighbour not in self.cache \
                    and neighbour not in self._reading:
                self._read(neighbour)

    def _evict(self) -> None:
        """Let go of sessions away from the one on screen."""
        if self.current is None:
            return
        keep = set(range(self.current - KEEP_AROUND, self.current + KEEP_AROUND + 1))
        if self._pending is not None:
            keep.add(self._pending[0])
        for number in [n for n in self.cache if n not in keep]:
            del self.cache[number]


def make_review_app(review: ReviewOptions, *, settings: Settings | None = None,
                    reviewer: str | None = None, annotations: Path | None = None,
                    labels: LabelSet = DEFAULT_LABELS, rules: DetectionRules | None = None,
                    problems: list[str] | None = None, blind: bool | None = None) -> ReviewApp:
    """Build the review app the same way for the CLI and the tests (`blind` overrides the
    setting, as for `make_app`)."""
    settings, rules = settings_and_rules(settings, blind, rules)
    options = LaunchOptions(path=review.paths[0], reviewer=reviewer, annotations=annotations,
                            labels=labels, rules=rules, problems=list(problems or []))
    from replay.ui.exit_line import unwrapped_exit

    return unwrapped_exit(ReviewApp(options, review, settings))
