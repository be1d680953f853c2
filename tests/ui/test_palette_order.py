"""Typing in the palette (ctrl+p) puts the empty turns that match first: the turn whose
number was typed, then the numbers it starts; turns holding the words typed come before the
built-in commands that match them only loosely."""

from __future__ import annotations

import json
from pathlib import Path

from textual.command import CommandList, CommandPalette

from replay.ui.commands import TurnRanking
from tests.conftest import SAMPLES
from tests.ui.conftest import build_app, ready, wait_until


def _long_chat(path: Path) -> Path:
    """150 exchanges; every other reply is empty: empty turns #2, #6, #10, ... #298."""
    messages: list[dict[str, str]] = []
    for step in range(150):
        messages += [{"role": "user", "content": f"please do step {step} of the plan"},
                     {"role": "assistant", "content": "" if step % 2 == 0 else f"did {step}"}]
    path.write_text(json.dumps({"messages": messages}))
    return path


async def _listed(path: Path, tmp_path: Path, *queries: str) -> dict[str, list[str]]:
    """The first line of each option the palette lists for each query, in order."""
    app = build_app(path, annotations=tmp_path / "j.jsonl")
    found: dict[str, list[str]] = {}
    async with app.run_test(size=(160, 60)) as pilot:
        await ready(pilot, app)
        for query in queries:
            await pilot.press("ctrl+p")
            await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
            await pilot.press(*query)
            options = app.screen.query_one(CommandList)
            await wait_until(pilot, lambda listed=options: listed.option_count > 0)
            await pilot.pause(0.3)  # every provider answered
            found[query] = [str(options.get_option_at_index(i).prompt).split("\n")[0]
                            for i in range(options.option_count)]
            await pilot.press("escape")
            await pilot.pause()
    return found


async def test_a_typed_turn_number_lists_that_turn_then_the_numbers_it_starts(
        tmp_path: Path) -> None:
    found = await _listed(_long_chat(tmp_path / "long.json"), tmp_path, "14", "#3", "#10")
    numbers = {query: [line.split("#")[1].split()[0] for line in lines]
               for query, lines in found.items()}
    assert numbers["14"][:3] == ["14", "142", "146"]
    assert numbers["#3"][:3] == ["30", "34", "38"] and "130" in numbers["#3"][3:]
    assert numbers["#10"][0] == "10" and set(numbers["#10"][1:3]) <= {"102", "106"}


async def test_words_typed_put_the_turns_holding_them_before_the_commands(
        tmp_path: Path) -> None:
    found = await _listed(SAMPLES / "deploy-pivot.opencode.json", tmp_path,
                          "re", "wrapper 15", "art 14")
    # `re` is in #15's `empty-wrapper`; before, two commands that match it loosely came first.
    assert found["re"][0].startswith("Empty #15 user · empty-wrapper"), found["re"]
    assert any(not line.startswith("Empty") for line in found["re"])  # the commands still follow
    # Words in any order: the turn number and a word of its title.
    assert found["wrapper 15"][0].startswith("Empty #15 "), found["wrapper 15"]
    assert found["art 14"][0].startswith("Empty #14 "), found["art 14"]


def test_the_ranking_steps_past_any_fuzzy_score() -> None:
    ranking = TurnRanking("#7")
    assert ranking.score("Empty #7 user", 7, 1.0) > ranking.score("Empty #70 user", 70, 16.0)
    assert ranking.score("Empty #70 user", 70, 1.0) > ranking.score("Empty #17", 17, 16.0) == 16.0
    assert TurnRanking("x").score("Quit", 0, 0.0) == 0.0  # no match stays no hit
