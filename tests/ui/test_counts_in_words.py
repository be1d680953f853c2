"""Counts a user reads say `1 stop holds`, `2 stops hold`, `1 item`: never `1 stop(s)` or
`1 items · 1 disagreements` (seen in the drafts dialog and in `replay report`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.cli import main
from replay.ui.screens.drafts import DraftsScreen
from tests.ui.conftest import build_app, ready
from tests.ui.screen import screen_text


def _words(app: object) -> str:
    return " ".join(screen_text(app).split())  # type: ignore[arg-type]


async def test_the_drafts_dialog_counts_in_words(chat_file: Path, tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot, app)
        await pilot.press("2", "tab", *"one", "escape", "ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, DraftsScreen)
        assert "1 stop holds a label or a note that is not saved" in _words(app), _words(app)
        await pilot.press("escape", "right_square_bracket", "3", "ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, DraftsScreen)
        assert "2 stops hold a label or a note that is not saved" in _words(app), _words(app)
        await pilot.press("q")


def test_report_counts_one_item_and_one_disagreement_in_the_singular(
        chat_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.jsonl"
    for reviewer, label in (("ada", "approval"), ("bob", "continue")):
        assert main(["label", str(chat_file), "--turn", "#10", "--label", label,
                     "--reviewer", reviewer, "--annotations", str(journal)]) == 0
    capsys.readouterr()
    page = tmp_path / "report.html"
    assert main(["report", str(chat_file), "--annotations", str(journal),
                 "--html", str(page)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "over 1 item · 1 disagreement" in out, out
    html = page.read_text(encoding="utf-8")
    assert "over 1 item · 1 disagreement<" in html, html[-600:]


async def test_a_label_key_in_a_session_without_empty_turns_does_not_send_the_user_to_one(
        tmp_path: Path) -> None:
    """`5` in a session with no empty turn said 'press ] to go to the next one', where `]`
    finds none (seen on realdata codemie session-9eda1058)."""
    from tests.ui.sessions import write_chat

    app = build_app(write_chat(tmp_path / "calm.json", turns=6, empty_at=()),
                    annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot, app)
        await pilot.press("5")
        await pilot.pause()
        said = [note.message for note in app._notifications]
        assert not any("press ]" in line for line in said), said
        assert any("no empty turn to label" in line for line in said), said
