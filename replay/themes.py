"""Theme files (TOML) turned into Textual themes; a broken file is reported, never fatal."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

from replay.core.paths import user_themes_dir
from replay.resources import themes_dir

APP_VARIABLES: dict[str, str] = {
    "turn-user": "primary",
    "turn-assistant": "success",
    "turn-system": "foreground-muted",
    "turn-empty": "warning",
    "annotation-mark": "secondary",
}
"""Colours replay's CSS uses beyond Textual's, each defaulting to a colour every theme has."""


def app_variable_defaults(theme: Theme) -> dict[str, str]:
    """Values for replay's own variables under a theme that does not set them."""
    system = theme.to_color_system().generate()
    fallback = system["foreground"]
    return {name: system.get(source, fallback) for name, source in APP_VARIABLES.items()}

_COLOUR_FIELDS = {"primary", "secondary", "warning", "error", "success", "accent",
                  "foreground", "background", "surface", "panel", "boost"}
_THEME_FIELDS = {f.name for f in fields(Theme)}


class ThemeFileError(Exception):
    """A theme file that cannot be used, with a one-line reason."""


def load_theme_file(path: Path) -> Theme:
    """Read one TOML theme file into a Textual Theme."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ThemeFileError(f"{path.name}: {error}") from None
    unknown = sorted(set(data) - _THEME_FIELDS)
    if unknown:
        raise ThemeFileError(f"{path.name}: unknown keys {', '.join(unknown)}")
    if not isinstance(data.get("name"), str) or not isinstance(data.get("primary"), str):
        raise ThemeFileError(f"{path.name}: needs a name and a primary colour")
    for key in _COLOUR_FIELDS & set(data):
        try:
            Color.parse(data[key])
        except (ColorParseError, TypeError, ValueError):
            raise ThemeFileError(f"{path.name}: {key} is not a colour: {data[key]!r}") from None
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise ThemeFileError(f"{path.name}: [variables] must be a table")
    data["variables"] = {str(k): str(v) for k, v in variables.items()}
    try:
        return Theme(**data)
    except (TypeError, ValueError) as error:
        raise ThemeFileError(f"{path.name}: {error}") from None


@dataclass(slots=True)
class ThemeLoadResult:
    """Themes read from a set of directories, and one line per file that failed."""

    loaded: list[Theme] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def load_themes(*directories: Path) -> ThemeLoadResult:
    """Every `*.toml` theme in the directories, in name order; later files override earlier."""
    result = ThemeLoadResult()
    for directory in directories:
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.toml")):
            try:
                result.loaded.append(load_theme_file(path))
            except ThemeFileError as error:
                result.failed.append(str(error))
    return result


def load_all_themes() -> ThemeLoadResult:
    """Bundled themes, then the user's own."""
    return load_themes(themes_dir(), user_themes_dir())
