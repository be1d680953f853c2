"""What the reviewer types is on screen, readable, in every prompt, theme and size."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.config import Settings
from replay.resources import themes_dir
from tests.ui.conftest import build_app, ready
from tests.ui.screen import screen_text, text_contrast

THEMES = sorted(path.stem for path in themes_dir().glob("*.toml"))
READABLE = 3.0
"""WCAG's lowest contrast for large text: typed text below it is as good as hidden."""


def test_every_bundled_theme_is_covered() -> None:
    assert THEMES == ["replay-contrast", "replay-dark", "replay-light"]


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
@pytest.mark.parametrize("theme", THEMES)
async def test_typed_text_is_visible_in_every_prompt(chat_file: Path, tmp_path: Path,
                                                     theme: str, size: tuple[int, int]) -> None:
    settings = Settings(animations=False, idle_cap=0.02, speed=16.0, theme=theme)
    app = build_app(chat_file, settings=settings, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=size) as pilot:
        await ready(pilot, app)
        for key, typed in (("slash", "findme 42"), ("colon", "17"), ("tab", "note typed")):
            await pilot.press(key, *typed)
            await pilot.pause()
            assert text_contrast(app, typed) >= READABLE, (key, screen_text(app))
            await pilot.press("escape")
            await pilot.pause()
