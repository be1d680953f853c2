"""A big Claude Code session in the app: its turns stay in a compact index, and the palette,
timeline, stepping and annotations work from the index, reading back only what they show."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from textual.command import CommandList, CommandPalette

from replay.core.index.turn_index import TurnIndex
from replay.ui.commands import SHOWN
from replay.ui.screens.replay_screen import ReplayScreen
from replay.ui.widgets.timeline import Timeline
from tests.ui.conftest import build_app, ready, wait_until

TURNS = 12_000
EVERY = 100
"""One turn in EVERY is an empty prompt: 120 empty turns, more than the palette lists."""


def write_big(path: Path) -> None:
    lines = []
    for number in range(TURNS):
        record: dict[str, Any] = {
            "sessionId": "s", "uuid": f"{number:08x}-0000-4000-8000-{number:012x}",
            "timestamp": f"2026-03-01T{number // 3600 % 24:02d}:{number // 60 % 60:02d}:"
                         f"{number % 60:02d}.000Z"}
        if number % 2 == 0:
            text = "<local-command-stdout></local-command-stdout>" if number % EVERY == 0 \
                else f"please go on with step {number}"
            record.update(type="user", message={"role": "user", "content": text})
        else:
            record.update(type="assistant", message={
                "id": f"msg_{number:08d}", "role": "assistant",
                "content": [{"type": "text", "text": f"Done with step {number}."}]})
        lines.append(orjson.dumps(record))
    path.write_bytes(b"\n".join(lines) + b"\n")


def palette_titles(app: Any) -> list[str]:
    return [str(option.prompt) for found in app.screen.query(CommandList)
            for option in found._options if "Empty #" in str(option.prompt)]


async def test_the_palette_lists_empty_turns_without_reading_every_turn(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    write_big(path)
    app = build_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        turns = screen.session.turns
        assert isinstance(turns, TurnIndex) and len(turns) == TURNS
        assert len(screen.navigator.empty_indices) == TURNS // EVERY
        assert len(screen.query_one(Timeline).sizes) == TURNS
        # The suggestions are worked out in the background (they read turns around each).
        await wait_until(pilot, lambda: all(screen.reports.known(at) is not None
                                            for at in screen.navigator.empty_indices))
        read_before = turns.materialised
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette)
                         and len(palette_titles(app)) >= SHOWN)
        titles = palette_titles(app)
        assert len(titles) == SHOWN
        assert titles[0].startswith("Empty #1 user · empty-wrapper")
        # A title and its help read back the turn before each empty turn, no more.
        assert turns.materialised - read_before <= SHOWN + 20
        # Typing searches every empty turn, not only the ones listed.
        await pilot.press(*"#11901")
        await wait_until(pilot, lambda: any(title.startswith("Empty #11901")
                                            for title in palette_titles(app)))
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen)
                         and screen.index == 11_900)
        await pilot.press("right_square_bracket", "left_square_bracket", "left_square_bracket")
        assert screen.index == 11_900 - 2 * EVERY  # (] at the last empty turn stays)
        await pilot.press("1")
        await pilot.press("enter")
        await wait_until(pilot, lambda: turns.id_at(screen.index) in screen.store.annotated_ids)
        assert "1 / 120 annotated" in str(screen.status_text())
    # Nothing walked every turn: the palette, timeline, annotations and steps used columns.
    assert turns.materialised < TURNS // 3
