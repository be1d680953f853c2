"""A big mini-swe-agent trajectory and an Aider history of many chats in the app: the turns
stay in a compact index (or are read again per chat), and stepping, search, go-to, the raw
record and annotations work from it, reading back only what they show."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from replay.core.detection.empty import DEFAULT_RULES, is_stop
from replay.core.index.turn_index import TurnIndex
from replay.core.readers import load_sessions
from replay.ui.screens.raw import RawScreen
from replay.ui.screens.replay_screen import ReplayScreen
from tests.ui.conftest import build_app, ready, wait_until

STEPS = 3_000
EVERY = 100
"""One step in EVERY is empty: 30 empty turns."""


def write_run(path: Path) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an agent in a shell."},
        {"role": "user", "content": "<pr_description>Fix [/] the [link=x] paging"
                                    "</pr_description>"}]
    for number in range(STEPS):
        text = "" if number % EVERY == 50 else \
            f"THOUGHT: step {number}.\n\n```bash\nls /testbed/dir{number}\n```"
        messages += [{"role": "assistant", "content": text},
                     {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n"
                                                 f"file{number}.py\n</output>"}]
    path.write_text(json.dumps({"info": {"exit_status": "Submitted", "submission": "diff"},
                                "messages": messages,
                                "trajectory_format": "mini-swe-agent-1"}, indent=1))


async def test_a_big_trajectory_opens_on_an_index_and_steps_searches_and_goes_to(
        tmp_path: Path) -> None:
    path = tmp_path / "run.traj.json"
    write_run(path)
    app = build_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        turns = screen.session.turns
        # The prompt and task, the steps, the output of each empty step (no command to
        # answer: the environment's turn), the run's end.
        assert isinstance(turns, TurnIndex) and len(turns) == 2 + STEPS + STEPS // EVERY + 1
        assert len(screen.navigator.empty_indices) == STEPS // EVERY
        await pilot.press("home", "right", "right")
        assert screen.index == 2
        # Opening, describing the empty turns and stepping read back few turns (the search
        # below reads back those that may match, to count them as it is typed).
        assert turns.materialised < len(turns) // 2
        await pilot.press("right_square_bracket")
        assert screen.index == 2 + 50
        await pilot.press("slash", *"file2345.py", "enter")
        step = 2 + 2345 + 2345 // EVERY  # (the outputs of the empty steps before it)
        await wait_until(pilot, lambda: screen.index == step)
        assert turns[screen.index].parts[-1].output is not None
        assert "file2345.py" in turns[screen.index].parts[-1].output
        await pilot.press("colon", *"2800", "enter")
        await wait_until(pilot, lambda: screen.index == 2799)
        await pilot.press("o")  # unfold the step
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, RawScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.press("colon", *"#1", "enter", "right_square_bracket", "1", "enter")
        await wait_until(pilot, lambda: turns.id_at(screen.index) in screen.store.annotated_ids)
        assert turns.id_at(screen.index) == "m102"  # the step of message 102, empty


async def test_an_aider_history_of_many_chats_opens_on_its_list(tmp_path: Path) -> None:
    from replay.ui.history_list import HistoryRows
    from replay.ui.screens.picker import SessionPicker
    from replay.ui.widgets.session_table import SessionTable
    from tests.core.test_aider import HISTORY

    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY * 200, encoding="utf-8")
    app = build_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and len(app.screen.rows) == 600 and app.screen._waiting == 0)
        picker = app.screen
        # Held as the history's arrays: rows are made when drawn, no Session per chat.
        assert isinstance(picker.rows, HistoryRows)
        counts = picker.rows.counts
        table = picker.query_one(SessionTable)
        # A chat with empty turns (the rows in the order shown).
        wanted = next(place for place, number in enumerate(table.order)
                      if counts.empty[number])
        await pilot.press(*["down"] * wanted, "enter")
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        [whole] = [session for session in load_sessions(path)
                   if session.session_id == screen.session.session_id]
        assert [t.id for t in screen.session.turns] == [t.id for t in whole.turns]
        empties = [t.index for t in whole.turns if is_stop(whole, t.index, DEFAULT_RULES)]
        assert empties and screen.navigator.empty_indices == empties
        await pilot.press("home", "right_square_bracket")
        assert screen.index == empties[0]
