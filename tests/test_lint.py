"""The tree stays lint-clean (ruff: pyflakes, bugbear, builtins, pycodestyle, isort)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_ruff_is_clean() -> None:
    if shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists():
        pytest.skip("ruff is not installed (it comes with the test extras)")
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    result = subprocess.run([ruff, "check", "--output-format", "concise", "replay", "tests",
                             "bench", "tools"], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]
