"""Big chat JSON, chat JSONL and ShareGPT files in the app: the turns stay in a compact index
read back from their records' spans, and stepping, search, go-to, unfolding, the raw record
and annotations work from it as on the whole read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay.core.detection.empty import DEFAULT_RULES, is_stop
from replay.core.index.turn_index import TurnIndex
from replay.core.readers import load_sessions
from replay.ui.screens.raw import RawScreen
from replay.ui.screens.replay_screen import ReplayScreen
from tests.ui.conftest import build_app, ready, wait_until

ROUNDS = 1_500
EVERY = 50
"""One round in EVERY has an empty reply."""


def _messages() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for number in range(ROUNDS):
        found.append({"role": "user", "content": f"question {number}: fix [/] list[int]"})
        if number % EVERY == EVERY // 2:
            found.append({"role": "assistant", "content": ""})
            continue
        found.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{number}", "type": "function",
             "function": {"name": "grep", "arguments": json.dumps({"n": number})}}]})
        found.append({"role": "tool", "tool_call_id": f"call_{number}",
                      "content": f"file{number}.py [link=x]"})
        found.append({"role": "assistant", "content": f"answer {number} \x1b[2J done"})
    return found


def _sharegpt() -> dict[str, Any]:
    turns: list[dict[str, Any]] = []
    for number in range(ROUNDS):
        turns.append({"from": "human", "value": f"question {number}: fix [/] list[int]"})
        if number % EVERY == EVERY // 2:
            turns.append({"from": "gpt", "value": ""})
            continue
        turns.append({"from": "function_call",
                      "value": json.dumps({"name": "grep", "arguments": {"n": number}})})
        turns.append({"from": "observation", "value": f"file{number}.py [link=x]"})
        turns.append({"from": "gpt", "value": f"answer {number} \x1b[2J done"})
    return {"id": "big", "system": "you can call tools", "conversations": turns}


def write(path: Path, name: str) -> Path:
    if name == "chat-jsonl":
        path.write_text("".join(json.dumps(m) + "\n" for m in _messages()), encoding="utf-8")
    else:
        value = _sharegpt() if name == "sharegpt" else {"id": "big", "messages": _messages()}
        path.write_text(json.dumps(value, indent=1), encoding="utf-8")
    return path


@pytest.mark.parametrize(("name", "suffix"), [("chat-json", ".json"), ("chat-jsonl", ".jsonl"),
                                              ("sharegpt", ".json")])
async def test_a_big_chat_opens_on_an_index_and_steps_searches_and_goes_to(
        tmp_path: Path, name: str, suffix: str) -> None:
    path = write(tmp_path / f"big{suffix}", name)
    [whole] = load_sessions(path)
    assert whole.format == name
    empties = [t.index for t in whole.turns if is_stop(whole, t.index, DEFAULT_RULES)]
    assert len(empties) == ROUNDS // EVERY
    app = build_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        turns = screen.session.turns
        assert isinstance(turns, TurnIndex) and len(turns) == len(whole.turns)
        assert screen.navigator.empty_indices == empties
        # Opening and describing the empty turns read back few turns.
        assert turns.materialised < len(turns) // 2
        await pilot.press("home", "right_square_bracket")
        assert screen.index == empties[0]
        await pilot.press("right_square_bracket")
        assert screen.index == empties[1]
        await pilot.press("slash", *"question 1234:", "enter")
        asked = next(t.index for t in whole.turns if t.parts and t.parts[0].text.startswith(
            "question 1234:"))
        await wait_until(pilot, lambda: screen.index == asked)
        assert turns[asked].parts[0].text == whole.turns[asked].parts[0].text
        call = asked + 1
        await pilot.press("colon", *str(call + 1), "enter")
        await wait_until(pilot, lambda: screen.index == call)
        assert turns[call].parts[-1].output == "file1234.py [link=x]"
        await pilot.press("o")  # unfold the call
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, RawScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        source = turns[call].source
        assert source is not None and source.spans == whole.turns[call].source.spans  # type: ignore[union-attr]
        assert source.record == whole.turns[call].source.record  # type: ignore[union-attr]
        await pilot.press("colon", *"#1", "enter", "right_square_bracket", "1", "enter")
        await wait_until(pilot, lambda: turns.id_at(screen.index) in screen.store.annotated_ids)
        assert screen.index == empties[0]
        assert turns.id_at(screen.index) == whole.turns[empties[0]].id
