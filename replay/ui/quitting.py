"""Quitting without losing work: annotations the journal could not take are saved elsewhere,
exported, or given up only when the reviewer says so."""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from replay.core.annotate.journal import JournalError
from replay.core.safe import one_line
from replay.core.session.text import plural
from replay.ui.literal import shown
from replay.ui.screens.quit import QuitScreen
from replay.ui.screens.replay_screen import ReplayScreen

if TYPE_CHECKING:
    from replay.ui.app import ReplayApp


UNSAVED_NAME = "replay-unsaved-annotations.jsonl"
"""The file annotations the journal could not take go to when the app is ended by a signal
(the name the quit question offers)."""


def rescue_folders() -> list[Path]:
    """Where such a file is tried: the working folder, replay's cache folder, the system's
    temporary folder."""
    import tempfile

    from replay.core import paths

    folders = []
    for where in (Path.cwd, paths.cache_dir, lambda: Path(tempfile.gettempdir())):
        try:
            folders.append(where())
        except OSError:
            continue  # (a working folder removed)
    return folders


_TOLD_LOST: weakref.WeakSet[object] = weakref.WeakSet()
"""Apps told once that their drafts cannot be kept (the next quit leaves without them)."""


class QuitGuard:
    """Quits the app, or first asks what to do with work that would be lost."""

    def __init__(self, app: ReplayApp) -> None:
        self.app = app
        """The app to quit."""

    def screens_with_unsaved(self) -> list[ReplayScreen]:
        """Replay screens whose annotations are not all on disk, after one more try."""
        waiting = []
        for screen in self.replay_screens():
            if not screen.store.unsaved:
                continue
            try:
                screen.store.retry_unsaved()
            except JournalError:
                waiting.append(screen)
        return waiting

    def replay_screens(self) -> list[ReplayScreen]:
        """Every replay screen of the app, the one on top too."""
        app = self.app
        # Screens a folder follow moved away from are no longer stacked: they count too.
        screens = [screen for screen in [*app.left_screens, *app.screen_stack]
                   if isinstance(screen, ReplayScreen)]
        if app.replay_screen is not None and app.replay_screen not in screens:
            screens.append(app.replay_screen)
        return screens

    def quit(self) -> None:
        """Quit, but ask first when drafts are not saved or annotations exist only in
        memory (a second ctrl+q while asked quits)."""
        from replay.ui.screens.drafts import DraftsScreen

        drafts = [draft for screen in self.replay_screens()
                  for draft in screen.annotation.unsaved_drafts()]
        if drafts and not isinstance(self.app.screen, DraftsScreen | QuitScreen):
            self.app.push_screen(DraftsScreen(drafts, "quit"),
                                 lambda leave: self._quit_unsaved() if leave else None)
            return
        self._quit_unsaved()

    def _quit_unsaved(self) -> None:
        """Quit, but ask first when annotations exist only in memory. Drafts are kept for
        the next run first, whatever the way out."""
        app = self.app
        kept = self.keep_drafts()
        lost = [line for line in kept if "could not be kept" in line]
        if lost and app not in _TOLD_LOST:
            # Asked to quit keeping them, and they cannot be kept: stay, once.
            _TOLD_LOST.add(app)
            for line in lost:
                app.notify(shown(line.removeprefix("replay: ") + ": not quitting (enter "
                                 "saves a draft, x discards it; quit again to leave "
                                 "without them)"),
                           title="Drafts", severity="error", markup=False, timeout=10)
            return
        waiting = self.screens_with_unsaved()
        if not waiting or isinstance(app.screen, QuitScreen):
            app.exit(message=Text("\n".join(kept)) if kept else None)
            return
        count = sum(len(screen.store.unsaved) for screen in waiting)
        journal = str(waiting[0].store.journal.path)
        app.push_screen(QuitScreen(count, journal),
                        lambda choice: self._answer(choice, waiting))

    def keep_drafts(self) -> list[str]:
        """Keep every screen's drafts beside its journal for the next run (`drafts_path`),
        in place of what was kept for its session before; what to say on the way out."""
        from replay.ui.drafts import keep_screen_drafts

        return keep_screen_drafts(self.replay_screens())

    def keep_everything(self) -> list[str]:
        """Keep what would be lost without asking (the app is being ended: a signal): the
        drafts beside their journals, and annotations the journal still cannot take in a
        file of their own (`UNSAVED_NAME`, in the first folder that takes it); what to
        say."""
        said = self.keep_drafts()
        for screen in self.screens_with_unsaved():
            count = len(screen.store.unsaved)
            for folder in rescue_folders():
                target = folder / UNSAVED_NAME
                try:
                    screen.store.save_unsaved_to(target)
                except JournalError:
                    continue
                said.append(one_line(f"replay: {plural(count, 'annotation')} the journal "
                                     f"{screen.store.journal.path} could not take written "
                                     f"to {target}"))
                break
            else:
                said.append(one_line(f"replay: {plural(count, 'annotation')} could not be "
                                     f"written anywhere and are lost"))
        return said

    def _answer(self, choice: str | None, waiting: list[ReplayScreen]) -> None:
        if choice == "quit":
            self.app.exit()
        elif choice == "export":
            self._export_and_quit(waiting)
        elif choice == "save":
            from replay.ui.screens.prompt import PromptScreen

            default = str(Path.cwd() / "replay-unsaved-annotations.jsonl")
            self.app.push_screen(PromptScreen("Save the unsaved annotations to (a journal file)",
                                              default),
                                 lambda answer: self._save_and_quit(answer, waiting))

    def _export_and_quit(self, waiting: list[ReplayScreen]) -> None:
        from replay.ui.export_file import export_session

        written = []
        for screen in waiting:
            try:
                target, count, _ = export_session(
                    screen.session, screen.store, screen.labels, screen.suggester, Path.cwd(),
                    screen.rules, only_reviewer=screen.blind)
            except OSError as error:
                self.app.notify(shown(f"Could not export to {Path.cwd()}: "
                                      f"{error.strerror or error}"),
                                title="Not quitting", severity="error", markup=False,
                                timeout=10)
                return
            written.append(f"replay: {plural(count, 'row')} exported to {target}")
        self.app.exit(message=Text("\n".join(one_line(line) for line in written)))

    def _save_and_quit(self, answer: str | None, waiting: list[ReplayScreen]) -> None:
        if not answer:
            return
        path = Path(answer).expanduser()
        total = 0
        for screen in waiting:
            try:
                total += screen.store.save_unsaved_to(path)
            except JournalError as error:
                self.app.notify(shown(str(error)), title="Not quitting", severity="error",
                                markup=False, timeout=10)
                return
        self.app.exit(message=Text(one_line(
            f"replay: {total} unsaved annotation(s) written to {path}")))
