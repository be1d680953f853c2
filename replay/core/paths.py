"""Where replay keeps its own files: one seam, overridable by environment for tests and users."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import platformdirs

APP_NAME = "replay"


def data_dir() -> Path:
    """User data directory (annotation journals); `REPLAY_DATA_DIR` overrides it."""
    override = os.environ.get("REPLAY_DATA_DIR")
    if override:
        return Path(override)
    return platformdirs.user_data_path(APP_NAME, appauthor=False)


def config_file() -> Path:
    """User config file (`config.toml`); `REPLAY_CONFIG_FILE` overrides it."""
    override = os.environ.get("REPLAY_CONFIG_FILE")
    if override:
        return Path(override)
    return platformdirs.user_config_path(APP_NAME, appauthor=False) / "config.toml"


def user_themes_dir() -> Path:
    """Directory of the user's own theme files, beside the config file."""
    return config_file().parent / "themes"


def spool_dir() -> Path:
    """Where input read from a pipe is copied; `REPLAY_SPOOL_DIR` overrides it."""
    override = os.environ.get("REPLAY_SPOOL_DIR")
    if override:
        return Path(override)
    return Path(tempfile.gettempdir()) / f"replay-{os.getuid()}-pipes"


def cache_dir() -> Path:
    """Where replay keeps what it can always compute again (the scan cache);
    `REPLAY_CACHE_DIR` overrides it."""
    override = os.environ.get("REPLAY_CACHE_DIR")
    if override:
        return Path(override)
    return platformdirs.user_cache_path(APP_NAME, appauthor=False)
