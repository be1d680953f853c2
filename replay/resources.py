"""Files shipped with replay: bundled sample sessions and theme files.

An installed wheel carries them as `replay/_samples` and `replay/_themes`; a source checkout
has them at the top level as `sample_sessions/` and `themes/`.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _bundled(installed: str, checkout: str) -> Path:
    inside = _PACKAGE / installed
    if inside.is_dir():
        return inside
    return _PACKAGE.parent / checkout


def samples_dir() -> Path:
    """Directory of the bundled sample sessions."""
    return _bundled("_samples", "sample_sessions")


def themes_dir() -> Path:
    """Directory of the bundled theme files."""
    return _bundled("_themes", "themes")


DEFAULT_SAMPLE = "torch-revert.opencode.json"
"""The sample `replay` opens with no argument."""


def default_sample() -> Path:
    """Path of the sample session opened when no PATH is given."""
    return samples_dir() / DEFAULT_SAMPLE
