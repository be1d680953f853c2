"""A long Aider chat in the app: on screen from its first turns while the loading worker
reads the rest into columns, keys answered meanwhile, and once read the same turns and empty
turns as the whole reader gives; opened from a history's list the same way."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replay.core.detection.empty import DEFAULT_RULES, is_stop
from replay.core.readers import aider, aider_turns, load_sessions
from replay.core.session import lifted
from replay.ui import chat_loading
from replay.ui.screens.picker import SessionPicker
from replay.ui.widgets.session_table import SessionTable
from tests.core.test_aider import HISTORY
from tests.core.test_aider_chats import HOSTILE
from tests.ui.conftest import build_app, ready, wait_until


def _chat(path: Path, exchanges: int = 1_500) -> Path:
    body = "".join(f"#### step {n} {HOSTILE if n == 7 else ''}\n\nreply {n}\n\n"
                   "> Tokens: 1k sent, 2 received.\n\n"
                   + ("#### <blank>\n\n" if n % 9 == 0 else "") for n in range(exchanges))
    path.write_text("# aider chat started at 2024-05-01 10:00:00\n\n" + body, encoding="utf-8")
    return path


class Gate:
    """Holds the chat's reading after `after` steps until released; counts the steps."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, after: int) -> None:
        self.after = after
        self.steps = 0
        self.release = threading.Event()
        self.held = threading.Event()
        steps = aider.ChatReading.steps
        gate = self

        def gated(reading: aider.ChatReading) -> Iterator[int]:
            for done in steps(reading):
                gate.steps += 1
                if gate.steps >= gate.after and not gate.release.is_set():
                    gate.held.set()
                    gate.release.wait(30)
                yield done

        monkeypatch.setattr(aider.ChatReading, "steps", gated)


def _empties(path: Path) -> tuple[int, list[int], list[str]]:
    [whole] = load_sessions(path)
    return (len(whole.turns), [t.index for t in whole.turns if is_stop(whole, t.index,
                                                                        DEFAULT_RULES)],
            [t.id for t in whole.turns])


async def test_a_long_chat_is_on_screen_while_it_is_read_and_answers_keys_meanwhile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aider, "LONG_CHAT_BYTES", 0)  # this chat counts as long
    monkeypatch.setattr(aider, "PAUSE_LINES", 16)
    monkeypatch.setattr(chat_loading, "REPORT_SECONDS", 0.0)  # told at every step
    path = _chat(tmp_path / ".aider.chat.history.md")
    total, empties, ids = _empties(path)
    gate = Gate(monkeypatch, after=40)  # ~640 lines in: a tenth of the chat
    app = build_app(path)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.replay_screen is not None
                         and app.replay_screen.is_mounted and gate.held.is_set())
        screen = app.replay_screen
        assert screen is not None and screen.indexing  # on screen, still being read
        turns = screen.session.turns
        assert isinstance(turns, aider_turns.ExchangeTurns)
        read = len(turns)
        assert chat_loading.FIRST_TURNS <= read < total // 5
        held_at = gate.steps
        start = screen.index
        await pilot.press("right", "right", "right")
        assert screen.index == start + 3  # answered with the reading held: no step taken
        await wait_until(pilot, lambda: len(screen.navigator.empty_indices) > 3)
        # The empty turns of what is read so far are the whole reader's.
        known = screen.navigator.empty_indices
        assert known == empties[:len(known)]
        await pilot.press("right_square_bracket")
        assert screen.index == next(e for e in empties if e > start + 3)
        await pilot.press("G")
        assert screen.index == len(turns) - 1 < total - 1  # the end so far
        assert gate.steps == held_at  # every key answered while not one more step was read
        gate.release.set()
        await ready(pilot, app)
        assert len(turns) == total
        assert screen.navigator.empty_indices == empties
        await pilot.press("G")
        assert screen.index == total - 1
        assert [turns.id_at(n) for n in range(total)] == ids
        assert turns[22].parts[0].text == "step 7 " + HOSTILE  # read back, as written


async def test_a_chat_whose_third_turn_is_huge_shows_its_first_turns_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aider, "LONG_CHAT_BYTES", 0)
    monkeypatch.setattr(chat_loading, "FIRST_SECONDS", 0.0)
    path = tmp_path / ".aider.chat.history.md"
    line = f"a long reply {HOSTILE}\n"
    path.write_text("# aider chat started at 2024-05-01 10:00:00\n\n> Aider v0.50.1\n\n"
                    "#### write it all\n\n" + line * 20_000 + "\n> Tokens: 1k sent\n",
                    encoding="utf-8")
    gate = Gate(monkeypatch, after=3)  # inside the reply
    app = build_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.replay_screen is not None
                         and app.replay_screen.is_mounted and gate.held.is_set())
        screen = app.replay_screen
        assert screen is not None and screen.indexing
        assert len(screen.session.turns) == 2  # the banner and the prompt; the reply is read
        gate.release.set()
        await ready(pilot, app)
        turns = screen.session.turns
        assert [t.role for t in turns] == ["system", "user", "assistant", "system"]
        # 1.9 M characters: the app leaves the reply in its file (`huge_lines`), and what it
        # reads back is the reply as written.
        held = turns[2].parts[0].text
        assert lifted.source(held) is not None
        assert lifted.materialise(held) == (line * 20_000).strip("\n")
        await pilot.press("G", "left")
        assert screen.index == 2
        await pilot.press("o")
        await pilot.pause()


async def test_a_long_chat_opened_from_the_list_is_read_the_same_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aider, "LONG_CHAT_BYTES", 20_000)
    monkeypatch.setattr(aider, "PAUSE_LINES", 16)
    path = tmp_path / ".aider.chat.history.md"
    long = _chat(tmp_path / "long.md").read_text(encoding="utf-8")
    path.write_text(HISTORY + long + HISTORY, encoding="utf-8")
    whole = load_sessions(path)
    long_one = next(n for n, s in enumerate(whole) if len(s.turns) > 1_000)
    expected = [t.id for t in whole[long_one].turns]
    empties = [t.index for t in whole[long_one].turns
               if is_stop(whole[long_one], t.index, DEFAULT_RULES)]
    gate = Gate(monkeypatch, after=30)
    app = build_app(path)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and bool(app.screen.query(SessionTable))
                         and app.screen.query_one(SessionTable).row_count == len(whole))
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        table = picker.query_one(SessionTable)
        table.move_cursor(row=next(row for row in range(table.row_count)
                                   if picker.rows[table.number_at(row)].entry.key
                                   == whole[long_one].session_id))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.replay_screen is not None
                         and app.replay_screen.is_mounted and gate.held.is_set())
        screen = app.replay_screen
        assert screen is not None and screen.indexing
        assert len(screen.session.turns) < len(expected)
        await pilot.press("escape")  # back to the list while it is still read
        await wait_until(pilot, lambda: app.screen is picker)
        gate.release.set()
        await pilot.press("enter")  # opened again: read from the start, to the end
        await wait_until(pilot, lambda: app.replay_screen is not None
                         and app.replay_screen is not screen and app.replay_screen.is_mounted
                         and not app.replay_screen.indexing)
        again = app.replay_screen
        assert again is not None
        assert [again.session.turns.id_at(n) for n in range(len(again.session.turns))] == \
            expected
        assert again.navigator.empty_indices == empties


async def test_stepping_through_a_long_chat_never_walks_all_its_turns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Counted in turns looked at, not in seconds: a walk of every turn at each step (the
    # completion evidence of an empty turn, the timeline's marks) froze a million-turn chat
    # a second a step.
    monkeypatch.setattr(aider, "LONG_CHAT_BYTES", 0)
    path = tmp_path / ".aider.chat.history.md"
    body = "".join(line for line in HISTORY.splitlines(keepends=True)
                   if not line.startswith(aider.HEADER))  # replies cut by ^C: empty ones
    path.write_text("# aider chat started at 2024-05-01 10:00:00\n\n" + body * 1_300,
                    encoding="utf-8")
    app = build_app(path)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        turns = screen.session.turns
        assert isinstance(turns, aider_turns.ExchangeTurns) and len(turns) > 24_000
        looked = [0]
        for name in ("role_at", "completed_at", "time_at", "_values"):
            real = getattr(aider_turns.ExchangeTurns, name)

            def counted(self: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
                looked[0] += 1
                return _real(self, *args, **kwargs)

            monkeypatch.setattr(aider_turns.ExchangeTurns, name, counted)
        for key in ["right_square_bracket"] * 40 + ["right"] * 10 + ["left_square_bracket"] * 10:
            await pilot.press(key)
        await pilot.pause()
        assert len(screen.navigator.empty_indices) > 2_000
        # One walk of the turns at most (the first empty turn's evidence), not one a step.
        assert looked[0] < len(turns) + 5_000, looked[0]  # 125,000 before the memo
