"""After a file rewritten in place is read again, the app goes back to the turn the reviewer
was on: the same turn by its id where it moved, else the nearest position (it used to go back
to the first stop)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from replay.core.index.turn_index import TurnIndex
from replay.core.readers import load_sessions
from replay.ui.app import ReplayApp
from replay.ui.rewritten import Place
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.screen import screen_text

COUNT = 2_000


def _messages(word: str) -> list[dict[str, str]]:
    # One empty reply early on (the first stop), then words with markup-like text.
    return [{"id": f"m{n}", "role": "user" if n % 2 == 0 else "assistant",
             "content": "" if n == 11 else f"{word} {n:04d} [/] [link=x] list[int]"}
            for n in range(COUNT)]


def _write(path: Path, messages: list[dict[str, str]]) -> None:
    time.sleep(0.01)  # a later modification time, on any clock tick
    with open(path, "r+b" if path.exists() else "wb") as handle:  # the same inode
        handle.write(json.dumps({"id": "c", "messages": messages}).encode())
        handle.truncate()


async def _reread(tmp_path: Path, change: object) -> tuple[ReplayApp, int, str]:
    path = tmp_path / "c.json"
    _write(path, _messages("apple"))
    app = build_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        first = app.replay_screen
        assert first is not None and isinstance(first.session.turns, TurnIndex)
        assert first.index == 11  # the first stop
        _write(path, change(_messages("mango")))  # type: ignore[operator]
        first.go(700)  # far from any turn read so far: read back, and the change is seen
        await wait_until(pilot, lambda: app.replay_screen is not first
                         and app.replay_screen is not None
                         and not app.replay_screen.indexing
                         and app.reread_place is None)
        await pilot.pause()
        screen = app.replay_screen
        assert screen is not None
        return app, screen.index, screen_text(app)


async def test_the_same_turn_is_shown_after_the_file_is_read_again(tmp_path: Path) -> None:
    _app, index, text = await _reread(tmp_path, lambda messages: messages)
    assert index == 700
    assert "mango 0700 [/] [link=x] list[int]" in text and "apple" not in text


async def test_a_turn_that_moved_is_found_by_its_id(tmp_path: Path) -> None:
    # Two messages inserted at the start: the file grew as well as changed.
    _app, index, text = await _reread(tmp_path, lambda messages: [
        {"id": "new-a", "role": "user", "content": "first"},
        {"id": "new-b", "role": "assistant", "content": "second"}] + messages)
    assert index == 702
    assert "mango 0700" in text


async def test_a_turn_that_is_gone_gives_the_nearest_position(tmp_path: Path) -> None:
    _app, index, text = await _reread(tmp_path, lambda messages: [
        {**message, "id": f"other-{n}"} for n, message in enumerate(messages)])
    assert index == 700
    assert "mango 0700" in text


@pytest.mark.parametrize(("old", "expected"), [(5, 5), (8, 9), (0, 0), (10_000, 19)])
def test_a_place_is_found_outwards_and_clamped(tmp_path: Path, old: int, expected: int) -> None:
    path = tmp_path / "c.json"
    _write(path, [{"id": f"m{n}", "role": "user" if n % 2 == 0 else "assistant",
                   "content": f"w {n}"} for n in range(20)])
    [session] = load_sessions(path, indexed=True)
    wanted = {5: "m5", 8: "m9", 0: "m0", 10_000: "gone"}[old]
    assert Place(old, wanted, False).nearest_in(session) == expected
