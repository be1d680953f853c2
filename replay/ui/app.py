"""The Textual app: loads the source in a worker, then shows the picker or the replay screen."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, InvalidThemeError, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import Worker, WorkerState, get_current_worker

from replay.config import DEFAULT_THEME, Settings, remember
from replay.core.annotate.annotations import AnnotationStore, default_reviewer, session_identity
from replay.core.annotate.journal import JournalError
from replay.core.detection.empty import DEFAULT_RULES, DetectionRules, EmptyTurn, Suggester
from replay.core.live.completion import DEFAULT_SETTLE, DEFAULT_STALL
from replay.core.readers import (
    Reader,
    ReaderError,
    detect_reader,
    get_reader,
    huge_strings,
    load_sessions,
    read_entry,
)
from replay.core.readers.base import EMPTY_FILE, SessionEntry, lines_for
from replay.core.safe import one_line
from replay.core.session.labels import DEFAULT_LABELS, LabelSet
from replay.core.session.model import Session
from replay.themes import app_variable_defaults, load_all_themes
from replay.ui import history_list
from replay.ui.cache_notice import cache_warning
from replay.ui.literal import literal, shown
from replay.ui.messages import (
    CountRequested,
    LoadFailed,
    LoadProgress,
    OpenChatRequested,
    OpenEntryRequested,
    OpenSessionRequested,
    ReplayScreenShown,
    ScreenPainted,
    SessionsListed,
    SessionsLoaded,
    SessionsSummarized,
    SessionStarted,
    SilenceChanged,
    TurnsAdded,
    ViewChanged,
)
from replay.ui.rewritten import RereadRewritten
from replay.ui.screens.replay_screen import ReplayScreen
from replay.ui.screenshot import screenshot_command
from replay.ui.typed_ahead import TypedAhead

if TYPE_CHECKING:
    from textual.command import Provider

    from replay.core.discovery.found import FoundSession
    from replay.ui.folder_follow import FolderFollowing

FIRST_BATCH_TURNS = 24
"""Turns read before the first screen is shown: the current turn and a widened After pane;
the rest arrives while the reviewer reads."""
BATCH_SECONDS = 0.25
"""How often the loading worker reports growth."""
FIRST_SCREEN_WAIT = 1.0
"""Longest the loading worker waits for the first screen before reading on."""
IDLE_COLLECT_SECONDS = 0.5
"""Quiet time after a step before the garbage of recent steps is collected."""


@dataclass(slots=True)
class LaunchOptions:
    """What the command line asked for."""

    path: Path
    """Session file, directory or database."""
    format: str | None = None
    """Reader name, or None to detect."""
    follow: bool = False
    """Keep reading as the file grows."""
    reviewer: str | None = None
    """Name recorded with annotations."""
    annotations: Path | None = None
    """Journal file instead of the default one."""
    labels: LabelSet = DEFAULT_LABELS
    """Active label set."""
    rules: DetectionRules = DEFAULT_RULES
    """What counts as an empty turn."""
    problems: list[str] = field(default_factory=list)
    """Config problems to show once the app is up."""
    stall: float = DEFAULT_STALL
    """Following: silence, while a reply is due, shown as a stall."""
    settle: float = DEFAULT_SETTLE
    """Following: quiet time that completes a user message written as several records."""
    discover: bool = False
    """No PATH was given: list every session found on this machine (found in a worker
    while the app starts); with none found, read `path` (the sample) and say so."""
    discovered: list[FoundSession] | None = None
    """Sessions to list instead of reading `path`, or the one session a PATH named by id
    (`chosen`)."""
    chosen: bool = False
    """True when `discovered` is the one session asked for by id: open it at once."""
    header_note: str | None = None
    """A note the header shows after the app's name (the sample standing in for none found)."""
    follow_roots: tuple[Path, ...] = ()
    """Following: folders whose sessions are all followed (`path` alone when it is a
    folder; the machine's session folders with discovery)."""
    cache: bool = True
    """A session list reads the counts of unchanged sessions from the scan cache, and keeps
    what it counts (`--no-cache`: count every session again, keep nothing)."""


def empty_turn_provider() -> type[Provider]:
    """The palette's empty-turn list, imported when the palette first opens (not at start)."""
    from replay.ui.commands import EmptyTurnProvider

    return EmptyTurnProvider


class LoadingScreen(Screen[None]):
    """Shown while the first turns are read."""

    DEFAULT_CSS = """
    LoadingScreen { align: center middle; }
    LoadingScreen > Static { width: auto; margin-bottom: 1; }
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def compose(self) -> ComposeResult:
        yield Static(literal(f"Reading {self.path}"))
        from textual.widgets import ProgressBar  # only when reading takes long

        # No total until the reader reports one: a whole JSON document has nothing to report
        # until it is parsed, and a bar moving back and forth says so better than 0%.
        yield ProgressBar(total=None, show_eta=False)


class ReplayApp(TypedAhead, RereadRewritten, App[None]):
    """replay: review agent transcripts, stopping at every empty turn."""

    CSS_PATH = "app.tcss"
    TITLE = "replay"
    COMMANDS = App.COMMANDS | {empty_turn_provider}
    BINDINGS = [
        Binding("question_mark", "help", "Help", id="help", tooltip="Show every key"),
        Binding("ctrl+q", "quit", "Quit", id="quit", tooltip="Quit replay", priority=True,
                show=False),
    ]

    def __init__(self, options: LaunchOptions, settings: Settings | None = None,
                 suggester: Suggester | None = None) -> None:
        super().__init__()
        self.options = options
        """What to open and how."""
        self.settings = settings or Settings()
        """User settings."""
        self.suggester = suggester
        """Suggests labels for empty turns."""
        self.replay_screen: ReplayScreen | None = None
        """The screen of the session being reviewed."""
        self.folder_following: FolderFollowing | None = None
        """Following a folder: which of its sessions is shown, and moving to a new one."""
        self.left_screens: list[ReplayScreen] = []
        """Screens of sessions a folder follow moved away from (their unsaved annotations
        still count when quitting)."""
        self._session_frozen = False
        self._idle_collect: Timer | None = None
        self.first_screen_painted = threading.Event()
        """Set once a session is on screen. The loading worker waits for it before reading
        on: the interpreter runs one thread at a time, and indexing would halve the speed
        of composing and painting the first screen."""
        self._theme_failures: list[str] = []
        result = load_all_themes()
        for theme in result.loaded:
            self.register_theme(theme)
        self._theme_failures = result.failed
        self._theme_problem: str | None = None
        # Before the first stylesheet parse: a theme set in on_mount parses it all again.
        try:
            self.theme = self.settings.theme
        except InvalidThemeError:
            self._theme_problem = f"Unknown theme {self.settings.theme!r}; using {DEFAULT_THEME}."
            self.theme = DEFAULT_THEME
        if not self.settings.animations:
            self.animation_level = "none"
        # Textual made the stylesheet with its own default theme's variables, and the theme
        # just set queued a refresh that would parse every stylesheet again with this one's.
        # Given them now, the stylesheet is parsed once, and that refresh is skipped.
        self._first_variables: dict[str, str] | None = self.get_css_variables()
        self.stylesheet.set_variables(self._first_variables)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return app_variable_defaults(self.current_theme)

    def refresh_css(self, animate: bool = True) -> None:
        first, self._first_variables = self._first_variables, None
        if first is not None and first == self.get_css_variables():
            return  # the refresh the theme set in __init__ queued: nothing changed since
        super().refresh_css(animate)

    def on_mount(self) -> None:
        from replay.ui.hangup import keep_work

        keep_work(self)  # drafts kept now and then, and on a kill or a closed terminal
        self.set_keymap(self.settings.keymap)
        from replay.ui.keymap import clashes

        for clash in clashes(ReplayScreen.BINDINGS + self.BINDINGS,  # type: ignore[operator]
                             self.settings.keymap):
            self.notify(shown(clash), title="Keymap", severity="warning", markup=False,
                        timeout=10)
        if self._theme_problem:
            self.notify(self._theme_problem, severity="warning", markup=False)
        for failure in self._theme_failures:
            self.notify(failure, title="Theme file not loaded", severity="error", markup=False)
        for problem in self.options.problems:
            self.notify(problem, title="Settings", severity="warning", markup=False)
        if self.options.discover or self.options.discovered is not None:
            from replay.ui.discovered import start

            start(self)
            return
        self.set_timer(0.3, self.show_loading_screen)
        self.load_source(self.options.path, self.options.format)

    def show_loading_screen(self) -> None:
        """Show progress only when reading takes long enough to notice."""
        if self.replay_screen is None and len(self.screen_stack) == 1:
            self.push_screen(LoadingScreen(self.options.path))

    def watch_theme(self, theme: str) -> None:
        if self.is_mounted and theme != self.settings.theme:
            problem = remember("theme", theme)
            if problem:
                self.notify(problem, severity="warning", markup=False)

    # ---------------------------------------------------------------- loading

    @work(thread=True, exclusive=True, group="load", exit_on_error=False,
          description="Reading the session")
    def load_source(self, path: Path, format: str | None) -> None:
        """Read the source; a single line-based file is shown while it is still being read."""
        if self.options.follow and (self.options.follow_roots or path.is_dir()):
            from replay.ui.folder_follow import FolderFollowing

            roots = list(self.options.follow_roots) or [path]
            self.folder_following = FolderFollowing.start(self, roots)
            return
        try:
            reader = get_reader(format) if format else detect_reader(path)
        except ReaderError as error:
            self.post_message(LoadFailed(str(error)))
            return
        if self.options.follow:
            self._load_followed(path, reader.name)
            return
        if path.is_file() and reader.builder is not None:
            self._load_progressively(path, reader)
            return
        if reader.list_sessions is not None:
            self._list_sessions(path, reader)
        else:
            self._load_whole(path, reader)

    def _load_whole(self, path: Path, reader: Reader) -> None:
        """Read every session of the source, then show the one or list them all."""
        if history_list.list_history(self, path, reader):  # an Aider history of many chats
            return
        try:
            sessions = load_sessions(
                path, reader.name, lambda done, total: self.post_message(LoadProgress(done, total)),
                indexed=True)  # a format that can holds its turns as compact columns
        except ReaderError as error:
            self.post_message(LoadFailed(str(error)))
            return
        if len(sessions) == 1:
            self.post_message(SessionStarted(sessions[0]))
            self.post_message(TurnsAdded(sessions[0], 0, done=True))
        else:
            self.post_message(SessionsLoaded(sessions))

    def _list_sessions(self, path: Path, reader: Reader) -> None:
        """List a multi-session source: the picker shows at once, counts come later."""
        assert reader.list_sessions is not None
        try:
            entries = reader.list_sessions(path)
            if entries is None:  # not listable: read it whole
                self._load_whole(path, reader)
                return
        except ReaderError as error:
            self.post_message(LoadFailed(str(error)))
            return
        if len(entries) == 1:
            self._load_entry(reader, entries[0])
        elif entries:
            self.post_message(SessionsListed(reader, entries))
        else:
            self.post_message(SessionsLoaded([]))

    def _load_entry(self, reader: Reader, entry: SessionEntry, *, fatal: bool = True) -> None:
        """Read one listed session for the replay screen (a big file progressively)."""
        if entry.format is not None:
            reader = get_reader(entry.format)
        if entry.own_file and reader.builder is not None and entry.path.is_file():
            self._load_progressively(entry.path, reader)
            return
        try:
            session = read_entry(reader, entry)
        except ReaderError as error:
            self.post_message(LoadFailed(str(error), fatal=fatal))
            return
        self.post_message(SessionStarted(session))
        self.post_message(TurnsAdded(session, 0, done=True))

    def open_entry(self, reader: Reader, entry: SessionEntry) -> None:
        """Open a session picked from a listed source (stops reading the others' counts)."""
        self.first_screen_painted.clear()
        self.load_entry(reader, entry)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False,
          description="Reading the session")
    def load_entry(self, reader: Reader, entry: SessionEntry) -> None:
        self._load_entry(reader, entry, fatal=False)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False,
          description="Counting turns")
    def summarize_sessions(self, reader: Reader, entries: list[SessionEntry]) -> None:
        """Count listed sessions for the picker's rows: those the scan cache kept unchanged
        at once, then the others read one at a time (each kept for the next time)."""
        from replay.core.discovery.counts import count_entries

        worker = get_current_worker()
        for counted in count_entries(reader, entries, self.options.rules,
                                     cache=self.options.cache,
                                     cancelled=lambda: worker.is_cancelled,
                                     warn=lambda line: cache_warning(self, line),
                                     roots=listed_roots(self.options)):
            if worker.is_cancelled:
                return
            if counted:
                self.post_message(SessionsSummarized(counted))

    def _load_progressively(self, path: Path, reader: Reader) -> None:
        assert reader.builder is not None
        builder = reader.builder(str(path))
        if reader.index_turns is not None:
            reader.index_turns(builder)  # columns per turn; whole turns read back on demand
        session = builder.session
        total = path.stat().st_size
        started = False
        reported = 0
        last_report = time.monotonic()
        lineno = 0
        with open(path, "rb") as handle:
            for line, offset, lineno in lines_for(builder, handle):
                builder.feed(line, offset, lineno)
                count = len(session.turns)
                if not started and count >= FIRST_BATCH_TURNS:
                    started = True
                    self.post_message(SessionStarted(session))
                    self.first_screen_painted.wait(FIRST_SCREEN_WAIT)
                    last_report = time.monotonic()
                elif started and time.monotonic() - last_report > BATCH_SECONDS:
                    # The last turn may still grow: report only the ones before it as settled.
                    self.post_message(TurnsAdded(session, max(reported - 1, 0)))
                    self.post_message(LoadProgress(offset, total))
                    reported = count
                    last_report = time.monotonic()
        builder.finish()
        if not lineno:  # no line at all: said as `scan` says it
            session.warn(EMPTY_FILE, skipped=False)
        if reader.complete is not None:
            reader.complete(path, builder)
        if not started:
            self.post_message(SessionStarted(session))
        self.post_message(LoadProgress(total, total))
        self.post_message(TurnsAdded(session, max(reported - 1, 0), done=True))

    def _load_followed(self, path: Path, format: str) -> None:
        from replay.core.live.follow import SessionFollower

        follower = SessionFollower(path, format, rules=self.options.rules,
                                   settle=self.options.settle, stall=self.options.stall)
        update = follower.poll()
        if update.session is None:
            self.post_message(LoadFailed(f"{path}: could not be read as {format}"))
            return
        self.follower = follower
        self.post_message(SessionStarted(update.session))
        self.post_message(TurnsAdded(update.session, 0, done=True, pending=update.pending))
        if update.stalled is not None:
            self.post_message(SilenceChanged(update.stalled.since))
        self.call_from_thread(self.follow_source)

    @work(exclusive=True, group="follow", exit_on_error=False, description="Following")
    async def follow_source(self) -> None:
        """Wake on file changes; the follower (in a thread) decides what is new."""
        from replay.ui.folder_follow import post_update
        from replay.watching import follow_async

        await follow_async(self.follower, lambda update: post_update(self, update))

    @on(LoadProgress)
    def show_progress(self, event: LoadProgress) -> None:
        percent = 100 * event.done // event.total if event.total else 100
        if isinstance(self.screen, LoadingScreen):
            from textual.widgets import ProgressBar

            for bar in self.screen.query(ProgressBar):  # (none yet: not composed)
                bar.update(total=100, progress=percent)
        elif self.replay_screen is not None:
            self.replay_screen.load_percent = percent

    @on(SessionStarted)
    def show_session(self, event: SessionStarted) -> None:
        replace, self.rereading = self.rereading, False  # the same file read again
        self.open_session(event.session, loading=True, replace=replace)

    @on(SessionsLoaded)
    def show_picker(self, event: SessionsLoaded) -> None:
        from replay.ui.screens.picker import SessionPicker

        if not event.sessions:
            self.exit(message=Text(one_line(f"replay: {self.options.path}: no sessions found")))
            return
        if len(event.sessions) == 1:
            self.open_session(event.sessions[0])
            return
        self._show_picker(SessionPicker.of_sessions(str(self.options.path), event.sessions,
                                                    self.options.rules))

    @on(SessionsListed)
    def show_listed(self, event: SessionsListed) -> None:
        from replay.ui.screens.picker import PickerRow, SessionPicker

        rows = [PickerRow(entry=entry) for entry in event.entries]
        self._show_picker(SessionPicker(str(self.options.path), rows, self.options.rules,
                                        event.reader))

    def _show_picker(self, picker: Screen[None]) -> None:
        if isinstance(self.screen, LoadingScreen):
            self.switch_screen(picker)
        else:
            self.push_screen(picker)

    @on(SessionsSummarized)
    def show_summary(self, event: SessionsSummarized) -> None:
        from replay.ui.screens.picker import SessionPicker

        for screen in self.screen_stack:
            if isinstance(screen, SessionPicker):
                for counted in event.counted:
                    screen.show_summary(counted.entry, counted.summary, counted.error)

    @on(TurnsAdded)
    def grow_session(self, event: TurnsAdded) -> None:
        screen = self.replay_screen
        if screen is None:
            return
        if not (screen.is_mounted and screen.is_running):
            # Not composed yet (just switched to), or gone (the app closing; it stays
            # "mounted" while its widgets are removed): once it is up, or never.
            screen.call_after_refresh(self.grow_session, event)
            return
        if self.options.follow:
            self._key_annotations_by_session(screen, event.session)
        if screen.session is event.session:
            screen.turns_added(event.changed_from, done=event.done, reset=event.reset,
                               pending=event.pending)
        elif self.options.follow:
            screen.turns_added(0, done=event.done, reset=True, session=event.session,
                               pending=event.pending)
        if event.done and not self.options.follow:
            # A large session is hundreds of thousands of long-lived objects: move them out
            # of the collector's reach, or every full collection stalls stepping by 100+ ms.
            gc.freeze()
            self._session_frozen = True

    def _key_annotations_by_session(self, screen: ReplayScreen, session: Session) -> None:
        """Once a followed file names its session, its annotations move to that session's key."""
        if screen.store.session_id == session_identity(session):
            return
        try:
            moved = screen.store.rekey(session, keep_journal=self.options.annotations is not None)
        except JournalError as error:
            self.notify(f"{error}\nAnnotations stay under the file's path for now.",
                        title="Annotations not moved", severity="error", markup=False,
                        timeout=10)
            return
        if moved:
            self.notify(f"{moved} annotation record(s) now filed under session "
                        f"{session.session_id}.", title="Annotations", markup=False, timeout=4)

    @on(SilenceChanged)
    def show_silence(self, event: SilenceChanged) -> None:
        if self.replay_screen is not None:
            self.replay_screen.live.silence_changed(event.since)

    @on(ViewChanged)
    def collect_when_idle(self) -> None:
        """Collect the garbage recent steps left once the reviewer pauses on a turn.

        Textual's strips keep themselves in their own caches, so every step leaves cycles
        that only a full collection frees; one landing in the middle of a step made it
        10-25 ms slower. Collected while nobody waits, it rarely lands in one. Only once the
        session is frozen: before that a full collection would walk the whole session.
        """
        if not self._session_frozen:
            return
        if self._idle_collect is not None:
            self._idle_collect.stop()
        self._idle_collect = self.set_timer(IDLE_COLLECT_SECONDS, collect_garbage)

    @on(ScreenPainted)
    def let_loading_read_on(self) -> None:
        self.first_screen_painted.set()

    @on(ReplayScreenShown)
    def remember_screen_shown(self, event: ReplayScreenShown) -> None:
        if isinstance(event.screen, ReplayScreen):
            self.replay_screen = event.screen

    @on(OpenSessionRequested)
    def open_requested_session(self, event: OpenSessionRequested) -> None:
        self.open_session(event.session)

    @on(OpenEntryRequested)
    @on(OpenChatRequested)
    def open_requested_entry(self, event: OpenEntryRequested | OpenChatRequested) -> None:
        if isinstance(event, OpenChatRequested):  # a chat of a history's list
            return history_list.open_chat(self, event.read)
        self.open_entry(event.reader, event.entry)

    @on(CountRequested)
    def count_requested(self, event: CountRequested) -> None:
        self.summarize_sessions(event.reader, event.entries)

    @on(LoadFailed)
    def stop_on_failure(self, event: LoadFailed) -> None:
        if event.fatal:
            self.exit(return_code=2, message=Text(one_line(f"replay: {event.error}")))
        else:
            self.notify(shown(event.error), title="Session not opened", severity="error",
                        markup=False, timeout=8)

    @on(Worker.StateChanged)
    def report_worker_error(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.notify(shown(f"{event.worker.description}: {error}"),
                        title="Something went wrong",
                        severity="error", markup=False, timeout=10)

    def open_session(self, session: Session, *, loading: bool = False,
                     replace: bool = False) -> Awaitable[Any]:
        """Show a session on the replay screen, with this reviewer's annotations loaded;
        with `replace`, instead of the replay screen on top (following a folder)."""
        reviewer = default_reviewer(self.options.reviewer or self.settings.reviewer)
        self.watch_rewrites(session)
        store = AnnotationStore.for_session(session, reviewer, self.options.annotations)
        try:
            for warning in store.load()[:3]:
                self.notify(shown(warning), title="Journal", severity="warning", markup=False)
        except JournalError as error:
            self.notify(shown(str(error)), title="Annotations not loaded", severity="error",
                        markup=False, timeout=10)
        if self.options.header_note:
            from replay.ui.discovered import NotedReplayScreen

            screen: ReplayScreen = NotedReplayScreen(
                session, store, labels=self.options.labels, rules=self.options.rules,
                suggester=self.suggester, following=self.options.follow, indexing=loading,
                settings=self.settings, note=self.options.header_note)
        else:
            screen = ReplayScreen(session, store, labels=self.options.labels,
                                  rules=self.options.rules, suggester=self.suggester,
                                  following=self.options.follow, indexing=loading,
                                  settings=self.settings)
        previous = self.replay_screen
        self.replay_screen = screen
        if isinstance(self.screen, LoadingScreen) or (replace and self.screen is previous):
            return self.switch_screen(screen)
        return self.push_screen(screen)

    # ---------------------------------------------------------------- quitting

    async def action_quit(self) -> None:
        """Quit, but ask first when annotations exist only in memory."""
        from replay.ui.quitting import QuitGuard  # and the screens it asks with

        QuitGuard(self).quit()

    # ---------------------------------------------------------------- commands

    def action_help(self) -> None:
        from replay.ui.screens.help import HelpScreen

        bindings = [b for b in self.screen.BINDINGS if isinstance(b, Binding)]
        self.push_screen(HelpScreen(bindings + list(self.BINDINGS),  # type: ignore[arg-type]
                                    self.options.labels, self.settings.keymap))

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            # Textual's goes to ~/Downloads, and where that is missing says only "Failed".
            yield screenshot_command(self) if command.title == "Screenshot" else command
        if isinstance(screen, ReplayScreen):
            yield SystemCommand("Export annotations to CSV",
                                "A CSV file here: the rows of replay export --all-empty",
                                screen.tools.action_export)
            yield SystemCommand("Next unannotated empty turn", "Jump to it",
                                screen.action_next_unannotated)
            yield SystemCommand("Toggle tool-only stops",
                                "Also stop at assistant turns that only call tools",
                                self.toggle_tool_only)
            yield SystemCommand("Toggle missing-reply stops",
                                "Also stop at a request that got no reply at all",
                                self.toggle_missing_replies)

    def toggle_missing_replies(self) -> None:
        """Switch the rule that also stops at requests that got no reply."""
        self._toggle_rule("missing_replies", "Missing-reply stops")

    def toggle_tool_only(self) -> None:
        """Switch the rule that also stops at tool-only assistant turns."""
        self._toggle_rule("tool_only_is_empty", "Tool-only stops")

    def _toggle_rule(self, option: str, title: str) -> None:
        """Flip one boolean detection rule, re-find the stops on screen and say so."""
        current = getattr(self.options.rules, option)
        rules = self.options.rules.with_options(**{option: not current})
        self.options.rules = rules
        screen = self.replay_screen
        if screen is not None:
            screen.rules = rules
            screen.turns_added(0, done=False, reset=True)
        state = "off" if current else "on"
        self.notify(f"{title} {state}.", timeout=2, markup=False)


def collect_garbage() -> None:
    """A full collection (see `ReplayApp.collect_when_idle`)."""
    gc.collect()


def listed_roots(options: LaunchOptions) -> list[Path]:
    """The folders a session list was made of: the machine's session places (no PATH, or a
    session id), else the PATH. The cache's rows of files gone from them are dropped."""
    if options.discover or options.discovered is not None:
        from replay.core.discovery import places

        return [place.path for place in places()]
    return [options.path]


def lazy_suggester(labels: LabelSet) -> Suggester:
    """A suggester for the label set, imported on the first empty turn shown (not at start)."""
    loaded: list[Suggester | None] = []

    def suggest(session: Session, empty: EmptyTurn) -> tuple[str, str, list[str], str] | None:
        if not loaded:
            from replay.core.suggest import suggester_for

            loaded.append(suggester_for(labels))
        suggester = loaded[0]
        return suggester(session, empty) if suggester is not None else None

    return suggest


def settings_and_rules(settings: Settings | None, blind: bool | None,
                       rules: DetectionRules | None) -> tuple[Settings, DetectionRules]:
    """The settings an app runs with (`blind` overrides the setting) and its detection rules
    (the settings' own unless given)."""
    from dataclasses import replace

    settings = settings or Settings()
    if blind is not None:
        settings = replace(settings, blind=blind)
    if rules is None:
        rules = DEFAULT_RULES.with_options(tool_only_is_empty=settings.tool_only_is_empty,
                                           missing_replies=settings.missing_replies)
    return settings, rules


def make_app(path: Path | str | None = None, *, settings: Settings | None = None,
             format: str | None = None, follow: bool = False, reviewer: str | None = None,
             annotations: Path | None = None, labels: LabelSet = DEFAULT_LABELS,
             rules: DetectionRules | None = None, problems: list[str] | None = None,
             suggest: bool = True, blind: bool | None = None, stall: float = DEFAULT_STALL,
             settle: float = DEFAULT_SETTLE, discovered: list[FoundSession] | None = None,
             chosen: bool = False, header_note: str | None = None,
             discover: bool = False, follow_roots: Iterable[Path] = (),
             cache: bool = True) -> ReplayApp:
    """Build the app the same way for the CLI and the tests (`blind` overrides the setting)."""
    from replay.resources import default_sample

    settings, rules = settings_and_rules(settings, blind, rules)
    options = LaunchOptions(
        path=Path(path) if path is not None else default_sample(), format=format,
        follow=follow, reviewer=reviewer, annotations=annotations, labels=labels,
        rules=rules, problems=list(problems or []), stall=stall, settle=settle,
        discover=discover, discovered=discovered, chosen=chosen, header_note=header_note,
        follow_roots=tuple(follow_roots), cache=cache,
    )
    from replay.ui.exit_line import unwrapped_exit

    huge_strings.enable()  # huge messages stay in their file, read a piece at a time
    return unwrapped_exit(ReplayApp(options, settings,
                                    lazy_suggester(labels) if suggest else None))
