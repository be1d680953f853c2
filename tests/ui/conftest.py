"""Pilot fixtures: apps built by the real factory with reproducible settings."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from replay.config import Settings
from replay.ui.app import ReplayApp, make_app
from tests.ui.sessions import write_chat

TEST_SETTINGS = Settings(animations=False, idle_cap=0.02, speed=16.0)


@pytest.fixture
def chat_file(tmp_path: Path) -> Path:
    """A 30-turn chat with empty turns at indices 9 and 20."""
    return write_chat(tmp_path / "migration.json")


def build_app(path: Path, **options: object) -> ReplayApp:
    """The app as the CLI builds it, with test settings."""
    settings = options.pop("settings", TEST_SETTINGS)
    return make_app(path, settings=settings, **options)  # type: ignore[arg-type]


async def wait_until(pilot: object, condition: Callable[[], bool], rounds: int = 500) -> None:
    """Pause until the condition holds, failing after a bounded number of rounds (10 s: a
    loaded CI machine may be slow, and a condition that holds returns at once)."""
    for _ in range(rounds):
        if condition():
            return
        await pilot.pause(0.02)  # type: ignore[attr-defined]
    raise AssertionError("condition not reached")


async def ready(pilot: object, app: ReplayApp) -> None:
    """Wait until the session is on screen and fully indexed."""
    await wait_until(pilot, lambda: app.replay_screen is not None
                     and not app.replay_screen.indexing)
    await pilot.pause()  # type: ignore[attr-defined]


Ready = Callable[[object, ReplayApp], Awaitable[None]]
