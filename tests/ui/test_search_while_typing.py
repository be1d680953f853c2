"""Issue 27: search on a big indexed session stays responsive while the reviewer types.

The prompt counts in a worker that the next key cancels, says how many it found so far, and
enter (or `n`) goes to the next match without waiting for the count.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.widgets import Label

from replay.core.index.navigation import Navigator
from replay.core.index.turn_index import TurnIndex
from replay.core.readers import load_sessions
from replay.ui.screens.replay_screen import ReplayScreen
from replay.ui.screens.search_prompt import SearchPrompt, count_words
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.test_hostile_text import assert_terminal_safe

TASKS = 3_000


def write_rollout(path: Path) -> Path:
    """A Codex rollout of 6,000 turns (a prompt and a step with a call each): big enough
    for the app to search it in the background."""
    def line(number: int, kind: str, payload: dict[str, object]) -> str:
        return json.dumps({"timestamp": f"2026-03-01T10:{number // 60 % 60:02d}:"
                                        f"{number % 60:02d}.000Z",
                           "type": kind, "payload": payload}) + "\n"

    with open(path, "w", encoding="utf-8") as handle:
        handle.write(line(0, "session_meta", {"id": "big", "model": "gpt-x"}))
        for task in range(TASKS):
            prompt = f"task {task}: fix [/] [link=x] list[int] \x1b[31mred"
            handle.write(line(task, "event_msg", {"type": "user_message", "message": prompt}))
            handle.write(line(task, "response_item", {
                "type": "message", "role": "user",
                "content": [{"type": "input_text", "text": prompt}]}))
            handle.write(line(task, "response_item", {
                "type": "function_call", "name": "shell", "call_id": f"c{task}",
                "arguments": json.dumps({"command": ["cat", f"file{task}.txt"]})}))
            handle.write(line(task, "response_item", {
                "type": "function_call_output", "call_id": f"c{task}",
                "output": f"contents of file{task}.txt"}))
            handle.write(line(task, "response_item", {
                "type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": f"done with task {task}"}]}))
    return path


Check = Callable[[], bool]


def _gated_counts(monkeypatch: pytest.MonkeyPatch, gate: Callable[[Check], bool],
                  started: dict[str, float] | None = None) -> list[tuple[str, bool, float]]:
    """Make every count ask `gate` before each turn (True: stop); returns the log of
    counts that ended: (query, stopped by a cancel, when). `started`: when each began."""
    ended: list[tuple[str, bool, float]] = []
    original = Navigator.iter_matches

    def counted(self: Navigator, query: str, cancelled: Check | None = None) -> Iterator[int]:
        stopped = []
        if started is not None:
            started.setdefault(query, time.monotonic())

        def check() -> bool:
            if gate(cancelled or (lambda: False)):
                stopped.append(True)
                return True
            return False

        yield from original(self, query, check)
        ended.append((query, bool(stopped), time.monotonic()))

    monkeypatch.setattr(Navigator, "iter_matches", counted)
    return ended


async def test_a_key_typed_while_counting_cancels_the_count(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_rollout(tmp_path / "rollout.jsonl")
    [whole] = load_sessions(path)
    query = "2999: fix [/] [link=x]"
    expected = Navigator(whole).matches(query)
    assert len(expected) == 1

    def slow(cancelled: Check) -> bool:
        time.sleep(0.002)  # a slow disk: each turn read back takes a while
        return cancelled()

    started: dict[str, float] = {}
    ended = _gated_counts(monkeypatch, slow, started)
    app = build_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.screen
        assert isinstance(screen, ReplayScreen) and isinstance(screen.session.turns, TurnIndex)
        await pilot.press("slash", "2")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchPrompt))
        prompt = app.screen
        count = prompt.query_one("#search-count", Label)
        # "2" is in most turns: the count goes on, saying how far it got.
        await wait_until(pilot, lambda: "so far" in str(count.render()))
        assert str(count.render()).startswith("≥ ")
        pressed = time.monotonic()
        await pilot.press(*query[1:])
        assert time.monotonic() - pressed < 5  # the keys were answered while it counted
        await wait_until(pilot, lambda: str(count.render()) == count_words(1, True))
        [(_, stopped, end)] = [entry for entry in ended if entry[0] == "2"]
        # Stopped by the next key at once, not run to its end, nor left running until the
        # next count started (typing pauses before a big session is counted).
        assert stopped
        assert "29" not in started or end < started["29"] - 0.1, (end, started)
        assert started[query] > end
        assert_terminal_safe(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.index == expected[0])
        await wait_until(pilot, lambda: screen.searching.position() == (1, 1))
        assert screen.searching.marked() == query


async def test_next_match_does_not_wait_for_the_count(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_rollout(tmp_path / "rollout.jsonl")
    [whole] = load_sessions(path)
    expected = Navigator(whole).matches("done with")
    assert len(expected) == TASKS
    release = threading.Event()

    def held(cancelled: Check) -> bool:
        while not release.is_set():  # the count cannot finish until released
            if cancelled():
                return True
            time.sleep(0.01)
        return cancelled()

    _gated_counts(monkeypatch, held)
    app = build_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        await pilot.press("slash", *"done with")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchPrompt))
        count = app.screen.query_one("#search-count", Label)
        await wait_until(pilot, lambda: "counting" in str(count.render()))
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.index == expected[0])
        for hit in expected[1:4]:
            await pilot.press("n")
            await wait_until(pilot, lambda hit=hit: screen.index == hit)  # type: ignore[misc]
        await pilot.press("N")
        await wait_until(pilot, lambda: screen.index == expected[2])
        found_slowly = Navigator.search

        def slow_search(self: Navigator, *args: object, **kwargs: object) -> int | None:
            time.sleep(0.3)  # each match found takes a while: the next keys come first
            return found_slowly(self, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(Navigator, "search", slow_search)
        await pilot.press("n", "n", "n", "N")  # pressed faster than each match is found
        await wait_until(pilot, lambda: not screen.searching.finding, rounds=1500)
        assert screen.index == expected[4]
        await pilot.press("N", "N")
        await wait_until(pilot, lambda: not screen.searching.finding, rounds=1500)
        assert screen.index == expected[2]
        assert screen.searching.position() is None  # still counting: no "match k / n" yet
        release.set()
        await wait_until(pilot, lambda: screen.searching.position() == (3, TASKS))
        assert f"match 3 / {TASKS:,}" in str(screen.status_text())


async def test_a_big_file_of_few_turns_is_counted_in_the_background(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Few turns of a big file (a 50 MB export of a few thousand turns holds a lot of text)
    are counted in the background too: the prompt does not count at every key."""
    from replay.ui.controls import search

    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": [
        {"role": "user" if number % 2 == 0 else "assistant",
         "content": f"message {number} list[int] [/]"} for number in range(40)]}))
    monkeypatch.setattr(search, "QUICK_BYTES", path.stat().st_size - 1)
    app = build_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        screen = app.screen
        assert isinstance(screen, ReplayScreen) and not screen.searching.quick()
        await pilot.press("slash", *"list[int]")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchPrompt))
        prompt = app.screen
        assert isinstance(prompt, SearchPrompt) and not prompt.quick
        count = prompt.query_one("#search-count", Label)
        await wait_until(pilot, lambda: str(count.render()) == count_words(40, True))
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.searching.position() == (2, 40))
        assert screen.index == 1
