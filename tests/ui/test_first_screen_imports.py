"""`replay FILE` reaches its first screen without importing what that screen does not show.

Every module on the way to the first screen is start-up time the reviewer waits through
(issue 24: the first screen is measured against a minimal Textual app, target 1.5x). These
were each measured on that path and taken off it; the test fails when one comes back.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REALDATA, REPO

NOT_ON_THE_FIRST_SCREEN = {
    # The suggester (its signals compile dozens of patterns: ~14 ms) and the scan stack the
    # session list's counts come from: a long session shows its first turns before any
    # empty turn is described.
    "replay.core.suggest": "the suggester",
    "replay.core.corpus.scan": "the scan",
    "replay.core.corpus.cache": "the scan cache (sqlite3)",
    "replay.core.discovery": "session discovery",
    # Detecting a JSONL file asked the SQLite reader first (sqlite3: 3-4 ms).
    "sqlite3": "sqlite3",
    "replay.core.readers.opencode_sqlite": "the opencode database reader",
    # Agreement between reviewers, with no journal to compare with.
    "replay.core.annotate.agree": "reviewer agreement",
    # The loading screen's bar: only when reading takes long enough to show it.
    "textual.widgets._progress_bar": "the loading screen's progress bar",
    # Quitting with work unsaved: its screens are imported when quitting.
    "replay.ui.quitting": "the quit guard",
    "replay.ui.screens.quit": "the quit screen",
    # Commands, sharing and reports: never on the app's path.
    "replay.commands.": "a command module",
    "replay.core.publish": "share / publish",
    "replay.core.corpus.report": "report",
    "matplotlib": "matplotlib",
    "detect_secrets": "detect-secrets",
    "dask": "dask",
}
"""Module (or package prefix ending in '.') -> what it is, for the failure message."""

WIDGETS = 16
"""Widgets on that first screen (the footer's keys aside): Textual's toast rack and tooltip,
the header, timeline, the two panes and the current turn with its banner, the annotation bar
(its parts not built yet), the footer, and the four hidden owners of playback, search,
following and the turn's tools. The bar's five parts made it 21."""

PROBE = r"""
import os, sys, tempfile
scratch = tempfile.mkdtemp()
os.environ.update(REPLAY_CONFIG_FILE=os.path.join(scratch, "config.toml"),
                  REPLAY_DATA_DIR=scratch, REPLAY_CACHE_DIR=scratch,
                  TEXTUAL_ANIMATIONS="none")
from textual.screen import Screen
from replay.cli import main
from replay.ui.app import ReplayApp
from replay.ui.screens.replay_screen import ReplayScreen

paint = Screen._compositor_refresh

def first_paint(self):
    paint(self)
    if isinstance(self, ReplayScreen) and any(p.indices for p in self.query("#current")):
        indexing = self.indexing
        print("INDEXING" if indexing else "INDEXED")
        # The footer's keys are its own business (one per key shown): not counted.
        widgets = [w for w in self.walk_children() if type(w).__name__ != "FooterKey"]
        print(len(widgets), sum(type(w).__name__ == "NoteInput" for w in widgets))
        print("\n".join(sorted(sys.modules)), flush=True)
        os._exit(0)

Screen._compositor_refresh = first_paint
run = ReplayApp.run
ReplayApp.run = lambda self, **_: run(self, headless=True, size=(160, 45))
main([sys.argv[1]])
"""


@dataclass(frozen=True)
class FirstScreen:
    """What `replay PATH` had done by its first painted turn."""

    indexing: bool
    """The session was still being read."""
    widgets: int
    """Widgets on the replay screen."""
    note_fields: int
    """Annotation note fields among them."""
    modules: set[str]
    """Every module imported."""


def first_screen(path: Path) -> FirstScreen:
    """The first screen of `replay PATH`, run headless in a fresh interpreter."""
    result = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True,
                            text=True, timeout=120, cwd=REPO, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    state, widgets, notes, *modules = result.stdout.split()
    return FirstScreen(state == "INDEXING", int(widgets), int(notes), set(modules))


def heavy(modules: set[str]) -> list[str]:
    """The modules of NOT_ON_THE_FIRST_SCREEN among `modules`, each with what it is."""
    found = []
    for name, what in NOT_ON_THE_FIRST_SCREEN.items():
        hit = sorted(m for m in modules if m.startswith(name)) if name.endswith(".") else \
            sorted(m for m in modules if m == name or m.startswith(name + "."))
        if hit:
            found.append(f"{hit[0]} ({what})")
    return found


@pytest.fixture(scope="module")
def long_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A long Claude Code session (the real sessions' records again and again, as the
    benchmark's real-shaped file): shown while it is still being read."""
    if not REALDATA.is_dir():
        pytest.skip("../shared/realdata is not beside the repository")
    spec = importlib.util.spec_from_file_location("realshaped", REPO / "bench" / "realshaped.py")
    assert spec is not None and spec.loader is not None
    realshaped = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(realshaped)
    path = tmp_path_factory.mktemp("long") / "session.jsonl"
    realshaped.write(path, 8_000_000, REALDATA / "claude-code")
    return path


def test_the_first_screen_of_a_long_session_imports_nothing_it_does_not_show(
        long_session: Path) -> None:
    shown = first_screen(long_session)
    assert shown.indexing  # the first turns on screen while the rest is read
    assert "replay.ui.screens.replay_screen" in shown.modules  # the probe saw the real screen
    assert heavy(shown.modules) == []
    # Its first turn is no empty turn: the annotation bar's parts (a text field among
    # them) are not built yet, and nothing else grows the screen unseen.
    assert shown.note_fields == 0
    assert shown.widgets <= WIDGETS


def test_the_check_finds_a_heavy_module() -> None:
    # The test above can fail: the same check on a module set holding two of them.
    assert heavy({"replay.ui.app", "sqlite3", "replay.core.suggest.signals"}) == [
        "replay.core.suggest.signals (the suggester)", "sqlite3 (sqlite3)"]
    assert heavy({"replay.commands.scan"}) == ["replay.commands.scan (a command module)"]
    assert heavy({"replay.commandsx", "replay.core.corpus.scanner"}) == []
