"""The app's exit message for a file it cannot read is one line on stderr, whatever the width:
it was wrapped at 80 columns when stderr is not a terminal (a log, a pipe), a long path cut
in two mid-word."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from replay.ui.app import ReplayApp
from tests.ui.conftest import build_app, wait_until


def _to_buffer(app: ReplayApp, width: int | None) -> io.StringIO:
    """What the app prints on stderr at exit goes to a buffer, a stderr that is not a
    terminal (`width`: the console told a width, as a terminal's would be)."""
    out = io.StringIO()
    console = app.error_console
    console.file = out
    if width is not None:
        console.width = width
    return out


@pytest.mark.parametrize("width", [None, 40, 80, 200])
async def test_an_unreadable_files_exit_message_is_one_line(tmp_path: Path,
                                                            width: int | None) -> None:
    folder = tmp_path / ("a folder whose name is long [link=x] list[int] [-] " * 3).strip()
    folder.mkdir()
    bad = folder / "notes of the day, not a session at all [bold]x.txt"
    bad.write_text("just some words\n", encoding="utf-8")
    app = build_app(bad)
    out = _to_buffer(app, width)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 2
    printed = out.getvalue()
    assert printed.endswith("\n") and printed.count("\n") == 1, printed
    line = printed.rstrip("\n")
    assert line.startswith("replay: ") and str(bad) in line  # whole, markup-like text literal
    assert len(line) > 200
