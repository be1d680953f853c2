"""Following a growing session in the app: new turns arrive, a new empty turn pauses the view."""

from __future__ import annotations

import json
from pathlib import Path

from replay.ui.screens.replay_screen import ReplayScreen
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.sessions import START, write_chat_jsonl


def append(path: Path, *messages: dict[str, object]) -> None:
    with open(path, "a", encoding="utf-8") as stream:
        for message in messages:
            stream.write(json.dumps(message) + "\n")


def message(index: int, role: str, content: str) -> dict[str, object]:
    return {"id": f"m{index:03d}", "role": role, "content": content,
            "timestamp": START + index * 40}


async def test_new_turns_arrive_and_a_new_empty_turn_pauses(tmp_path: Path) -> None:
    path = write_chat_jsonl(tmp_path / "live.jsonl", turns=10)
    app = build_app(path, follow=True)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        assert screen.index == 9 and screen.at_live_end
        append(path, message(10, "user", "next step please"))
        await wait_until(pilot, lambda: len(screen.session.turns) == 11, rounds=300)
        await wait_until(pilot, lambda: screen.index == 10)
        append(path, message(11, "assistant", ""), message(12, "user", "hello?"))
        await wait_until(pilot, lambda: len(screen.navigator.empty_indices) == 1, rounds=300)
        await wait_until(pilot, lambda: screen.index == 11)
        assert screen.paused_at_empty and not screen.at_live_end
        append(path, message(13, "assistant", "Sorry, here it is."))
        await wait_until(pilot, lambda: len(screen.session.turns) == 14, rounds=300)
        await wait_until(pilot, lambda: screen.new_turns == 2)
        assert screen.index == 11
        assert "+2 new turns" in str(screen.status_text())
        await pilot.press("f")
        assert screen.index == 13 and screen.new_turns == 0
        ids = [turn.id for turn in screen.session.turns]
        assert ids == [f"m{i:03d}" for i in range(14)]


async def test_annotating_while_the_file_grows(tmp_path: Path) -> None:
    path = write_chat_jsonl(tmp_path / "live.jsonl", turns=6, empty_at=(3,))
    app = build_app(path, follow=True, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        await pilot.press("left_square_bracket")
        assert screen.index == 3
        append(path, message(6, "user", "and now?"))
        await wait_until(pilot, lambda: len(screen.session.turns) == 7, rounds=300)
        await pilot.press("1", "enter")
        assert screen.store.get("m003").label == "continue"  # type: ignore[union-attr]
        assert screen.index == 3
