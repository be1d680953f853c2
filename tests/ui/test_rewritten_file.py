"""The app on a file rewritten in place (same-shaped records at the same offsets): the
reviewer is told in one line and the file is read again; no turn shows the new text as the
old one's, and nothing of the old is shown as the new."""

from __future__ import annotations

import json
import time
from pathlib import Path

from replay.core.index.turn_index import TurnIndex
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.screen import screen_text


def _chat(path: Path, word: str, count: int = 2_000) -> None:
    path.write_text(json.dumps({"id": "c", "messages": [
        {"role": "user" if n % 2 == 0 else "assistant",
         "content": "" if n == 1500 else f"{word} {n:04d}"} for n in range(count)]}))


async def test_a_file_rewritten_in_place_is_read_again_and_said(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    _chat(path, "apple")
    app = build_app(path)
    notes: list[str] = []
    notify = app.notify
    app.notify = lambda message, **kw: (notes.append(str(message)),  # type: ignore[method-assign]
                                        notify(message, **kw))[1]
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        first = app.replay_screen
        assert first is not None and isinstance(first.session.turns, TurnIndex)
        time.sleep(0.01)
        data = path.read_bytes().replace(b"apple", b"mango")
        with open(path, "r+b") as handle:  # the same file, the same size
            handle.write(data)
        first.go(700)  # turns far from any read so far: read back from the file
        await wait_until(pilot, lambda: app.replay_screen is not first
                         and app.replay_screen is not None
                         and not app.replay_screen.indexing)
        screen = app.replay_screen
        assert screen is not None
        said = [n for n in notes if "rewritten in place since it was read" in n]
        assert len(said) == 1 and "reading it again" in said[0] and "\n" not in said[0]
        assert str(path) in said[0]
        screen.go(700)
        await pilot.pause()
        text = screen_text(app)
        assert "mango 0700" in text and "apple" not in text
        assert len(app.screen_stack) == len([s for s in app.screen_stack
                                             if s is not first])  # replaced, not stacked
