"""User settings: a frozen dataclass read from `config.toml`; remembered choices are written."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from replay.core.files import FileRefused, read_capped
from replay.core.paths import config_file

DEFAULT_THEME = "replay-dark"


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a user can set in `config.toml`."""

    theme: str = DEFAULT_THEME
    """Name of the colour theme; remembered when changed in the app."""
    reviewer: str | None = None
    """Name recorded with annotations; the login name when unset."""
    labels: str | None = None
    """Path of a TOML label set to use instead of the default one."""
    context_turns: int = 3
    """Turns shown in each of the Before and After panes."""
    idle_cap: float = 2.0
    """Longest pause between two turns during playback, in seconds at 1x."""
    speed: float = 1.0
    """Playback speed at start."""
    keymap: dict[str, str] = field(default_factory=dict)
    """Binding id to keys, e.g. {"next-empty-turn": "]"}, to remap keys."""
    tool_only_is_empty: bool = False
    """Also stop at assistant turns that only call tools."""
    animations: bool = True
    """Allow Textual animations (off for snapshot tests)."""
    blind: bool = False
    """Blind review: hide the suggestion and other reviewers' labels until the reviewer saves."""
    missing_replies: bool = False
    """Also stop at a request that got no reply at all."""


@dataclass(frozen=True, slots=True)
class SettingsLoad:
    """Settings plus the problems met while reading them."""

    settings: Settings
    problems: list[str]


def load_settings(path: Path | None = None) -> SettingsLoad:
    """Read the config file; unknown keys and bad values are reported, never fatal."""
    path = path or config_file()
    problems: list[str] = []
    try:
        data = tomllib.loads(read_capped(path, "a config file").decode("utf-8"))
    except FileNotFoundError:
        return SettingsLoad(Settings(), problems)
    except FileRefused as error:
        return SettingsLoad(Settings(), [f"{error}; using defaults"])
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        return SettingsLoad(Settings(), [f"{path}: not read ({error}); using defaults"])
    known = {f.name: f for f in fields(Settings)}
    values: dict[str, Any] = {}
    defaults = Settings()
    for key, value in data.items():
        name = key.replace("-", "_")
        if name not in known:
            problems.append(f"{path}: unknown setting {key!r} ignored")
            continue
        expected = type(getattr(defaults, name))
        if name in ("reviewer", "labels"):
            expected = str
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            problems.append(f"{path}: {key} should be {expected.__name__}, ignored")
            continue
        values[name] = value
    if "keymap" in values:
        values["keymap"] = {str(k): str(v) for k, v in values["keymap"].items()}
    return SettingsLoad(replace(defaults, **values), problems)


def remember(key: str, value: str, path: Path | None = None) -> str | None:
    """Set one top-level string setting in the config file, keeping the rest; returns a problem."""
    path = path or config_file()
    try:
        # A FIFO or device as config is refused here (FileRefused), never replaced by a file.
        lines = read_capped(path, "a config file").decode("utf-8").splitlines() \
            if path.exists() else []
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        entry = f'{key} = "{escaped}"'
        for number, line in enumerate(lines):
            if line.split("=", 1)[0].strip() == key and not line.startswith(" "):
                lines[number] = entry
                break
            if line.lstrip().startswith("["):
                lines.insert(number, entry)
                break
        else:
            lines.append(entry)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.replace(temporary, path)
    except FileRefused as error:
        return f"could not save {key}: {error}"
    except (OSError, UnicodeDecodeError) as error:
        return f"could not save {key} to {path}: {getattr(error, 'strerror', None) or error}"
    return None
