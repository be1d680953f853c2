"""One escaping rule: the CLI on a terminal and the app show the same invisible or control
character the same visible way (`<U+202E>`, `␛[ESC]`, `\\x85`), from one helper in core."""

from __future__ import annotations

import json
from pathlib import Path

from replay.core.safe import escape_controls
from replay.ui.literal import shown
from tests.core.test_hostile_cli import replay_on_terminal
from tests.ui.conftest import build_app, ready
from tests.ui.screen import screen_text

TEXT = "mix \x1b]0;t\x07 \x9b31m \x8f \u202eevil\u202c zw\u200b\u2060 shy\u00ad end"
SEEN = "mix ␛[ESC]]0;t[BEL] [CSI]31m \\x8f <U+202E>evil<U+202C> zw<U+200B><U+2060> shy<U+00AD> end"
"""No whitespace among them: excerpts fold white space (NEL, U+2028) into one space."""


def _chat(path: Path) -> Path:
    path.write_text(json.dumps({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": TEXT},
        {"role": "user", "content": ""},
        {"role": "assistant", "content": "done"},
    ]}), encoding="utf-8")
    return path


def test_core_and_app_helpers_are_one_rule() -> None:
    assert escape_controls(TEXT) == shown(TEXT) == SEEN
    assert escape_controls(SEEN) == SEEN  # escaping twice changes nothing
    assert escape_controls("byte \udcff name") == "byte \\xff name"
    assert escape_controls("nel\x85 sep\u2028") == shown("nel\x85 sep\u2028") == (
        "nel\\x85 sep<U+2028>")


async def test_the_terminal_and_the_app_show_the_same_text(tmp_path: Path) -> None:
    source = _chat(tmp_path / "mix.json")
    status, out, err = replay_on_terminal("export", "--all-empty", str(source))
    assert status == 0, err
    assert SEEN in out.decode(), out
    app = build_app(source, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        screen.go(1)
        await pilot.pause()
        assert SEEN in screen_text(app)
