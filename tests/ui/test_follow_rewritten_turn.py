"""A followed Gemini recording writes an earlier message again: the suggestion shown for the
empty turn before it follows the new text (the memo and the reports are told)."""

from __future__ import annotations

import json
from pathlib import Path

from replay.core.suggest.signals import WINDOW
from replay.ui.empty_reports import REACH
from replay.ui.screens.replay_screen import ReplayScreen
from replay.ui.widgets.annotation_bar import AnnotationBar
from tests.core.test_memo_revision import _message, _recording
from tests.ui.conftest import build_app, ready, wait_until


def _shown(screen: ReplayScreen) -> str:
    bar = screen.query_one(AnnotationBar)
    return " ".join(str(widget.render()) for widget in bar.query("Static"))


async def test_the_suggestion_shown_follows_a_rewritten_message(tmp_path: Path) -> None:
    path = _recording(tmp_path / "session.jsonl")
    app = build_app(path, follow=True)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        screen.go(1)
        await pilot.pause()
        before = screen.empty_turn(1)
        assert before is not None and before.suggestion_rule == "repeat-next"
        assert "repeats" in _shown(screen)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(_message(2, "user", "thanks, I see the problem now") + "\n")
        turns = screen.session.turns
        await wait_until(pilot, lambda: [p.text for p in turns[2].parts]
                         == ["thanks, I see the problem now"], rounds=300)
        await wait_until(pilot, lambda: "repeats" not in _shown(screen), rounds=100)
        after = screen.empty_turn(1)
        assert after is not None and after.suggestion_rule != "repeat-next"
        assert json.dumps(after.suggestion_reasons).find("repeats") < 0


def test_reports_are_forgotten_as_far_back_as_the_suggester_reads() -> None:
    assert REACH > WINDOW + 1
