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


def realdata(relative: str) -> Path:
    """A file of ../shared/realdata; the test is skipped if the folder is not beside the repo."""
    path = REALDATA / relative
    if not REALDATA.is_dir():
        pytest.skip("../shared/realdata is not beside the repository")
    return path
