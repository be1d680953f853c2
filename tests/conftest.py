"""Shared test fixtures: real transcripts from ../shared/realdata, isolated user directories."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# CI must be repeatable: property tests explore the same examples on every CI run (and
# new ones on every developer run, where a find is welcome).
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

REPO = Path(__file__).resolve().parents[1]
REALDATA = REPO.parent / "shared" / "realdata"
SAMPLES = REPO / "sample_sessions"


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory,
                       monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Keep every test away from the real user data and config directories."""
    base = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("REPLAY_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("REPLAY_CONFIG_FILE", str(base / "config" / "config.toml"))
    monkeypatch.setenv("REPLAY_SPOOL_DIR", str(base / "pipes"))
    monkeypatch.setenv("REPLAY_CACHE_DIR", str(base / "cache"))
    yield base


DISCOVERY_OVERRIDES = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME", "GEMINI_CLI_HOME",
                       "XDG_CONFIG_HOME")
"""The variables by which the agents (and so discovery) move their folders."""


@pytest.fixture(autouse=True)
def empty_agent_home(tmp_path_factory: pytest.TempPathFactory,
                     monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point session discovery at an empty home for every test: nothing reads the sessions
    of the machine running the tests, and `replay` with no PATH opens the bundled sample."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in DISCOVERY_OVERRIDES:
        monkeypatch.delenv(name, raising=False)
    return home


def realdata(relative: str) -> Path:
    """A file of ../shared/realdata; the test is skipped if the folder is not beside the repo."""
    path = REALDATA / relative
    if not REALDATA.is_dir():
        pytest.skip("../shared/realdata is not beside the repository")
    return path


@pytest.fixture(autouse=True)
def no_lifting_after_an_app() -> Iterator[None]:
    """An app leaves huge strings in their file (`huge_strings.enable`) for the process: a
    command tested after it reads them whole again, as the CLI does."""
    yield
    from replay.core.readers import huge_strings

    huge_strings.enable(False)
