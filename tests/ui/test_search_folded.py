"""A search match inside a folded tool call is unfolded and marked, and the search prompt
counts the matching turns while the reviewer types (#23 item 4)."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Label

from replay.ui.screens.replay_screen import ReplayScreen
from replay.ui.screens.search_prompt import SearchPrompt
from replay.ui.widgets.turn_view import TurnLines
from tests.ui.conftest import build_app, ready, wait_until


def _session(path: Path) -> Path:
    """Turn #4 calls five tools; only the fourth call's output names alice."""
    messages: list[dict[str, object]] = [
        {"role": "user", "content": "who owns the deploy scripts?"},
        {"role": "assistant", "content": "Let me look."},
        {"role": "user", "content": "go on"},
    ]
    calls = [{"id": f"c{n}", "type": "function",
              "function": {"name": "grep", "arguments": json.dumps({"pattern": f"p{n}"})}}
             for n in range(5)]
    messages.append({"role": "assistant", "content": None, "tool_calls": calls})
    for n in range(5):
        output = "\n".join(f"line {i} of call {n}" for i in range(30))
        if n == 3:
            output += "\nscripts/deploy.sh: owner alice"
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": output})
    messages += [{"role": "assistant", "content": "Found it."},
                 {"role": "user", "content": "thanks"}]
    path.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    return path


async def test_a_match_in_a_folded_tool_call_is_unfolded_and_marked(tmp_path: Path) -> None:
    app = build_app(_session(tmp_path / "tools.json"), annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        current = screen.query_one("#current", TurnLines)
        await pilot.press("slash", *"alice")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchPrompt))
        count = app.screen.query_one("#search-count", Label)
        await wait_until(pilot, lambda: "1 turn match" in str(count.render()))
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.searching.position() is not None)
        await pilot.pause()
        turn = screen.session.turns[screen.index]
        assert any(part.output and "alice" in part.output for part in turn.parts) or any(
            "alice" in part.text for part in screen.session.full_parts(turn))
        assert "owner alice" in current.plain_text
        assert "line 5 of call 0" not in current.plain_text  # only the matching call unfolds
        # Marked, and scrolled into view.
        marked = [at for at, line in enumerate(current._lines)
                  if any("alice" in segment.text.lower() and segment.style
                         and segment.style.reverse for segment in line)]
        assert marked
        height = current.scrollable_content_region.height
        assert current.scroll_y <= marked[0] < current.scroll_y + height


async def test_the_count_follows_what_is_typed(tmp_path: Path) -> None:
    app = build_app(_session(tmp_path / "tools.json"), annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        await pilot.press("slash", *"call")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchPrompt))
        count = app.screen.query_one("#search-count", Label)
        await wait_until(pilot, lambda: "1 turn match" in str(count.render()))
        await pilot.press(*"zzz")
        await wait_until(pilot, lambda: "no turn matches" in str(count.render()))
        await pilot.press("escape")
