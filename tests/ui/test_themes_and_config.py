"""Themes as files, a broken theme file, remembered choices and keymaps from the config."""

from __future__ import annotations

import os
from pathlib import Path

from replay.config import Settings, load_settings
from replay.resources import themes_dir
from replay.themes import ThemeFileError, load_theme_file, load_themes
from replay.ui.screens.replay_screen import ReplayScreen
from tests.ui.conftest import build_app, ready


def test_bundled_themes_load() -> None:
    result = load_themes(themes_dir())
    assert result.failed == []
    names = {theme.name for theme in result.loaded}
    assert {"replay-dark", "replay-light", "replay-contrast"} <= names
    light = next(theme for theme in result.loaded if theme.name == "replay-light")
    assert light.dark is False and "turn-empty" in light.variables


def test_broken_theme_files_are_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / "bad-colour.toml").write_text('name = "x"\nprimary = "not-a-colour"\n')
    (tmp_path / "bad-toml.toml").write_text('name = "y"\nprimary = \n')
    (tmp_path / "unknown-key.toml").write_text('name = "z"\nprimary = "#ffffff"\nglow = 1\n')
    (tmp_path / "good.toml").write_text('name = "good"\nprimary = "#336699"\n')
    result = load_themes(tmp_path)
    assert [theme.name for theme in result.loaded] == ["good"]
    assert len(result.failed) == 3
    assert any("not a colour" in failure for failure in result.failed)
    assert any("unknown keys glow" in failure for failure in result.failed)


def test_load_theme_file_raises_clean_error(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text("primary = '#fff'\n")
    try:
        load_theme_file(path)
    except ThemeFileError as error:
        assert "needs a name" in str(error)
    else:
        raise AssertionError("no error")


async def test_broken_user_theme_notifies_and_app_still_runs(chat_file: Path) -> None:
    themes = Path(os.environ["REPLAY_CONFIG_FILE"]).parent / "themes"
    themes.mkdir(parents=True)
    (themes / "oops.toml").write_text('name = "oops"\nprimary = 12\n')
    app = build_app(chat_file, settings=Settings(animations=False, theme="no-such-theme"))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        assert app.theme == "replay-dark"
        titles = [notification.title for notification in app._notifications]
        assert "Theme file not loaded" in titles
        assert isinstance(app.screen, ReplayScreen)


async def test_theme_choice_is_remembered(chat_file: Path) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        app.theme = "replay-contrast"
        await pilot.pause()
    assert load_settings().settings.theme == "replay-contrast"


async def test_keymap_from_config_remaps_by_binding_id(chat_file: Path) -> None:
    settings = Settings(animations=False, keymap={"next-empty-turn": "x"})
    app = build_app(chat_file, settings=settings)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        await pilot.press("home", "x")
        assert app.replay_screen is not None and app.replay_screen.index == 9


def test_settings_file_problems_are_reported(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('theme = "replay-light"\ncontext_turns = "many"\nfoo = 1\n'
                      '[keymap]\nnext-turn = "j"\n')
    loaded = load_settings(config)
    assert loaded.settings.theme == "replay-light"
    assert loaded.settings.context_turns == 3
    assert loaded.settings.keymap == {"next-turn": "j"}
    assert len(loaded.problems) == 2
