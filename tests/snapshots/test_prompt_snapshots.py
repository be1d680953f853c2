"""Snapshots of every prompt with text typed into it, at 80x24, in every bundled theme."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.config import Settings
from replay.ui.app import make_app
from tests.ui.conftest import ready
from tests.ui.sessions import write_chat

PROMPTS = {"search": ("slash", "schema"), "goto": ("colon", "#12"),
           "note": ("tab", "user went quiet")}


@pytest.mark.parametrize("theme", ["replay-dark", "replay-light", "replay-contrast"])
@pytest.mark.parametrize("prompt", list(PROMPTS))
def test_typing_into_prompt(snap_compare: object, tmp_path: Path, prompt: str,
                            theme: str) -> None:
    session = write_chat(tmp_path / "migration.json", turns=30, empty_at=(9, 20))
    app = make_app(session, settings=Settings(animations=False, theme=theme),
                   annotations=tmp_path / "j.jsonl")
    key, typed = PROMPTS[prompt]

    async def run_before(pilot: object) -> None:
        await ready(pilot, app)
        # "here is the first one not annotated" shows only when loading took over 0.5 s.
        app.clear_notifications()
        await pilot.press(key, *typed)  # type: ignore[attr-defined]
        await pilot.pause()  # type: ignore[attr-defined]

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)  # type: ignore[operator]
