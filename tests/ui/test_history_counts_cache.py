"""An Aider history's counts in the app come from the scan cache on the next launch: the list
has every count at once, no chat scanned; `--no-cache` counts again."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replay.core.discovery import history as history_module
from tests.core.test_aider import HISTORY
from tests.ui.conftest import build_app
from tests.ui.test_history_list import _counted, _listed, _title

CHATS = 600


async def _counts(path: Path, **options: Any) -> list[tuple[str, str]]:
    app = build_app(path, **options)
    async with app.run_test(size=(140, 30)) as pilot:
        picker, table = await _listed(pilot, app)
        await _counted(pilot, picker)
        assert "counting" not in _title(picker)
        return [(str(table.get_row_at(row)[1]), str(table.get_row_at(row)[2]))
                for row in range(table.row_count)]


async def test_the_second_launch_shows_every_count_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY * (CHATS // 3), encoding="utf-8")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    scans: list[int] = []
    real = history_module.scan_stream

    def counting(*args: Any, **kwargs: Any) -> Iterator[Any]:
        scans.append(1)
        yield from real(*args, **kwargs)

    monkeypatch.setattr(history_module, "scan_stream", counting)
    first = await _counts(path)
    assert len(first) == CHATS and scans == [1] and ("…", "…") not in first
    scans.clear()
    assert await _counts(path) == first
    assert scans == []
    assert await _counts(path, cache=False) == first and scans == [1]
