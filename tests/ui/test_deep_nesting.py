"""Issue 27 item 1 in the app: a record nested 1,000 deep in a Claude Code session is one
skipped line said as a warning; the app does not stay on "Reading" and shows the rest."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import SAMPLES
from tests.ui.conftest import build_app, ready

DEEP = ('{"type":"user","sessionId":"s","x":' + "[" * 1000 + "]" * 1000
        + ',"message":{"role":"user","content":"hi"}}\n')


async def test_the_app_shows_a_session_with_a_deeply_nested_record(tmp_path: Path) -> None:
    lines = (SAMPLES / "refactor.claude-code.jsonl").read_text().splitlines(keepends=True)
    path = tmp_path / "deep.jsonl"
    path.write_text("".join([*lines[:5], DEEP, *lines[5:]]))
    app = build_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        assert screen.session.warnings == ["line 6: nested too deeply to read"]
        assert len(screen.session.turns) > 10
        await pilot.press("right", "right", "left", "o")
        await pilot.pause()
    assert app.return_code in (None, 0)
