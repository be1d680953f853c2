"""Pilot tests of the replayer: moving, playing, the automatic pause, searching, panes."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.ui.screens.help import HelpScreen
from replay.ui.screens.raw import RawScreen
from replay.ui.screens.replay_screen import ReplayScreen
from replay.ui.widgets.timeline import Timeline
from replay.ui.widgets.turn_view import TurnLines
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.sessions import write_chat


def screen_of(app: object) -> ReplayScreen:
    screen = app.replay_screen  # type: ignore[attr-defined]
    assert isinstance(screen, ReplayScreen)
    return screen


async def test_opens_at_first_empty_turn_with_banner(chat_file: Path) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        assert screen.navigator.empty_indices == [9, 20]
        assert screen.index == 9
        status = str(screen.status_text())
        assert "turn 10 / 30" in status and "0 / 2 annotated" in status
        banner = str(screen.banner_text(screen.session.turns[9], screen.empty_turn(9)))
        assert "EMPTY TURN 1 / 2" in banner and "the assistant" in banner


async def test_step_first_last_and_empty_jumps(chat_file: Path) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        await pilot.press("right")
        assert screen.index == 10
        await pilot.press("left", "left")
        assert screen.index == 8
        await pilot.press("home")
        assert screen.index == 0
        await pilot.press("left")
        assert screen.index == 0
        await pilot.press("right_square_bracket")
        assert screen.index == 9
        await pilot.press("right_square_bracket")
        assert screen.index == 20
        await pilot.press("right_square_bracket")
        assert screen.index == 20
        await pilot.press("left_square_bracket")
        assert screen.index == 9
        await pilot.press("end")
        assert screen.index == 29


async def test_context_panes_hold_the_turns_around(chat_file: Path) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        before = screen.query_one("#before", TurnLines).indices
        after = screen.query_one("#after", TurnLines).indices
        assert before == [6, 7, 8] and after == [10, 11, 12]
        await pilot.press("greater_than_sign")
        await pilot.pause()
        assert screen.query_one("#after", TurnLines).indices == [10, 11, 12, 13]
        assert screen.query_one("#after").border_title == "After (4 turns)"


async def test_play_pauses_by_itself_at_the_next_empty_turn(chat_file: Path) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        await pilot.press("home", "space")
        await wait_until(pilot, lambda: not screen.playback.playing)
        assert screen.index == 9
        assert screen.paused_at_empty
        assert "paused at empty turn" in str(screen.status_text())
        await pilot.press("space")
        await wait_until(pilot, lambda: not screen.playback.playing)
        assert screen.index == 20 and screen.paused_at_empty
        await pilot.press("left")
        assert screen.index == 19 and not screen.playback.playing


async def test_speed_keys_are_bounded(chat_file: Path) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        assert screen.playback.speed == 16.0
        await pilot.press("plus")
        assert screen.playback.speed == 16.0
        await pilot.press(*["minus"] * 8)
        assert screen.playback.speed == 0.25


async def test_goto_by_number_and_by_id(chat_file: Path) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        await pilot.press("colon", *"15", "enter")
        assert screen.index == 14
        await pilot.press("colon", *"m003", "enter")
        assert screen.index == 3
        await pilot.press("colon", *"#16", "enter")
        assert screen.index == 15


async def test_goto_refusal_says_why_and_stays(chat_file: Path) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        await pilot.press("colon", *"#4", "enter")
        await pilot.press("colon", *"#0", "enter")
        await pilot.pause()
        assert screen.index == 3
        messages = [notification.message for notification in app._notifications]
        assert "turns are counted from 1: the first turn is #1" in messages


async def test_search_and_next_match(chat_file: Path) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        await pilot.press("home", "slash", *"step 3 of", "enter")
        assert screen.index == 4
        await pilot.press("n")
        assert screen.index == 4  # the only match: wraps to itself
        await pilot.press("slash", *"passed", "enter")
        first = screen.index
        await pilot.press("n")
        assert screen.index == first + 2
        await pilot.press("N")
        assert screen.index == first


async def test_role_filter_steps_only_through_that_role(chat_file: Path) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        await pilot.press("home", "r")
        assert screen.playback.role_filter == "user"
        await pilot.press("right")
        assert screen.index == 2
        await pilot.press("r")
        await pilot.press("right")
        assert screen.index == 3 and screen.playback.role_filter == "assistant"


async def test_help_raw_and_copy(chat_file: Path) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, ReplayScreen)
        await pilot.press("right", "v")
        assert isinstance(app.screen, RawScreen)
        await pilot.press("escape", "y")
        assert app.clipboard == "Please do step 6 of the migration."


async def test_timeline_click_jumps(chat_file: Path) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        timeline = screen.query_one(Timeline)
        assert await pilot.click(Timeline, offset=(1, 0))
        assert screen.index == 0
        assert await pilot.click(Timeline, offset=(timeline.content_size.width, 0))
        assert screen.index == 29


async def test_narrow_terminal_stacks_the_panes(chat_file: Path) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(100, 40)) as pilot:  # 80x24 folds them (test_keymap_and_search)
        await ready(pilot, app)
        screen = screen_of(app)
        assert screen.has_class("narrow")
        before, after = screen.query_one("#before"), screen.query_one("#after")
        assert before.region.x == after.region.x and after.region.y > before.region.y
        await pilot.resize_terminal(160, 40)
        await pilot.pause()
        assert not screen.has_class("narrow")


async def test_command_palette_lists_empty_turns(chat_file: Path) -> None:
    from replay.ui.commands import EmptyTurnProvider

    app = build_app(chat_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        provider = EmptyTurnProvider(app.screen)
        entries = provider._entries()
        assert [index for _, _, index in entries] == [9, 20]
        assert entries[0][0].startswith("Empty #10 assistant · blank-text")


async def test_unreadable_path_exits_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("just some words\n", encoding="utf-8")
    app = build_app(bad)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 2


async def test_multi_session_directory_shows_the_picker(tmp_path: Path) -> None:
    from replay.ui.screens.picker import SessionPicker
    from replay.ui.widgets.session_table import SessionTable

    folder = tmp_path / "exports"
    folder.mkdir()
    write_chat(folder / "a.json", turns=6, empty_at=(3,), title="first")
    write_chat(folder / "b.json", turns=8, empty_at=(), title="second")
    app = build_app(folder)
    async with app.run_test(size=(120, 30)) as pilot:
        # query, not query_one: the picker may be on the stack before its table is composed.
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and any(t.row_count == 2 for t in app.screen.query(SessionTable)))
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        assert len(screen_of(app).session.turns) in (6, 8)
        await pilot.press("escape")
        assert isinstance(app.screen, SessionPicker)


@pytest.mark.parametrize("text", [
    "\x1b]0;pwned title\x07",
    "\x1b]52;c;ZWNobyBoaQ==\x07",
    "\x1b[31mred\x1b[0m",
    "\x9b31m c1 csi",
    "[bold red]not markup[/bold red] $accent [@click=app.quit]x[/]",
])
async def test_transcript_text_cannot_reach_the_terminal(tmp_path: Path, text: str) -> None:
    import json

    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({"messages": [
        {"role": "user", "content": text},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": text},
    ]}), encoding="utf-8")
    app = build_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        await pilot.press("home")
        await pilot.pause()
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "\x07" not in svg and "\x9b" not in svg
        if text.startswith("["):
            assert "[bold red]not markup[/bold red]" in svg.replace("&#160;", " ")
        else:
            assert "␛[ESC]" in svg or "[CSI]" in svg
        assert app.return_code is None


async def test_click_unfolds_one_tool_call_and_o_unfolds_all() -> None:
    from tests.conftest import SAMPLES

    app = build_app(SAMPLES / "refactor.claude-code.jsonl")
    async with app.run_test(size=(140, 44)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        session = screen.session
        target = next(t for t in session.turns
                      if any(p.kind == "tool_call" for p in t.parts))
        await pilot.press("colon", *str(target.index + 1), "enter")
        current = screen.query_one("#current", TurnLines)
        lines = current.plain_text.splitlines()
        folded = [n for n, line in enumerate(lines) if "▶ ⚙" in line]
        assert folded and "input" not in current.plain_text
        assert await pilot.click("#current", offset=(4, folded[0]))
        await pilot.pause()
        lines = current.plain_text.splitlines()
        assert sum("▼ ⚙" in line for line in lines) == 1 and "input" in current.plain_text
        assert sum("▶ ⚙" in line for line in lines) == len(folded) - 1
        assert await pilot.click("#current", offset=(4, folded[0]))
        await pilot.pause()
        assert "input" not in current.plain_text
        await pilot.press("o")
        assert sum("▶ ⚙" in line for line in current.plain_text.splitlines()) == 0


async def test_a_very_long_text_shows_its_start_until_clicked(tmp_path: Path) -> None:
    import json

    from replay.ui.widgets.turn_view import CURRENT_TEXT_LINES

    long_text = "\n".join(f"log line {number}" for number in range(3 * CURRENT_TEXT_LINES))
    path = tmp_path / "paste.json"
    path.write_text(json.dumps({"messages": [
        {"role": "user", "content": long_text},
        {"role": "assistant", "content": "ok"},
    ]}))
    app = build_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        await pilot.press("home")
        current = screen.query_one("#current", TurnLines)
        lines = current.plain_text.splitlines()
        assert f"log line {CURRENT_TEXT_LINES - 1}" in current.plain_text
        assert f"log line {CURRENT_TEXT_LINES}" not in current.plain_text
        assert lines[-1].strip() == (f"… {2 * CURRENT_TEXT_LINES:,} more lines "
                                     "(click or o shows it all)")
        assert await pilot.click("#current", offset=(4, 2))
        await pilot.pause()
        assert f"log line {3 * CURRENT_TEXT_LINES - 1}" in current.plain_text
        assert "more lines" not in current.plain_text


async def test_subagent_of_a_claude_code_session_opens_with_s(tmp_path: Path) -> None:
    import os

    from tests.conftest import realdata

    name = "claude-code-log__test_data__real_projects__-experiments-worktrees__"
    session_id = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
    project = tmp_path / "-experiments-worktrees"
    subagents = project / session_id / "subagents"
    subagents.mkdir(parents=True)
    os.symlink(realdata(f"claude-code/{name}{session_id}.jsonl"), project / f"{session_id}.jsonl")
    for suffix in (".jsonl", ".meta.json"):
        os.symlink(realdata(f"claude-code/{name}{session_id}__subagents__agent-a36efb2a1231c41e2"
                            f"{suffix}"), subagents / f"agent-a36efb2a1231c41e2{suffix}")
    app = build_app(project / f"{session_id}.jsonl")
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        assert len(screen.session.sidechains) == 1
        starter = next(turn for turn in screen.session.turns if screen.sidechains_of(turn))
        await pilot.press("colon", *str(starter.index + 1), "enter", "s")
        await wait_until(pilot, lambda: app.replay_screen is not screen)
        assert app.replay_screen.session is screen.session.sidechains[0]  # type: ignore[union-attr]
        await pilot.press("escape")
        assert app.screen is screen and app.replay_screen is screen


async def test_a_long_session_name_in_the_header_ends_with_an_ellipsis(tmp_path: Path) -> None:
    title = "System Message Parsing and HTML Rendering Upgrade for the viewer"
    app = build_app(write_chat(tmp_path / "long.json", title=title))
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot, app)
        status = str(screen_of(app).status_text())
        assert f" · {title[:39]}… · chat-json · " in status, status


async def test_brackets_in_a_session_without_empty_turns_say_so(tmp_path: Path) -> None:
    app = build_app(write_chat(tmp_path / "none.json", empty_at=()))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        await pilot.press("right_square_bracket", "left_square_bracket")
        said = [str(n.message) for n in app._notifications]
    assert said.count("This session has no empty turn.") == 2, said


async def test_brackets_past_the_last_empty_turn_say_none_after(chat_file: Path) -> None:
    app = build_app(chat_file)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        await pilot.press("end", "right_square_bracket")
        said = [str(n.message) for n in app._notifications]
    assert "No empty turn after this one." in said, said


@pytest.mark.parametrize("width", [80, 100, 160])
async def test_the_palette_key_covers_the_footer_to_the_right_edge(chat_file: Path,
                                                                  width: int) -> None:
    # Textual docked it one column short: a key cut by the width showed through there.
    from textual.widgets import Footer

    app = build_app(chat_file)
    async with app.run_test(size=(width, 30)) as pilot:
        await ready(pilot, app)
        footer = app.screen.query_one(Footer)
        palette = next(key for key in footer.query("FooterKey")
                       if key.has_class("-command-palette"))
        assert palette.region.right == width
